"""Interval lists: parse what a model answered, format selections, chunk pages under a token budget.

A model answers with closed intervals of block indices, ``[[1,2],[5,7]]``, or ``NA`` when no
block qualifies. Real outputs are messier — prose around the list, code fences, flat lists,
ranges written ``1-3, 7`` — so :func:`parse_intervals` accepts all of those, drops indices
outside the page with a warning, and never raises.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from blockdex.page import Interval, Page, Selection, merge_intervals

_FENCE_RE = re.compile(r"```[a-zA-Z]*\s*(.*?)```", re.S)
_NA_RE = re.compile(r"^\W*(?:NA|N/A|none|null|\[\s*\])\W*$", re.I)
_PAIR_RE = re.compile(r"\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]")
_SINGLE_BRACKET_RE = re.compile(r"\[\s*(-?\d+)\s*\]")
_RANGE_RE = re.compile(r"(?<![\w.])(-?\d+)\s*(?:-|–|—|to|\.\.)\s*(-?\d+)(?![\w.])")
_NUMBER_RE = re.compile(r"(?<![\w.])(-?\d+)(?![\w.])")
_FLAT_LIST_RE = re.compile(r"\[\s*(-?\d+(?:\s*,\s*-?\d+)*)\s*\]")


def _candidates(text: str) -> str:
    """The part of a model's answer that holds the list (inside a code fence if there is one)."""
    fences = _FENCE_RE.findall(text)
    return fences[-1] if fences else text


def parse_interval_text(text: str) -> tuple[list[Interval], list[str]]:
    """Intervals written in ``text`` (no range check); returns ``(intervals, warnings)``."""
    warnings: list[str] = []
    if text is None:
        return [], ["model returned no text"]
    body = _candidates(str(text)).strip()
    if not body or _NA_RE.match(body):
        return [], []
    pairs = [(int(a), int(b)) for a, b in _PAIR_RE.findall(body)]
    if pairs:
        singles = [(int(a), int(a)) for a in _SINGLE_BRACKET_RE.findall(_PAIR_RE.sub(" ", body))]
        return pairs + singles, warnings
    flat = _FLAT_LIST_RE.findall(body)
    if flat:
        out: list[Interval] = []
        for group in flat:
            nums = [int(x) for x in group.split(",")]
            if len(nums) == 2:
                out.append((nums[0], nums[1]))  # "[1,3]" is one closed interval
            else:
                out.extend((n, n) for n in nums)
        return out, warnings
    ranges = [(int(a), int(b)) for a, b in _RANGE_RE.findall(body)]
    rest = _RANGE_RE.sub(" ", body)
    singles = [(int(a), int(a)) for a in _NUMBER_RE.findall(rest)]
    if not ranges and not singles:
        if re.search(r"\bNA\b", body):
            return [], []
        return [], [f"could not read an interval list from the model output: {body[:80]!r}"]
    return ranges + singles, warnings


def parse_intervals(text: str, valid: Sequence[int] | range) -> Selection:
    """Parse a model answer into a :class:`Selection` restricted to the ``valid`` indices.

    Out-of-range indices are dropped (with a warning), reversed pairs are swapped, overlapping
    and touching intervals merged.
    """
    raw, warnings = parse_interval_text(text)
    if not raw:
        return Selection((), None, tuple(warnings))
    valid_set = valid if isinstance(valid, range) else set(valid)
    lo = min(valid_set) if len(valid_set) else 0
    hi = max(valid_set) if len(valid_set) else -1
    kept: list[Interval] = []
    dropped = 0
    for a, b in raw:
        if a > b:
            a, b = b, a
        if b < lo or a > hi:
            dropped += 1
            continue
        if a < lo or b > hi:
            dropped += 1
        kept.append((max(a, lo), min(b, hi)))
    if not isinstance(valid_set, range):
        kept_idx = [i for a, b in kept for i in range(a, b + 1) if i in valid_set]
        intervals = merge_intervals((i, i) for i in kept_idx)
    else:
        intervals = merge_intervals(kept)
    if dropped:
        warnings.append(f"{dropped} interval(s) outside blocks {lo}..{hi} were dropped or clipped")
    return Selection(intervals, None, tuple(warnings))


def format_intervals(intervals: Sequence[Interval]) -> str:
    """``[[a,b],…]`` or ``NA``."""
    return Selection(merge_intervals(intervals)).format()


TokenCounter = Callable[[str], int]


def chunk_page(page: Page, max_doc_tokens: int, count: TokenCounter) -> list[Page]:
    """Cut a page into consecutive chunks whose tagged text stays under ``max_doc_tokens``.

    A single block larger than the budget becomes a chunk of its own (segmentation keeps blocks
    far below any sensible budget, see ``SegmentConfig.max_block_tokens``).
    """
    chunks: list[Page] = []
    start = 0
    used = 0
    for pos, block in enumerate(page.blocks):
        n = count(block.tagged()) + 1  # +1: the newline between lines
        if pos > start and used + n > max_doc_tokens:
            chunks.append(page.slice(start, pos))
            start, used = pos, 0
        used += n
    if start < len(page.blocks) or not chunks:
        chunks.append(page.slice(start, len(page.blocks)))
    return chunks


def cap_selection(
    page: Page, selection: Selection, max_tokens: int, count: TokenCounter
) -> Selection:
    """``selection`` cut to the blocks that fit ``max_tokens`` (their text counted by ``count``),
    kept in page order until the next one would pass the budget: a cut falls between blocks,
    never inside one. A cut selection says so in a warning."""
    used = 0
    kept: list[int] = []
    indices = selection.indices
    for index in indices:
        n = count(page.by_index(index).text)
        if used + n > max_tokens:
            break
        used += n
        kept.append(index)
    if len(kept) == len(indices):
        return selection
    note = (
        f"cut at the token budget (max_tokens {max_tokens}): kept {len(kept)} of"
        f" {len(indices)} blocks ({used} tokens)"
    )
    return dataclasses.replace(
        selection,
        intervals=merge_intervals((i, i) for i in kept),
        warnings=(*selection.warnings, note),
    )
