"""Training data for an IndexLM: chat examples whose answer is an interval list.

``blockdex dataset sft --datasets scrapinghub-aeb,wcxb --out sft.jsonl`` segments each page,
aligns its ground truth to blocks (:func:`blockdex.evaluate.align.oracle_selection`), cuts the
page into chunks under the prompt budget exactly as the ``llm`` predictor will at inference, and
writes one example per chunk: the same system/user messages the predictor sends, and as the
assistant message the chunk's selected intervals (``[[3,7],[12,12]]`` or ``NA``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from blockdex.errors import BlockdexError
from blockdex.evaluate.align import oracle_selection
from blockdex.evaluate.datasets import EvalPage, load_dataset, split_of
from blockdex.intervals import chunk_page
from blockdex.page import Selection
from blockdex.predict.llm import PROMPT_VERSION, LLMConfig, build_prompt, load_prompt
from blockdex.segment import count_tokens


def examples_for_page(
    page: EvalPage, extractor: Any, cfg: LLMConfig | None = None
) -> Iterator[dict[str, Any]]:
    """Chat examples for one page (one per chunk); nothing for pages without ground truth."""
    cfg = cfg or LLMConfig()
    if page.ground_truth is None:
        return
    try:
        seg = extractor.segment(page.html, url=page.url)
    except BlockdexError:
        return
    if not seg.blocks:
        return
    wanted = set(oracle_selection(seg, page.ground_truth).indices)
    budget = max(cfg.max_doc_tokens - count_tokens("\n".join(load_prompt())) - 200, 64)
    for n, chunk in enumerate(chunk_page(seg, budget, count_tokens)):
        system, user = build_prompt(chunk, page.query)
        answer = Selection.from_indices(i for i in chunk.indices() if i in wanted).format()
        yield {
            "id": f"{page.dataset}/{page.id}#{n}",
            "prompt_version": PROMPT_VERSION,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
                {"role": "assistant", "content": answer},
            ],
        }


def cmd_sft(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from blockdex.extract import Extractor

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


def majority_vote(selections: list[Selection], min_votes: int) -> tuple[Selection, dict[int, int]]:
    """Indices chosen by at least ``min_votes`` of the runs, and each index's vote count."""
    counts: dict[int, int] = {}
    for sel in selections:
        for i in sel.indices:
            counts[i] = counts.get(i, 0) + 1
    kept = sorted(i for i, c in counts.items() if c >= min_votes)
    return Selection.from_indices(kept), counts


def cmd_annotate(args: argparse.Namespace) -> int:
    """Label pages with an LLM: several runs per page, keep the indices a majority chose."""
    from dataclasses import replace

    from tqdm import tqdm

    from blockdex.extract import Extractor
    from blockdex.predict.llm import LLMPredictor

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


def register(sub: Any) -> None:
    a = sub.add_parser(
        "annotate",
        help="label pages with an LLM by majority vote over several runs",
        description=(
            "Ask an LLM (OpenAI-compatible server) which blocks to keep, --votes times per page, "
            "and keep the indices at least --min-votes runs chose (default: a majority), as the "
            "IndexLM paper built its training labels."
        ),
    )
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
    a.set_defaults(func=cmd_annotate)

    p = sub.add_parser(
        "dataset",
        help="build training data (IndexLM chat examples) from labelled pages",
        description="Build training data from labelled pages.",
    )
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
    s.set_defaults(func=cmd_sft)
