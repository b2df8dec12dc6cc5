"""A/B of the parse-first limit check against the old scan-first path, in one process.

Both pipelines and trafilatura run on the same pages in interleaved rounds (best round kept):

    python benchmarks/parse_first_ab.py [--dataset wcxb] [--limit 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import time
import warnings

from selectolax.lexbor import LexborHTMLParser

import blockdex.parse as P
from blockdex.evaluate.datasets import load_dataset
from blockdex.extract import Extractor


def _scan_first(text: str, limits: P.ParseLimits):
    text, warns = P.bound_markup(text, limits)
    return LexborHTMLParser(text), text, warns


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", default="wcxb")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    import trafilatura

    warnings.filterwarnings("ignore")
    pages = [p.html for p in load_dataset(args.dataset, limit=args.limit)]
    parse_first = P.parse_bounded
    ex = Extractor()

    def run(fn) -> float:
        t = time.perf_counter()
        for p in pages:
            fn(p)
        return time.perf_counter() - t

    def ours(h: str) -> None:
        ex.extract(h, output="markdown")

    def theirs(h: str) -> None:
        trafilatura.extract(h, output_format="markdown")

    ours(pages[0])
    theirs(pages[0])
    times: dict[str, list[float]] = {"scan first": [], "parse first": [], "trafilatura": []}
    for _ in range(args.rounds):
        P.parse_bounded = _scan_first
        times["scan first"].append(run(ours))
        P.parse_bounded = parse_first
        times["parse first"].append(run(ours))
        times["trafilatura"].append(run(theirs))
    rate = {k: len(pages) / min(v) for k, v in times.items()}
    for k, v in rate.items():
        print(f"{k:12s} {v:6.1f} pages/s  {v / rate['trafilatura']:.2f}x trafilatura")
    print(f"parse first / scan first: {rate['parse first'] / rate['scan first']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
