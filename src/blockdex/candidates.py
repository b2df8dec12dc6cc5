"""Readability's decision as feature columns: which blocks readability-lxml's algorithm would
keep, and how strongly each block's containers score as its candidates.

readability-lxml (after Arc90's readability) removes elements whose class/id look like page
furniture, scores every paragraph (1 + commas + a point per 100 characters, at most 3) into its
parent in full and its grandparent at half, starts each candidate from its tag and its class
weight (±25 for the positive/negative class patterns), discounts each candidate by its link
density, and keeps the best candidate with its siblings that score at least
``max(10, 0.2·best)``. Here the same steps run on blockdex's blocks and their ``scope``
(the block-level elements enclosing each block), and the outcome becomes six columns
(:data:`CANDIDATE_NAMES`) for the content model's first stage. The class weights carry most of
the signal (NOTES.md, tenth and eleventh sessions).

The compiled twin (``readability_columns`` in ``_candidates_c.pyx``) gives the same floats.
"""

from __future__ import annotations

import re

import numpy as np

from blockdex.page import Block
from blockdex.speedups import twin

compiled = twin(__name__)
"""This module's compiled twin (``blockdex/_candidates_c.pyx``), or None: then the Python code runs."""

CANDIDATE_NAMES: tuple[str, ...] = (
    "rd_keep",
    "rd_cand_ratio",
    "rd_parent_ratio",
    "rd_removed",
    "rd_top_share",
    "rd_class_weight",
)
"""Kept by this readability; the best candidate score among the block's containers and its
parent's score, both over the top score; inside a removed element; the kept share of the page's
characters; the class weights of the block's nearest four elements, over 25."""

# readability-lxml's patterns (readability/readability.py): alternations of plain words, any
# of which may occur anywhere in an element's class/id tokens.
UNLIKELY_WORDS = (
    *("combx", "comment", "community", "disqus", "extra", "foot", "header", "menu", "remark"),
    *("rss", "shoutbox", "sidebar", "sponsor", "ad-break", "agegate", "pagination", "pager"),
    *("popup", "tweet", "twitter"),
)
MAYBE_WORDS = ("and", "article", "body", "column", "main", "shadow")
POSITIVE_WORDS = (
    *("article", "body", "content", "entry", "hentry", "main", "page", "pagination", "post"),
    *("text", "blog", "story"),
)
NEGATIVE_WORDS = (
    *("combx", "comment", "com-", "contact", "foot", "footer", "footnote", "masthead", "media"),
    *("meta", "outbrain", "promo", "related", "scroll", "shoutbox", "sidebar", "sponsor"),
    *("shopping", "tags", "tool", "widget"),
)
CLASS_WORDS = (UNLIKELY_WORDS, MAYBE_WORDS, POSITIVE_WORDS, NEGATIVE_WORDS)
"""The four word lists in the order the compiled twin's bit mask uses."""
UNLIKELY_RE, MAYBE_RE, POSITIVE_RE, NEGATIVE_RE = (
    re.compile("|".join(map(re.escape, words))) for words in CLASS_WORDS
)
TAG_WEIGHTS: dict[str, int] = {
    "div": 5,
    "pre": 3,
    "td": 3,
    "blockquote": 3,
    **dict.fromkeys(("address", "ol", "ul", "dl", "dd", "dt", "li", "form"), -3),
    **dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6", "th"), -5),
}
"""A candidate's starting score by its tag."""
PARAGRAPH_TAGS = frozenset(
    {"p", "pre", "td", "div", "section", "article", "main", "center", "font", "span"}
)
"""Blocks scored as paragraphs (readability scores p, pre and td, and div-like text runs)."""
NEVER_REMOVED = frozenset({"html", "body"})
CLASS_WEIGHT = 25
MIN_PARAGRAPH_CHARS = 25
SIBLING_MIN_SCORE = 10.0
SIBLING_SHARE = 0.2
CLASS_WEIGHT_LEVELS = 4


def class_code(tokens: str) -> tuple[bool, int]:
    """Whether an element with these class/id tokens is an unlikely candidate (removed unless
    it is html/body), and its class weight."""
    unlikely = UNLIKELY_RE.search(tokens) is not None and MAYBE_RE.search(tokens) is None
    weight = (CLASS_WEIGHT if POSITIVE_RE.search(tokens) else 0) - (
        CLASS_WEIGHT if NEGATIVE_RE.search(tokens) else 0
    )
    return unlikely, weight


COMPILED_PARAMS = (
    class_code,
    CLASS_WORDS,
    TAG_WEIGHTS,
    PARAGRAPH_TAGS,
    MIN_PARAGRAPH_CHARS,
    SIBLING_MIN_SCORE,
    SIBLING_SHARE,
    CLASS_WEIGHT,
    CLASS_WEIGHT_LEVELS,
)
"""What the compiled twin reads, in its order (``features.block_features`` passes it too)."""


def _scope_tags(b: Block) -> list[str]:
    """The tag of each ``scope`` element (the tag path, aligned from the nearest element)."""
    tags = b.path.split(">")
    m = len(b.scope)
    if len(tags) >= m:
        return tags[len(tags) - m :]
    return [""] * (m - len(tags)) + tags


def _sibling_paragraph_kept(b: Block) -> bool:
    """readability's rule for a paragraph beside the top candidate: long with few links, or
    short, without links, ending a sentence."""
    nch = len(b.text)
    density = b.link_chars / max(nch, 1)
    if nch > 80:
        return density < 0.25
    return density == 0 and b.text.rstrip()[-1:] == "."


def readability_columns(blocks: tuple[Block, ...]) -> np.ndarray:
    """A ``(len(blocks), len(CANDIDATE_NAMES))`` float32 matrix (see the module docstring)."""
    if compiled is not None and blocks:
        out = np.empty((len(blocks), len(CANDIDATE_NAMES)), dtype=np.float32)
        try:
            compiled.readability_columns(blocks, COMPILED_PARAMS, out)
            return out
        except OverflowError:  # an element id past 64 bits: the loops below
            pass
    return python_readability_columns(blocks)


def python_readability_columns(blocks: tuple[Block, ...]) -> np.ndarray:
    """:func:`readability_columns` by Python loops (what the compiled twin must equal; also
    the way when scope ids overflow the compiled code's 64 bits)."""
    n = len(blocks)
    out = np.zeros((n, len(CANDIDATE_NAMES)), dtype=np.float32)
    if n == 0:
        return out
    codes: dict[str, tuple[bool, int]] = {}
    tag_of: dict[int, str] = {}
    attrs_of: dict[int, str] = {}
    parent_of: dict[int, int] = {}
    inside_chars: dict[int, int] = {}
    inside_links: dict[int, int] = {}
    removed = [False] * n

    def code_of(s: int) -> tuple[bool, int]:  # each distinct class string searched once
        a = attrs_of[s]
        code = codes.get(a)
        if code is None:
            code = codes[a] = class_code(a)
        return code

    for i, b in enumerate(blocks):
        scope = b.scope
        tags = _scope_tags(b)
        nch = len(b.text)
        for j, s in enumerate(scope):
            inside_chars[s] = inside_chars.get(s, 0) + nch
            inside_links[s] = inside_links.get(s, 0) + b.link_chars
            if j:
                parent_of[s] = scope[j - 1]
            if s not in tag_of:
                tag_of[s] = tags[j]
                attrs_of[s] = b.scope_attrs[j] if j < len(b.scope_attrs) else ""
        for s in scope[:-1] if len(scope) > 1 else scope:
            if code_of(s)[0] and tag_of[s] not in NEVER_REMOVED:
                removed[i] = True
                break

    cand: dict[int, float] = {}
    for i, b in enumerate(blocks):
        scope = b.scope
        nch = len(b.text)
        if removed[i] or b.tag not in PARAGRAPH_TAGS or nch < MIN_PARAGRAPH_CHARS:
            continue
        if len(scope) < 2:
            continue
        score = 1 + b.text.count(",") + b.text.count("，") + min(nch // 100, 3)
        for up, share in ((2, 1.0), (3, 0.5)):  # the parent, then the grandparent
            if len(scope) < up:
                break
            s = scope[-up]
            if s not in cand:
                cand[s] = float(TAG_WEIGHTS.get(tag_of[s], 0) + code_of(s)[1])
            cand[s] += score * share
    for s in cand:
        density = inside_links[s] / max(inside_chars[s], 1)
        cand[s] *= 1 - min(density, 1.0)
    out[:, 3] = removed
    if not cand:
        return out
    top = max(cand, key=cand.__getitem__)
    top_score = cand[top]
    top_parent = parent_of.get(top)
    keep = {top}
    if top_parent is not None:
        limit = max(SIBLING_MIN_SCORE, top_score * SIBLING_SHARE)
        for s, v in cand.items():
            if s != top and parent_of.get(s) == top_parent and v >= limit:
                keep.add(s)
    total = 0
    kept = 0
    for i, b in enumerate(blocks):
        scope = b.scope
        nch = len(b.text)
        total += nch
        k = any(s in keep for s in scope)
        if not k and b.tag == "p" and len(scope) >= 2 and scope[-2] == top_parent:
            k = _sibling_paragraph_kept(b)
        if k and not removed[i]:
            out[i, 0] = 1.0
            kept += nch
        if top_score > 0:
            best = max((cand.get(s, 0.0) for s in scope), default=0.0)
            out[i, 1] = best / top_score
            if len(scope) >= 2:
                out[i, 2] = cand.get(scope[-2], 0.0) / top_score
        out[i, 5] = sum(code_of(s)[1] for s in scope[-CLASS_WEIGHT_LEVELS:]) / CLASS_WEIGHT
    out[:, 4] = kept / max(total, 1)
    return out
