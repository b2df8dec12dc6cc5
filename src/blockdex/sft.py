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


def register(sub: Any) -> None:
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
