"""Generalisation: train on every dataset but one, test on all pages of the one left out.

Each left-out model is trained by the shipped recipe (``blockdex train``'s defaults: the train
split of the training datasets, the same trees, learning rate and threshold vote) and then run
through the whole pipeline (``Extractor(...).extract(output="text")``) on **every** page of the
left-out dataset, none of which the model or its threshold saw. The peers run on the same pages
in the same run and are scored by the same function as ``blockdex bench`` (token F1; snippet F1
for trafilatura-eval). l3s-gn1 is a test set only: its licence is research-only, so it never
trains a model here either.

    python benchmarks/cross_dataset.py [--datasets scrapinghub-aeb,wcxb,trafilatura-eval,l3s-gn1]
        [--train-only webmainbench-samples]
        [--peers trafilatura,trafilatura-precision,readability,resiliparse] [--trees N]
        [--seeds N[,N...]] [--threshold-repeats N] [--compare-units] [--compare-on OPTION]
        [--compare-set MODULE:NAME=VALUE] [--page-type-columns] [--unseen-page-types]
        [--page-threshold] [--models DIR] [--left-out NAMES]

A left-out model moves with the training seed alone (by up to 0.04 on wcxb), so one seed per row
is a draw: ``--seeds 20261122,1,2`` trains each row once per seed and prints the mean with the
lowest and highest seed's figure. The peers do not depend on the seed and run once.

The shipped page-type model learned every wcxb page, so the page-kind rules read wcxb's types
better than they would read an unseen page's. ``--unseen-page-types`` gives each wcxb page the
type from models that never saw its host (:func:`blockdex.train.unseen_types`) when it is scored;
``--page-type-columns`` trains with the page type's columns, on such types for wcxb's pages.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import hashlib
import importlib
import json
import statistics
import sys
from pathlib import Path

from blockdex import pagetype
from blockdex.evaluate.bench import run_method, summarise_method
from blockdex.evaluate.datasets import EvalPage, load_dataset
from blockdex.extract import Extractor
from blockdex.page import PageType
from blockdex.predict.content import ContentModel, ContentPredictor
from blockdex.train import PageData, TrainConfig, collect, save_model, train, unseen_types


def _score(name: str, pages: list[EvalPage], fn=None) -> dict[str, float]:
    return summarise_method(name, run_method(name, pages, progress=False, fn=fn)).scores


def _pipeline_score(
    predictor: ContentPredictor, pages: list[EvalPage], types: dict[str, PageType]
) -> dict[str, float]:
    """``predictor``'s scores through the whole pipeline (text output, each page's address;
    pages whose address is in ``types`` typed as given there)."""
    ex = Extractor(predictor)
    with _page_types_by_url(types):
        return _score("content", pages, lambda p: ex.extract(p.html, url=p.url, output="text"))


@contextlib.contextmanager
def _page_types_by_url(types: dict[str, PageType]):
    """Pages whose address is a key of ``types`` typed as given, others as before."""
    shipped = pagetype.classify_page

    def classify(page, *args, **kwargs):
        kind = types.get(page.url or "")
        return kind if kind is not None else shipped(page, *args, **kwargs)

    pagetype.classify_page = classify
    try:
        yield
    finally:
        pagetype.classify_page = shipped


@contextlib.contextmanager
def _constant(assignment: str):
    """``MODULE:NAME=VALUE`` set for the block's duration (VALUE a Python literal)."""
    target, value = assignment.split("=", 1)
    module_name, name = target.split(":")
    module = importlib.import_module(module_name)
    old = getattr(module, name)
    setattr(module, name, ast.literal_eval(value))
    try:
        yield
    finally:
        setattr(module, name, old)


def _left_out_model(
    cfg: TrainConfig, data: list[PageData], held: str, models: Path | None
) -> ContentModel:
    """The model ``cfg`` trains on ``data``. With ``models``, it is written there as JSON and
    read back (as a shipped model is: leaf values to 7 digits), under a name made of the left-out
    set, the seed and a hash of the configuration and of every training row (features, labels,
    weights' inputs): a later run with the same rows and configuration reads it instead of
    training again, and a change that moves any row, any column or any setting trains anew."""
    if models is None:
        return ContentModel(train(cfg, data).model)
    digest = hashlib.sha256(
        json.dumps(dataclasses.asdict(cfg), sort_keys=True, default=str).encode()
    )
    for d in data:
        digest.update(f"{d.dataset}:{d.id}".encode())
        for arr in (d.X, d.share, d.labelled, d.words, d.groups, d.slots):
            if arr is not None:
                digest.update(arr.tobytes())
        digest.update(repr(d.block_tokens).encode())
        digest.update(repr(sorted(d.gt_tokens.items())).encode())
    path = models / f"{held}-seed{cfg.seed}-{digest.hexdigest()[:16]}.json"
    if path.is_file():
        print(f"  {held}: model read from {path}", file=sys.stderr)
        return ContentModel.load(path)
    models.mkdir(parents=True, exist_ok=True)
    save_model(train(cfg, data).model, path)
    return ContentModel.load(path)


def _value(scores: dict[str, float]) -> float:
    return scores["F1"] if "F1" in scores else scores["snippet F1"]


def _cell(scores: dict[str, float]) -> str:
    return f"{_value(scores):.3f}"


def _seeds_cell(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.fmean(values):.3f} ({min(values):.3f}–{max(values):.3f})"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--datasets", default="scrapinghub-aeb,wcxb,trafilatura-eval,l3s-gn1")
    ap.add_argument(
        "--train-only",
        default="webmainbench-samples",
        help="datasets always in training, never left out (comma-separated; may be empty)",
    )
    ap.add_argument("--peers", default="trafilatura,trafilatura-precision,readability,resiliparse")
    ap.add_argument(
        "--trees", type=int, default=None, help="boosting rounds per stage (default: shipped)"
    )
    ap.add_argument(
        "--threshold-repeats",
        type=int,
        default=None,
        metavar="N",
        help="out-of-fold assignments the threshold vote uses (default: shipped, 12; each costs"
        " a 4-fold fit of both stages, most of a model's training time): fewer make a quicker"
        " model whose threshold is a smaller vote's",
    )
    ap.add_argument(
        "--seeds",
        "--seed",
        default=None,
        help="training seeds, comma-separated (default: the shipped one); with several, each row "
        "shows the mean over seeds and the lowest and highest",
    )
    ap.add_argument(
        "--compare-units",
        action="store_true",
        help="also score each left-out model with the stories rule only "
        "(ContentPredictor(never_empty=False)) and without the unit rules (the titled story "
        "kept alone, never an empty result): ContentPredictor(stories=False, "
        "never_empty=False); the same trees, so the columns differ by the rules only",
    )
    ap.add_argument(
        "--compare-on",
        default=None,
        metavar="OPTION",
        help="also score each left-out model with ContentPredictor(OPTION=True) (a rule's "
        "switch, e.g. repeats: a rule judged on the same trees, with and without it)",
    )
    ap.add_argument(
        "--compare-set",
        default=None,
        metavar="MODULE:NAME=VALUE",
        help="also score each left-out model with a module's constant set to a Python literal, "
        "e.g. blockdex.predict.kinds:TEMPLATE_KINDS='set()' (a rule without its own switch, "
        "judged on the same trees, with and without it)",
    )
    ap.add_argument(
        "--unit-columns",
        action="store_true",
        help="train with the page's unit columns in stage 1 (TrainConfig.unit_columns; "
        "blockdex.units.UNIT_COLUMN_NAMES): the model way of issue 29, beside the rules",
    )
    ap.add_argument(
        "--item-columns",
        action="store_true",
        help="train with the page's item columns (TrainConfig.item_columns; "
        "blockdex.items.ITEM_COLUMN_NAMES and the item slots' mean in stage 2; issue 41)",
    )
    ap.add_argument(
        "--page-type-columns",
        action="store_true",
        help="train with the page type's probabilities as columns (TrainConfig.page_type_columns;"
        " wcxb's training pages typed by models that never saw their host)",
    )
    ap.add_argument(
        "--unseen-page-types",
        action="store_true",
        help="score each wcxb page with the type models that never saw its host give it, not "
        "the shipped page-type model's (which learned every wcxb page)",
    )
    ap.add_argument(
        "--page-threshold",
        action="store_true",
        help="train with each page's own threshold (TrainConfig.page_threshold; "
        "blockdex.predict.page_threshold) and also score each left-out model at its one "
        "threshold (the same trees): the column before the page threshold",
    )
    ap.add_argument(
        "--models",
        default=None,
        metavar="DIR",
        help="keep each left-out model in DIR and read it back on a later run with the same "
        "training rows and settings (a rule judged again costs its scoring only; on a two-core "
        "machine a left-out model alone took ~10 min to train)",
    )
    ap.add_argument(
        "--left-out",
        default=None,
        metavar="NAMES",
        help="score only these rows (comma-separated, of --datasets); all by default",
    )
    args = ap.parse_args()
    try:
        seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [TrainConfig().seed]
    except ValueError:
        ap.error(f"--seeds takes whole numbers separated by commas, not {args.seeds!r}")
    names = args.datasets.split(",")
    peers = [p for p in args.peers.split(",") if p]
    extra = [n for n in args.train_only.split(",") if n and n not in names]
    trainable = [n for n in names if n != "l3s-gn1"] + extra
    unseen = unseen_types(("wcxb",)) if args.page_type_columns or args.unseen_page_types else {}
    train_data = {
        n: collect(
            (n,),
            "train",
            unit_columns=args.unit_columns,
            item_columns=args.item_columns,
            page_type_columns=args.page_type_columns,
            page_types=unseen,
        )
        for n in trainable
    }
    by_url: dict[str, PageType] = {}
    if args.unseen_page_types:
        by_url = {
            p.url: unseen[f"wcxb:{p.id}"]
            for p in load_dataset("wcxb")
            if p.url and f"wcxb:{p.id}" in unseen
        }
    rows = args.left_out.split(",") if args.left_out else names
    without = (
        " stories rule only (never_empty=False) | without the unit rules |"
        if args.compare_units
        else ""
    )
    if args.compare_on:
        without += f" {args.compare_on}=True |"
    if args.compare_set:
        without += f" {args.compare_set} |"
    if args.page_threshold:
        without += " one threshold (same trees) |"
    print(
        "| left out (pages) | metric | blockdex, trained without it |"
        + without
        + "".join(f" {p} |" for p in peers)
    )
    print(f"|---|---|---:|{'---:|' * (len(peers) + without.count('|'))}")
    for held in rows:
        used = [n for n in trainable if n != held]
        pages = list(load_dataset(held))
        values = []
        plain: list[float] = []
        stories_only: list[float] = []
        switched: list[float] = []
        constant: list[float] = []
        one_threshold: list[float] = []
        for seed in seeds:
            cfg = TrainConfig(
                datasets=tuple(used),
                seed=seed,
                unit_columns=args.unit_columns,
                item_columns=args.item_columns,
                page_type_columns=args.page_type_columns,
                page_threshold=args.page_threshold,
            )
            if args.trees:
                cfg = dataclasses.replace(cfg, n_trees=args.trees)
            if args.threshold_repeats:
                cfg = dataclasses.replace(cfg, threshold_repeats=args.threshold_repeats)
            data = [d for n in used for d in train_data[n]]
            model = _left_out_model(cfg, data, held, Path(args.models) if args.models else None)
            ours = _pipeline_score(ContentPredictor(model), pages, by_url)
            values.append(_value(ours))
            if args.compare_units:
                for out, stories in ((stories_only, True), (plain, False)):
                    predictor = ContentPredictor(model, stories=stories, never_empty=False)
                    out.append(_value(_pipeline_score(predictor, pages, by_url)))
            if args.compare_on:
                predictor = ContentPredictor(model, **{args.compare_on: True})
                switched.append(_value(_pipeline_score(predictor, pages, by_url)))
            if args.compare_set:
                with _constant(args.compare_set):
                    constant.append(_value(_pipeline_score(ContentPredictor(model), pages, by_url)))
            if args.page_threshold:
                predictor = ContentPredictor(model, threshold=model.threshold)
                one_threshold.append(_value(_pipeline_score(predictor, pages, by_url)))
        theirs = [_score(p, pages) for p in peers]
        metric = "token F1" if "F1" in ours else "snippet F1"
        row = "".join(f" {_cell(s)} |" for s in theirs)
        if args.page_threshold:
            row = f" {_seeds_cell(one_threshold)} |" + row
        if args.compare_set:
            row = f" {_seeds_cell(constant)} |" + row
        if args.compare_on:
            row = f" {_seeds_cell(switched)} |" + row
        if args.compare_units:
            row = f" {_seeds_cell(stories_only)} | {_seeds_cell(plain)} |" + row
        print(f"| {held} ({len(pages)}) | {metric} | {_seeds_cell(values)} |{row}")
        per_seed = [("per seed", values)]
        if args.compare_on:
            per_seed.append((f"{args.compare_on}=True", switched))
        if args.compare_set:
            per_seed.append((args.compare_set, constant))
        if args.page_threshold:
            per_seed.append(("one threshold", one_threshold))
        figures = "; ".join(f"{name} {', '.join(f'{v:.4f}' for v in vs)}" for name, vs in per_seed)
        print(f"  {held}: {figures}", file=sys.stderr)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
