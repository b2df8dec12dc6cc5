"""The page type's columns and probabilities on every shared page, saved or compared bit for bit:
the check that a speed change to :mod:`blockdex.pagetype` gives the same type.

Each page of the shared sets is run through ``Extractor().run`` twice, with its address and
without (the page-kind rules read the type only with one; JSON output shows it either way), and
the page's columns (:func:`blockdex.pagetype.page_type_features`, float32) and type
probabilities (:func:`blockdex.pagetype.classify_page`, float64) are kept. ``--save FILE``
writes them (``.npz``); ``--against FILE`` compares them with a saved run, bit for bit, and
names the pages whose columns, probabilities or label differ.

    python benchmarks/page_type_identity.py --save before.npz
    python benchmarks/page_type_identity.py --against before.npz
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from blockdex.evaluate.datasets import load_dataset
from blockdex.extract import Extractor
from blockdex.pagetype import PageTypeModel, page_type_features

SETS = ("l3s-gn1", "scrapinghub-aeb", "trafilatura-eval", "wcxb", "webmainbench-samples")


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--save", type=Path, help="write the columns and probabilities (.npz)")
    ap.add_argument("--against", type=Path, help="compare with a saved run")
    ap.add_argument("--limit", type=int, default=None, help="pages per set (default: all)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    ex = Extractor()
    model = PageTypeModel.load()
    keys, cols, probs, labels = [], [], [], []
    for name in SETS:
        for page in load_dataset(name, limit=args.limit):
            for url in (page.url, None):
                result = ex.run(page.html, url=url)
                row = page_type_features(result.page)
                keys.append(f"{name} {page.id} {'url' if url else 'nourl'}")
                cols.append(row)
                pt = result.page.page_type
                probs.append([pt.scores.get(c, 0.0) for c in model.classes] + [pt.confidence])
                labels.append(pt.label)
    X = np.stack(cols)
    P = np.asarray(probs, dtype=np.float64)
    print(f"{len(keys)} runs ({len(keys) // 2} pages, with and without the address)")
    if args.save:
        np.savez_compressed(args.save, keys=np.array(keys), X=X, P=P, labels=np.array(labels))
    if not args.against:
        return 0
    before = np.load(args.against)
    if list(before["keys"]) != keys:
        print("the pages differ from the saved run's")
        return 1
    bad_x = np.flatnonzero((before["X"].view(np.uint32) != X.view(np.uint32)).any(axis=1))
    bad_p = np.flatnonzero((before["P"].view(np.uint64) != P.view(np.uint64)).any(axis=1))
    bad_l = np.flatnonzero(before["labels"] != np.array(labels))
    print(f"columns differ (bitwise) on {len(bad_x)} runs")
    print(f"probabilities differ (bitwise) on {len(bad_p)} runs")
    print(f"labels differ on {len(bad_l)} runs")
    print(f"largest probability difference {np.abs(before['P'] - P).max():.3g}")
    for i in sorted(set(bad_x) | set(bad_p) | set(bad_l))[:30]:
        names = [n for n, a, b in zip(_names(), before["X"][i], X[i], strict=True) if a != b]
        print(f"  {keys[i]}: {', '.join(names[:8])}")
    return 1 if len(bad_x) or len(bad_p) or len(bad_l) else 0


def _names() -> tuple[str, ...]:
    from blockdex.pagetype import FEATURE_NAMES

    return FEATURE_NAMES


if __name__ == "__main__":
    sys.exit(main())
