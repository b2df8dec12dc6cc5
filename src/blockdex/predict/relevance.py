"""Query relevance: ``lexical`` (BM25), ``embedding`` (MiniLM) and ``hybrid`` (the default).

Every block is scored as a small document made of its *heading path* (the headings it sits
under) and its own text, so a paragraph under "Battery life" matches a query about battery life
even when it never repeats the words.

* ``lexical`` — BM25 (bm25s) over the page's blocks; keeps blocks scoring at least ``keep_share``
  of the best one, nothing when the best block covers too few of the query's words.
* ``embedding`` — cosine between the query and each block (all-MiniLM-L6-v2, int8 ONNX);
  same keep rule on the cosine.
* ``hybrid`` — a logistic model over both scores, the headings' scores, the neighbours' scores,
  the main-content probability and block shape; then structure: a kept heading brings its
  section, list items and table rows travel with their container, single gaps inside a kept run
  are filled. How many blocks to keep is not a budget: it is the probability threshold learned
  on the QE dev split, and an empty answer (``NA``) when no block reaches the page threshold.

The learned numbers live in ``relevance_model.json`` (plain data); ``blockdex train-relevance``
re-fits them from a QE set.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from blockdex.embed import shared_encoder
from blockdex.errors import MissingExtra
from blockdex.features import stopwords
from blockdex.forest import Forest
from blockdex.page import Page, Selection
from blockdex.predict.content import ContentPredictor
from blockdex.predict.structure import IDENTIFIER_HINT, answer_units, identifier_words
from blockdex.units import named_unit

_WORD = re.compile(r"\w\w+", re.UNICODE)
HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
CONTAINER_TAGS = frozenset({"ul", "ol", "dl", "table", "tbody", "thead"})

FEATURES = (
    "bm25_share",  # BM25 / page max
    "coverage",  # share of the query's words in the block document
    "own_coverage",  # …in the block's own text only
    "heading_coverage",  # …in its heading path only
    "cos",  # cosine(query, block document)
    "cos_gap",  # cos − page max cos
    "heading_cos",  # cosine(query, heading path)
    "page_max_cos",
    "page_max_coverage",
    "nb_cos",  # mean cos of the two neighbours on each side
    "nb_coverage",
    "content_prob",  # main-content probability (the content model)
    "is_heading",
    "log_words",
    "query_words",  # log of the query's content words
)


@functools.lru_cache(maxsize=1 << 16)
def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@functools.lru_cache(maxsize=1)
def _stop() -> frozenset[str]:
    return stopwords()


def terms(text: str) -> list[str]:
    """Lower-cased, stop-word-free, lightly stemmed word terms."""
    stop = _stop()
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in stop]


def code_terms(text: str) -> list[str]:
    """:func:`terms`, and an identifier's words besides the identifier (:func:`identifier_words`),
    so that code and prose match: the terms of the table, code and list rules
    (:mod:`blockdex.predict.structure`). The hybrid model's features keep :func:`terms`, the
    words it was fitted on."""
    if IDENTIFIER_HINT.search(text) is None:
        return terms(text)
    stop = _stop()
    out = []
    for word in _WORD.findall(text):
        low = word.lower()
        if low not in stop:
            out.append(_stem(low))
        out.extend(_stem(p) for p in identifier_words(word) if p not in stop)
    return out


def heading_paths(page: Page) -> list[str]:
    """Per block, the text of the headings it sits under (outermost first)."""
    stack: list[tuple[int, str]] = []
    paths: list[str] = []
    for block in page.blocks:
        level = HEADINGS.get(block.tag)
        if level is not None:
            while stack and stack[-1][0] >= level:
                stack.pop()
            paths.append(" / ".join(t for _, t in stack))
            stack.append((level, " ".join(block.text.split())[:200]))
        else:
            paths.append(" / ".join(t for _, t in stack))
    return paths


def _documents(page: Page, paths: list[str]) -> list[str]:
    return [f"{p}\n{b.text}" if p else b.text for p, b in zip(paths, page.blocks, strict=True)]


def bm25_scores(docs: list[list[str]], query: list[str]) -> np.ndarray:
    try:
        import bm25s
    except ImportError:
        raise MissingExtra("bm25s", "embed", "Lexical relevance") from None
    if not query or not any(docs):
        return np.zeros(len(docs), dtype=np.float32)
    retriever = bm25s.BM25()
    retriever.index([d or ["\x00"] for d in docs], show_progress=False)
    return np.asarray(retriever.get_scores(query), dtype=np.float32)


def _coverage(query: set[str], doc_terms: list[list[str]]) -> np.ndarray:
    if not query:
        return np.zeros(len(doc_terms), dtype=np.float32)
    return np.array([len(query & set(d)) / len(query) for d in doc_terms], dtype=np.float32)


def _neighbour_mean(x: np.ndarray, k: int = 2) -> np.ndarray:
    if len(x) == 0:
        return x
    padded = np.pad(x, k, mode="constant")
    total = np.zeros_like(x)
    for off in [*range(-k, 0), *range(1, k + 1)]:
        total += padded[k + off : k + off + len(x)]
    return total / (2 * k)


EMBED_MIN_CONTENT_PROB = 0.1
"""Blocks below this main-content probability are embedded only if they share a query word."""
EMBED_MAX_BLOCKS = 48
"""At most this many blocks per page are embedded (the most promising, ranked as
:data:`EMBED_RANK_COVERAGE` says): embedding is nearly all of the hybrid's cost. QE dev split:
F1 within 0.001 of 160 blocks at twice the pages/s (benchmarks/NOTES.md, 2026-11-26)."""
HYBRID_EMBED_TOKENS = 64
"""Word pieces of a block document the hybrid embeds: its heading path and first ~30 words.
Fewer are cheaper (48: 1.25x, 32: 1.5x the pages/s) and score the same on the QE set, but a query
that shares no word with its answer (tests/test_relevance.py: "How far does the battery go on
one charge?") loses its answer at 32, even with the model refitted: the long heading path
leaves ~10 words of the block's text."""
EMBED_RANK_COVERAGE = 3.0
"""The blocks to embed are ranked by ``EMBED_RANK_COVERAGE × coverage + content probability``:
sharing the query's words says more than being main content (on a digest page every article
is content). QE dev split, 48 blocks, the 207 records no named unit answers: F1 0.893 at weight
1, 0.899 at 3 (0.900 with 160 blocks)."""
EMBED_CACHE_SIZE = 4096
"""Embeddings remembered by text and length limit (~1.5 kB each): several queries on one page,
the chunks of a page and a site's repeated blocks are embedded once."""

_CACHE: OrderedDict[tuple[int | None, str], np.ndarray] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def clear_embedding_cache() -> None:
    """Forget every remembered embedding (benchmarks measure a page's cost from cold)."""
    with _CACHE_LOCK:
        _CACHE.clear()


def embed_texts(texts: list[str], max_tokens: int | None = None) -> np.ndarray:
    """MiniLM embeddings of ``texts``, each cut to ``max_tokens`` word pieces (None: the
    encoder's limit); one encoder call for the ones not remembered."""
    enc = shared_encoder()
    with _CACHE_LOCK:
        known = {t: v for t in texts if (v := _CACHE.get((max_tokens, t))) is not None}
    missing = list(dict.fromkeys(t for t in texts if t not in known))
    if missing:
        fresh = dict(zip(missing, enc.encode(missing, max_tokens=max_tokens), strict=True))
        known.update(fresh)
        with _CACHE_LOCK:
            _CACHE.update(((max_tokens, t), v) for t, v in fresh.items())
            while len(_CACHE) > EMBED_CACHE_SIZE:
                _CACHE.popitem(last=False)
    out = np.zeros((len(texts), enc.dim), dtype=np.float32)
    for i, t in enumerate(texts):
        out[i] = known[t]
    return out


def _cosines(
    query: str,
    docs: list[str],
    paths: list[str],
    candidates: np.ndarray | None,
    max_tokens: int | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Cosine of the query to each block document and to each block's heading path. Only the
    ``candidates`` (all blocks when None) and their heading paths are embedded; the others get
    cosine 0 — they are blocks the hybrid model would not keep anyway."""
    n = len(docs)
    todo = np.arange(n) if candidates is None else np.flatnonzero(candidates)
    wanted_paths = sorted({paths[i] for i in todo if paths[i]})
    vecs = embed_texts([query, *(docs[i] for i in todo), *wanted_paths], max_tokens)
    qv = vecs[0]
    cos = np.zeros(n, dtype=np.float32)
    cos[todo] = vecs[1 : 1 + len(todo)] @ qv
    path_cos = dict(zip(wanted_paths, (vecs[1 + len(todo) :] @ qv).tolist(), strict=True))
    head_cos = np.array([path_cos.get(p, 0.0) for p in paths], dtype=np.float32)
    return cos, head_cos


@dataclass(slots=True)
class RelevanceScores:
    """Per-block relevance evidence for one page and query."""

    features: np.ndarray  # (n_blocks, len(FEATURES))
    bm25: np.ndarray
    cos: np.ndarray | None

    def column(self, name: str) -> np.ndarray:
        return self.features[:, FEATURES.index(name)]


def relevance_scores(
    page: Page,
    query: str,
    *,
    embed: bool = True,
    content_prob: np.ndarray | None = None,
    max_embedded: int = EMBED_MAX_BLOCKS,
    embed_tokens: int | None = None,
) -> RelevanceScores:
    """Compute every feature of :data:`FEATURES` for the blocks of ``page``.

    With ``content_prob``, at most ``max_embedded`` blocks are embedded (the rest get cosine 0).
    ``embed_tokens``: word pieces embedded per text (None: the encoder's limit).
    """
    n = len(page.blocks)
    paths = heading_paths(page)
    docs = _documents(page, paths)
    q_terms = terms(query)
    q_set = set(q_terms)
    own_terms = [terms(b.text) for b in page.blocks]
    path_terms = {p: terms(p) for p in set(paths)}
    # a block's document is its heading path, a line break and its text: the same terms
    doc_terms = [path_terms[p] + t for p, t in zip(paths, own_terms, strict=True)]
    bm = bm25_scores(doc_terms, q_terms)
    coverage = _coverage(q_set, doc_terms)
    own = _coverage(q_set, own_terms)
    head_cov = _coverage(q_set, [path_terms[p] for p in paths])
    cos = np.zeros(n, dtype=np.float32)
    head_cos = np.zeros(n, dtype=np.float32)
    if embed and n:
        candidates = None
        if content_prob is not None:
            # Blocks the content model rules out and that share no word with the query are
            # not embedded (cosine 0): most of a page's blocks, and most of the cost.
            candidates = (content_prob >= EMBED_MIN_CONTENT_PROB) | (coverage > 0)
            if candidates.sum() > max_embedded:
                rank = EMBED_RANK_COVERAGE * coverage + content_prob
                rank = np.where(candidates, rank, -1.0)
                candidates = np.zeros(n, dtype=bool)
                candidates[np.argsort(-rank, kind="stable")[:max_embedded]] = True
        cos, head_cos = _cosines(query, docs, paths, candidates, embed_tokens)
    words = np.array([len(b.text.split()) for b in page.blocks], dtype=np.float32)
    prob = content_prob if content_prob is not None else np.full(n, 0.5, dtype=np.float32)
    max_bm = float(bm.max()) if n else 0.0
    max_cos = float(cos.max()) if n else 0.0
    feats = np.column_stack(
        [
            bm / max_bm if max_bm > 0 else np.zeros(n, dtype=np.float32),
            coverage,
            own,
            head_cov,
            cos,
            cos - max_cos,
            head_cos,
            np.full(n, max_cos, dtype=np.float32),
            np.full(n, float(coverage.max()) if n else 0.0, dtype=np.float32),
            _neighbour_mean(cos),
            _neighbour_mean(coverage),
            prob,
            np.array([b.tag in HEADINGS for b in page.blocks], dtype=np.float32),
            np.log1p(words),
            np.full(n, np.log1p(len(q_set)), dtype=np.float32),
        ]
    ).astype(np.float32)
    return RelevanceScores(feats.reshape(n, len(FEATURES)), bm, cos if embed else None)


# ---------------------------------------------------------------------------------------------
# Structure: sections, containers, gaps


def section_ends(page: Page) -> list[int]:
    """For each heading block (position), the position after its section's last block."""
    blocks = page.blocks
    ends = [-1] * len(blocks)
    open_: list[tuple[int, int]] = []  # (level, position)
    for pos, block in enumerate(blocks):
        level = HEADINGS.get(block.tag)
        if level is None:
            continue
        while open_ and open_[-1][0] >= level:
            _, start = open_.pop()
            ends[start] = pos
        open_.append((level, pos))
    for _, start in open_:
        ends[start] = len(blocks)
    return ends


def _container(block: Any) -> int | None:
    for tag, node in reversed(block.chain[:-1]):
        if tag in CONTAINER_TAGS:
            return node
    return None


def structured_keep(page: Page, prob: np.ndarray, params: dict[str, float]) -> list[int]:
    """Positions to keep: threshold, then sections, containers and gaps."""
    n = len(page.blocks)
    if n == 0 or float(prob.max()) < params["na_threshold"]:
        return []
    keep = prob >= params["threshold"]
    fill = prob >= params["fill_threshold"]
    ends = section_ends(page)
    for pos in np.flatnonzero(keep & np.array([b.tag in HEADINGS for b in page.blocks])):
        end = ends[pos]
        keep[pos + 1 : end] |= fill[pos + 1 : end]
    groups: dict[int, list[int]] = {}
    for pos, block in enumerate(page.blocks):
        c = _container(block)
        if c is not None:
            groups.setdefault(c, []).append(pos)
    for members in groups.values():
        if len(members) > 1 and keep[members].mean() >= params["container_share"]:
            keep[members] = True
    for pos in range(1, n - 1):
        if not keep[pos] and keep[pos - 1] and keep[pos + 1] and fill[pos]:
            keep[pos] = True
    return [int(p) for p in np.flatnonzero(keep)]


# ---------------------------------------------------------------------------------------------
# The model file


@functools.lru_cache(maxsize=4)
def load_relevance_model(path: str | None = None) -> dict[str, Any]:
    if path:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    data = resources.files("blockdex.predict") / "relevance_model.json"
    return json.loads(data.read_text(encoding="utf-8"))


def hybrid_probabilities(model: dict[str, Any], features: np.ndarray) -> np.ndarray:
    """Relevance probability of each block: gradient-boosted trees, or logistic regression."""
    names = model["features"]
    idx = [FEATURES.index(f) for f in names]
    if "forest" in model:
        if "_forest" not in model:  # built once per loaded model (not saved: "_" keys)
            model["_forest"] = Forest(model["forest"])
        return model["_forest"].predict(features[:, idx])
    x = (features[:, idx] - np.asarray(model["mean"])) / np.asarray(model["scale"])
    z = x @ np.asarray(model["weights"]) + model["bias"]
    return 1.0 / (1.0 + np.exp(-z))


SECTION_FLOOR = 0.3
"""A named section keeps its blocks from this main-content probability on: lower than the
content threshold, since the query already says the section is wanted and its lists and short
lines score lower on their own (QE dev split: section F1 0.948 at 0.3 and 0.45, 0.93 at 0.55)."""


def named_unit_selection(page: Page, query: str) -> Selection | None:
    """The unit the query names (:func:`blockdex.units.named_unit`), whole: an article's main
    content (the content model run on the article alone), or a section's heading and the
    blocks of it the content model keeps. None when the query names no unit."""
    named = named_unit(page, query)
    if named is None:
        return None
    predictor = ContentPredictor(stories=False)
    if named.kind == "article":
        sel = predictor.predict(page.slice(named.first, named.last + 1))
        indices = list(sel.indices)
        scores = dict(sel.scores or {})
    else:
        probs = predictor.block_probabilities(page)
        ids = [b.index for b in page.blocks]
        scores = dict(zip(ids, probs.tolist(), strict=True))
        indices = [ids[named.heading]] + [
            ids[p] for p in range(named.heading + 1, named.last + 1) if probs[p] >= SECTION_FLOOR
        ]
    heading = page.blocks[named.heading]
    note = f"the query names the {named.kind} {heading.text[:80]!r}: kept it whole"
    return Selection.from_indices(indices, scores=scores, warnings=(note,))


def _content_probabilities(page: Page) -> np.ndarray:
    return ContentPredictor().block_probabilities(page).astype(np.float32)


class _RelevanceBase:
    name = "relevance"
    reads_markup = False
    embed = True

    def __init__(self, model_path: str | None = None, **_: Any) -> None:
        self.model = load_relevance_model(model_path)

    def predict(self, page: Page, query: str | None = None) -> Selection:
        """The blocks relevant to ``query``; without a query, the page's main content."""
        if not query:
            sel = ContentPredictor().predict(page)
            return Selection(
                sel.intervals,
                sel.scores,
                (*sel.warnings, f"{self.name}: no query given, so the main content was kept"),
            )
        if not page.blocks:
            return Selection()
        named = self.named_unit(page, query)
        if named is not None:
            return named
        scores, keep = self.score_blocks(page, query)
        by_index = {b.index: float(s) for b, s in zip(page.blocks, scores, strict=True)}
        return Selection.from_indices((page.blocks[int(i)].index for i in keep), by_index)

    def named_unit(self, page: Page, query: str) -> Selection | None:
        """The article or section the query names, kept whole; None: score the blocks."""
        return None

    def score_blocks(self, page: Page, query: str) -> tuple[np.ndarray, Any]:
        """Each block's score and the positions of the blocks to keep (``page`` has blocks)."""
        raise NotImplementedError


class LexicalPredictor(_RelevanceBase):
    """BM25 over blocks with their heading paths."""

    name = "lexical"

    def score_blocks(self, page: Page, query: str) -> tuple[np.ndarray, Any]:
        rs = relevance_scores(page, query, embed=False)
        share = rs.column("bm25_share")
        cov = rs.column("coverage")
        p = self.model["lexical"]
        keep = (
            [] if float(cov.max()) < p["min_coverage"] else np.flatnonzero(share >= p["keep_share"])
        )
        return share, keep


class EmbeddingPredictor(_RelevanceBase):
    """Cosine similarity of MiniLM embeddings between the query and each block."""

    name = "embedding"

    def score_blocks(self, page: Page, query: str) -> tuple[np.ndarray, Any]:
        rs = relevance_scores(page, query, embed=True)
        cos = rs.column("cos")
        p = self.model["embedding"]
        best = float(cos.max())
        keep = [] if best < p["min_cos"] else np.flatnonzero(cos >= best - p["keep_margin"])
        return cos, keep


class HybridPredictor(_RelevanceBase):
    """Lexical + embedding + main-content evidence, then the page's structure."""

    name = "hybrid"

    def __init__(
        self,
        model_path: str | None = None,
        *,
        embed: bool = True,
        max_embedded: int = EMBED_MAX_BLOCKS,
        embed_tokens: int = HYBRID_EMBED_TOKENS,
        units: bool = True,
        **kw: Any,
    ) -> None:
        """``max_embedded``: blocks embedded per page at most; ``embed_tokens``: word pieces
        embedded per block (embedding is most of the cost; the speed/F1 trade-offs are measured
        in benchmarks/NOTES.md). ``units=False`` scores blocks even when the query names an
        article or a section (by default that unit is kept whole: :func:`named_unit_selection`)."""
        super().__init__(model_path, **kw)
        if max_embedded < 1:
            raise ValueError(f"max_embedded must be at least 1, not {max_embedded}")
        if embed_tokens < 2:
            raise ValueError(f"embed_tokens must be at least 2, not {embed_tokens}")
        self.embed = embed
        self.max_embedded = max_embedded
        self.embed_tokens = embed_tokens
        self.units = units

    def probabilities(self, page: Page, query: str) -> np.ndarray:
        rs = relevance_scores(
            page,
            query,
            embed=self.embed,
            content_prob=_content_probabilities(page),
            max_embedded=self.max_embedded,
            embed_tokens=self.embed_tokens,
        )
        return hybrid_probabilities(self.model["hybrid"], rs.features)

    def named_unit(self, page: Page, query: str) -> Selection | None:
        return named_unit_selection(page, query) if self.units else None

    def score_blocks(self, page: Page, query: str) -> tuple[np.ndarray, Any]:
        prob = self.probabilities(page, query)
        keep = structured_keep(page, prob, self.model["hybrid"]["params"])
        return prob, answer_units(page, keep, set(code_terms(query)), code_terms)
