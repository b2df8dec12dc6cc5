"""``blockdex train-relevance``: fit the query predictors on the QE dev split."""

from __future__ import annotations

import argparse
import sys
import time

from tqdm import tqdm

from blockdex.evaluate.qe import ensure_qe
from blockdex.predict import relevance_fit
from blockdex.predict.relevance_fit import example, fit, load_records, save_relevance_model

NAME = "train-relevance"
HELP = "fit the lexical/embedding/hybrid relevance predictors on the QE dev split"
DESCRIPTION = relevance_fit.__doc__


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--qe", help="QE set (JSONL); default: made once in the user cache")
    p.add_argument("--out", required=True, help="model JSON to write")
    p.add_argument("--limit", type=int, default=None, help="at most N dev records (quick runs)")
    p.add_argument(
        "--kind",
        choices=("gbdt", "logistic"),
        default=None,
        help="hybrid model: gradient-boosted trees (needs lightgbm, the default when installed) "
        "or logistic regression",
    )
    p.add_argument("--quiet", action="store_true")


def run_command(args: argparse.Namespace) -> int:
    path = ensure_qe(args.qe)
    recs = load_records(path, "dev")
    if args.limit:
        recs = recs[: args.limit]
    t0 = time.perf_counter()
    examples = [
        ex
        for r in tqdm(recs, desc="features", file=sys.stderr, disable=args.quiet)
        if (ex := example(r)) is not None
    ]
    print(f"{len(examples)} dev examples in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    model = fit(examples, kind=args.kind)
    model["command"] = "blockdex train-relevance " + " ".join(sys.argv[2:])
    save_relevance_model(model, args.out)
    print(f"model written to {args.out}", file=sys.stderr)
    return 0
