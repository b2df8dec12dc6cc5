"""Training data for an IndexLM: chat examples whose answer is an interval list.

``blockdex dataset sft --datasets scrapinghub-aeb,wcxb --out sft.jsonl`` segments each page,
aligns its ground truth to blocks (:func:`blockdex.evaluate.align.oracle_selection`), cuts the
page into chunks under the prompt budget exactly as the ``llm`` predictor will at inference, and
writes one example per chunk: the same system/user messages the predictor sends, and as the
assistant message the chunk's selected intervals (``[[3,7],[12,12]]`` or ``NA``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from blockdex.errors import BlockdexError
from blockdex.evaluate.align import oracle_selection
from blockdex.evaluate.datasets import EvalPage, load_dataset, split_of
from blockdex.extract import Extractor
from blockdex.intervals import chunk_page
from blockdex.page import Selection
from blockdex.predict import Predictor
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


def write_sft_examples(
    datasets: Sequence[str], out: str | Path, split: str, limit: int | None, cfg: LLMConfig
) -> int:
    """Write the chat examples of every page of ``datasets`` in ``split`` (``all``: every page)
    to the JSONL file ``out``; return how many."""
    ex = Extractor("all")
    written = 0
    with Path(out).open("w", encoding="utf-8") as fh:
        for name in datasets:
            pages = [
                p
                for p in load_dataset(name, limit=limit)
                if split == "all" or split_of(p.id) == split
            ]
            for page in tqdm(pages, desc=name, file=sys.stderr):
                for example in examples_for_page(page, ex, cfg):
                    fh.write(json.dumps(example, ensure_ascii=False) + "\n")
                    written += 1
    return written


def annotate_pages(
    pages: Sequence[EvalPage], out: str | Path, predictor: Predictor, votes: int, min_votes: int
) -> None:
    """Label each page with ``votes`` runs of ``predictor`` and keep the indices at least
    ``min_votes`` runs chose; one JSONL record per page in ``out`` (an error record when the
    page cannot be read)."""
    ex = Extractor("all")
    with Path(out).open("w", encoding="utf-8") as fh:
        for page in tqdm(pages, desc="annotating", file=sys.stderr):
            record: dict[str, Any] = {"id": page.id, "url": page.url, "query": page.query}
            try:
                seg = ex.segment(page.html, url=page.url)
                runs = [predictor.predict(seg, page.query) for _ in range(votes)]
                sel, counts = majority_vote(runs, min_votes)
                record.update(
                    selection=sel.format(),
                    intervals=[list(iv) for iv in sel.intervals],
                    votes={str(k): v for k, v in sorted(counts.items())},
                    runs=votes,
                )
            except BlockdexError as exc:  # every page yields a record
                record["error"] = str(exc)
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
