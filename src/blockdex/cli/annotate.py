"""``blockdex annotate``: label pages with an LLM by majority vote over several runs (the vote:
:func:`blockdex.sft.annotate_pages`)."""

from __future__ import annotations

import argparse
from dataclasses import replace

from blockdex.errors import BlockdexError
from blockdex.evaluate.datasets import load_dataset
from blockdex.predict.llm import LLMConfig, LLMPredictor
from blockdex.sft import annotate_pages

NAME = "annotate"
HELP = "label pages with an LLM by majority vote over several runs"
DESCRIPTION = (
    "Ask an LLM (OpenAI-compatible server) which blocks to keep, --votes times per page, "
    "and keep the indices at least --min-votes runs chose (default: a majority), as the "
    "IndexLM paper built its training labels."
)


def add_arguments(a: argparse.ArgumentParser) -> None:
    a.add_argument("pages", help="JSONL file (html, optional query) or directory of .html files")
    a.add_argument(
        "--llm-url", required=True, help="OpenAI-compatible server, e.g. http://host:8000/v1"
    )
    a.add_argument("--llm-model", default=None)
    a.add_argument("--votes", type=int, default=5)
    a.add_argument("--min-votes", type=int, default=None, help="default: more than half the votes")
    a.add_argument("--temperature", type=float, default=0.7, help="sampling, so runs can differ")
    a.add_argument("--limit", type=int, default=None)
    a.add_argument("--out", required=True, help="JSONL of labels")


def run_command(args: argparse.Namespace) -> int:
    if args.votes < 1:
        raise BlockdexError("--votes must be at least 1")
    cfg = replace(LLMConfig(), temperature=args.temperature)
    predictor = LLMPredictor(llm_url=args.llm_url, llm_model=args.llm_model, config=cfg)
    pages = load_dataset(args.pages, limit=args.limit)
    annotate_pages(pages, args.out, predictor, args.votes, args.min_votes or args.votes // 2 + 1)
    return 0
