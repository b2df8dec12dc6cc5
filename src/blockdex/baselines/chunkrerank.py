"""Chunk-and-rerank: the usual RAG baseline for query-relevant extraction.

The cleaned page is rendered to Markdown (all of it), cut into chunks of about ``chunk_words``
words along paragraph boundaries, the chunks ranked against the query — by BM25
(``chunk-bm25``) or by MiniLM embedding cosine (``chunk-embed``) — and the best ones kept, in
page order, until ``budget_words`` is reached. It is blind to the page's structure and always
answers with a fixed budget, never with nothing.
"""

from __future__ import annotations

import html as html_lib
from dataclasses import dataclass

import numpy as np

from blockdex.baselines import BaselineResult
from blockdex.embed import shared_encoder
from blockdex.extract import Extractor
from blockdex.predict.relevance import bm25_scores, terms


@dataclass(frozen=True, slots=True)
class ChunkRerankConfig:
    chunk_words: int = 100
    """Target chunk size: RAG pipelines commonly use 100-300 words."""
    budget_words: int = 300
    """Words kept per page (a fixed budget, as chunk-and-rerank pipelines use)."""


def markdown_chunks(markdown: str, chunk_words: int) -> list[str]:
    """Consecutive paragraphs joined into chunks of about ``chunk_words`` words."""
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    for para in (p.strip() for p in markdown.split("\n\n")):
        if not para:
            continue
        words = len(para.split())
        if current and size + words > chunk_words:
            chunks.append("\n\n".join(current))
            current, size = [], 0
        current.append(para)
        size += words
    if current:
        chunks.append("\n\n".join(current))
    return chunks


class _ChunkRerank:
    name = "chunk"

    def __init__(self, config: ChunkRerankConfig | None = None, **overrides: int) -> None:
        base = config or ChunkRerankConfig()
        self.config = ChunkRerankConfig(
            chunk_words=overrides.get("chunk_words", base.chunk_words),
            budget_words=overrides.get("budget_words", base.budget_words),
        )

    def scores(self, chunks: list[str], query: str) -> np.ndarray:
        raise NotImplementedError

    def run(
        self, html: str | bytes, *, url: str | None = None, query: str | None = None
    ) -> BaselineResult:
        result = Extractor("all").run(html, url=url)
        chunks = markdown_chunks(result.markdown, self.config.chunk_words)
        if not chunks:
            return BaselineResult(html="", text="", title=result.page.title or "")
        q = query or result.page.title or ""
        order = np.argsort(-self.scores(chunks, q), kind="stable") if q else range(len(chunks))
        kept: list[int] = []
        used = 0
        for i in order:
            if used >= self.config.budget_words:
                break
            kept.append(int(i))
            used += len(chunks[int(i)].split())
        text = "\n\n".join(chunks[i] for i in sorted(kept))
        body = "".join(f"<pre>{html_lib.escape(chunks[i])}</pre>" for i in sorted(kept))
        return BaselineResult(
            html=f"<html><body>{body}</body></html>",
            text=text,
            title=result.page.title or "",
            extra={"chunks": len(chunks), "kept_chunks": sorted(kept)},
        )


class ChunkBM25(_ChunkRerank):
    name = "chunk-bm25"

    def scores(self, chunks: list[str], query: str) -> np.ndarray:
        return bm25_scores([terms(c) for c in chunks], terms(query))


class ChunkEmbed(_ChunkRerank):
    name = "chunk-embed"

    def scores(self, chunks: list[str], query: str) -> np.ndarray:
        vecs = shared_encoder().encode([query, *chunks])
        return vecs[1:] @ vecs[0]
