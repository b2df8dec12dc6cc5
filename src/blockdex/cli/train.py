"""``blockdex train``: train the main-content model or the page-type model (the training
itself: :mod:`blockdex.train`, :mod:`blockdex.train_page_type`)."""

from __future__ import annotations

import argparse
import json
import sys

from blockdex.errors import BlockdexError
from blockdex.train import SHIPPED_DATASETS, TrainConfig, save_model, train
from blockdex.train_page_type import (
    PAGE_TYPE_DATASETS,
    PageTypeTrainConfig,
    confusion_markdown,
    train_page_type,
)

NAME = "train"
HELP = "train the main-content model (or, with --page-type, the page-type model)"
DESCRIPTION = (
    "Train blockdex's main-content model (two stages of gradient-boosted trees) on "
    "datasets with ground-truth text and write it as JSON; with --page-type, the "
    "page-type model (one forest per type) on pages labelled with their type, with its "
    "cross-validated accuracy. Needs the 'train' extra."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--page-type",
        action="store_true",
        help="train the page-type model (default datasets: wcxb; split: all; reports 5-fold "
        "cross-validated accuracy, the majority baseline and the confusion table)",
    )
    p.add_argument(
        "--datasets",
        default=None,
        help="comma-separated dataset names under the shared data dir, or paths "
        f"(default: {','.join(SHIPPED_DATASETS)}; with --page-type: wcxb)",
    )
    p.add_argument(
        "--split",
        default=None,
        choices=("train", "dev", "all"),
        help="which pages (default: train; with --page-type: all)",
    )
    p.add_argument(
        "--trees",
        type=int,
        default=None,
        help=f"boosting rounds per stage (default: {TrainConfig().n_trees}; with --page-type: 250)",
    )
    p.add_argument(
        "--cv-seeds",
        type=int,
        default=5,
        help="with --page-type: assignments of pages to folds the accuracy is averaged over",
    )
    p.add_argument(
        "--threshold-repeats",
        type=int,
        default=TrainConfig().threshold_repeats,
        help="assignments of pages to folds whose out-of-fold F1 the decision threshold "
        "maximises on average (1 trains fastest; the trees are the same either way)",
    )
    p.add_argument("--limit", type=int, default=None, help="at most N pages per dataset")
    p.add_argument(
        "--item-columns",
        action=argparse.BooleanOptionalAction,
        default=TrainConfig().item_columns,
        help="give the model the page's item lists (the list a block sits in, its share of the "
        "page, the block's slot in its item) and the mean first-stage probability of that slot",
    )
    p.add_argument(
        "--page-type-columns",
        action=argparse.BooleanOptionalAction,
        default=TrainConfig().page_type_columns,
        help="give the model the page type's probabilities (the same on every block of a page; "
        "the pages the page-type model learned are typed by models that never saw their host)",
    )
    p.add_argument(
        "--page-threshold",
        action=argparse.BooleanOptionalAction,
        default=TrainConfig().page_threshold,
        help="also learn each page's own decision threshold from page-level columns (how many "
        "of its words reach each probability, its size), on the threshold vote's out-of-fold "
        "probabilities (an experiment: through the whole pipeline it lowered wcxb dev, so the "
        "shipped model has none)",
    )
    p.add_argument("--out", required=True, help="where to write the model JSON")


def run_command(args: argparse.Namespace) -> int:
    try:
        if args.page_type:
            defaults = PageTypeTrainConfig()
            cfg: TrainConfig | PageTypeTrainConfig = PageTypeTrainConfig(
                datasets=_dataset_names(args.datasets or ",".join(PAGE_TYPE_DATASETS)),
                split=args.split or defaults.split,
                n_trees=args.trees or defaults.n_trees,
                cv_seeds=args.cv_seeds,
                max_pages=args.limit,
            )
        else:
            cfg = TrainConfig(
                datasets=_dataset_names(args.datasets or ",".join(SHIPPED_DATASETS)),
                split=args.split or "train",
                n_trees=args.trees or TrainConfig().n_trees,
                threshold_repeats=args.threshold_repeats,
                max_pages=args.limit,
                item_columns=args.item_columns,
                page_type_columns=args.page_type_columns,
                page_threshold=args.page_threshold,
            )
    except ValueError as exc:
        raise BlockdexError(str(exc)) from None
    result = train_page_type(cfg) if isinstance(cfg, PageTypeTrainConfig) else train(cfg)
    save_model(result.model, args.out)
    print(json.dumps(result.report, indent=2))
    if args.page_type:
        for name in ("cv_by_host", "cv_at_random"):
            print(f"\n{name} (first seed):", file=sys.stderr)
            print(confusion_markdown(result.report[name]["confusion_first_seed"]), file=sys.stderr)
            print(f"\n{name} without a URL (first seed):", file=sys.stderr)
            table = result.report[name]["confusion_without_url_first_seed"]
            print(confusion_markdown(table), file=sys.stderr)
    print(f"model written to {args.out}", file=sys.stderr)
    return 0


def _dataset_names(spec: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in spec.split(",") if s.strip())
