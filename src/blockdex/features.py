"""Per-block features for the main-content predictors, computed once per page.

Each row describes one block by what the classic extractors looked at — text length, link
density (Crunch's links ÷ non-linked words at 5 characters per word), punctuation and the VSSE
``vvtc`` value, a DANAg-style text-vs-markup ratio, tag, depth, tag path, class/id tokens,
position, stop-word ratio, similarity to the title — plus context: the same measures smoothed
over neighbouring blocks and the share of the page's prose that sits in the block's containers.
Cheap per-block work happens in one Python loop (cached per distinct tag path and class string);
context features are vectorised with numpy.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources

import numpy as np

from blockdex.candidates import CANDIDATE_NAMES, COMPILED_PARAMS, python_readability_columns
from blockdex.cjk import CJK_CLASS
from blockdex.page import Block, Page
from blockdex.speedups import twin

compiled = twin(__name__)
"""This module's compiled twin (``blockdex/_features_c.pyx``), or None: then the Python code runs."""

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
_FAMILY_RES = tuple(
    (k, re.compile(rx) if name in _SUBSTRING_FAMILIES else re.compile(f"(?:{rx})$"))
    for k, (name, rx) in enumerate(ATTR_FAMILIES)
)
_TOKEN_SPLIT_RE = re.compile(r"[\s_\-]+")


@lru_cache(maxsize=65536)
def _token_families(token: str) -> tuple[int, ...]:
    return tuple(
        k
        for k, rx in _FAMILY_RES
        if rx.match(token) or (rx.pattern[-1] != "$" and rx.search(token))
    )


_PUNCT_RE = re.compile(r"[.,;:!?。，；：！？]")
_PUNCT_CODES = np.array([ord(c) for c in ".,;:!?。，；：！？"], dtype=np.uint32)
_PUNCT_TABLE = np.zeros(0x10000, dtype=bool)  # by code point; all marks are below U+FFFF
_PUNCT_TABLE[_PUNCT_CODES] = True
_HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
WORD_RE = re.compile(r"\w+", re.U)
"""A word for the features (and the predictor's ad-label match): a run of word characters."""
_DIGIT_RE = re.compile(r"\d")
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


@lru_cache(maxsize=65536)
def _level_mask(level: str) -> int:
    """Bit mask of the families found in one element's class/id tokens."""
    mask = 0
    for tok in _TOKEN_SPLIT_RE.split(level):
        if len(tok) >= 2:
            for j in _token_families(tok):
                mask |= 1 << j
    return mask


@lru_cache(maxsize=16384)
def _attr_masks(attrs: str) -> tuple[int, int]:
    """Bit masks of the class/id families in the ancestors' tokens, and in the nearest two
    elements (bit j: ATTR_FAMILIES[j])."""
    if not attrs:
        return 0, 0
    masks = [_level_mask(level) for level in attrs.split(" | ")]
    far = 0
    for m in masks:
        far |= m
    near = masks[-1] | (masks[-2] if len(masks) > 1 else 0)
    return far, near


_FAMILY_BITS = np.arange(len(ATTR_FAMILIES), dtype=np.int64)


def in_family(blocks: Iterable[Block], family: str) -> np.ndarray:
    """Per block, whether its class/id ancestry (``Block.attrs``: the element's and its nearest
    ancestors' tokens) names ``family`` of :data:`ATTR_FAMILIES` — the ``attr_<family>`` column."""
    bit = 1 << [name for name, _ in ATTR_FAMILIES].index(family)
    return np.array([bool(_attr_masks(b.attrs)[0] & bit) for b in blocks], dtype=bool)


def _family_word_table() -> list[tuple[int, str, str]] | None:
    """ATTR_FAMILIES as ``(family, mode, word)`` rows for the compiled matcher — mode ``whole``:
    the token is the word, ``prefix``: it starts with it, ``anywhere``: it contains it — or None
    when a pattern is more than words joined by ``|`` (each with an optional ``s?`` or ``.*``)."""
    rows: list[tuple[int, str, str]] = []
    for k, (name, rx) in enumerate(ATTR_FAMILIES):
        for alt in rx.split("|"):
            word, tail = (alt[:-2], alt[-2:]) if alt.endswith(("s?", ".*")) else (alt, "")
            if not re.fullmatch(r"[a-z0-9]+", word):
                return None
            if name in _SUBSTRING_FAMILIES:  # a search: the optional tail adds nothing
                rows.append((k, "anywhere", word))
            elif tail == ".*":
                rows.append((k, "prefix", word))
            else:
                rows.append((k, "whole", word))
                if tail == "s?":
                    rows.append((k, "whole", word + "s"))
    return rows


def _compiled_families() -> bool:
    """Load the word table into the compiled matcher; False when it cannot be used."""
    rows = _family_word_table() if compiled is not None else None
    if rows is None:
        return False
    modes = {"whole": 0, "prefix": 1, "anywhere": 2}
    compiled.set_family_words([(k, modes[m], w) for k, m, w in rows])
    return True


_COMPILED_FAMILIES = _compiled_families()


def word_count(text: str) -> int:
    """Words of ``text``: ``text.split()``'s words, except that each character of
    :data:`blockdex.cjk.CJK_RANGES` is a word of its own (``"2026年10月"`` is four words)."""
    if text.isascii():
        return len(text.split())
    return len(_WORD_UNIT_RE.findall(text))


_LEVEL_MASKS: dict[str, int] = {}
"""Family masks of class/id levels seen (the compiled path's cache; cleared when large)."""


def _attr_matrix(attr_strings: Iterable[str]) -> np.ndarray:
    """One row per attrs string: its family bits (far, then near) as 0/1 floats."""
    if compiled is not None and _COMPILED_FAMILIES:
        strings = list(attr_strings)
        out = np.empty((len(strings), 2 * len(ATTR_FAMILIES)), dtype=np.float32)
        if len(_LEVEL_MASKS) > 65536:
            _LEVEL_MASKS.clear()
        compiled.attr_family_rows(strings, _LEVEL_MASKS, out)
        return out
    masks = np.array([_attr_masks(a) for a in attr_strings], dtype=np.int64).reshape(-1, 2)
    far = (masks[:, :1] >> _FAMILY_BITS) & 1
    near = (masks[:, 1:] >> _FAMILY_BITS) & 1
    return np.hstack([far, near]).astype(np.float32)


@lru_cache(maxsize=4096)
def _path_vector(path: str) -> tuple[float, ...]:
    tags = path.split(">")
    present = set(tags[:-1])
    return tuple(1.0 if t in present else 0.0 for t in PATH_TAGS)


def _tag_index(tag: str) -> int:
    return TAG_GROUP_NAMES.index(TAG_GROUPS.get(tag, "other"))


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


def _block_columns(
    blocks: tuple[Block, ...], stops: frozenset[str], title_words: set[str]
) -> np.ndarray:
    """What :func:`block_features` reads from each block, as an ``(n, 15)`` float64 matrix:
    characters, words, stop words, title words, link characters, links, heading, tag group
    index, ends a sentence, starts upper-case, split part, from a script, depth (≤ 60, / 60),
    punctuation marks, digits.

    The compiled twin (``_features_c.block_columns``) fills the same matrix in one pass.
    """
    out = np.empty((len(blocks), 15), dtype=np.float64)
    if compiled is not None:
        compiled.block_columns(
            blocks, stops, title_words, TAG_GROUPS, _TAG_INDEX, _HEADING_TAGS, _SENT_END,
            _PUNCT_TABLE.view(np.uint8), out,
        )  # fmt: skip
        return out
    texts = [b.text for b in blocks]
    lowered = [t.lower().split() for t in texts]
    out[:, 0] = [len(t) for t in texts]
    out[:, 1] = [
        len(w) if t.isascii() else word_count(t) for t, w in zip(texts, lowered, strict=True)
    ]
    out[:, 2] = [sum(map(stops.__contains__, w)) for w in lowered]
    out[:, 3] = [sum(map(title_words.__contains__, w)) for w in lowered] if title_words else 0.0
    out[:, 4] = [b.link_chars for b in blocks]
    out[:, 5] = [b.n_links for b in blocks]
    out[:, 6] = [b.tag in _HEADING_TAGS for b in blocks]
    out[:, 7] = [_TAG_INDEX[TAG_GROUPS.get(b.tag, "other")] for b in blocks]
    out[:, 8] = [t.rstrip().endswith(_SENT_END) for t in texts]
    out[:, 9] = [t[:1].isupper() for t in texts]
    out[:, 10] = [b.split is not None for b in blocks]
    out[:, 11] = [b.source != "dom" for b in blocks]
    out[:, 12] = [min(b.depth, 60) / 60.0 for b in blocks]
    # Character classes counted over all blocks at once: one code-point array, one bincount.
    cp = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
    owner = np.repeat(np.arange(len(blocks)), out[:, 0].astype(np.int64))
    is_punct = _PUNCT_TABLE[np.minimum(cp, 0xFFFF)]  # U+FFFF is no mark: astral chars map there
    out[:, 13] = np.bincount(owner, weights=is_punct, minlength=len(blocks))
    out[:, 14] = np.bincount(owner, weights=(cp >= 48) & (cp <= 57), minlength=len(blocks))
    return out


def _scope_columns(
    blocks: tuple[Block, ...], path_of: np.ndarray, good_words: np.ndarray, total_good: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per block, from the scopes (enclosing elements) of all blocks:

    * how many distinct containers REPEAT_LEVELS up hold blocks of its tag-path group — teaser
      cards, product tiles and comment items repeat one path in many sibling containers, an
      article's paragraphs share one container (``(n, len(REPEAT_LEVELS))`` counts);
    * the share of the page's prose (``good_words``) inside its ancestor SCOPE_LEVELS up;
    * whether it lies in the main container: the deepest element holding at least
      MAIN_CONTAINER_SHARE of the prose (the first such, in page order).

    The compiled twin (``_scope_fill`` in ``_features_c.pyx``, inside
    ``block_feature_matrix``) runs the same loops; these run when it is absent or an element id
    does not fit 64 bits.
    """
    n = len(blocks)
    repeat_counts = np.zeros((n, len(REPEAT_LEVELS)), dtype=np.float64)
    scope_share = np.zeros((n, len(SCOPE_LEVELS)), dtype=np.float32)
    in_main = np.zeros(n, dtype=np.float32)
    for j, k in enumerate(REPEAT_LEVELS):
        seen: dict[int, set[object]] = {}
        for pid, b in zip(path_of, blocks, strict=True):
            sc = b.scope
            seen.setdefault(pid, set()).add(sc[-1 - k] if len(sc) > k else None)
        repeat_counts[:, j] = [len(seen[pid]) for pid in path_of]
    container_words: dict[int, float] = {}
    for b, gw in zip(blocks, good_words, strict=True):
        if gw:
            for sid in b.scope:
                container_words[sid] = container_words.get(sid, 0.0) + float(gw)
    # The main container encloses a good block, so only good blocks' scopes need checking.
    main_id = None
    best_depth = -1
    for i in np.flatnonzero(good_words):
        for depth, sid in enumerate(blocks[i].scope):
            if depth > best_depth and container_words[sid] >= MAIN_CONTAINER_SHARE * total_good:
                best_depth, main_id = depth, sid
    for i, b in enumerate(blocks):
        sc = b.scope
        for j, k in enumerate(SCOPE_LEVELS):
            if len(sc) > k:
                scope_share[i, j] = container_words.get(sc[-1 - k], 0.0) / total_good
        if main_id is not None and main_id in sc:
            in_main[i] = 1.0
    return repeat_counts, scope_share, in_main


def block_features(page: Page) -> np.ndarray:
    """A ``(n_blocks, len(FEATURE_NAMES))`` float32 matrix for ``page``."""
    blocks = page.blocks
    n = len(blocks)
    if n == 0:
        return np.zeros((0, len(FEATURE_NAMES)), dtype=np.float32)
    stops = stopwords()
    title_words = set(WORD_RE.findall(page.title.lower())) if page.title else set()
    cols = _block_columns(blocks, stops, title_words)
    # Tag-path and class/id vectors repeat within a page: compute each distinct one once.
    path_ids, path_of, attr_ids, attr_of = _path_attr_ids(blocks)
    if compiled is not None:
        path_rows = np.empty((len(path_ids), len(PATH_TAGS)), dtype=np.float32)
        compiled.path_rows(list(path_ids), PATH_TAGS, path_rows)
    else:
        path_rows = np.array([_path_vector(k) for k in path_ids], dtype=np.float32)
    attr_rows = _attr_matrix(attr_ids)
    n_title = max(len(title_words), 1)
    if compiled is not None:  # everything below in one compiled call, same floats
        out = np.empty((n, len(FEATURE_NAMES)), dtype=np.float32)
        try:
            compiled.block_feature_matrix(
                blocks, cols, path_of, attr_of, path_rows, attr_rows, float(page.html_bytes),
                n_title, REPEAT_LEVELS, SCOPE_LEVELS, MAIN_CONTAINER_SHARE, CHARS_PER_WORD,
                GOOD_MIN_WORDS, GOOD_MAX_LINK_DENSITY, CONTEXT_WINDOW, out, COMPILED_PARAMS,
            )  # fmt: skip
            return out
        except OverflowError:  # an element id past 64 bits: the scope loops in Python below
            pass
    chars_arr = np.maximum(cols[:, 0], 1.0)
    words_arr = cols[:, 1]
    total_chars = float(chars_arr.sum()) or 1.0
    total_words = float(words_arr.sum()) or 1.0
    page_feats = np.array(
        [
            math.log1p(n),
            math.log1p(total_words),
            math.log1p(page.html_bytes / total_chars) if page.html_bytes else 0.0,
        ],
        dtype=np.float32,
    )
    # Containers: share of the page's prose ("good" blocks) inside each ancestor.
    link_arr = np.minimum(cols[:, 4] / chars_arr, 1.0)
    good = (words_arr >= GOOD_MIN_WORDS) & (link_arr < GOOD_MAX_LINK_DENSITY)
    good_words = np.where(good, words_arr, 0.0)
    total_good = float(good_words.sum()) or 1.0
    scopes = _scope_columns(blocks, path_of, good_words, total_good)
    if compiled is not None:  # the numeric part below in one compiled pass, same floats
        out = np.empty((n, len(BASE_FEATURE_NAMES)), dtype=np.float32)
        compiled.feature_matrix(
            cols, path_of, attr_of,
            path_rows, attr_rows, page_feats, n_title, *scopes, CHARS_PER_WORD,
            GOOD_MIN_WORDS, GOOD_MAX_LINK_DENSITY, CONTEXT_WINDOW, out,
        )  # fmt: skip
        return np.hstack([out, python_readability_columns(blocks)])
    local = _local_columns(cols, chars_arr, total_chars, link_arr, n_title)
    context = _context_columns(cols, total_words, local[:, 1], link_arr, good, path_of, scopes)
    tag_onehot = np.zeros((n, len(TAG_GROUP_NAMES)), dtype=np.float32)
    tag_onehot[np.arange(n), cols[:, 7].astype(np.intp)] = 1.0
    return np.hstack(
        [
            local,
            tag_onehot,
            path_rows[path_of],
            attr_rows[attr_of],
            np.broadcast_to(page_feats, (n, 3)),
            context,
            python_readability_columns(blocks),
        ]
    ).astype(np.float32, copy=False)


def _path_attr_ids(
    blocks: tuple[Block, ...],
) -> tuple[dict[str, int], np.ndarray, dict[str, int], np.ndarray]:
    """Distinct tag paths and attrs strings numbered in order of first appearance, and each
    block's two numbers."""
    if compiled is not None:
        path_of = np.empty(len(blocks), dtype=np.intp)
        attr_of = np.empty(len(blocks), dtype=np.intp)
        path_ids, attr_ids = compiled.path_attr_ids(blocks, path_of, attr_of)
        return path_ids, path_of, attr_ids, attr_of
    path_ids: dict[str, int] = {}
    paths = [path_ids.setdefault(b.path, len(path_ids)) for b in blocks]
    attr_ids: dict[str, int] = {}
    attrs = [attr_ids.setdefault(b.attrs, len(attr_ids)) for b in blocks]
    return path_ids, np.asarray(paths, dtype=np.intp), attr_ids, np.asarray(attrs, dtype=np.intp)


def _local_columns(
    cols: np.ndarray, chars_arr: np.ndarray, total_chars: float, link_arr: np.ndarray, n_title: int
) -> np.ndarray:
    """The LOCAL_NAMES columns from :func:`_block_columns`' matrix (``chars_arr``: characters,
    at least 1; ``link_arr``: link density)."""
    n = len(cols)
    words_arr = cols[:, 1]
    nw = np.maximum(words_arr, 1.0)
    title_arr = cols[:, 3]
    linkc = cols[:, 4]
    nlinks = cols[:, 5]
    punct_arr = cols[:, 13]
    nonlinked_words = np.maximum(chars_arr - linkc, 0.0) / CHARS_PER_WORD
    local = np.empty((n, len(LOCAL_NAMES)), dtype=np.float32)
    local[:, 0] = np.log1p(chars_arr)
    local[:, 1] = np.log1p(words_arr)
    local[:, 2] = link_arr
    local[:, 3] = np.minimum(nlinks / np.maximum(nonlinked_words, 1.0), 10.0)
    local[:, 4] = punct_arr / nw
    local[:, 5] = cols[:, 8]
    local[:, 6] = cols[:, 9]
    local[:, 7] = cols[:, 14] / chars_arr
    local[:, 8] = cols[:, 2] / nw
    local[:, 9] = title_arr / nw
    local[:, 10] = np.minimum(title_arr / n_title, 1.0)
    local[:, 11] = cols[:, 10]
    local[:, 12] = cols[:, 11]
    local[:, 13] = cols[:, 12]
    local[:, 14] = np.arange(n, dtype=np.float32) / n
    local[:, 17] = np.log1p(nlinks)
    local[:, 15] = (np.cumsum(chars_arr) - chars_arr) / total_chars
    vvtc = (chars_arr / total_chars) * (punct_arr / max(float(punct_arr.sum()), 1.0))
    local[:, 16] = vvtc / max(float(vvtc.max()), 1e-12)
    return local


def _context_columns(
    cols: np.ndarray,
    total_words: float,
    log_words: np.ndarray,
    link_arr: np.ndarray,
    good: np.ndarray,
    path_of: np.ndarray,
    scopes: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """The feature columns after the page-level ones: tag-path groups, containers (``scopes``
    from :func:`_scope_columns`), neighbours and windows."""
    n = len(cols)
    words_arr = cols[:, 1]
    repeat_counts, scope_share, in_main = scopes
    # Tag-path groups: boilerplate repeats a path with little text; prose shares one path.
    path_arr = np.asarray(path_of, dtype=np.intp)
    path_share = np.bincount(path_arr, weights=words_arr)[path_arr] / total_words
    path_count = np.log1p(np.bincount(path_arr)[path_arr].astype(np.float64))
    repeats = [np.log1p(repeat_counts[:, j]) for j in range(len(REPEAT_LEVELS))]

    def shifted(a: np.ndarray, k: int) -> np.ndarray:
        out = np.zeros_like(a)
        if k > 0:
            out[k:] = a[:-k]
        else:
            out[:k] = a[-k:]
        return out

    def window_mean(a: np.ndarray) -> np.ndarray:
        w = CONTEXT_WINDOW
        c = np.concatenate([[0.0], np.cumsum(a, dtype=np.float64)])
        idx = np.arange(n)
        lo = np.maximum(idx - w, 0)
        hi = np.minimum(idx + w + 1, n)
        return ((c[hi] - c[lo]) / (hi - lo)).astype(np.float32)

    good_idx = np.flatnonzero(good)
    if good_idx.size:
        pos = np.searchsorted(good_idx, np.arange(n))
        left = good_idx[np.clip(pos - 1, 0, good_idx.size - 1)]
        right = good_idx[np.clip(pos, 0, good_idx.size - 1)]
        dist = np.minimum(np.abs(np.arange(n) - left), np.abs(right - np.arange(n)))
        dist_good = np.log1p(dist).astype(np.float32)
    else:
        dist_good = np.full(n, math.log1p(n), dtype=np.float32)
    hf = (cols[:, 6] > 0).astype(np.float32)
    return np.column_stack(
        [
            path_share,
            path_count,
            *repeats,
            scope_share,
            in_main,
            shifted(log_words, 1),
            shifted(log_words, 2),
            shifted(log_words, -1),
            shifted(log_words, -2),
            shifted(link_arr, 1),
            shifted(link_arr, 2),
            shifted(link_arr, -1),
            shifted(link_arr, -2),
            shifted(hf, 1),
            shifted(hf, -1),
            window_mean(log_words),
            window_mean(link_arr),
            window_mean(good.astype(np.float32)),
            dist_good,
        ]
    )


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
    Only which blocks share an id means anything: the compiled partition (the one the second
    stage uses at run time) numbers each column on its own, this loop all columns at once.
    """
    blocks = page.blocks
    out = np.zeros((len(blocks), 1 + len(PROB_SCOPE_LEVELS)), dtype=np.int32)
    if compiled is not None and compiled.block_groups(blocks, PROB_SCOPE_LEVELS, out):
        return out
    ids: dict[object, int] = {}
    for i, b in enumerate(blocks):
        out[i, 0] = ids.setdefault(("path", b.path), len(ids))
        sc = b.scope
        for j, k in enumerate(PROB_SCOPE_LEVELS, start=1):
            key = sc[-1 - k] if len(sc) > k else (sc[0] if sc else ("self", i))
            out[i, j] = ids.setdefault(key, len(ids))
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
    if compiled is not None:  # the same columns in one compiled pass
        out = np.empty((n, len(CONTEXT_NAMES)), dtype=np.float32)
        order = np.argsort(-p, kind="stable")
        compiled.context_matrix(
            p, np.ascontiguousarray(groups, dtype=np.int32), PROB_WINDOWS, float(p.mean()),
            order, out,
        )  # fmt: skip
        return out
    cols: list[np.ndarray] = [p]
    for k in (1, 2, 3):
        prev = np.zeros(n)
        if k < n:
            prev[k:] = p[:-k]
        cols.append(prev)
    for k in (1, 2, 3):
        nxt = np.zeros(n)
        if k < n:
            nxt[: n - k] = p[k:]
        cols.append(nxt)
    c = np.concatenate([[0.0], np.cumsum(p)])
    idx = np.arange(n)
    for w in PROB_WINDOWS:
        lo = np.maximum(idx - w, 0)
        hi = np.minimum(idx + w + 1, n)
        cols.append((c[hi] - c[lo]) / (hi - lo))
    size = int(groups.max()) + 1
    for j in (*range(1, groups.shape[1]), 0):  # scope levels, then the path group
        g = groups[:, j]
        sums = np.bincount(g, weights=p, minlength=size)
        counts = np.bincount(g, minlength=size)
        cols.append(sums[g] / counts[g])
    cols.append(np.concatenate([[0.0], np.maximum.accumulate(p)[:-1]]))
    cols.append(np.concatenate([np.maximum.accumulate(p[::-1])[::-1][1:], [0.0]]))
    cols.append(np.full(n, p.mean()))
    cols.append(np.full(n, p.max()))
    cols.append(np.argsort(np.argsort(-p, kind="stable"), kind="stable") / n)
    return np.column_stack(cols).astype(np.float32)
