"""Pages per second with and without blockdex's compiled speed-ups, next to trafilatura.

Same process, same pages, interleaved rounds (best of ``--rounds``): the pure-Python path is the
compiled one with every module's compiled twin (``blockdex/_<name>_c.pyx``, see
``blockdex.speedups``) switched off, which is what ``BLOCKDEX_PURE_PYTHON=1`` does for a whole
process.

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
from blockdex.speedups import TWINS, twins

USERS = TWINS
"""Every module that has a compiled twin in its ``compiled`` attribute (a test checks that these
are all the modules that call ``blockdex.speedups.twin``)."""


def _set(compiled: dict[str, object]) -> None:
    for name in USERS:
        importlib.import_module(name).compiled = compiled[name]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dataset", default="wcxb")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    compiled = twins()
    if not all(compiled.values()):
        missing = ", ".join(k for k, v in compiled.items() if v is None)
        print(
            f"compiled twins missing (or BLOCKDEX_PURE_PYTHON is set): {missing}", file=sys.stderr
        )
        return 1
    python = dict.fromkeys(compiled)
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
        _set(python)
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
