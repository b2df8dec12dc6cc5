"""A page's blocks as integer ids, numbered once a page (issue 45, "blocks as columns").

Several compiled readers of the blocks group them by the same strings and elements: the first
stage's features by tag path, class/id string and scope element, readability by scope element,
the second stage's context columns by tag path and ancestor, item lists by scope element. Each
used to number these itself, hashing the strings and element ids again. :func:`page_ids`
numbers them once (``_common_c.BlockIds``: C arrays, no object per block) and keeps the
numbers with the page's facts, so every reader after the first reads integers.
"""

from __future__ import annotations

from collections.abc import Sequence

from blockdex._common_c import BlockIds
from blockdex.page import Block, Page

__all__ = ["BlockIds", "block_ids", "compiled_found", "page_ids"]


def block_ids(blocks: Sequence[Block]) -> BlockIds:
    """The blocks' table: their columns, tag-path, class/id and scope-element numbers, read off
    the walk's rows when ``blocks`` is a page's lazy sequence (no ``Block`` is made), else from
    the ``Block`` objects (as a tuple: the readers check they are handed the sequence that
    was numbered)."""
    table = getattr(blocks, "table", None)
    if table is not None:
        found = table()
        if found is not None:
            return found  # type: ignore[no-any-return]
    return BlockIds(blocks if type(blocks) is tuple or table is not None else tuple(blocks))


def page_ids(page: Page) -> BlockIds:
    """:func:`block_ids` of ``page.blocks``, numbered on first use and kept in the page's facts
    (:class:`~blockdex.page.PageFacts`); a page made with other blocks (a slice) numbers its
    own."""
    facts = page.facts
    found = facts.ids
    if found is None or found.blocks is not page.blocks:
        found = facts.ids = block_ids(page.blocks)
    return found  # type: ignore[no-any-return]


def compiled_found(found: object, what: str) -> object:
    """What a compiled reader of the blocks' slots found (``what``: item lists, units); it finds
    None when the blocks are not all of one class with :class:`~blockdex.page.Block`'s slots."""
    if found is None:
        raise TypeError(f"{what} are found in blockdex.page.Block objects of one class")
    return found
