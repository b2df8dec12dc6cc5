"""Pages per second with and without blockdex's compiled speed-ups, next to trafilatura.

Same process, same pages, interleaved rounds (best of ``--rounds``): the pure-Python path is the
compiled one with ``blockdex._speedups`` switched off in every module that uses it, which is
what ``BLOCKDEX_PURE_PYTHON=1`` does for a whole process.

    python benchmarks/compiled_ab.py [--dataset wcxb] [--limit 200] [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import warnings

from blockdex.evaluate.datasets import load_dataset
from blockdex.extract import Extractor
from blockdex.speedups import compiled

USERS = (
    "blockdex.parse",
    "blockdex.cjk",
    "blockdex.clean",
    "blockdex.segment",
    "blockdex.features",
    "blockdex.candidates",
    "blockdex.predict.content",
    "blockdex.units",
)
"""Every module that reads ``blockdex.speedups.compiled`` (a test checks the list)."""


def _set(module: object) -> None:
    for name in USERS:
        importlib.import_module(name).compiled = module


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dataset", default="wcxb")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if compiled is None:
        print("blockdex._speedups is not built (or BLOCKDEX_PURE_PYTHON is set)", file=sys.stderr)
        return 1
    import trafilatura

    warnings.filterwarnings("ignore")
    pages = [p.html for p in load_dataset(args.dataset, limit=args.limit)]
    ex = Extractor()

    def run(fn) -> float:
        t0 = time.perf_counter()
        for html in pages:
            fn(html)
        return time.perf_counter() - t0

    def ours(html: str) -> None:
        ex.extract(html, output="markdown")

    def theirs(html: str) -> None:
        trafilatura.extract(html, output_format="markdown")

    for html in pages:  # warm every cache both paths use (class/id token tables, models)
        ours(html)
    theirs(pages[0])
    times: dict[str, list[float]] = {"compiled": [], "python": [], "trafilatura": []}
    for _ in range(args.rounds):
        _set(compiled)
        times["compiled"].append(run(ours))
        _set(None)
        times["python"].append(run(ours))
        _set(compiled)
        times["trafilatura"].append(run(theirs))
    best = {k: len(pages) / min(v) for k, v in times.items()}
    print(f"dataset={args.dataset} pages={len(pages)} rounds={args.rounds} (best round)")
    for k, v in best.items():
        print(f"{k:12s} {v:8.1f} pages/s  {v / best['trafilatura']:5.2f}x trafilatura")
    print(f"compiled / python: {best['compiled'] / best['python']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
