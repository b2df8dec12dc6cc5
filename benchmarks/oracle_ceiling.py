"""The ceiling segmentation allows: keep exactly the blocks that overlap the ground truth.

For each dataset, every page is segmented, its ground truth aligned to blocks
(``blockdex.evaluate.align.oracle_selection``), the aligned blocks reassembled to text, and the
text scored with token F1 against the ground truth. Also prints the ``all`` predictor's F1
(the whole cleaned page) for scale.

    python benchmarks/oracle_ceiling.py [--datasets scrapinghub-aeb,wcxb] [--limit N]
"""

from __future__ import annotations

import argparse
import statistics
import sys

from blockdex.errors import BlockdexError
from blockdex.evaluate.align import oracle_selection
from blockdex.evaluate.datasets import load_dataset
from blockdex.evaluate.metrics import token_prf
from blockdex.extract import Extractor
from blockdex.page import Selection
from blockdex.render import selection_text

DATASETS = ("scrapinghub-aeb", "l3s-gn1", "wcxb", "webmainbench-samples")


def ceiling(dataset: str, limit: int | None) -> tuple[int, float, float, int]:
    """(pages, mean oracle F1, mean all-blocks F1, pages that failed to parse)."""
    ex = Extractor()
    oracle_f1: list[float] = []
    all_f1: list[float] = []
    failed = 0
    for page in load_dataset(dataset, limit=limit):
        if not page.ground_truth:
            continue
        try:
            seg = ex.segment(page.html, url=page.url)
        except BlockdexError:
            failed += 1
            oracle_f1.append(0.0)
            all_f1.append(0.0)
            continue
        sel = oracle_selection(seg, page.ground_truth)
        oracle_f1.append(token_prf(selection_text(seg, sel), page.ground_truth).f1)
        everything = Selection.from_indices(seg.indices())
        all_f1.append(token_prf(selection_text(seg, everything), page.ground_truth).f1)
    return len(oracle_f1), statistics.fmean(oracle_f1), statistics.fmean(all_f1), failed


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args()
    print("| dataset | pages | oracle F1 | all-blocks F1 | parse failures |")
    print("|---|---:|---:|---:|---:|")
    for name in args.datasets.split(","):
        n, oracle, everything, failed = ceiling(name, args.limit)
        print(f"| {name} | {n} | {oracle:.3f} | {everything:.3f} | {failed} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
