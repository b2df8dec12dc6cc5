"""What is left for everything but parsing and the trees, if blockdex is to match resiliparse.

Two parts of the default pipeline have work that its output fixes: lexbor's parse (resiliparse
parses with lexbor too) and the first stage's trees, which score every block (their walk can get
cheaper, as it did once when the trees were laid out as complete trees, but every block still
walks every tree).
This times each alone on the set's pages, beside resiliparse's whole extraction
(``extract_plain_text(HTMLTree.parse(html), main_content=True)``) and blockdex's whole text
pipeline, in one process (best of ``--rounds`` passes, garbage collection off while timing), and
prints the time a page left for the rest at a ratio of 1.0 and how much faster the rest would
have to run.

    python benchmarks/speed_floor.py [--dataset scrapinghub-aeb] [--limit 200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from blockdex.evaluate.datasets import load_dataset
from blockdex.extract import Extractor
from blockdex.parse import _lexbor_parse
from blockdex.predict.content import ContentPredictor, model_features


def _best(fn: Callable[[Any], object], items: Sequence[Any], rounds: int) -> float:
    """Microseconds an item, best of ``rounds`` passes."""
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            for item in items:
                fn(item)
            best = min(best, time.perf_counter() - t0)
        finally:
            gc.enable()
    return best / len(items) * 1e6


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dataset", default="scrapinghub-aeb")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    try:
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree
    except ImportError:
        print("needs resiliparse (pip install -e '.[peers]')", file=sys.stderr)
        return 2
    warnings.filterwarnings("ignore")
    pages = [p.html for p in load_dataset(args.dataset, limit=args.limit)]
    ex = Extractor()
    predictor = ex.predictor
    if not isinstance(predictor, ContentPredictor):
        print("the default predictor is not the content model", file=sys.stderr)
        return 2
    model = predictor.model
    segmented = [ex.segment(p) for p in pages]
    rows = [
        model_features(page, model.unit_columns, model.item_columns)[0]
        for page in segmented
        if page.blocks
    ]

    def theirs(html: str) -> None:
        extract_plain_text(HTMLTree.parse(html), main_content=True)

    def ours(html: str) -> None:
        ex.extract(html, output="text")

    peer = _best(theirs, pages, args.rounds)
    whole = _best(ours, pages, args.rounds)
    parse = _best(_lexbor_parse, pages, args.rounds)
    trees = _best(model.stage1.raw, rows, args.rounds) * len(rows) / len(pages)
    left = peer - parse - trees
    rest = whole - parse - trees
    print(f"{args.dataset}: {len(pages)} pages, µs a page")
    print(f"  resiliparse, whole             {peer:8.0f}")
    print(f"  blockdex, whole (text)         {whole:8.0f}  ({peer / whole:.2f}x resiliparse)")
    print(f"  lexbor parse                   {parse:8.0f}")
    print(f"  stage-1 trees                  {trees:8.0f}")
    print(f"  left for the rest at 1.0x      {left:8.0f}")
    print(f"  the rest today                 {rest:8.0f}  ({rest / max(left, 1e-9):.1f}x too slow)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
