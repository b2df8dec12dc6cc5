"""Units: the page's articles and, inside them, sections — found once, at segmentation.

Blocks are the smallest addressable pieces of a page; *units* are what a reader sees as wholes:

* **articles** — the page's own story, the next story a news site appends below it, each story
  of a digest. Found from the DOM, in two ways:

  1. *declared* containers: ``<article>``, ``<main>``, ``role="article"|"main"`` and schema.org
     items whose ``itemtype`` is an Article, Posting or Report (:func:`declared_source`);
  2. *repeated story containers*: where two or more headlines of one level (``h1``, ``h2`` or
     ``h3``) sit in different children of their deepest common ancestor, each such child starts
     a story that runs until the next one starts (an infinite-scroll wrapper per story, pages
     pasted one after the other, a digest's entries) — provided each holds a real text
     (:attr:`UnitConfig.min_article_chars`).

* **sections** — a heading and what follows it up to the next heading of the same or a higher
  level, never past the end of the article it sits in.

A unit is a contiguous range of block indices (a DOM element's blocks are contiguous in reading
order). The **primary** article is the one the page's own title names: its headline is the
heading that best matches the title sources (:func:`title_sources`: ``og:title`` /
``twitter:title`` / JSON-LD ``headline``, ``<title>`` with and without its site-name part, the
canonical URL's slug), and of the article units around that headline it is the outermost one
that holds no *rival* — another article with its own headline at the same or a higher level that
does not name the page. Predictors use it: main content comes from the primary article (the
bodies of rival articles are dropped), and a query that names an article or a section gets it
whole.
"""

from __future__ import annotations

import math
import re
import sys
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, pairwise, repeat
from operator import attrgetter
from typing import NamedTuple
from urllib.parse import unquote, urlsplit

import numpy as np

from blockdex import _units_c as compiled
from blockdex.cjk import WORD_PATTERN
from blockdex.errors import check_minimums
from blockdex.features import stopwords
from blockdex.ids import BlockIds, block_ids, compiled_found, page_ids
from blockdex.items import item_units
from blockdex.page import NO_PRIMARY, Block, ItemList, Page, Primary, Unit

HEADING_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
ARTICLE_ITEMTYPE_RE = re.compile(r"(?:Article|Posting|Report)\b", re.I)
"""schema.org types of a story: Article, NewsArticle, BlogPosting, DiscussionForumPosting,
Report… (a Product or a Person item is not an article)."""
TITLE_SEPARATORS = re.compile(r"(?<!\s)\s*+(?:[|»•]|(?<=\s)(?:-|–|—|::|·|/)(?=\s))\s*+")
"""What sites put between a page's own title and their name in ``<title>``: ``|``, ``»`` or
``•`` anywhere, a dash, ``::``, ``·`` or ``/`` between spaces (not ``Jean-Paul``). A match
starts only where a run of spaces starts, and the runs are taken possessively: linear time."""
_WORD_RE = re.compile(WORD_PATTERN)
_TAG = attrgetter("tag")
_SLUG_ID_RE = re.compile(r"^(?:\d+|[0-9a-f]{8,}|index|amp|html?|php|aspx?)$", re.I)
_SLUG_EXT_RE = re.compile(r"\.[A-Za-z0-9]{1,5}$")
_SLUG_SPLIT_RE = re.compile(r"[-_+\s]+")


@dataclass(frozen=True, slots=True)
class UnitConfig:
    """Tunables of unit finding."""

    min_article_chars: int = 300
    """A container is an article unit only with this much text (~50 words; a teaser card is
    not). Characters, not words: CJK text has no spaces."""
    headline_levels: int = 3
    """Headings ``h1`` … ``h{headline_levels}`` can be an article's headline."""
    title_match: float = 0.6
    """A heading names the page (or a query names a heading) from this word overlap (Dice)."""
    site_name_words: int = 4
    """A part of ``<title>`` that names no site (:func:`site_keys`) is cut off as the site's
    name only when it is this short (``Harbour Notes``): a long part is the story or a slogan."""
    min_repeated_share: float = 0.15
    """Sibling elements of one tag and class that each hold this share of the page's text are
    story containers, with or without headings."""
    story_levels: int = 2
    """Repeated story containers are found from ``h1`` and ``h2`` headlines (``h3`` is mostly
    teasers and sidebar titles)."""
    max_headings: int = 200
    """At most this many headlines are read per page to find story containers (bounded work)."""

    def __post_init__(self) -> None:
        check_minimums(self, _UNIT_MINIMUMS)


_UNIT_MINIMUMS = {
    "min_article_chars": 0,
    "headline_levels": 1,
    "title_match": 0.0,
    "max_headings": 0,
    "story_levels": 1,
    "min_repeated_share": 0.0,
    "site_name_words": 0,
}
DEFAULT_UNITS = UnitConfig()


# -- words and titles --------------------------------------------------------------------------


def words(text: str) -> list[str]:
    """Lower-cased words (each CJK character a word), for title and heading matching."""
    return _WORD_RE.findall(text.lower())


def word_overlap(a: Sequence[str], b: Sequence[str]) -> float:
    """Dice coefficient of two word lists as sets: 1.0 for the same words, 0.0 for none shared."""
    sa, sb = set(a), set(b)
    if not sa or not sb:
        return 0.0
    return 2 * len(sa & sb) / (len(sa) + len(sb))


_NOT_ALNUM_RE = re.compile(r"[\W_]+")
r"""Characters ``str.isalnum`` refuses (``\w`` is exactly those it accepts, and ``_``)."""


def _squash(text: str) -> str:
    return _NOT_ALNUM_RE.sub("", text.lower())


@lru_cache(maxsize=256)
def site_keys(site_name: str | None, url: str | None) -> frozenset[str]:
    """How a site names itself, squashed to letters and digits: its ``og:site_name`` and the
    labels of its host (``www.marketrasentoday.co.uk`` → ``marketrasentoday``)."""
    keys = {_squash(site_name or "")}
    if url:
        try:
            host = urlsplit(url).hostname or ""
        except ValueError:
            host = ""
        keys.update(label for label in host.split(".") if len(label) >= 4 and label != "www")
    return frozenset(k for k in keys if len(k) >= 3)


def names_site(piece: str, site: frozenset[str]) -> bool:
    """Whether a piece of a split title is the site's name (``BBC News`` for ``bbc``, ``Market
    Rasen Today`` for ``marketrasentoday``), not a story that mentions it."""
    sq = _squash(piece)
    return any(sq == k or (k in sq and len(sq) - len(k) <= 6) or sq in k for k in site if sq)


def title_pieces(title: str) -> list[str]:
    """The pieces site-name separators (:data:`TITLE_SEPARATORS`) cut ``title`` into."""
    title = " ".join((title or "").split())
    return [p.strip() for p in TITLE_SEPARATORS.split(title) if p.strip()]


def title_variants(title: str, site: frozenset[str] = frozenset()) -> list[str]:
    """``title`` and, when site-name separators cut it, its longest piece (``Story | Site`` →
    the story): the other pieces name the site, and would match its logo. Pieces that name the
    site (``site``: :func:`site_keys`) are never the story, however long."""
    title = " ".join((title or "").split())
    if not title:
        return []
    pieces = title_pieces(title)
    if len(pieces) > 1 and site:
        pieces = [p for p in pieces if not names_site(p, site)] or pieces
    longest = max(pieces, key=len) if pieces else ""
    if longest and longest != title and len(words(longest)) >= 2:
        return [title, longest]
    return [title]


def title_without_site(
    title: str, site: frozenset[str] = frozenset(), cfg: UnitConfig | None = None
) -> str:
    """``title`` without the site's name: the pieces at its ends that name the site (``site``:
    :func:`site_keys`) are cut off with their separators; when none does and one separator cuts
    the title in two, the shorter part is, if it is short (:attr:`UnitConfig.site_name_words`;
    ``Tide tables - Harbour Notes`` → ``Tide tables``). The title as it is when no separator
    cuts it."""
    cfg = cfg or DEFAULT_UNITS
    title = " ".join((title or "").split())
    cuts = list(TITLE_SEPARATORS.finditer(title))
    if not cuts:
        return title
    bounds = [0, *(x for m in cuts for x in (m.start(), m.end())), len(title)]
    pieces = [(bounds[k], bounds[k + 1]) for k in range(0, len(bounds), 2)]
    pieces = [(a, b) for a, b in pieces if b > a]
    if len(pieces) < 2:
        return title
    lo, hi = 0, len(pieces) - 1
    while lo < hi and site and names_site(title[slice(*pieces[lo])], site):
        lo += 1
    while hi > lo and site and names_site(title[slice(*pieces[hi])], site):
        hi -= 1
    if (lo, hi) == (0, 1) and len(pieces) == 2:  # nothing named the site: the longer part
        first, last = pieces
        shorter = last if first[1] - first[0] >= last[1] - last[0] else first
        if len(title[slice(*shorter)].split()) <= cfg.site_name_words:
            lo = hi = 1 if shorter is first else 0
    return title[pieces[lo][0] : pieces[hi][1]]


def page_site(page: Page) -> frozenset[str]:
    """:func:`site_keys` of a page: its ``og:site_name`` and the host of its address (or of
    its canonical link)."""
    meta = page.meta
    return site_keys(meta.get("site_name"), page.url or meta.get("canonical"))


def url_slug(url: str | None) -> str:
    """The words of a URL's last meaningful path segment (``/2024/05/big-storm-hits-town.html``
    → ``big storm hits town``); '' when the path has none."""
    if not url:
        return ""
    try:
        path = urlsplit(url).path
    except ValueError:
        return ""
    for segment in reversed([s for s in unquote(path).split("/") if s]):
        ext = _SLUG_EXT_RE.search(segment)
        stem = segment[: ext.start()] if ext else segment
        parts = [p for p in _SLUG_SPLIT_RE.split(stem) if p and not _SLUG_ID_RE.match(p)]
        if len(parts) >= 2:
            return " ".join(parts)
    return ""


def title_sources(
    title: str, meta: dict[str, str] | None, url: str | None, site: frozenset[str] = frozenset()
) -> list[str]:
    """The page's own statements of its title, most specific first: ``og:title`` (or
    ``twitter:title``, or JSON-LD ``headline``), ``<title>`` and its pieces (not the one naming
    the site, ``site``: :func:`site_keys`), the canonical URL's slug."""
    meta = meta or {}
    found: list[str] = []
    texts = (meta.get("og_title", ""), meta.get("html_title", ""), title)
    for k, text in enumerate(texts):
        if text in texts[:k]:  # often the same title twice: the same variants
            continue
        for v in title_variants(text, site):
            if v not in found:
                found.append(v)
    slug = url_slug(meta.get("canonical") or url)
    if slug and slug not in found:
        found.append(slug)
    return found


class PageTitle(NamedTuple):
    """A page's title sources (:func:`title_sources`) with their word sets, worked out once per
    page (several steps read them)."""

    sources: tuple[str, ...]
    words: tuple[frozenset[str], ...]
    """Each non-empty source's words (:func:`words`)."""
    content: frozenset[str]
    """The first source's content words (:func:`content_words`)."""


def page_title(page: Page) -> PageTitle:
    """:class:`PageTitle` of ``page``."""
    meta = page.meta
    return _page_title(
        page.title,
        meta.get("og_title", ""),
        meta.get("html_title", ""),
        meta.get("canonical") or page.url,
        page_site(page),
    )


@lru_cache(maxsize=64)
def _page_title(
    title: str, og_title: str, html_title: str, url: str | None, site: frozenset[str]
) -> PageTitle:
    sources = tuple(
        title_sources(title, {"og_title": og_title, "html_title": html_title}, url, site)
    )
    return PageTitle(
        sources,
        tuple(w for w in (frozenset(words(s)) for s in sources) if w),
        frozenset(content_words(sources[0])) if sources else frozenset(),
    )


def title_match(text: str, sources: Iterable[Sequence[str]]) -> float:
    """How well ``text`` (a heading) matches the best of ``sources`` (word lists)."""
    w = set(words(text))
    if not w:
        return 0.0
    best = 0.0
    for s in sources:
        ss = s if isinstance(s, (set, frozenset)) else set(s)
        if ss:
            best = max(best, 2 * len(w & ss) / (len(w) + len(ss)))
    return best


# -- the DOM side ------------------------------------------------------------------------------


def declared_source(tag: str, role: str | None, itemtype: str | None) -> str | None:
    """Why an element declares an article (its tag, ``role`` or ``itemtype``), or None."""
    if tag in ("article", "main"):
        return tag
    if role is not None and role.strip().lower() in ("main", "article"):
        return "role"
    if itemtype and ARTICLE_ITEMTYPE_RE.search(itemtype):
        return "itemtype"
    return None


def _read(found: object) -> object:
    return compiled_found(found, "units")


def _survey(
    root: object, min_share: float
) -> tuple[list[tuple[int, str, str | None, str | None]], list[tuple[int, int, str, str | None]]]:
    """The elements below ``root`` that may declare an article, as ``(id, tag, role,
    itemtype)`` in document order, and the elements below ``root`` that hold at least
    ``min_share`` of its text (UTF-8 bytes of its text nodes), in document order, as ``(id,
    parent id, tag, class)``. One compiled walk of the tree (``_units_c.unit_walk``)."""
    return compiled.unit_walk(root.mem_id, min_share)  # type: ignore[attr-defined,no-any-return]


def _mark_ranges(table: BlockIds, marks: set[int]) -> dict:
    """For each element id in ``marks``, ``[first, last]`` positions of the blocks (of the
    blocks' table) whose element (``scope[-1]`` of a block from the page's DOM) is that element
    or lies inside it (a live tree: the compiled code follows lexbor's parent pointers)."""
    if not marks:
        return {}
    return compiled.mark_ranges(table, sorted(marks))  # type: ignore[no-any-return]


@dataclass(slots=True)
class _Span:
    start: int
    end: int
    source: str


def heading_positions(blocks: Sequence[object]) -> list[tuple[int, int]]:
    """``(position, level)`` of the heading blocks, in order (in C over a page's lazy blocks'
    table; other objects, with a ``tag``, by Python)."""
    if hasattr(blocks, "table"):
        return compiled.heading_positions(block_ids(blocks))  # type: ignore[arg-type,no-any-return]
    get = HEADING_LEVELS.get
    return [
        (pos, level) for pos, level in enumerate(map(get, map(_TAG, blocks), repeat(0))) if level
    ]


def find_units(
    root: object | None,
    blocks: Sequence[object],
    heads: Sequence[tuple[int, int]],
    cfg: UnitConfig = DEFAULT_UNITS,
) -> list[_Span]:
    """Article spans (block positions) of the tree under ``root``. ``blocks`` are the page's
    blocks in order (``scope[-1]`` is a block's element), ``heads`` their headings."""
    if root is None or not blocks:
        return []
    table = block_ids(blocks)  # type: ignore[arg-type]
    candidates, big = _survey(root, cfg.min_repeated_share)
    declared: dict[int, str] = {}
    for eid, tag, role, itemtype in candidates:
        why = declared_source(tag, role, itemtype)
        if why is not None:
            declared[eid] = why
    # Repeated story containers: per headline level, the child of the deepest common ancestor
    # (child id -> (parent id, level)), in C over the headlines' ancestor chains.
    story_children: dict[int, tuple[int, int]] = compiled.story_children(
        root.mem_id,  # type: ignore[attr-defined]
        table, heads, cfg.story_levels, cfg.max_headings,
    )  # fmt: skip
    # Repeated big containers: siblings of one tag and class that each hold a large share of
    # the page's text (an infinite-scroll wrapper per story, a digest's entries).
    siblings: dict[tuple[int, str, str | None], list[int]] = {}
    for eid, parent, tag, cls in big:
        siblings.setdefault((parent, tag, cls), []).append(eid)
    repeated = [ids for ids in siblings.values() if len(ids) >= 2]
    if not declared and not story_children and not repeated:
        return []
    marks = set(declared) | set(story_children) | {p for p, _ in story_children.values()}
    marks.update(e for ids in repeated for e in ids)
    ranges = _mark_ranges(table, marks)
    if not ranges:
        return []
    prefix = compiled.text_prefix(table)  # the text's length before each block
    min_chars = cfg.min_article_chars
    spans: list[_Span] = []
    for eid, why in declared.items():
        r = ranges.get(eid)
        if r is not None and prefix[r[1] + 1] - prefix[r[0]] >= min_chars:
            spans.append(_Span(r[0], r[1], why))
    groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for child, (parent, level) in story_children.items():
        r = ranges.get(child)
        if r is not None:
            groups.setdefault((parent, level), []).append((r[0], ranges[parent][1]))
    for starts in groups.values():
        starts.sort()
        runs = [
            (s, (starts[k + 1][0] - 1) if k + 1 < len(starts) else parent_end)
            for k, (s, parent_end) in enumerate(starts)
        ]
        runs = [(s, e) for s, e in runs if prefix[e + 1] - prefix[s] >= min_chars]
        if len(runs) >= 2:
            spans.extend(_Span(s, e, "headlines") for s, e in runs)
    for ids in repeated:
        spans.extend(_Span(*ranges[e], "repeated") for e in ids if e in ranges)
    return spans


# -- from spans to the page's units ------------------------------------------------------------


def build_units(
    spans: Sequence[_Span],
    blocks: Sequence[object],
    heads: Sequence[tuple[int, int]],
    cfg: UnitConfig = DEFAULT_UNITS,
    items: Sequence[tuple[int, int, str, int | None, int]] = (),
) -> tuple[Unit, ...]:
    """Article units (deduplicated spans, the first reason found kept, each headed by its first
    heading of the highest level up to ``h{cfg.headline_levels}``), item lists and their items
    (``items``: :func:`blockdex.items.item_units`) and section units, sorted by start (outer
    first; of units with the same blocks, an item list before its item, an item before an
    article, an article before a section), with headlines, titles and parents set.

    A section runs from its heading to the next heading of its level or above, but never past
    the end of the innermost declared article (``article``, ``main``, ``itemtype``, ``role``:
    repeated containers and headline runs are layout guesses that often close right after a
    heading) or item it sits in (a card's title heads the card, not the next one), nor into an
    article that starts inside it and ends after it (units nest). An item without a heading is
    named by its first line. In C (``_units_c.build_units``)."""
    return compiled.build_units(  # type: ignore[no-any-return]
        spans,
        block_ids(blocks),
        heads,
        cfg.headline_levels,
        items,
        Unit,  # type: ignore[arg-type]
    )


# -- the primary article -----------------------------------------------------------------------


def find_primary(page: Page, cfg: UnitConfig = DEFAULT_UNITS) -> Primary:
    """The heading that best matches the page's title sources (:func:`title_sources`), the
    primary article around it (the outermost article unit holding it and no rival) and the
    rivals outside that article."""
    blocks = page.blocks
    if not blocks:
        return NO_PRIMARY
    first = page.first_index
    table = page_ids(page)
    texts = table.texts
    heads = [
        (pos, level) for pos, level in heading_positions(blocks) if level <= cfg.headline_levels
    ]
    sources, source_words, _ = page_title(page)
    if not heads or not source_words:
        return NO_PRIMARY
    # Dice >= title_match needs a heading of comparable length: longer than 4x the longest
    # source or shorter than a quarter of the shortest one cannot match (no word list made).
    lengths = [len(s) for s in sources if s.strip()]
    shortest, longest = min(lengths) / 4, 4 * max(lengths)
    # only headings that can reach cfg.title_match are scored: those of a comparable length
    # holding enough of a source's words in their lower-cased text (title_block's test, in C)
    probe, need, needs = _title_probe(source_words, cfg.title_match)
    found = compiled.title_candidates(
        table, [pos for pos, _ in heads], shortest, longest, sys.maxsize, probe, need, needs
    )
    best: tuple[float, int, int] | None = None  # (score, -level, -position) maximised
    for k in found:
        pos, level = heads[k]
        score = title_match(texts[pos], source_words)
        key = (round(score, 6), -level, -pos)
        if score >= cfg.title_match and (best is None or key > best):
            best = key
    if best is None:
        return NO_PRIMARY
    headline = first - best[2]
    level = -best[1]
    articles = [u for u in page.units if u.kind == "article"]

    def is_rival(u: Unit) -> bool:
        if u.holds(headline) or u.heading is None or u.level > level:
            return False
        if not 0 <= u.heading - first < len(blocks):
            return False  # on a slice, a unit reaching past it may have its heading outside
        return title_match(texts[u.heading - first], source_words) < cfg.title_match

    rivals = [u for u in articles if is_rival(u)]
    holders = [u for u in articles if u.holds(headline)]  # outer first, as units are sorted
    primary: Unit | None = None
    for u in holders:  # outermost first: the first one that holds no rival
        if not any(u.contains(r) for r in rivals):
            primary = u
            break
    if primary is None and holders:
        primary = holders[-1]
    outer = [
        r
        for r in rivals
        if not any(o is not r and o.contains(r) for o in rivals)
        and (primary is None or not (primary.contains(r) or r.contains(primary)))
    ]
    return Primary(
        primary.id if primary is not None else None,
        headline,
        best[0],
        tuple(r.id for r in outer),
    )


def page_units(
    root: object | None,
    blocks: Sequence[Block],
    cfg: UnitConfig = DEFAULT_UNITS,
    item_lists: Sequence[ItemList] = (),
) -> tuple[Unit, ...]:
    """The articles, item lists with their items, and sections of a segmented page (``root``:
    the live tree its blocks came from; ``item_lists``: :func:`blockdex.items.find_item_lists`
    of its blocks), sorted by first block, outer ones first."""
    heads = heading_positions(blocks)
    spans = find_units(root, blocks, heads, cfg)
    items = item_units(item_lists, heads) if item_lists else ()
    return build_units(spans, blocks, heads, cfg, items) if spans or heads or items else ()


# -- stories: the titled one among the kept blocks ---------------------------------------------


@dataclass(frozen=True, slots=True)
class StoryConfig:
    """Tunables of :func:`titled_story` (chosen on the composite pages' dev split, made from
    training pages; checked on the training pages of every shared set, where they change
    almost nothing)."""

    min_gap_blocks: int = 15
    """Kept blocks further apart than this many dropped blocks …"""
    min_gap_words: int = 100
    """… holding this many words belong to different stories: between two stories lie the
    first one's footer and the next one's header and navigation."""
    min_story_words: int = 80
    """A run of kept blocks is a story of its own only with this many content words (a reply
    or a product note is not)."""
    max_similarity: float = 0.15
    """Cosine of content-word counts below which two runs are different stories: parts of one
    article share its names and topic words (training pages: 0.36 on average), unrelated
    stories do not (0.05)."""
    max_title_share: float = 0.5
    """A run that holds this share of the title's content words is about the titled story."""
    title_lead: float = 0.1
    """A titled story the model missed is taken only when it holds this much more of the
    title's words than the story the model kept instead (the title names the page's story)."""
    tail_blocks: int = 3
    """The titled story's region ends this many blocks after its last kept run (its closing
    lines), before the gap that leads to the next story."""

    def __post_init__(self) -> None:
        check_minimums(self, dict.fromkeys(("min_gap_blocks", "min_gap_words",
                                            "min_story_words", "max_similarity",
                                            "max_title_share", "title_lead", "tail_blocks"), 0))  # fmt: skip


DEFAULT_STORIES = StoryConfig()


def content_words(text: str) -> list[str]:
    """Lower-cased words of two or more characters that are neither stop words nor numbers (a
    word: a run of letters, digits and ``_``, as ``\\w{2,}`` finds them; in C:
    ``_units_c.word_runs``)."""
    stop = _stop_words()
    return [w for w in compiled.word_runs(text.lower()) if w not in stop and not w.isdigit()]


def content_counts(text: str) -> Counter[str]:
    """:func:`content_words` counted (the words are counted first, in C, each distinct one made
    into a string once, and the stop words and numbers taken out of the distinct ones)."""
    counts: Counter[str] = compiled.word_runs(text.lower(), Counter())
    stop = _stop_words()
    for w in [w for w in counts if w in stop or w.isdigit()]:
        del counts[w]
    return counts


_stop_words = stopwords


def _cosine(a: Counter[str], b: Counter[str]) -> float:
    if not a or not b:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    dot = sum(v * b[w] for w, v in a.items() if w in b)
    return dot / ((sum(v * v for v in a.values()) * sum(v * v for v in b.values())) ** 0.5)


def kept_runs(
    page: Page, kept: Sequence[int], cfg: StoryConfig = DEFAULT_STORIES
) -> list[list[int]]:
    """Positions of the kept blocks cut into runs where a wide gap of dropped blocks lies
    between two of them (:attr:`StoryConfig.min_gap_blocks`, ``min_gap_words``). Only the
    gaps wide enough in blocks have their words counted."""
    texts = page_ids(page).texts
    wide = cfg.min_gap_blocks
    cuts = [0]
    for k in [k for k, (a, b) in enumerate(pairwise(kept), 1) if b - a - 1 >= wide]:
        gap_words = sum(len(texts[q].split()) for q in range(kept[k - 1] + 1, kept[k]))
        if gap_words >= cfg.min_gap_words:
            cuts.append(k)
    cuts.append(len(kept))
    return [list(kept[a:b]) for a, b in pairwise(cuts) if b > a]


def _title_probe(
    source_words: Sequence[frozenset[str]], t: float
) -> tuple[tuple[str, ...], int, tuple[tuple[tuple[str, ...], int], ...]]:
    """What a line must hold to match a title source by Dice ``t`` or more, for the compiled
    ``title_candidates``: Dice >= t needs at least t/(2-t) of a source's words in the line, so at
    least that many of them in its lower-cased text (a cheap test that rules out almost every
    line). Returns all sources' words at once, the fewest any source needs, and each source's
    words with the number it needs."""
    needs = tuple((tuple(ws), math.ceil(t * len(ws) / (2 - t) - 1e-9)) for ws in source_words)
    probe = tuple(frozenset().union(*source_words))
    return probe, min(n for _, n in needs), needs


def title_block(page: Page, cfg: UnitConfig = DEFAULT_UNITS) -> int | None:
    """Position of the block that states the page's title, or None when no block names it.

    Candidates are short blocks matching :func:`title_sources` by at least ``cfg.title_match``
    (a heading, or a bold line on pages without headings; never an image's caption). A
    near-exact match (0.9) beats a partial one, a heading beats another block, and the earliest
    wins among equals: a title also appears further down, in the next story's "more headlines"
    lists."""
    sources, source_words, _ = page_title(page)
    if not source_words:
        return None
    lengths = [len(s) for s in sources if s.strip()]
    shortest, longest = min(lengths) / 4, 4 * max(lengths)
    probe, need, needs = _title_probe(source_words, cfg.title_match)
    # a title line is short: at most TITLE_LINE_WORDS times the longest source's words
    max_spaces = math.ceil(TITLE_LINE_WORDS * max(map(len, source_words)))
    best: tuple[bool, bool, int] | None = None
    # the candidates (_units_c.title_candidates): shortest to longest characters, fewer than
    # max_spaces spaces, not an image (an image's alt text, a masthead's, states the site's
    # name, no title), holding at least `need` of the probe words in their lower-cased text
    # and, for some (words, n) of needs, n of words
    table = page_ids(page)
    candidates = compiled.title_candidates(
        table, None, shortest, longest, max_spaces, probe, need, needs
    )
    texts, tags = table.texts, table.column("tag")
    for pos in candidates:
        text = texts[pos]
        score = title_match(text, source_words)
        if score < cfg.title_match:
            continue
        key = (score >= NEAR_EXACT_TITLE, tags[pos] in HEADING_LEVELS, -pos)
        if best is None or key > best:
            best = key
    return None if best is None else -best[2]


TITLE_LINE_WORDS = 2.5
"""A block with this many times more words than the longest title source is prose, not a line
that states the title (Dice 0.6 would need most of its words repeated): not a candidate."""
NEAR_EXACT_TITLE = 0.9
"""A heading or line matching the title this well states it (case, punctuation and a word or
two aside)."""


@dataclass(frozen=True, slots=True)
class StoryRegion:
    """The part of a page where its titled story lies, when other stories share the page."""

    first: int
    last: int
    """Positions (inclusive) of the region's first and last block."""
    other: tuple[int, ...]
    """Positions of the kept blocks that belong to other stories."""
    missed: bool
    """True when the model kept none of the titled story (only another one): the predictor must
    find it in the region and check that it is a story of its own before using it."""


def _counts_of(page: Page, positions: Iterable[int]) -> Counter[str]:
    texts = page_ids(page).texts
    return content_counts(" ".join(texts[p] for p in positions))


def _title_words(page: Page) -> frozenset[str]:
    return page_title(page).content


def _share(title_words: frozenset[str], counts: Counter[str]) -> float:
    """The share of the title's content words that ``counts`` holds."""
    if not title_words:
        return 0.0
    return sum(w in counts for w in title_words) / len(title_words)


def _holds_title_share(title_words: frozenset[str], texts: list[str], share: float) -> bool:
    r"""Whether at least ``share`` of the title's content words stand in ``" ".join(texts)``
    lower-cased, between non-word characters (as ``(?<!\w)word(?!\w)`` would find them), found
    block by block: a title word (word characters only) cannot span the joining space, and
    lower-casing stops at it too (the final-sigma rule looks no further than a space). Stops at
    the first block that completes the share, without lower-casing the rest (in C:
    ``_units_c.title_words_held``)."""
    if not title_words:
        return share <= 0.0  # no title words: a share of 0
    enough = hits_needed(len(title_words), share)
    held = compiled.title_words_held(texts, tuple(title_words), enough)
    return held >= enough  # type: ignore[no-any-return]


def hits_needed(n: int, share: float) -> int:
    """The fewest of ``n`` (at least 1) whose share, computed as ``k / n``, reaches ``share``;
    ``n + 1`` when none does: a count of hits reaches the share exactly when it reaches this."""
    return next((k for k in range(n + 1) if k / n >= share), n + 1)


def missed_story_found(
    page: Page,
    found: Counter[str],
    kept: Counter[str],
    cfg: StoryConfig = DEFAULT_STORIES,
) -> bool:
    """Whether ``found`` (content-word counts of what the model keeps in a
    :class:`StoryRegion` it had missed) is the titled story, not ``kept`` (what it kept
    instead): a story's length, unlike the kept one, and holding more of the title's words than
    it by :attr:`StoryConfig.title_lead`."""
    if found.total() < cfg.min_story_words or _cosine(found, kept) >= cfg.max_similarity:
        return False
    title_words = _title_words(page)
    if not title_words:
        return False
    return _share(title_words, found) >= _share(title_words, kept) + cfg.title_lead


def titled_story(
    page: Page,
    kept: Sequence[int],
    cfg: StoryConfig = DEFAULT_STORIES,
    units_cfg: UnitConfig = DEFAULT_UNITS,
) -> StoryRegion | None:
    """Where the titled story lies when the kept blocks (positions) hold other stories — the one
    a news site appended below the page's own, the other entries of a digest; None when they
    hold one story.

    The kept blocks are cut into runs at wide gaps (:func:`kept_runs`). When the title's block
    (:func:`title_block`) lies in an article unit that does not hold every kept block, that unit
    is the titled story's and the runs outside it that read as stories of their own are the
    others (:func:`_titled_unit_story`). Otherwise the titled run is the one holding the title's
    block or the first after it; without such a block, the first run with a story's words (an
    appended story comes after the page's own). A run of :attr:`StoryConfig.min_story_words`
    content words that shares few words with the titled story and few of the title's is another
    story. The region runs from after the nearest other story before the titled run to just
    after the last run before the nearest other story after it (the next story's header and
    navigation stay out).

    When the titled run itself starts a wide gap after the title's block and holds few of the
    title's words, the model kept another story and missed the titled one: the region then runs
    from the title's block to before that run (``missed``)."""
    if not kept:
        return None
    runs = kept_runs(page, kept, cfg)
    if len(runs) == 1 and not _units_split(page, kept, cfg):
        # one run and no container that leaves part of it out: only a story the model missed
        # far above the run is possible, and only when the run lacks the title's words
        run = runs[0]
        if run[0] <= cfg.min_gap_blocks:
            return None
        block_texts = page_ids(page).texts
        texts = [block_texts[p] for p in run]
        if sum(map(len, texts)) + len(texts) < 3 * cfg.min_story_words or _holds_title_share(
            _title_words(page), texts, cfg.max_title_share
        ):
            return None
    at = title_block(page, units_cfg)
    if at is not None:
        in_unit = _titled_unit_story(page, kept, at, cfg)
        if in_unit is not None:
            return in_unit
    primary = None if at is None else next((k for k, r in enumerate(runs) if r[-1] >= at), None)
    title_words = _title_words(page) if primary is not None else frozenset()
    if len(runs) == 1 and (
        primary is None or at is None or runs[0][0] - at - 1 < cfg.min_gap_blocks
    ):
        return None
    counts = [_counts_of(page, run) for run in runs]
    if primary is not None and at is not None and runs[primary][0] > at:
        gap = runs[primary][0] - at - 1
        if (
            gap >= cfg.min_gap_blocks
            and counts[primary].total() >= cfg.min_story_words
            and _share(title_words, counts[primary]) < cfg.max_title_share
            and sum(len(t.split()) for t in page_ids(page).texts[at + 1 : runs[primary][0]])
            >= cfg.min_gap_words
        ):
            first = runs[primary - 1][-1] + 1 if primary > 0 else 0
            first, last = _unit_region(
                page, at, runs[primary], (min(first, at), runs[primary][0] - 1)
            )
            return StoryRegion(first, last, tuple(runs[primary]), missed=True)
    if len(runs) < 2:
        return None
    if primary is None:
        primary = next((k for k, c in enumerate(counts) if c.total() >= cfg.min_story_words), None)
        if primary is None:
            return None

    def first_other(side: range) -> int | None:
        # walking away from the titled run, the first run of a story's size that reads unlike
        # the titled story (the titled run and the runs passed on the way)
        story = Counter(counts[primary])
        for k in side:
            if (
                counts[k].total() >= cfg.min_story_words
                and _share(title_words, counts[k]) < cfg.max_title_share
                and _cosine(story, counts[k]) < cfg.max_similarity
            ):
                return k
            story.update(counts[k])
        return None

    after = first_other(range(primary + 1, len(runs)))
    before = first_other(range(primary - 1, -1, -1))
    if after is None and before is None:
        return None
    first = 0 if before is None else runs[before][-1] + 1
    last = len(page.blocks) - 1
    if after is not None:
        # up to a few blocks past the titled story's last run (its closing lines), never into
        # the gap's far side, which is the next story's header
        last = min(runs[after - 1][-1] + cfg.tail_blocks, runs[after][0] - 1)
    other = [p for k, r in enumerate(runs) if (k < primary and before is not None and k <= before)
             or (after is not None and k >= after) for p in r]  # fmt: skip
    first, last = _unit_region(
        page, at if at is not None else runs[primary][0], other, (first, last)
    )
    return StoryRegion(first, last, tuple(other), missed=False)


def _story_units(page: Page) -> list[Unit]:
    # runs between headlines are as often a page's sections as its stories
    return [u for u in page.units if u.kind == "article" and u.source != "headlines"]


def _units_split(page: Page, kept: Sequence[int], cfg: StoryConfig = DEFAULT_STORIES) -> bool:
    """Whether an article unit leaves out kept blocks with text enough for a story (so it may
    be the titled story's, and the rest another story's). ``min_story_words`` content words
    of two or more characters need three characters each, less one. ``kept``: positions in
    order; the text a unit leaves out is the kept text less what the kept blocks inside it
    hold (their characters, a space each, summed once a call)."""
    first = page.first_index
    lo, hi = first + kept[0], first + kept[-1]
    need = 3 * cfg.min_story_words - 1
    cum: list[int] | None = None  # the kept blocks' characters before each one
    for u in _story_units(page):
        if u.start <= lo and hi <= u.end:
            continue
        if cum is None:
            texts = page_ids(page).texts
            cum = [0, *accumulate(len(texts[p]) + 1 for p in kept)]
        a, b = bisect_left(kept, u.start - first), bisect_right(kept, u.end - first)
        if cum[-1] - (cum[b] - cum[a]) >= need:
            return True
    return False


def _titled_unit_story(
    page: Page, kept: Sequence[int], at: int, cfg: StoryConfig
) -> StoryRegion | None:
    """:func:`titled_story` through the page's own containers: when the title's block lies in
    an article unit that does not hold every kept block (the story's wrapper, a digest's
    entry), the kept runs outside it that are stories of their own are the other stories and
    the unit is the region. None when there is no such unit or no such run."""
    first = page.first_index
    holder: Unit | None = None
    lo, hi = first + kept[0], first + kept[-1]
    for u in _story_units(page):
        if not u.holds(first + at) or (u.start <= lo and hi <= u.end):
            continue
        if holder is None or u.size > holder.size:
            holder = u
    if holder is None:
        return None
    start, end = holder.start - first, holder.end - first
    outside = [p for p in kept if not start <= p <= end]
    if not outside:
        return None
    own = _counts_of(page, (p for p in kept if start <= p <= end))
    title_words = _title_words(page)
    other: list[int] = []
    for run in kept_runs(page, outside, cfg):
        theirs = _counts_of(page, run)
        if (
            theirs.total() >= cfg.min_story_words
            and _share(title_words, theirs) < cfg.max_title_share
            and _cosine(own, theirs) < cfg.max_similarity
        ):
            other.extend(run)
    if not other:
        return None
    return StoryRegion(start, end, tuple(other), missed=own.total() < cfg.min_story_words)


def _unit_region(
    page: Page, anchor: int, other: Sequence[int], region: tuple[int, int]
) -> tuple[int, int]:
    """The largest article unit holding position ``anchor`` (the title's block or the titled
    run) and none of the ``other`` stories' positions, as positions; ``region`` when there is
    none. A page's own containers mark where its stories begin and end exactly; the gaps
    between kept blocks only roughly."""
    if not page.units:
        return region
    first = page.first_index
    at = first + anchor
    others = [first + p for p in other]
    best: Unit | None = None
    for u in page.units:
        if u.kind != "article" or not u.holds(at):
            continue
        if any(u.holds(o) for o in others):
            continue
        if best is None or u.size > best.size:
            best = u
    return region if best is None else (best.start - first, best.end - first)


# -- queries that name a unit ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NamedUnit:
    """The article or section a query names."""

    kind: str
    """``article`` (the query names a story: its title or headline) or ``section``."""
    first: int
    last: int
    """Positions (inclusive) of the unit's first and last block."""
    heading: int
    """Position of the heading the query matched."""
    score: float


NAMED_UNIT_MATCH = 0.8
"""A query names a heading when their content words overlap this much (Dice; case,
punctuation, word order and stop words ignored)."""
MIN_NAMING_WORDS = 2
"""…and the query has at least this many content words ("Comments" names nothing)."""


def _other_story_beside(page: Page, holder: Unit, others: Sequence[Unit], level: int) -> bool:
    """Whether one of ``others``, outside ``holder``, is another story: the heading ranks at the
    top of ``holder`` and the two read as different stories (a page's header and body, or its
    sections, share the story's words)."""
    if holder.heading is not None and level > holder.level:
        return False
    first = page.first_index
    texts = page_ids(page).texts

    def words_of(u: Unit) -> list[str]:
        return content_words(" ".join(texts[u.start - first : u.end - first + 1]))

    own = words_of(holder)
    if len(own) < DEFAULT_STORIES.min_story_words:
        return False
    own_counts = Counter(own)
    for o in others:
        if o.contains(holder):
            continue
        theirs = words_of(o)
        if (
            len(theirs) >= DEFAULT_STORIES.min_story_words
            and _cosine(own_counts, Counter(theirs)) < DEFAULT_STORIES.max_similarity
        ):
            return True
    return False


def named_unit(page: Page, query: str, cfg: UnitConfig = DEFAULT_UNITS) -> NamedUnit | None:
    """The article or section whose heading ``query`` names, or None.

    The query is compared whole and without a site-name part (``Big storm hits | Site``) with
    the page's headings, and with its other short lines (a title set in bold on a page without
    headings; read as a top-level heading). It names an *article* when the page holds other
    stories (article units with a headline of the matched heading's rank) and an article unit
    holds the heading and none of them — a digest's entry, the next story below the page's
    own — or when the heading is the line that names the page itself (the page's title, asked
    for: its main content). Otherwise a heading names its *section* (up to the next heading of
    the same or a higher rank)."""
    variants = [frozenset(content_words(v)) for v in title_variants(query)]
    variants = [v for v in variants if len(v) >= MIN_NAMING_WORDS]
    if not variants or not page.blocks:
        return None
    blocks = page.blocks
    first = blocks[0].index
    longest = 4 * max(len(v) for v in title_variants(query))
    best: tuple[float, int, int] | None = None  # (score, -level, -position)
    for pos, b in enumerate(blocks):
        level = HEADING_LEVELS.get(b.tag)
        if level is None and not 0 < len(b.text) <= longest:
            continue
        line = frozenset(content_words(b.text))
        if not line:
            continue
        score = max(2 * len(v & line) / (len(v) + len(line)) for v in variants)
        key = (score, -(level or 1), -pos)
        if score >= NAMED_UNIT_MATCH and (best is None or key > best):
            best = key
    if best is None:
        return None
    score, level, pos = best[0], -best[1], -best[2]
    at = first + pos
    # runs between headlines are as often a page's sections as its stories: declared and
    # repeated containers only
    articles = [u for u in page.units if u.kind == "article" and u.source != "headlines"]
    holders = sorted((u for u in articles if u.holds(at)), key=lambda u: -u.size)
    for holder in holders:  # the largest that has another story beside it
        outside = [u for u in articles if u.end < holder.start or u.start > holder.end]
        if _other_story_beside(page, holder, outside, level):
            return NamedUnit("article", holder.start - first, holder.end - first, pos, score)
    heads = heading_positions(blocks)
    top = min(lv for _, lv in heads) if heads else 1
    if page.primary.headline == at and level <= top:
        # the page's own title: its main content (the primary article, else the page)
        unit = page.primary_unit
        if unit is not None:
            return NamedUnit("article", unit.start - first, unit.end - first, pos, score)
        return NamedUnit("article", 0, len(blocks) - 1, pos, score)
    section = next((u for u in page.units if u.kind == "section" and u.heading == at), None)
    if section is None:
        return None
    return NamedUnit("section", section.start - first, section.end - first, pos, score)


# -- unit columns for the content model (an experiment: TrainConfig.unit_columns) --------------

UNIT_COLUMN_NAMES: tuple[str, ...] = (
    "unit_primary",
    "unit_rival",
    "unit_title_match",
    "unit_share",
)
"""Per block: inside the primary article unit (1/0); inside a rival article unit, another story
(1/0); how well the headline of the smallest article unit holding it matches the page's title
sources (0 without one); that unit's share of the page's characters (0 without one)."""


def section_context(
    page: Page, kept: Sequence[int], headline: str = ""
) -> dict[int, tuple[int, ...]]:
    """The headings to write above the kept blocks of a query's answer: for each kept block,
    the headings of the sections that hold it (its section path, outermost first), but those
    kept themselves, those already given above an earlier kept block (so each section's path
    comes above its first kept block) and the page's ``headline`` (the title line says it).
    ``kept``: the kept block indices, in order. Returns kept block index → heading indices."""
    sections = [u for u in page.units if u.kind == "section" and u.heading is not None]
    if not sections or not kept:
        return {}
    wanted = set(kept)
    given: set[int] = set()
    skip = " ".join(headline.lower().split())
    out: dict[int, tuple[int, ...]] = {}
    for index in kept:
        path = []
        for unit in sections:  # outer units first
            head = unit.heading
            if unit.start <= index <= unit.end and head not in wanted and head not in given:
                given.add(head)  # type: ignore[arg-type]
                text = " ".join(page.by_index(head).text.lower().split())  # type: ignore[arg-type]
                if text and text != skip:
                    path.append(head)
        if path:
            out[index] = tuple(path)  # type: ignore[arg-type]
    return out


def unit_columns(page: Page) -> np.ndarray:
    """The ``(n_blocks, len(UNIT_COLUMN_NAMES))`` float32 matrix of :data:`UNIT_COLUMN_NAMES`."""
    blocks = page.blocks
    out = np.zeros((len(blocks), len(UNIT_COLUMN_NAMES)), dtype=np.float32)
    if not blocks or not page.units:
        return out
    first = blocks[0].index
    sizes = np.array([len(b.text) for b in blocks], dtype=np.float64)
    total = float(sizes.sum()) or 1.0
    cum = np.concatenate([[0.0], np.cumsum(sizes)])
    primary = page.primary
    sources = page_title(page).words
    for u in page.units:  # outer first: an inner unit's values overwrite its container's
        if u.kind != "article":
            continue
        a, b = u.start - first, u.end - first + 1
        if a < 0 or b > len(blocks) or a >= b:
            continue
        match = 0.0
        if u.heading is not None and 0 <= u.heading - first < len(blocks):
            match = title_match(blocks[u.heading - first].text, sources)
        out[a:b, 2] = match
        out[a:b, 3] = (cum[b] - cum[a]) / total
        if u.id == primary.unit:
            out[a:b, 0] = 1.0
        if u.id in primary.rivals:
            out[a:b, 1] = 1.0
    return out
