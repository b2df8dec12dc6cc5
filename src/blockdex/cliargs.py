"""Command-line options shared by several subcommands (extract, explain, batch)."""

from __future__ import annotations

import argparse


def add_predictor_option(p: argparse.ArgumentParser, help: str) -> None:
    """``-p/--predictor/--method NAME``: which predictor or classic method chooses the blocks."""
    p.add_argument(
        "-p",
        "--predictor",
        "--method",
        dest="predictor",
        default=None,
        metavar="NAME",
        help=help,
    )
