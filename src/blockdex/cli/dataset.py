"""``blockdex dataset``: training data built from labelled pages (the examples:
:func:`blockdex.sft.examples_for_page`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tqdm import tqdm

from blockdex.evaluate.datasets import load_dataset, split_of
from blockdex.extract import Extractor
from blockdex.predict.llm import LLMConfig
from blockdex.sft import examples_for_page

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
    ex = Extractor("all")
    cfg = LLMConfig(max_doc_tokens=args.max_doc_tokens)
    written = 0
    out = Path(args.out)
    with out.open("w", encoding="utf-8") as fh:
        for name in args.datasets.split(","):
            pages = [
                p
                for p in load_dataset(name.strip(), limit=args.limit)
                if args.split == "all" or split_of(p.id) == args.split
            ]
            for page in tqdm(pages, desc=name, file=sys.stderr):
                for example in examples_for_page(page, ex, cfg):
                    fh.write(json.dumps(example, ensure_ascii=False) + "\n")
                    written += 1
    print(f"{written} examples written to {out}", file=sys.stderr)
    return 0
