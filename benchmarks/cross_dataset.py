"""Generalisation: train on every dataset but one, test on all pages of the one left out.

Uses the same training code as ``blockdex train`` (train split of the training datasets) and
scores token F1 (or snippet F1 for trafilatura-eval) of the left-out dataset's every page,
none of which the model or its threshold saw. l3s-gn1 is included as a test set only when asked
(its licence is research-only; it never trains the shipped model).

    python benchmarks/cross_dataset.py [--datasets scrapinghub-aeb,wcxb,trafilatura-eval,l3s-gn1]
"""

from __future__ import annotations

import argparse
import statistics
import sys

import numpy as np

from blockdex.features import context_features
from blockdex.predict.content import ContentModel
from blockdex.train import PageData, TrainConfig, collect, page_f1, train


def _probs(model: ContentModel, d: PageData) -> np.ndarray:
    p1 = model.stage1.predict(d.X)
    return model.stage2.predict(np.hstack([d.X, context_features(p1, d.groups)]))


def evaluate(model: ContentModel, pages: list[PageData]) -> str:
    full = [d for d in pages if d.labelled is None]
    if full:
        return f"token F1 {statistics.fmean(page_f1(_probs(model, d) >= model.threshold, d) for d in full):.3f}"
    tp = fn = fp = 0
    for d in pages:
        keep = _probs(model, d) >= model.threshold
        known = d.labelled if d.labelled is not None else np.ones(len(keep), dtype=bool)
        pos = known & (d.share >= 0.5)
        neg = known & (d.share < 0.5)
        tp += int((keep & pos).sum())
        fn += int((~keep & pos).sum())
        fp += int((keep & neg).sum())
    p, r = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    return f"snippet-block P {p:.3f} R {r:.3f} F1 {2 * p * r / max(p + r, 1e-9):.3f}"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--datasets", default="scrapinghub-aeb,wcxb,trafilatura-eval,l3s-gn1")
    ap.add_argument("--train-only", default="webmainbench-samples", help="always in training")
    ap.add_argument("--trees", type=int, default=120, help="boosting rounds per stage (speed)")
    args = ap.parse_args()
    names = args.datasets.split(",")
    train_data = {n: collect((n,), "train") for n in [*names, args.train_only]}
    all_data = {n: collect((n,), "all") for n in names}
    print("| left out | trained on | result on every left-out page |")
    print("|---|---|---|")
    for held in names:
        used = [n for n in names if n != held and n != "l3s-gn1"] + [args.train_only]
        data = [d for n in used for d in train_data[n]]
        cfg = TrainConfig(datasets=tuple(used), n_trees=args.trees, learning_rate=0.1)
        model = ContentModel(train(cfg, data).model)
        print(f"| {held} | {', '.join(used)} | {evaluate(model, all_data[held])} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
