"""``blockdex evaluate``: tools that build evaluation data (the QE set: :mod:`blockdex.evaluate.qe`)."""

from __future__ import annotations

import argparse
import sys

from blockdex.errors import BlockdexError
from blockdex.evaluate import qe
from blockdex.evaluate.qe import DEFAULT_QE, DEFAULT_QE_DATASETS, QEConfig, make_qe, write_qe

NAME = "evaluate"
HELP = "evaluation data: make the query-relevant extraction (QE) set"
DESCRIPTION = "Tools that build evaluation data from the shared datasets."


def add_arguments(p: argparse.ArgumentParser) -> None:
    inner = p.add_subparsers(dest="evaluate_command", metavar="TOOL")
    q = inner.add_parser(
        "make-qe",
        help="build the QE set (section, shuffled, multi-article and no-answer queries)",
        description=qe.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    q.add_argument(
        "--datasets",
        default=",".join(DEFAULT_QE_DATASETS),
        help="comma-separated shared datasets (default: %(default)s)",
    )
    q.add_argument("--out", required=True, help="output JSONL(.gz) file")
    q.add_argument("--seed", type=int, default=DEFAULT_QE.seed)
    q.add_argument(
        "--pages",
        type=int,
        default=DEFAULT_QE.pages_per_dataset,
        help="source pages per dataset (default: %(default)s)",
    )
    q.add_argument("--quiet", action="store_true")
    q.set_defaults(func=make_qe_command)
    p.set_defaults(print_help=p.print_help)


def run_command(args: argparse.Namespace) -> int:
    """``blockdex evaluate`` without a tool: its help."""
    args.print_help(sys.stderr)
    return 2


def make_qe_command(args: argparse.Namespace) -> int:
    cfg = QEConfig(seed=args.seed, pages_per_dataset=args.pages)
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    if not datasets:
        raise BlockdexError("--datasets needs at least one dataset name")
    counts = write_qe(args.out, make_qe(datasets, cfg, progress=not args.quiet))
    total = sum(counts.values())
    detail = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    print(f"{total} QE records -> {args.out} ({detail})", file=sys.stderr)
    return 0
