"""Main-content quality and speed: blockdex predictors next to the peers, same pages, same run.

For every dataset the pages of the ``dev`` split (never used for training or tuning) are
extracted by each method in one process. Pages with ground-truth text get token P/R/F1 (mean
over pages; a crash or empty output scores 0); pages with must-have/must-not-have snippets get
snippet precision/recall/F1 over summed counts (the trafilatura evaluation's definition).
Speed is pages/s over the same pages, and its ratio to trafilatura's default.

    python benchmarks/content_results.py [--datasets ...] [--methods ...] [--limit N] [--split dev]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
import warnings
from collections.abc import Callable

from blockdex.errors import BlockdexError
from blockdex.evaluate.datasets import EvalPage, load_dataset, split_of
from blockdex.evaluate.metrics import token_prf
from blockdex.extract import Extractor

DATASETS = ("scrapinghub-aeb", "l3s-gn1", "wcxb", "trafilatura-eval", "webmainbench-samples")
METHODS = (
    "content",
    "heuristic",
    "all",
    "trafilatura",
    "trafilatura-precision",
    "trafilatura-recall",
    "readability",
    "resiliparse",
)


def method(name: str) -> Callable[[str], str]:
    if name in ("content", "heuristic", "all"):
        ex = Extractor(name)
        return lambda html: ex.extract(html, output="text")
    if name.startswith("trafilatura"):
        import trafilatura

        kw = {
            "trafilatura": {},
            "trafilatura-precision": {"favor_precision": True},
            "trafilatura-recall": {"favor_recall": True},
        }[name]
        return lambda html: trafilatura.extract(html, **kw) or ""
    if name == "readability":
        import html_text
        from readability import Document

        return lambda html: html_text.extract_text(Document(html).summary(html_partial=True))
    if name == "resiliparse":
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree

        return lambda html: extract_plain_text(HTMLTree.parse(html), main_content=True)
    raise SystemExit(f"unknown method {name}")


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def score(name: str, pages: list[EvalPage]) -> dict[str, float]:
    fn = method(name)
    f1s, ps, rs = [], [], []
    tp = fn_ = fp = 0
    errors = 0
    t0 = time.perf_counter()
    outputs = []
    for page in pages:
        try:
            out = fn(page.html)
        except (BlockdexError, Exception):  # a peer's crash counts as empty output
            out, errors = "", errors + 1
        outputs.append(out)
    seconds = time.perf_counter() - t0
    for page, out in zip(pages, outputs, strict=True):
        if page.ground_truth:
            s = token_prf(out, page.ground_truth)
            f1s.append(s.f1)
            ps.append(s.precision)
            rs.append(s.recall)
        if page.with_snippets or page.without_snippets:
            text = _norm(out)
            hits = sum(_norm(x) in text for x in page.with_snippets)
            tp += hits
            fn_ += len(page.with_snippets) - hits
            fp += sum(_norm(x) in text for x in page.without_snippets)
    row = {"pages/s": len(pages) / seconds, "errors": errors}
    if f1s:
        row.update(P=statistics.fmean(ps), R=statistics.fmean(rs), F1=statistics.fmean(f1s))
        row["median F1"] = statistics.median(f1s)
    if tp + fn_:
        sp = tp / max(tp + fp, 1)
        sr = tp / (tp + fn_)
        row.update({"snippet P": sp, "snippet R": sr, "snippet F1": 2 * sp * sr / (sp + sr or 1)})
    return row


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--split", default="dev", choices=("dev", "train", "all"))
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    for dataset in args.datasets.split(","):
        pages = [
            p for p in load_dataset(dataset) if args.split == "all" or split_of(p.id) == args.split
        ]
        pages = pages[: args.limit] if args.limit else pages
        rows = {m: score(m, pages) for m in args.methods.split(",")}
        base = rows.get("trafilatura", {}).get("pages/s")
        key = "F1" if "F1" in next(iter(rows.values())) else "snippet F1"
        cols = [
            c
            for c in ("P", "R", "F1", "median F1", "snippet P", "snippet R", "snippet F1")
            if c in next(iter(rows.values()))
        ]
        print(f"\n### {dataset} ({args.split} split, {len(pages)} pages)\n")
        print("| method | " + " | ".join(cols) + " | pages/s | vs trafilatura | errors |")
        print("|---|" + "---:|" * (len(cols) + 3))
        for m, r in sorted(rows.items(), key=lambda kv: -kv[1].get(key, 0.0)):
            speed = f"{r['pages/s'] / base:.2f}x" if base else "-"
            vals = " | ".join(f"{r[c]:.3f}" for c in cols)
            print(f"| {m} | {vals} | {r['pages/s']:.1f} | {speed} | {r['errors']} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
