"""Per-block features for the main-content predictors, computed once per page.

Each row describes one block by what the classic extractors looked at — text length, link
density (Crunch's links ÷ non-linked words at 5 characters per word), punctuation and the VSSE
``vvtc`` value, a DANAg-style text-vs-markup ratio, tag, depth, tag path, class/id tokens,
position, stop-word ratio, similarity to the title — plus context: the same measures smoothed
over neighbouring blocks and the share of the page's prose that sits in the block's containers.
The columns are computed in C (``blockdex/_features_c.pyx``: one pass over the blocks, each
distinct tag path and class string read once); this module holds the tables and thresholds they
read and the order of the columns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources

import numpy as np

from blockdex import _features_c as compiled
from blockdex.candidates import CANDIDATE_NAMES, COMPILED_PARAMS
from blockdex.cjk import CJK_CLASS
from blockdex.ids import BlockIds, page_ids
from blockdex.page import Block, Page

# -- tables the rules read (one place each) ----------------------------------------------------

CHARS_PER_WORD = 5
"""Crunch's conversion of non-linked characters into words for the link/text ratio."""

TAG_GROUPS: dict[str, str] = {
    "p": "p",
    "h1": "h1",
    "h2": "h23",
    "h3": "h23",
    "h4": "h456",
    "h5": "h456",
    "h6": "h456",
    "li": "li",
    "tr": "tr",
    "td": "td",
    "th": "td",
    "div": "div",
    "section": "div",
    "article": "div",
    "main": "div",
    "center": "div",
    "body": "div",
    "span": "inline",
    "a": "inline",
    "font": "inline",
    "img": "img",
    "pre": "pre",
    "blockquote": "quote",
    "figcaption": "caption",
    "caption": "caption",
    "dt": "dl",
    "dd": "dl",
    "nav": "noise",
    "header": "noise",
    "footer": "noise",
    "aside": "noise",
    "form": "noise",
    "button": "noise",
    "label": "noise",
    "menu": "noise",
    "address": "caption",
    "summary": "h456",
}
TAG_GROUP_NAMES = (
    "p",
    "h1",
    "h23",
    "h456",
    "li",
    "tr",
    "td",
    "div",
    "inline",
    "img",
    "pre",
    "quote",
    "caption",
    "dl",
    "noise",
    "other",
)
PATH_TAGS = (
    "article",
    "main",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "li",
    "table",
    "figure",
    "blockquote",
    "a",
    "section",
    "ul",
)
# Class/id token families (Readability's and boilerpipe's vocabulary, grouped by meaning).
# Each regex is matched against single tokens (class/id values split at spaces, '-' and '_').
ATTR_FAMILIES: tuple[tuple[str, str], ...] = (
    ("content", r"article|content|post|entry|story|body|text|main|blog|prose|richtext|markdown"),
    ("nav", r"nav|menu|topbar|masthead|skip|pagination|pager|tabs?"),
    ("footer", r"footer|copyright|legal|imprint|bottom"),
    ("sidebar", r"sidebar|widget|aside|rail|secondary"),
    ("comment", r"comment|disqus|respond|reply|discussion|replies"),
    ("share", r"share|social|sharing|facebook|twitter|whatsapp|print|email"),
    ("related", r"related|recommend|more|also|popular|trending|teaser|promo|outbrain|taboola|next"),
    ("ad", r"ads?|advert.*|sponsor.*|banner|dfp|gpt|adslot|adunit|commercial"),
    ("overlay", r"cookie|consent|gdpr|newsletter|subscribe|signup|popup|modal|overlay|paywall"),
    ("meta", r"byline|author|date|time|meta|tags?|category|dateline|published"),
    ("crumb", r"breadcrumbs?|crumbs?"),
    ("caption", r"caption|credit|figure|photo|image|media|gallery"),
    ("title", r"title|headline|heading|h1"),
    ("hidden", r"hidden|sr|visually|screen|reader|invisible"),
)
# Families whose words are specific enough to match inside longer tokens ("articlebody").
_SUBSTRING_FAMILIES = frozenset(
    {"content", "comment", "share", "related", "overlay", "sidebar", "footer", "nav", "caption"}
)
_PUNCT_CODES = np.array([ord(c) for c in ".,;:!?。，；：！？"], dtype=np.uint32)
_PUNCT_TABLE = np.zeros(0x10000, dtype=bool)  # by code point; all marks are below U+FFFF
_PUNCT_TABLE[_PUNCT_CODES] = True
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
WORD_RE = re.compile(r"\w+", re.U)
"""A word for the features (and the predictor's ad-label match): a run of word characters."""
_SENT_END = (".", "!", "?", ":", '"', "”", "»", "。", "！", "？", ")")
_WORD_UNIT_RE = re.compile(f"[{CJK_CLASS}]|[^\\s{CJK_CLASS}]+")
GOOD_MIN_WORDS = 8
"""A block with this many words and little link text counts as prose for container shares."""
GOOD_MAX_LINK_DENSITY = 0.3
CONTEXT_WINDOW = 3
"""Neighbours on each side used for smoothed features."""
REPEAT_LEVELS = (2, 3)
"""Ancestor levels at which distinct containers of a tag-path group are counted."""
SCOPE_LEVELS = (1, 2, 3, 5)
"""Ancestor levels whose share of the page's prose is a feature."""
MAIN_CONTAINER_SHARE = 0.6
"""The main container is the deepest element holding this share of the page's prose."""


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    text = resources.files("blockdex.data").joinpath("stopwords.txt").read_text(encoding="utf-8")
    return frozenset(
        w for line in text.splitlines() if not line.startswith("#") for w in line.split()
    )


def in_family(blocks: Iterable[Block], family: str) -> np.ndarray:
    """Per block, whether its class/id ancestry (``Block.attrs``: the element's and its nearest
    ancestors' tokens) names ``family`` of :data:`ATTR_FAMILIES` — the ``attr_<family>`` column."""
    k = [name for name, _ in ATTR_FAMILIES].index(family)
    return _attr_matrix([b.attrs for b in blocks])[:, k] > 0


def _family_word_table() -> list[tuple[int, str, str]]:
    """ATTR_FAMILIES as ``(family, mode, word)`` rows for the compiled matcher — mode ``whole``:
    the token is the word, ``prefix``: it starts with it, ``anywhere``: it contains it. A token
    is a run of at least two characters between whitespace, ``_`` and ``-``; a family of
    _SUBSTRING_FAMILIES is found anywhere in it, the others match it whole. A pattern must be
    words joined by ``|`` (each with an optional ``s?`` or ``.*``): the matcher reads no more."""
    rows: list[tuple[int, str, str]] = []
    for k, (name, rx) in enumerate(ATTR_FAMILIES):
        for alt in rx.split("|"):
            word, tail = (alt[:-2], alt[-2:]) if alt.endswith(("s?", ".*")) else (alt, "")
            if not re.fullmatch(r"[a-z0-9]+", word):
                raise ValueError(f"ATTR_FAMILIES {name!r}: {alt!r} is not a word the matcher reads")
            if name in _SUBSTRING_FAMILIES:  # a search: the optional tail adds nothing
                rows.append((k, "anywhere", word))
            elif tail == ".*":
                rows.append((k, "prefix", word))
            else:
                rows.append((k, "whole", word))
                if tail == "s?":
                    rows.append((k, "whole", word + "s"))
    return rows


def _load_family_words() -> None:
    """Load the word table into the compiled matcher (once, when this module is imported)."""
    modes = {"whole": 0, "prefix": 1, "anywhere": 2}
    compiled.set_family_words([(k, modes[m], w) for k, m, w in _family_word_table()])


_load_family_words()


def readable(text: str) -> bool:
    """Whether ``text`` holds a letter or a digit (``str.isalnum``'s): a line a reader can read,
    not only marks, arrows or spaces."""
    return any(ch.isalnum() for ch in text)


def word_count(text: str) -> int:
    """Words of ``text``: ``text.split()``'s words, except that each character of
    :data:`blockdex.cjk.CJK_RANGES` is a word of its own (``"2026年10月"`` is four words)."""
    if text.isascii():
        return len(text.split())
    return len(_WORD_UNIT_RE.findall(text))


_LEVEL_MASKS: dict[str, int] = {}
"""Family masks of class/id levels seen (the compiled matcher's cache; cleared when large)."""


def _attr_matrix(attr_strings: Iterable[str]) -> np.ndarray:
    """One row per attrs string (levels joined by ``" | "``, the nearest element last): the
    families named in any level ("far"), then in the nearest two ("near"), as 0/1 floats."""
    strings = list(attr_strings)
    out = np.empty((len(strings), 2 * len(ATTR_FAMILIES)), dtype=np.float32)
    if len(_LEVEL_MASKS) > 65536:
        _LEVEL_MASKS.clear()
    compiled.attr_family_rows(strings, _LEVEL_MASKS, out)
    return out


_TAG_INDEX = {name: i for i, name in enumerate(TAG_GROUP_NAMES)}

LOCAL_NAMES = (
    "log_chars",
    "log_words",
    "link_density",
    "crunch_link_ratio",
    "punct_per_word",
    "ends_sentence",
    "starts_upper",
    "digit_ratio",
    "stopword_ratio",
    "title_overlap",
    "title_cover",
    "is_split",
    "from_script",
    "depth",
    "position",
    "char_position",
    "vvtc",
    "n_links",
)
BASE_FEATURE_NAMES: tuple[str, ...] = (
    *LOCAL_NAMES,
    *(f"tag_{g}" for g in TAG_GROUP_NAMES),
    *(f"path_{t}" for t in PATH_TAGS),
    *(f"attr_{n}" for n, _ in ATTR_FAMILIES),
    *(f"near_attr_{n}" for n, _ in ATTR_FAMILIES),
    "page_log_blocks",
    "page_log_words",
    "page_markup_ratio",
    "path_group_share",
    "path_group_count",
    *(f"path_group_containers{k}" for k in REPEAT_LEVELS),
    *(f"scope{k}_good_share" for k in SCOPE_LEVELS),
    "in_main_container",
    *(f"prev{k}_log_words" for k in (1, 2)),
    *(f"next{k}_log_words" for k in (1, 2)),
    *(f"prev{k}_link_density" for k in (1, 2)),
    *(f"next{k}_link_density" for k in (1, 2)),
    "prev_is_heading",
    "next_is_heading",
    "win_log_words",
    "win_link_density",
    "win_good",
    "dist_good",
)
FEATURE_NAMES: tuple[str, ...] = (*BASE_FEATURE_NAMES, *CANDIDATE_NAMES)
"""The first stage's columns: the block's own, page and context columns, then readability's
decision (:mod:`blockdex.candidates`)."""


def _block_columns(ids: BlockIds, stops: frozenset[str], title_words: set[str]) -> np.ndarray:
    """What :func:`block_features` reads from each block (of the blocks' table ``ids``), as an
    ``(n, 15)`` float64 matrix: characters, words, stop words, title words, link characters,
    links, heading, tag group index, ends a sentence, starts upper-case, split part, from a
    script, depth (≤ 60, / 60), punctuation marks, digits. Filled in one compiled pass
    (``_features_c.block_columns``).
    """
    out = np.empty((ids.n, 15), dtype=np.float64)
    compiled.block_columns(
        ids, stops, title_words, TAG_GROUPS, _TAG_INDEX, _HEADING_TAGS, _SENT_END,
        _PUNCT_TABLE.view(np.uint8), out,
    )  # fmt: skip
    return out


def block_features(page: Page) -> np.ndarray:
    """A ``(n_blocks, len(FEATURE_NAMES))`` float32 matrix for ``page``, in one compiled call
    (``_features_c.block_feature_matrix``) after the per-block columns.

    The container columns come from the scopes (enclosing elements) of all blocks:

    * how many distinct containers REPEAT_LEVELS up hold blocks of its tag-path group — teaser
      cards, product tiles and comment items repeat one path in many sibling containers, an
      article's paragraphs share one container;
    * the share of the page's prose (blocks with GOOD_MIN_WORDS words and a link density below
      GOOD_MAX_LINK_DENSITY) inside its ancestor SCOPE_LEVELS up;
    * whether it lies in the main container: the deepest element holding at least
      MAIN_CONTAINER_SHARE of the prose (the first such, in page order).

    A scope element id past 64 bits (never, for the walk's node addresses) raises OverflowError.
    """
    blocks = page.blocks
    n = len(blocks)
    if n == 0:
        return np.zeros((0, len(FEATURE_NAMES)), dtype=np.float32)
    stops = stopwords()
    title_words = set(WORD_RE.findall(page.title.lower())) if page.title else set()
    ids = page_ids(page)
    cols = _block_columns(ids, stops, title_words)
    # Tag-path and class/id vectors repeat within a page: compute each distinct one once.
    path_rows = np.empty((len(ids.paths), len(PATH_TAGS)), dtype=np.float32)
    compiled.path_rows(ids.paths, PATH_TAGS, path_rows)
    attr_rows = _attr_matrix(ids.attrs)
    n_title = max(len(title_words), 1)
    out = np.empty((n, len(FEATURE_NAMES)), dtype=np.float32)
    compiled.block_feature_matrix(
        cols, ids, path_rows, attr_rows, float(page.html_bytes),
        n_title, REPEAT_LEVELS, SCOPE_LEVELS, MAIN_CONTAINER_SHARE, CHARS_PER_WORD,
        GOOD_MIN_WORDS, GOOD_MAX_LINK_DENSITY, CONTEXT_WINDOW, out, COMPILED_PARAMS,
    )  # fmt: skip
    return out


# -- second stage: the first stage's probabilities around each block ---------------------------

PROB_WINDOWS = (2, 5, 15)
"""Half-widths of the windows over which neighbours' first-stage probabilities are averaged."""
PROB_SCOPE_LEVELS = (1, 2, 3, 4)
"""Ancestor levels over which the mean first-stage probability of the blocks inside is taken."""

CONTEXT_NAMES: tuple[str, ...] = (
    "p_self",
    *(f"p_prev{k}" for k in (1, 2, 3)),
    *(f"p_next{k}" for k in (1, 2, 3)),
    *(f"p_win{w}" for w in PROB_WINDOWS),
    *(f"p_scope{k}" for k in PROB_SCOPE_LEVELS),
    "p_path_group",
    "p_max_before",
    "p_max_after",
    "p_page_mean",
    "p_page_max",
    "p_rank",
)


def block_groups(page: Page) -> np.ndarray:
    """Per block, integer ids of its tag-path group and of its ancestors at PROB_SCOPE_LEVELS.

    Blocks with the same id share that group; :func:`context_features` averages over groups.
    Only which blocks share an id means anything (the compiled partition numbers each column
    on its own). A block with fewer than ``k + 1`` scopes is grouped at level ``k`` by its
    outermost one, a block without scopes alone.
    """
    out = np.zeros((len(page.blocks), 1 + len(PROB_SCOPE_LEVELS)), dtype=np.int32)
    compiled.block_groups(page_ids(page), PROB_SCOPE_LEVELS, out)
    return out


def context_features(prob: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Neighbourhood of the first-stage probabilities: what a sequence smoother would see.

    A block between two confident content blocks is likely content too (a short paragraph or a
    subheading); a block whose container, or whose tag-path group, holds mostly content is too.
    ``groups`` comes from :func:`block_groups`.
    """
    n = len(prob)
    if n == 0:
        return np.zeros((0, len(CONTEXT_NAMES)), dtype=np.float32)
    p = prob.astype(np.float64)
    out = np.empty((n, len(CONTEXT_NAMES)), dtype=np.float32)
    order = np.argsort(-p, kind="stable")
    compiled.context_matrix(
        p, np.ascontiguousarray(groups, dtype=np.int32), PROB_WINDOWS, float(p.mean()),
        order, out,
    )  # fmt: skip
    return out
