"""``blockdex annotate``: label pages with an LLM by majority vote over several runs (the vote:
:func:`blockdex.sft.majority_vote`)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from blockdex.errors import BlockdexError
from blockdex.evaluate.datasets import load_dataset
from blockdex.extract import Extractor
from blockdex.predict.llm import LLMConfig, LLMPredictor
from blockdex.sft import majority_vote

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
    """Label pages with an LLM: several runs per page, keep the indices a majority chose."""
    if args.votes < 1:
        raise BlockdexError("--votes must be at least 1")
    min_votes = args.min_votes or args.votes // 2 + 1
    cfg = replace(LLMConfig(), temperature=args.temperature)
    predictor = LLMPredictor(llm_url=args.llm_url, llm_model=args.llm_model, config=cfg)
    ex = Extractor("all")
    pages = load_dataset(args.pages, limit=args.limit)
    with Path(args.out).open("w", encoding="utf-8") as fh:
        for page in tqdm(pages, desc="annotating", file=sys.stderr):
            record: dict[str, Any] = {"id": page.id, "url": page.url, "query": page.query}
            try:
                seg = ex.segment(page.html, url=page.url)
                runs = [predictor.predict(seg, page.query) for _ in range(args.votes)]
                sel, counts = majority_vote(runs, min_votes)
                record.update(
                    selection=sel.format(),
                    intervals=[list(iv) for iv in sel.intervals],
                    votes={str(k): v for k, v in sorted(counts.items())},
                    runs=args.votes,
                )
            except BlockdexError as exc:  # every page yields a record
                record["error"] = str(exc)
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 0
