"""What the page type costs per page, beside the whole pipeline, on the same pages in one run.

For each page the pipeline runs (parse, clean, segment, predict, Markdown: what
``blockdex extract`` does by default, which never computes the type), then the page's type is
classified from the result (:func:`blockdex.pagetype.classify_page`: what JSON output, the HTTP
service and batch/crawl records add). Within that cost the columns
(:func:`blockdex.pagetype.page_type_features`; the item lists they read come with the page, from
segmentation) and the model's trees are timed on their own. Rounds
alternate the steps page by page, so noise on a shared machine hits them alike (the class
words are counted in C, with no cache to clear between rounds).

    python benchmarks/page_type_speed.py [--dataset wcxb] [--limit 300] [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

from blockdex.evaluate.datasets import load_dataset
from blockdex.extract import Extractor
from blockdex.pagetype import PageTypeModel, classify_page, page_type_features


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dataset", default="wcxb")
    ap.add_argument("--limit", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    warnings.filterwarnings("ignore")
    pages = list(load_dataset(args.dataset, limit=args.limit))
    ex = Extractor()
    model = PageTypeModel.load()
    ex.run(pages[0].html, url=pages[0].url).render("markdown")  # models loaded
    steps = ("pipeline (markdown)", "page type", "  of which columns", "  of which trees")
    per_round: dict[str, list[float]] = {s: [] for s in steps}
    for _ in range(args.rounds):
        spent = dict.fromkeys(steps, 0.0)
        for p in pages:
            t0 = time.perf_counter()
            result = ex.run(p.html, url=p.url)
            result.render("markdown")
            t1 = time.perf_counter()
            classify_page(result.page, model)
            t2 = time.perf_counter()
            t3 = time.perf_counter()
            row = page_type_features(result.page)[None, :]
            t4 = time.perf_counter()
            model.probabilities(row)
            t5 = time.perf_counter()
            spent["pipeline (markdown)"] += t1 - t0
            spent["page type"] += t2 - t1
            spent["  of which columns"] += t4 - t3
            spent["  of which trees"] += t5 - t4
        for s in steps:
            per_round[s].append(spent[s] / len(pages) * 1e6)
    base = statistics.median(per_round["pipeline (markdown)"])
    print(f"{args.dataset}: {len(pages)} pages, {args.rounds} rounds (median µs per page)")
    for s in steps:
        us = statistics.median(per_round[s])
        print(f"{s:24s} {us:8.0f} µs  {us / base:6.1%} of the pipeline")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
