"""The values that flow between the pipeline's steps: :class:`Block`, :class:`Page`, :class:`Selection`.

A page's units (:class:`Unit`, :class:`ItemList`, :class:`Primary`) and its type
(:class:`PageType`) are values of this module too; the steps that find them
(:mod:`blockdex.units`, :mod:`blockdex.items`, :mod:`blockdex.pagetype`) run when the page is
built (:func:`blockdex.segment.segment_document`), so this module imports nothing of blockdex.

Blocks are numbered from **0** to ``n-1`` in document order. A :class:`Page` may be a slice of a
larger page (a chunk sent to a model); its blocks keep their original indices, so a selection
made on a chunk is valid for the whole page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain as _concat
from typing import Any, NamedTuple

Interval = tuple[int, int]
"""A closed interval of block indices ``(first, last)``."""


@dataclass(frozen=True, slots=True)
class Block:
    """One addressable unit of a page.

    ``html`` is the block's content with only ``<b> <i> <u> <br> <code>`` (and ``<td>/<th>`` for
    table rows) kept; ``text`` is its plain text. ``chain`` lists the structural elements the
    block sits in, outermost first, ending with the block's own element, as ``(tag, node_id)``;
    ``attrs`` holds the class/id/role/itemprop values of the enclosing elements, nearest last,
    one element per `` | ``-separated part;
    the assembler uses it to rebuild lists, tables and quotes. ``split`` is
    ``(split_id, split_part, split_total)`` when a long element was cut into several blocks.
    """

    index: int
    tag: str
    html: str
    text: str
    chain: tuple[tuple[str, int], ...] = ()
    path: str = ""
    attrs: str = ""
    depth: int = 0
    link_chars: int = 0
    n_links: int = 0
    split: tuple[int, int, int] | None = None
    source: str = "dom"
    attributes: tuple[tuple[str, str], ...] = ()
    scope: tuple[int, ...] = ()
    """Ids of the block-level elements enclosing this block, outermost first (nearest last)."""
    scope_attrs: tuple[str, ...] = ()
    """The lower-cased class/id/role/itemprop tokens of each ``scope`` element, aligned with
    ``scope`` ('' for an element with none)."""

    @property
    def element_id(self) -> int:
        """Identity of the DOM element this block's content came from."""
        return self.chain[-1][1] if self.chain else -1 - self.index

    def tagged(self) -> str:
        """The ``[i] <tag>content</tag>`` line a model reads."""
        attrs = ""
        if self.split is not None:
            sid, part, total = self.split
            attrs = f' split-id="{sid}" split-part="{part}" split-total="{total}"'
        return f"[{self.index}] <{self.tag}{attrs}>{self.html}</{self.tag}>"


class Unit(NamedTuple):
    """An article or a section of a page: blocks ``start`` … ``end`` (indices, inclusive).

    A named tuple: a page may have hundreds of sections, made at every segmentation."""

    id: int
    """Position in :attr:`blockdex.page.Page.units`."""
    kind: str
    """``article``, ``items`` (a list of records of one template: :mod:`blockdex.items`),
    ``item`` (one record of such a list) or ``section``."""
    start: int
    end: int
    heading: int | None = None
    """Index of the unit's headline (article) or heading (section) block; None when it has none."""
    title: str = ""
    """The headline's or heading's text."""
    level: int = 0
    """The heading's level (1 for ``h1``); 0 when the unit has no heading."""
    parent: int | None = None
    """Id of the smallest unit that contains this one."""
    source: str = ""
    """Why it is a unit: the declaring tag or attribute (``article``, ``main``, ``itemtype``,
    ``role``), ``repeated`` (one of several sibling containers of one tag and class, each with
    a large share of the page's text), ``headlines`` (one of several runs that each open with a
    headline of one level), ``heading`` (a section) or ``template`` (an item list or an item:
    siblings of one tag and class signature)."""

    def holds(self, index: int) -> bool:
        """Whether block ``index`` lies in this unit."""
        return self.start <= index <= self.end

    @property
    def size(self) -> int:
        return self.end - self.start + 1

    def contains(self, other: Unit) -> bool:
        return self.start <= other.start and other.end <= self.end

    def to_json(self) -> dict[str, object]:
        return self._asdict()


class ItemList(NamedTuple):
    """Sibling elements of one template: ``items`` are ``(first, last)`` block indices."""

    parent: int
    """Element id of the items' parent (for a grid in rows, of the rows' parent)."""
    depth: int
    """Elements from the parent down to an item: 1, or 2 for a grid in rows (row, card)."""
    signature: str
    """The items' tag and class signature, as ``tag.class1.class2`` (digits folded)."""
    items: tuple[tuple[int, int], ...]
    words: int
    """Words in the items' blocks."""


@dataclass(frozen=True, slots=True)
class Primary:
    """What the page's title says about its units."""

    unit: int | None
    """Id of the primary article unit; None when no article unit holds the titled headline."""
    headline: int | None
    """Index of the heading that best matches the page's title (None below ``UnitConfig.title_match``)."""
    score: float
    """That heading's match (0.0 … 1.0)."""
    rivals: tuple[int, ...] = ()
    """Ids of the article units that are other stories: each opens with its own headline, at the
    primary headline's level or above, that does not name the page; outermost ones only."""


NO_PRIMARY = Primary(None, None, 0.0)


class PageType(NamedTuple):
    """A page's type, the model's probability for it and for every type."""

    label: str
    """One of :data:`blockdex.pagetype.PAGE_TYPES`, or :data:`blockdex.pagetype.OTHER` when the model is not sure."""
    confidence: float
    """The probability of the most likely type (also when the label is ``other``)."""
    scores: Mapping[str, float]
    """Every type's probability (summing to 1)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "page_type": self.label,
            "page_type_confidence": round(self.confidence, 4),
        }


class PageFacts:
    """What later steps find about a page, worked out the first time it is read, then kept.

    Its primary article (:func:`blockdex.units.find_primary`) and its type
    (:func:`blockdex.pagetype.classify_page`: a forest over page-wide columns that only the
    outputs showing it should pay for). The step that builds the page gives the two functions
    (:func:`blockdex.segment.segment_document`), so this module imports nothing above it; the
    cache is the builder's, and :class:`Page` stays frozen.

    ``ids`` holds the blocks' integer ids (:func:`blockdex.ids.page_ids`: tag paths, class/id
    strings and scope elements numbered once a page for the compiled readers), or None until
    a reader asks."""

    __slots__ = ("_page_type", "_primary", "classify", "find_primary", "ids")

    def __init__(
        self,
        find_primary: Callable[[Page], Primary] | None = None,
        classify: Callable[[Page], PageType] | None = None,
        ids: Any = None,
    ) -> None:
        self.find_primary = find_primary
        self.classify = classify
        self.ids = ids
        self._primary: Primary | None = None
        self._page_type: PageType | None = None

    def fresh(self) -> PageFacts:
        """The same functions with nothing worked out yet (no ids either): for another page
        made from this one's blocks (:meth:`Page.slice`)."""
        return PageFacts(self.find_primary, self.classify)

    def primary(self, page: Page) -> Primary:
        if self._primary is None:
            self._primary = _worked_out(self.find_primary, page, "primary article")
        return self._primary

    def known_page_type(self) -> PageType | None:
        """The page type if something asked for it already, else None (nothing worked out)."""
        return self._page_type

    def page_type(self, page: Page) -> PageType:
        if self._page_type is None:
            self._page_type = _worked_out(self.classify, page, "page type")
        return self._page_type


def _worked_out(compute: Callable[[Page], Any] | None, page: Page, what: str) -> Any:
    if compute is None:
        raise ValueError(
            f"this page was built without a way to find its {what} "
            "(blockdex.segment.segment_document builds pages with one)"
        )
    return compute(page)


@dataclass(frozen=True, slots=True)
class Page:
    """A segmented page: its numbered blocks plus page-level metadata."""

    blocks: tuple[Block, ...]
    title: str = ""
    url: str | None = None
    meta: Mapping[str, str] = field(default_factory=dict)
    encoding: str = "utf-8"
    warnings: tuple[str, ...] = ()
    html_bytes: int = 0
    """Size of the HTML the page was segmented from, in characters (for DANAg-style features)."""
    units: tuple[Unit, ...] = ()
    """The page's articles and sections (:mod:`blockdex.units`), outer ones first."""
    item_lists: tuple[ItemList, ...] = ()
    """The page's lists of records of one template (:func:`blockdex.items.find_item_lists`),
    their items as block indices; each is also a unit of kind ``items`` in :attr:`units`."""
    images: bool = False
    """Markdown writes kept images as ``![caption](url)`` (True) or leaves them out, keeping a
    figure's caption (False); set from :attr:`blockdex.segment.SegmentConfig.images`."""
    facts: PageFacts = field(default_factory=PageFacts, repr=False, compare=False)
    """Works out :attr:`primary` and :attr:`page_type` on first use (:class:`PageFacts`)."""

    def __len__(self) -> int:
        return len(self.blocks)

    def __iter__(self) -> Iterator[Block]:
        return iter(self.blocks)

    def __getitem__(self, i: int) -> Block:
        return self.blocks[i]

    @property
    def first_index(self) -> int:
        """The index of the first block (0 on a whole page; a slice's start on a slice)."""
        first = getattr(self.blocks, "first", None)  # a lazy sequence knows it (no Block made)
        if first is not None:
            return first  # type: ignore[no-any-return]
        return self.blocks[0].index if self.blocks else 0

    def by_index(self, index: int) -> Block:
        """The block whose ``index`` is ``index`` (also on a chunk of a larger page)."""
        pos = index - self.first_index
        if 0 <= pos < len(self.blocks) and self.blocks[pos].index == index:
            return self.blocks[pos]
        for b in self.blocks:
            if b.index == index:
                return b
        raise KeyError(index)

    def indices(self) -> tuple[int, ...]:
        return tuple(b.index for b in self.blocks)

    def unit_of(self, index: int, kind: str | None = None) -> Unit | None:
        """The smallest unit (of ``kind``, ``article`` or ``section``, when given) that holds
        block ``index``; None when no unit does."""
        found: Unit | None = None
        for u in self.units:
            if u.start > index:
                break
            if u.end >= index and (kind is None or u.kind == kind):
                found = u  # units are sorted outer first: a later holder is inside an earlier one
        return found

    def unit_ids(self) -> dict[int, int]:
        """Block index → id of the smallest unit holding it, for every block in a unit."""
        out: dict[int, int] = {}
        for u in self.units:  # outer first: a later unit holding a block lies inside
            for i in range(u.start, u.end + 1):
                out[i] = u.id
        return out

    @property
    def primary(self) -> Primary:
        """The heading that names the page, the primary article around it and its rivals
        (:func:`blockdex.units.find_primary`), worked out on first use."""
        return self.facts.primary(self)

    @property
    def primary_unit(self) -> Unit | None:
        """The article the page's title names (:mod:`blockdex.units`), or None."""
        unit = self.primary.unit
        return None if unit is None else self.units[unit]

    @property
    def page_type(self) -> PageType:
        """What kind of page this is — ``article``, ``forum``, ``product``, ``collection``,
        ``listing``, ``documentation``, ``service`` or ``other`` — with the model's confidence
        (:func:`blockdex.pagetype.classify_page`), worked out on first use: only the outputs
        that show it pay for it."""
        return self.facts.page_type(self)

    def tagged_text(self, indices: Iterable[int] | None = None) -> str:
        """Index-tagged lines for all blocks, or for the given block indices."""
        if indices is None:
            return "\n".join(b.tagged() for b in self.blocks)
        wanted = set(indices)
        return "\n".join(b.tagged() for b in self.blocks if b.index in wanted)

    def slice(self, start: int, stop: int) -> Page:
        """Blocks at positions ``start:stop`` as a page of their own (indices preserved), with
        the whole page's units (its primary article and type are its own)."""
        return Page(
            blocks=self.blocks[start:stop],
            title=self.title,
            url=self.url,
            meta=self.meta,
            encoding=self.encoding,
            warnings=self.warnings,
            html_bytes=self.html_bytes,
            units=self.units,
            item_lists=self.item_lists,
            images=self.images,
            facts=self.facts.fresh(),
        )

    def text(self) -> str:
        return "\n".join(b.text for b in self.blocks)


def merge_intervals(intervals: Iterable[Sequence[int]]) -> tuple[Interval, ...]:
    """Sort closed intervals and merge the ones that overlap or touch.

    >>> merge_intervals([(5, 7), (1, 2), (3, 3), (7, 9)])
    ((1, 3), (5, 9))
    """
    cleaned = sorted((int(a), int(b)) if a <= b else (int(b), int(a)) for a, b in intervals)
    out: list[list[int]] = []
    for a, b in cleaned:
        if out and a <= out[-1][1] + 1:
            if b > out[-1][1]:
                out[-1][1] = b
        else:
            out.append([a, b])
    return tuple((a, b) for a, b in out)


def intervals_from_indices(indices: Iterable[int]) -> tuple[Interval, ...]:
    """Closed intervals covering exactly the given indices (runs of consecutive ones).

    >>> intervals_from_indices([7, 1, 2, 3, 5, 2])
    ((1, 3), (5, 5), (7, 7))
    """
    ordered = sorted(set(map(int, indices)))
    if not ordered:
        return ()
    runs: list[Interval] = []
    start = prev = ordered[0]
    for i in ordered:
        if i > prev + 1:  # a gap: the run so far is closed
            runs.append((start, prev))
            start = i
        prev = i
    runs.append((start, prev))
    return tuple(runs)


class BlockScores(Mapping[int, float]):
    """A predictor's score of each block of a page, as a read-only mapping from block index to
    float, over the array of scores (no ``float`` or dict entry is made for a block nobody
    asks about: a text output reads none of them). Equal to the dict of the same items."""

    __slots__ = ("_first", "_values")

    def __init__(self, first: int, values: Any) -> None:
        """``values``: one score a block, the first block's index being ``first`` (an array
        the mapping keeps and never changes)."""
        self._first = first
        self._values = values

    def __getitem__(self, index: int) -> float:
        pos = index - self._first if type(index) is int else -1
        if 0 <= pos < len(self._values):
            return float(self._values[pos])
        raise KeyError(index)

    def __contains__(self, index: object) -> bool:
        return type(index) is int and 0 <= index - self._first < len(self._values)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._first, self._first + len(self._values)))

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (list(self.items()),))


@dataclass(frozen=True, slots=True)
class Selection:
    """Which blocks to keep: sorted, merged, closed intervals of block indices.

    ``scores`` optionally maps block index → the predictor's score for that block (kept or not),
    so explanations can show why a block was dropped.
    """

    intervals: tuple[Interval, ...] = ()
    scores: Mapping[int, float] | None = None
    warnings: tuple[str, ...] = ()
    fallback: str | None = None
    """Set when the predictor kept nothing and a fallback chose these blocks instead, naming it
    (``primary-unit``, ``best-blocks``, ``whole-page``; the extractor's ``hidden-content`` and
    ``description``): a reader tool never answers "nothing" for a page with text."""
    context: Mapping[int, tuple[int, ...]] | None = None
    """Kept block index → the indices of the headings written above it as its context (a query's
    answer under the headings of its sections: :func:`blockdex.units.section_context`); None
    when the writers add none (main content)."""

    @classmethod
    def from_indices(
        cls,
        indices: Iterable[int],
        scores: Mapping[int, float] | None = None,
        warnings: Iterable[str] = (),
        fallback: str | None = None,
    ) -> Selection:
        return cls(intervals_from_indices(indices), scores, tuple(warnings), fallback)

    @classmethod
    def from_intervals(
        cls, intervals: Iterable[Sequence[int]], scores: Mapping[int, float] | None = None
    ) -> Selection:
        return cls(merge_intervals(intervals), scores)

    @property
    def indices(self) -> tuple[int, ...]:
        return tuple(_concat.from_iterable(range(a, b + 1) for a, b in self.intervals))

    def __contains__(self, index: object) -> bool:
        return any(a <= index <= b for a, b in self.intervals)  # type: ignore[operator]

    def __len__(self) -> int:
        return sum(b - a + 1 for a, b in self.intervals)

    def __bool__(self) -> bool:
        return bool(self.intervals)

    def union(self, other: Selection) -> Selection:
        scores: dict[int, float] | None = None
        if self.scores is not None or other.scores is not None:
            scores = {**(self.scores or {}), **(other.scores or {})}
        return Selection(
            merge_intervals(self.intervals + other.intervals),
            scores,
            self.warnings + other.warnings,
            self.fallback or other.fallback,
        )

    def format(self) -> str:
        """The interval string a model would answer: ``[[1,2],[5,7]]`` or ``NA``."""
        if not self.intervals:
            return "NA"
        return "[" + ",".join(f"[{a},{b}]" for a, b in self.intervals) + "]"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "intervals": [list(iv) for iv in self.intervals],
            "indices": list(self.indices),
        }
        if self.fallback is not None:
            out["fallback"] = self.fallback
        return out
