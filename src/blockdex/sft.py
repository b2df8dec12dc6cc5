"""Training data for an IndexLM: chat examples whose answer is an interval list.

``blockdex dataset sft --datasets scrapinghub-aeb,wcxb --out sft.jsonl`` segments each page,
aligns its ground truth to blocks (:func:`blockdex.evaluate.align.oracle_selection`), cuts the
page into chunks under the prompt budget exactly as the ``llm`` predictor will at inference, and
writes one example per chunk: the same system/user messages the predictor sends, and as the
assistant message the chunk's selected intervals (``[[3,7],[12,12]]`` or ``NA``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from blockdex.errors import BlockdexError
from blockdex.evaluate.align import oracle_selection
from blockdex.evaluate.datasets import EvalPage
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


def majority_vote(selections: list[Selection], min_votes: int) -> tuple[Selection, dict[int, int]]:
    """Indices chosen by at least ``min_votes`` of the runs, and each index's vote count."""
    counts: dict[int, int] = {}
    for sel in selections:
        for i in sel.indices:
            counts[i] = counts.get(i, 0) + 1
    kept = sorted(i for i, c in counts.items() if c >= min_votes)
    return Selection.from_indices(kept), counts
