"""Assembled HTML → the output formats: ``markdown``, ``text``, ``html`` and ``json``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any

from blockdex.assemble import assemble_html
from blockdex.errors import UnsupportedFormat
from blockdex.ids import page_ids
from blockdex.markdown import blocks_markdown
from blockdex.options import FORMATS
from blockdex.page import Block, Page, Selection
from blockdex.segment import LINE_BREAK, PARAGRAPH_BREAK
from blockdex.units import (
    DEFAULT_UNITS,
    heading_positions,
    names_site,
    page_site,
    page_title,
    title_pieces,
    title_without_site,
    word_overlap,
    words,
)


def markdown_options() -> Any:
    """html-to-markdown's options for blockdex's Markdown: ATX headings, fenced code, no
    escaping of ``*``, ``_`` and other marks (the text is the page's, not Markdown source)."""
    from html_to_markdown import ConversionOptions

    return ConversionOptions(
        heading_style="atx",
        code_block_style="backticks",
        extract_metadata=False,
        escape_asterisks=False,
        escape_underscores=False,
        escape_misc=False,
    )


@lru_cache(maxsize=1)
def _markdown_converter() -> Callable[[str], str]:
    """``html -> markdown`` with blockdex's options, built once.

    html-to-markdown's public ``convert`` turns its Python options into the native ones on every
    call (~0.1 ms, a tenth of a small page's conversion); the native call with options built once
    gives the same Markdown. The public API is used when the native one is not where expected.
    """
    from html_to_markdown import convert

    options = markdown_options()
    try:
        from html_to_markdown._html_to_markdown import convert as native_convert
        from html_to_markdown.api import _to_rust_conversion_options

        native = _to_rust_conversion_options(options)
    except (ImportError, AttributeError, TypeError, ValueError):
        return lambda html: convert(html, options).content

    return lambda html: native_convert(html=html, options=native, visitor=None).content


def html_to_markdown(html: str) -> str:
    """Markdown for an HTML document: pipe tables, fenced code, ``#`` headings."""
    return _markdown_converter()(html).strip() + "\n"


_TITLE_LEVELS = 3
"""The headings that may carry the page's title: ``h1`` … ``h3``."""
_TITLE_MATCH = DEFAULT_UNITS.title_match
"""How well an ``h1`` must match the page's title sources to be its headline (as the primary
article's headline must)."""


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def page_headline(page: Page, heads: list[tuple[int, int]] | None = None) -> tuple[str, int | None]:
    """The page's headline, for the Markdown title line, and the index of its block (None when
    it comes from ``<title>``): the ``h1`` that best names the page — matched against its title
    sources as :func:`blockdex.units.find_primary` matches the primary article's headline, or
    saying a piece of ``<title>`` (not the site's name) whole; the one that matches more of the
    title first, then the better match, then one in an article: so an article's ``h1``, not a
    logo's —; else ``<title>``
    without the site's name (:func:`blockdex.units.title_without_site`), in the page's own words
    when a heading (``h1`` … ``h3``, not the site's name) says it or a part of it. ``heads``:
    the page's :func:`~blockdex.units.heading_positions`, when the caller has them."""
    blocks = page.blocks
    if heads is None:
        heads = heading_positions(blocks)
    site = page_site(page)
    best: tuple[int, float, bool, int] | None = None  # (source length, score, in article, -pos)
    if any(level == 1 for _, level in heads):
        found = page_title(page)
        sources = [  # (words, length, the match it needs)
            (w, len(t), _TITLE_MATCH)
            for t, w in zip((t for t in found.sources if words(t)), found.words, strict=True)
        ]
        pieces = title_pieces(page.title or "")
        if len(pieces) > 1:
            sources += [
                (frozenset(words(t)), len(t), 1.0)  # a piece said whole: "Quickstart — Flask…"
                for t in pieces
                if not names_site(t, site)
            ]
        for pos, level in heads:
            if level != 1:
                continue
            heading = frozenset(words(blocks[pos].text))
            for source, size, least in sources:
                score = round(word_overlap(heading, source), 6)  # title_match's Dice
                if score >= least:
                    in_article = page.unit_of(blocks[pos].index, "article") is not None
                    key = (size, score, in_article, -pos)
                    best = key if best is None or key > best else best
    if best is not None:
        block = blocks[-best[3]]
        return " ".join(block.text.split()), block.index
    title = title_without_site(page.title or "", site)
    norm = _norm(title)
    if norm:
        for pos, level in heads:  # in page order
            if level <= _TITLE_LEVELS:
                text = _norm(blocks[pos].text)
                if text and (text in norm or norm in text) and not names_site(text, site):
                    return " ".join(blocks[pos].text.split()), blocks[pos].index
    return title, None


def title_heading(page: Page, selection: Selection) -> str:
    """A ``# Title`` line for Markdown: the page's headline (:func:`page_headline`), unless a
    selected heading already carries it or the title.

    Benchmarks' ground truth (and so the model) often leave the headline out of the *content*;
    a reader of the Markdown still wants to know what the page is.
    """
    blocks = page.blocks
    heads = heading_positions(blocks)
    texts = []  # the selected headings that may carry a title, normalised
    intervals = selection.intervals
    k = 0
    for pos, level in heads:  # in page order, as the intervals are
        if level > _TITLE_LEVELS:
            continue
        index = blocks[pos].index
        while k < len(intervals) and intervals[k][1] < index:
            k += 1
        if k == len(intervals):
            break
        if intervals[k][0] <= index:
            text = _norm(blocks[pos].text)
            if text:
                texts.append(text)

    def said(name: str) -> bool:  # a selected heading says ``name`` (or a part of it)
        return any(t in name or name in t for t in texts)

    title = _norm(page.title or "")
    if title and said(title):
        return ""  # the common case, decided without the headline
    headline, index = page_headline(page, heads)
    if not headline or (index is not None and index in selection) or said(_norm(headline)):
        return ""
    return f"# {headline}\n\n"


def selection_markdown(page: Page, selection: Selection) -> str:
    """Markdown of the selected blocks, headed by the page title (see :func:`title_heading`).

    Written from the blocks (:mod:`blockdex.markdown`), not by converting the assembled HTML."""
    return title_heading(page, selection) + (blocks_markdown(page, selection) or "\n")


def selection_text(page: Page, selection: Selection) -> str:
    """Plain text of the selected blocks: one element per line, split parts re-joined, and a
    line of its own after each break (``<br>``) a block's text holds: a paragraph too is a line."""
    table = page_ids(page)
    texts, tags, splits = table.texts, table.column("tag"), table.column("split")
    lines: list[list[str]] = []  # pieces per line, joined once (a long split block is linear)
    prev_split: int | None = None
    prev_break = False  # the previous part ended at a break (segment._split_text keeps it)
    for pos in _kept_positions(page, selection.indices):
        text, tag, split = texts[pos], tags[pos], splits[pos]
        at_break = False
        if tag != "pre" and LINE_BREAK in text:
            text = text.replace(PARAGRAPH_BREAK, LINE_BREAK)
            at_break = text.endswith(LINE_BREAK)
            text = text.rstrip(LINE_BREAK) if at_break else text
        if split is not None and prev_split == split[0] and lines:
            lines[-1].append("\n" if tag == "pre" or prev_break else " ")
            lines[-1].append(text)
        else:
            lines.append([text])
        prev_split = split[0] if split is not None else None
        prev_break = at_break
    return "\n".join("".join(pieces) for pieces in lines) + ("\n" if lines else "")


def result_notes(page: Page, selection: Selection, query: str | None = None) -> list[str]:
    """What a reader of a result should know besides its warnings: why it is empty. Every door
    gives them: the CLI on standard error (``blockdex: note: …``), JSON output and the HTTP and
    batch records in ``notes``."""
    if selection:
        return []
    if query:
        reason = "no block matched the query"
    elif not page.blocks:
        reason = "the page has no text blocks"
    else:
        reason = "no block was judged to be content"
    return [f"empty result: {reason}"]


def selection_json(
    page: Page,
    selection: Selection,
    *,
    markdown: str | None = None,
    extra: Mapping[str, Any] | None = None,
    include_blocks: bool = True,
    query: str | None = None,
) -> dict[str, Any]:
    """The JSON record: metadata, the page's type, chosen indices with scores, the kept blocks, and Markdown;
    ``warnings`` and ``notes`` (:func:`result_notes`; ``query``: the result's) when there are
    any."""
    scores = selection.scores or {}
    wanted = set(selection.indices)
    record: dict[str, Any] = {
        "title": page.title,
        "url": page.url,
        "metadata": dict(page.meta),
        **page.page_type.to_json(),
        "n_blocks": len(page.blocks),
        "selection": selection.format(),
        "intervals": [list(iv) for iv in selection.intervals],
    }
    if selection.fallback is not None:
        record["fallback"] = selection.fallback
    if include_blocks:
        unit_of = page.unit_ids()
        context = selection.context or {}
        record["blocks"] = [
            {
                "index": b.index,
                "tag": b.tag,
                "text": b.text,
                **({"score": round(float(scores[b.index]), 4)} if b.index in scores else {}),
                **({"unit": unit_of[b.index]} if b.index in unit_of else {}),
                **({"source": b.source} if b.source != "dom" else {}),
                **(
                    {"context": _context_rows(page, context[b.index])} if b.index in context else {}
                ),
            }
            for b in kept_blocks(page, wanted)
        ]
        record["units"] = [u.to_json() for u in page.units]
        record["primary_unit"] = page.primary.unit if page.units else None
    record["markdown"] = markdown if markdown is not None else selection_markdown(page, selection)
    warnings = list(page.warnings) + list(selection.warnings)
    if warnings:
        record["warnings"] = warnings
    notes = result_notes(page, selection, query)
    if notes:
        record["notes"] = notes
    if extra:
        record.update(extra)
    return record


def _kept_positions(page: Page, wanted: Iterable[int]) -> list[int]:
    """The positions of ``page``'s blocks whose indices are in ``wanted``, each once, in page
    order (indices not on the page left out)."""
    first, n = page.first_index, len(page.blocks)
    return [i - first for i in sorted(set(wanted)) if 0 <= i - first < n]


def kept_blocks(page: Page, wanted: Iterable[int]) -> list[Block]:
    """The blocks of ``page`` whose indices are in ``wanted``, in page order (only they are
    made: a page's other blocks stay in its table)."""
    blocks = page.blocks
    return [blocks[pos] for pos in _kept_positions(page, wanted)]


def block_rows(page: Page, selection: Selection) -> list[dict[str, Any]]:
    """Every block of ``page`` with its decision: ``index, tag, text, kept``, and ``score``,
    ``split``, ``unit`` and ``source`` when known (the HTTP service's ``blocks``, the block
    explorer)."""
    kept = set(selection.indices)
    scores = selection.scores or {}
    unit_of = page.unit_ids()
    rows = []
    for b in page.blocks:
        row: dict[str, Any] = {
            "index": b.index,
            "tag": b.tag,
            "text": b.text,
            "kept": b.index in kept,
        }
        if b.index in scores:
            row["score"] = round(float(scores[b.index]), 4)
        if b.split is not None:
            row["split"] = {"id": b.split[0], "part": b.split[1], "total": b.split[2]}
        if b.index in unit_of:
            row["unit"] = unit_of[b.index]
        if b.source != "dom":
            row["source"] = b.source
        rows.append(row)
    return rows


def _context_rows(page: Page, headings: tuple[int, ...]) -> list[dict[str, Any]]:
    """The headings given as a kept block's context (:attr:`Selection.context`), as JSON."""
    rows = []
    for index in headings:
        block = page.by_index(index)
        rows.append({"index": index, "tag": block.tag, "text": " ".join(block.text.split())})
    return rows


def render(page: Page, selection: Selection, fmt: str = "markdown") -> str:
    """Render the selected blocks of ``page`` in one of :data:`FORMATS`."""
    if fmt == "markdown":
        return selection_markdown(page, selection)
    if fmt == "text":
        return selection_text(page, selection)
    if fmt == "html":
        return assemble_html(page, selection)
    if fmt == "json":
        return json.dumps(selection_json(page, selection), ensure_ascii=False, indent=2) + "\n"
    raise UnsupportedFormat(f"unknown output format {fmt!r}; choose one of: {', '.join(FORMATS)}")
