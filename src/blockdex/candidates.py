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

The steps run in C (``readability_columns`` in ``_candidates_c.pyx``); the word lists, tag
weights and thresholds below are what it reads.
"""

from __future__ import annotations

import re

import numpy as np

from blockdex import _candidates_c as compiled
from blockdex.ids import block_ids
from blockdex.page import Block

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
"""The four word lists in the order the compiled code's bit mask uses."""
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
"""What the compiled code reads, in its order (``features.block_features`` passes it too)."""


def readability_columns(blocks: tuple[Block, ...]) -> np.ndarray:
    """A ``(len(blocks), len(CANDIDATE_NAMES))`` float32 matrix (see the module docstring),
    computed in one compiled pass (``_candidates_c.readability_columns``). A scope element id
    past 64 bits (never, for the walk's node addresses) raises OverflowError."""
    out = np.zeros((len(blocks), len(CANDIDATE_NAMES)), dtype=np.float32)
    if blocks:
        compiled.readability_columns(block_ids(blocks), COMPILED_PARAMS, out)
    return out
