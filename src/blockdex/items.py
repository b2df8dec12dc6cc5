"""Item lists: the repeated records a page is made of (product cards, search results, posts).

A collection, a listing, a forum thread or a FAQ is not one story but many small records cut
from one template: sibling elements with the same tag and class, each holding a title, a link, a
short text, a price or a date. This module finds them from the blocks alone, once per page:

1. **Siblings from neighbours.** Blocks are in document order, and each knows the ids of the
   block-level elements around it (``Block.scope``, nearest last). Where two consecutive blocks
   part, their deepest shared element is a *parent* and the two elements just below it are two
   of its *children*. One pass over the blocks gives every parent with its children, each with
   its first block; a child ends where the next one starts (the last one where its id leaves
   the blocks' scopes).
2. **One template.** A parent's children are grouped by tag and class signature (digits
   folded, so ``card-1`` and ``card-2`` are one template). A group of at least
   :attr:`ItemConfig.min_items` children is an **item list**, each child an **item** — unless
   its tag is one a single block already stands for (paragraphs, headings, table rows: prose and
   tables are read as such), or its items are one short line each (a menu of links; a list of
   headlines of :attr:`ItemConfig.min_line_words` words or more is a listing and stays).
3. **Grids in rows.** When each item of a list is a row holding one list of its own, all with
   one template (cards laid out three to a row), the rows' lists are read as one list of cards.

What the lists mean is decided elsewhere (the content predictor, Markdown): a grid of products
is the content of a collection page and a rail of other stories is not part of an article.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from blockdex import _items_c as compiled
from blockdex.errors import check_minimums
from blockdex.ids import BlockIds, block_ids, page_ids
from blockdex.page import Block, ItemList, Page

ITEM_TAGS_EXCLUDED = frozenset(
    {
        # one block each already, read as prose or as a table, never a record's container
        "p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "figcaption", "caption",
        "tr", "td", "th", "thead", "tbody", "tfoot", "dt", "dd",
        # inline or void elements that reach a block's scope only as its own element
        "span", "a", "b", "i", "em", "strong", "img", "br", "code", "option",
    }
)  # fmt: skip
"""Tags that never make an item: a run of paragraphs is an article's body, not a list of
records, and a table's rows are read as a table."""


@dataclass(frozen=True, slots=True)
class ItemConfig:
    """Tunables of item-list finding."""

    min_items: int = 3
    """Fewer siblings than this are a pair, not a list (two columns, a prev/next link)."""
    min_line_words: float = 4.0
    """A list whose items are mostly one block each is kept only with this many words per item
    on average: menus of one- or two-word links are navigation, a list of headlines a listing."""
    grid_cover: float = 0.8
    """A list whose items' lists of one template hold this share of its words is a grid laid
    out in rows: its rows' items become the list's items."""

    def __post_init__(self) -> None:
        check_minimums(self, {"min_items": 2, "min_line_words": 0.0, "grid_cover": 0.0})


DEFAULT_ITEMS = ItemConfig()


class_signature = lru_cache(maxsize=8192)(compiled.class_signature)
"""``class_signature(tag, attrs)``: ``tag.token.token`` from an element's tag and its class/id
tokens, sorted, digits folded to ``#``: the template key two sibling records share (compiled,
``_items_c.class_signature``; cached for :func:`_slot`, which asks for the same few again and
again)."""


fold_digits = compiled.fold_digits
"""``text`` with each run of decimal digits (``\\d+``) read as one ``#``: how a class signature
sets numbers aside (``card-1`` and ``card-2``); the page-kind rules' templates read it too."""


def word_count(text: str) -> int:
    """About the words of a block's text (the measure of :attr:`ItemList.words`): its spaces plus one (a block's text is squashed to
    single spaces; only code keeps its newlines). ``str.split`` on every block of a large page
    cost a third of finding its lists."""
    return text.count(" ") + 1 if text else 0


def block_words(blocks: Sequence[Block]) -> np.ndarray:
    """Each block's :func:`word_count`, as floats (counted in C, ``_items_c.word_counts``)."""
    return compiled.word_counts(block_ids(blocks))  # type: ignore[no-any-return]


def page_block_words(page: Page) -> np.ndarray:
    """:func:`block_words` of the page's blocks, counted once a page and kept in its table
    (read-only: the page-kind rules ask for it several times a page)."""
    ids = page_ids(page)
    found = ids.block_words
    if found is None:
        found = compiled.word_counts(ids)
        found.flags.writeable = False
        ids.block_words = found
    return found  # type: ignore[no-any-return]


def find_item_lists(
    blocks: Sequence[Block], cfg: ItemConfig = DEFAULT_ITEMS, ids: BlockIds | None = None
) -> list[ItemList]:
    """The page's item lists, by first block (outer lists before the lists inside them).
    ``ids``: the blocks' numbers when the caller has them (:func:`blockdex.ids.block_ids` of
    ``blocks`` as a tuple; numbered here otherwise)."""
    if ids is None or ids.blocks is not blocks:
        ids = block_ids(blocks)
    # parents, children and their templates in C, on the blocks' table (a wcxb page has ~250
    # children a page; a cache of the template keys missed 10.4k of 35.7k lookups a round of
    # 200 pages, benchmarks/NOTES.md)
    found: list[ItemList] = compiled.item_lists(
        ids, ITEM_TAGS_EXCLUDED, ItemList, cfg.min_items, cfg.min_line_words
    )
    found.sort(key=lambda lst: (lst.items[0][0], -lst.items[-1][1]))
    return _merge_grids(found, cfg)


def _merge_grids(lists: list[ItemList], cfg: ItemConfig) -> list[ItemList]:
    """Lists whose items are rows, each holding one inner list of a shared template that covers
    most of the row, replaced by one list of the inner items (the inner lists dropped).
    ``lists`` are sorted by first block, outer ones first."""
    if len(lists) < 2:
        return lists
    starts = [lst.items[0][0] for lst in lists]
    dropped: set[int] = set()
    merged: dict[int, ItemList] = {}
    for a, outer in enumerate(lists):
        if outer.depth != 1:
            continue
        inner_by_row: list[int] = []
        for s, e in outer.items:
            # the largest list wholly inside the row; the row must hold no other one beside it
            top: int | None = None
            for k in range(bisect_left(starts, s), bisect_right(starts, e)):
                if k == a or lists[k].items[-1][1] > e:
                    continue
                if top is None or lists[k].items[0][0] > lists[top].items[-1][1]:
                    if top is not None:
                        top = -1
                        break
                    top = k
            if top is None or top < 0:
                break
            inner_by_row.append(top)
        else:
            inner = [lists[k] for k in inner_by_row]
            if (
                len({lst.signature for lst in inner}) == 1
                and sum(lst.words for lst in inner) >= cfg.grid_cover * outer.words
            ):
                merged[a] = ItemList(
                    outer.parent,
                    2,
                    inner[0].signature,
                    tuple(item for lst in inner for item in lst.items),
                    sum(lst.words for lst in inner),
                )
                dropped.update(inner_by_row)
    return [merged.get(a, lst) for a, lst in enumerate(lists) if a not in dropped]


# -- item lists as units -----------------------------------------------------------------------


def item_units(
    lists: Sequence[ItemList], heads: Sequence[tuple[int, int]]
) -> list[tuple[int, int, str, int | None, int]]:
    """``(start, end, kind, heading, level)`` block positions of each list (kind ``items``) and
    of its items (kind ``item``), list first. A list's heading is the heading block right before
    its first item (its "More news", "Results"); an item's is its first heading."""
    head_at = dict(heads)
    positions = sorted(head_at)
    n = len(positions)
    out: list[tuple[int, int, str, int | None, int]] = []
    for lst in lists:
        first, last = lst.items[0][0], lst.items[-1][1]
        heading = first - 1 if first - 1 in head_at else None
        out.append((first, last, "items", heading, head_at[heading] if heading is not None else 0))
        for s, e in lst.items:
            k = bisect_left(positions, s)  # the first heading at or after the item's start
            if k < n and positions[k] <= e:
                out.append((s, e, "item", positions[k], head_at[positions[k]]))
            else:
                out.append((s, e, "item", None, 0))
    return out


# -- item columns for the content model --------------------------------------------------------

ITEM_COLUMN_NAMES: tuple[str, ...] = (
    "item_in",
    "item_list_share",
    "item_count",
    "item_position",
    "item_words",
    "item_slot_share",
    "item_link_density",
    "item_inner_count",
    "item_in_primary",
)
"""Per block, of the largest item list holding it (all 0 outside lists): in a list (1/0); the
list's share of the page's words; log(1 + its items); the item's position in it (0 … 1); log(1 +
words per item); link characters over characters in the list; the list inside the primary
article (1/0). Of the smallest item holding it: the share of that list's items that have a block
in the same template slot (``item_slot_share``: a title or a price every card has is 1), log(1 +
that list's items)."""
ITEM_CONTEXT_NAMES: tuple[str, ...] = ("p_item_slot",)
"""Stage 2: the mean first-stage probability of the blocks in the same slot of the same list's
items (a card's title is kept as its siblings' titles are); a block outside lists keeps its own."""


def _slot(
    tag: str, path: str, sc: tuple[int, ...], attrs: tuple[str, ...], parent: int, depth: int
) -> tuple[str, ...]:
    """A block's place inside its item (its tag, path, scope and scope tokens): the signatures
    of the elements below the item."""
    try:
        at = sc.index(parent) + depth + 1
    except ValueError:  # the list's parent lies beyond the nearest ancestors a block keeps
        return ("?", tag)
    # the tags of the scope's elements: Block.path holds them, aligned at the block's end
    tags = path.split(">")
    shift = len(tags) - len(sc)
    return tuple(
        class_signature(tags[shift + k] if 0 <= shift + k < len(tags) else "", attrs[k])
        for k in range(at, len(sc))
    )


def cut_lists(page: Page) -> list[tuple[ItemList, list[tuple[int, int]]]]:
    """The page's item lists with their items as block positions, cut to the page: on a slice
    (:meth:`blockdex.page.Page.slice`, which keeps the whole page's lists in block indices) the
    items outside it are left out and the rest shifted to the slice's positions; on a whole
    page, the lists as they are."""
    n = len(page.blocks)
    if n == 0 or not page.item_lists:
        return []
    first = page.first_index
    lists: list[tuple[ItemList, list[tuple[int, int]]]] = []
    for lst in page.item_lists:
        items = lst.items  # in document order, apart from each other
        if first == 0 and items and items[-1][1] < n:
            cut = list(items)  # wholly on the page: as they are
        else:
            cut = [
                (max(s - first, 0), min(e - first, n - 1))
                for s, e in items
                if e - first >= 0 and s - first < n
            ]
        if cut:
            lists.append((lst, cut))
    return lists


def _slot_groups(
    table: BlockIds,
    lists: list[tuple[ItemList, list[tuple[int, int]]]],
    among: Sequence[int] | None = None,
) -> tuple[np.ndarray, list[int], dict[int, set[int]]]:
    """Each block's slot group (int32; blocks outside lists each a group of their own): the
    blocks at one place (:func:`_slot`) of the items of one list, each block read in the
    smallest item holding it (the first list's on a tie); the list (position in ``lists``)
    of each block's smallest item (-1 outside lists); each group's items. With ``among``
    (block positions), only the lists of those blocks' smallest items are read: every block of
    another list is left a group of its own (a group never spans two lists, so the groups of
    ``among``'s blocks are the same). In C over the blocks' table (``_items_c.slot_groups``:
    :func:`_slot` runs once per distinct place, the cards of a grid share it)."""
    return compiled.slot_groups(  # type: ignore[no-any-return]
        table, [(lst.parent, lst.depth, items) for lst, items in lists], among, _slot
    )


def item_slot_groups(page: Page, among: Sequence[int] | None = None) -> np.ndarray:
    """Each block's slot group, as :func:`item_columns` gives it, without the columns; with
    ``among`` (block positions) those blocks' groups, as :func:`item_columns` gives them,
    and every block outside their lists a group of its own."""
    n = len(page.blocks)
    if n == 0 or not page.item_lists:
        return np.arange(n, dtype=np.int32)
    return _slot_groups(page_ids(page), cut_lists(page), among)[0]


def item_columns(page: Page) -> tuple[np.ndarray, np.ndarray]:
    """The ``(n_blocks, len(ITEM_COLUMN_NAMES))`` float32 matrix of :data:`ITEM_COLUMN_NAMES`
    and each block's slot group (int32; blocks outside lists each a group of their own), for
    :data:`ITEM_CONTEXT_NAMES`. On a slice of a page, items are cut to the slice."""
    n = len(page.blocks)
    cols = np.zeros((n, len(ITEM_COLUMN_NAMES)), dtype=np.float32)
    groups = np.arange(n, dtype=np.int32)
    if n == 0 or not page.item_lists:
        return cols, groups
    first = page.first_index
    lists = cut_lists(page)
    if not lists:
        return cols, groups
    table = page_ids(page)
    texts = table.texts
    words = np.fromiter((len(t.split()) for t in texts), dtype=np.float64, count=n)
    chars = np.fromiter((len(t) for t in texts), dtype=np.float64, count=n)
    links = np.fromiter(table.column("link_chars"), dtype=np.float64, count=n)
    cum_words = np.concatenate([[0.0], np.cumsum(words)])
    cum_chars = np.concatenate([[0.0], np.cumsum(chars)])
    cum_links = np.concatenate([[0.0], np.cumsum(links)])
    total = cum_words[-1] or 1.0
    unit = page.primary_unit
    outer_words = np.full(n, -1.0)
    for _, items in lists:
        w = sum(cum_words[e + 1] - cum_words[s] for s, e in items)
        c = sum(cum_chars[e + 1] - cum_chars[s] for s, e in items) or 1.0
        lk = sum(cum_links[e + 1] - cum_links[s] for s, e in items)
        inside = float(
            unit is not None
            and unit.start <= first + items[0][0]
            and first + items[-1][1] <= unit.end
        )
        row = (1.0, w / total, math.log1p(len(items)), 0.0, math.log1p(w / len(items)), 0.0,
               min(lk / c, 1.0), 0.0, inside)  # fmt: skip
        for k, (s, e) in enumerate(items):
            take = outer_words[s : e + 1] < w
            if take.any():
                at = np.flatnonzero(take) + s
                cols[at] = row
                cols[at, 3] = k / len(items)
                outer_words[at] = w
    groups, inner_of, slot_items = _slot_groups(table, lists)
    for p, li in enumerate(inner_of):
        if li >= 0:
            n_items = len(lists[li][1])
            cols[p, 5] = len(slot_items[int(groups[p])]) / n_items
            cols[p, 7] = math.log1p(n_items)
    return cols, groups


def slot_means(prob: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """:data:`ITEM_CONTEXT_NAMES`: the mean of ``prob`` over each block's slot group."""
    if len(prob) == 0:
        return np.zeros((0, len(ITEM_CONTEXT_NAMES)), dtype=np.float32)
    _, inverse = np.unique(groups, return_inverse=True)
    sums = np.bincount(inverse, weights=prob)
    counts = np.bincount(inverse)
    return (sums[inverse] / counts[inverse]).astype(np.float32)[:, None]
