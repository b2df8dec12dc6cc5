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
        [--peers trafilatura,trafilatura-precision,readability,resiliparse] [--trees N] [--seed N]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from blockdex.evaluate.bench import run_method, summarise_method
from blockdex.evaluate.datasets import EvalPage, load_dataset
from blockdex.extract import Extractor
from blockdex.predict.content import ContentModel, ContentPredictor
from blockdex.train import TrainConfig, collect, train


def _score(name: str, pages: list[EvalPage], fn=None) -> dict[str, float]:
    return summarise_method(name, run_method(name, pages, progress=False, fn=fn)).scores


def _cell(scores: dict[str, float]) -> str:
    key = "F1" if "F1" in scores else "snippet F1"
    return f"{scores[key]:.3f}"


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
        "--seed",
        type=int,
        default=None,
        help="training seed (default: shipped); a retrained model moves with the seed alone",
    )
    args = ap.parse_args()
    names = args.datasets.split(",")
    peers = [p for p in args.peers.split(",") if p]
    extra = [n for n in args.train_only.split(",") if n and n not in names]
    trainable = [n for n in names if n != "l3s-gn1"] + extra
    train_data = {n: collect((n,), "train") for n in trainable}
    print(f"| left out (pages) | metric | blockdex, trained without it | {' | '.join(peers)} |")
    print(f"|---|---|---:|{'---:|' * len(peers)}")
    for held in names:
        used = [n for n in trainable if n != held]
        cfg = TrainConfig(datasets=tuple(used))
        if args.trees:
            cfg = dataclasses.replace(cfg, n_trees=args.trees)
        if args.seed is not None:
            cfg = dataclasses.replace(cfg, seed=args.seed)
        model = ContentModel(train(cfg, [d for n in used for d in train_data[n]]).model)
        ex = Extractor(ContentPredictor(model))
        pages = list(load_dataset(held))
        ours = _score(
            "content", pages, lambda p, ex=ex: ex.extract(p.html, url=p.url, output="text")
        )
        theirs = [_score(p, pages) for p in peers]
        metric = "token F1" if "F1" in ours else "snippet F1"
        row = " | ".join(_cell(s) for s in theirs)
        print(f"| {held} ({len(pages)}) | {metric} | {_cell(ours)} | {row} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
