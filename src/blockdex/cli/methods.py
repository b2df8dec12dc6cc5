"""``blockdex methods``: the predictors and classic methods there are."""

from __future__ import annotations

import argparse

from blockdex.baselines import DESCRIPTIONS as BASELINE_DESCRIPTIONS
from blockdex.baselines import available_baselines
from blockdex.predict import (
    DEFAULT_PREDICTOR,
    DEFAULT_QUERY_PREDICTOR,
    DESCRIPTIONS,
    available_predictors,
)

NAME = "methods"
HELP = "list the available predictors/methods"
DESCRIPTION = None


def add_arguments(p: argparse.ArgumentParser) -> None:
    pass


def run_command(args: argparse.Namespace) -> int:
    for name in available_baselines():
        print(f"{name:14s} {BASELINE_DESCRIPTIONS.get(name, '')}  [classic method]")
    for name in available_predictors():
        mark = []
        if name == DEFAULT_PREDICTOR:
            mark.append("default")
        if name == DEFAULT_QUERY_PREDICTOR:
            mark.append("default with --query")
        suffix = f"  [{', '.join(mark)}]" if mark else ""
        print(f"{name:14s} {DESCRIPTIONS.get(name, '')}{suffix}")
    return 0
