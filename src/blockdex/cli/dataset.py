"""``blockdex dataset``: training data built from labelled pages (the examples:
:func:`blockdex.sft.write_sft_examples`)."""

from __future__ import annotations

import argparse
import sys

from blockdex.predict.llm import LLMConfig
from blockdex.sft import write_sft_examples

NAME = "dataset"
HELP = "build training data (IndexLM chat examples) from labelled pages"
DESCRIPTION = "Build training data from labelled pages."


def add_arguments(p: argparse.ArgumentParser) -> None:
    dsub = p.add_subparsers(dest="dataset_command", metavar="KIND", required=True)
    s = dsub.add_parser(
        "sft",
        help="chat examples whose answer is the interval list of the ground-truth blocks",
        description=(
            "Write chat-format supervised fine-tuning examples (system, user = the llm "
            "predictor's prompt for one chunk, assistant = the chunk's ground-truth intervals)."
        ),
    )
    s.add_argument("--datasets", required=True, help="comma-separated dataset names or paths")
    s.add_argument("--out", required=True, help="JSONL file to write")
    s.add_argument("--split", default="train", choices=("train", "dev", "all"))
    s.add_argument("--limit", type=int, default=None, help="at most N pages per dataset")
    s.add_argument(
        "--max-doc-tokens",
        type=int,
        default=LLMConfig().max_doc_tokens,
        help="prompt budget per chunk, as the predictor will use it",
    )


def run_command(args: argparse.Namespace) -> int:
    datasets = [name.strip() for name in args.datasets.split(",")]
    cfg = LLMConfig(max_doc_tokens=args.max_doc_tokens)
    written = write_sft_examples(datasets, args.out, args.split, args.limit, cfg)
    print(f"{written} examples written to {args.out}", file=sys.stderr)
    return 0
