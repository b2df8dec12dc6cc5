"""Selected blocks → Markdown, written from the blocks themselves.

A block already holds what Markdown needs: its own element's tag, the structural elements it sits
in (lists, items, tables, quotes…, from :func:`blockdex.assemble.layout`) and its content with
only ``<b> <i> <u> <code> <br>`` (and ``<td>``/``<th>`` in table rows) as markup. Writing from
them skips serialising the selection as HTML and parsing that again (html-to-markdown took 0.14
of the 0.23 ms a scrapinghub-aeb page spent in Markdown; see ``benchmarks/NOTES.md``).

The Markdown follows html-to-markdown's conventions, which blockdex used before: ``#`` headings,
``-`` bullets and ``1.`` numbers, pipe tables whose first row is the header, fenced code with the
page's language, ``>`` quotes, ``**bold**``, ``*italic*``, `` `code` ``, two spaces before a line
break, and a backslash before a line start that Markdown would read as markup. Table columns are
not padded to a common width: the padding is tokens an LLM pays for and reads nothing from.
"""

from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left, bisect_right
from typing import NamedTuple

from blockdex import _markdown_c as compiled
from blockdex.assemble import (
    Step,
    code_language,
    is_context,
    layout,
    layout_blocks,
    layout_kept,
    without_variants,
)
from blockdex.page import Block, Page, Selection

# A line start Markdown would read as a heading, quote, list item, thematic break or fence.
_LINE_START_RE = re.compile(
    r"^(?:#{1,6}(?=\s|$)|>|[-+*](?=\s|$)|\d{1,9}[.)](?=\s|$)|[-_*=](?:\s*[-_*=]){2,}\s*$|```|~~~)",
    re.M,
)
_CELL_SPLIT_RE = re.compile(r"<(t[dh])(?: colspan=(\d+))?(?: rowspan=(\d+))?>|</t[dh]>")
_HEADINGS = {f"h{n}": "#" * n + " " for n in range(1, 7)}
_LISTS = frozenset({"ul", "ol"})
_EMPHASISED = {"figcaption": "*", "caption": "*", "summary": "**"}


inline_markdown = compiled.inline_markdown
"""Markdown for a block's content (text with ``<b> <i> <u> <code> <br>``), written in C
(``_markdown_c.inline_markdown``): ``inline_markdown(html, line_break="  \\n")``.

Emphasis marks go round the text, not its edge spaces (``<b> x </b>`` → `` **x** ``); empty
emphasis is dropped; nested tags of one kind count once; code is written as it is, with a fence
longer than any run of backticks inside it. A kept link (``<a href="…">``, see
:attr:`blockdex.segment.SegmentConfig.links`) is written ``[text](url)``; one without text is
dropped."""

_destination = compiled.destination
"""A URL as a Markdown link destination: in ``<…>`` when it holds a space or a bracket."""


def _escape_mark(m: re.Match[str]) -> str:
    s = m.group(0)
    if s[0].isdigit():  # "1." starts a list, "1\." does not
        return s[:-1] + "\\" + s[-1]
    return "\\" + s


_MARK_CHARS = frozenset("#>-+*_=`~0123456789")


def _escape_line_starts(text: str) -> str:
    if text[0] not in _MARK_CHARS and "\n" not in text:
        return text  # one line that cannot start with markup: the common case
    return _LINE_START_RE.sub(_escape_mark, text)


MAX_NESTING = 32
"""Elements nested deeper than this are written inside the one at this depth: Markdown has no
use for more levels, and hostile pages nest thousands (the writer recurses once per level)."""


_Node = compiled.Node
"""An element of the selection's structure (``_markdown_c.Node``): its ``tag``, its
``children`` (nodes and runs of blocks) and, for a table that spans cells, its ``rows``: the
table on the page (a :class:`_Table`; :func:`_table_block` computes its grid on the whole
table)."""


def _spanned_tables(blocks: tuple[Block, ...] | list[Block]) -> dict[int, _Table]:
    """Each table that has a cell spanning rows or columns (its rows' blocks), by its element id."""
    tables: dict[int, dict[int, list[Block]]] = {}
    spans: set[int] = set()
    for block in blocks:
        if block.tag == "tr" and len(block.chain) >= 2 and block.chain[-2][0] == "table":
            table = block.chain[-2][1]
            tables.setdefault(table, {}).setdefault(block.chain[-1][1], []).append(block)
            if "span=" in block.html:
                spans.add(table)
    return {t: _Table(list(tables[t].values())) for t in spans}


class _Tables:
    """The tables of some blocks that have a cell spanning rows or columns, by element id
    (:func:`_spanned_tables`): found when the first table is written, once for all the trees
    written of those blocks (a thread's posts are a tree each)."""

    __slots__ = ("_blocks", "_found")

    def __init__(self, blocks: tuple[Block, ...] | list[Block]) -> None:
        self._blocks = blocks
        self._found: dict[int, _Table] | None = None

    def __call__(self) -> dict[int, _Table]:
        if self._found is None:
            self._found = _spanned_tables(self._blocks)
        return self._found


def _tree(page: Page, selection: Selection | list[int], tables: _Tables) -> _Node:
    """The selected blocks (a selection, or their indices) nested in their elements; a run is
    ``[(joint, block), ...]``. ``tables``: the page's (:class:`_Tables`)."""
    # without images only a caption is written, in a cell or a heading: variants need no look
    if isinstance(selection, Selection):
        steps = layout(page, selection, variants=page.images)
    else:
        steps = layout_kept(page, set(selection), variants=page.images)
    return _tree_of(steps, tables, page.images)


def _tree_of(steps: list[Step], tables: _Tables, images: bool) -> _Node:
    """:func:`_tree` of the :func:`~blockdex.assemble.layout` ``steps`` of blocks whose tables
    are ``tables``, images written or not, nested in C (``_markdown_c.tree_of``)."""
    root, dropped = compiled.tree_of(steps, images, MAX_NESTING, tables, _image_without_address)
    if dropped:  # an element that held only left-out images (a gallery's item) is not written
        _prune(root)
    return root  # type: ignore[no-any-return]


def _prune(node: _Node) -> bool:
    """Remove the elements under ``node`` that hold no block; whether ``node`` holds one."""
    node.children = [c for c in node.children if not isinstance(c, _Node) or _prune(c)]
    return bool(node.children)


_CELL_TAGS = frozenset({"td", "th"})
_TEXT_IMAGE_NODES = frozenset({"tr", *_CELL_TAGS, *_HEADINGS, *_EMPHASISED})
"""Elements in which an image stands for text (a flag or a tick in a table cell, a logo as a
heading, an image in a caption): written as its caption even without images."""


def _image_without_address(block: Block, stack: list[_Node]) -> Block | None:
    """An image when images are not written (:attr:`blockdex.page.Page.images` False): left
    out, except where its caption is text the page shows: its figure's ``<figcaption>`` (which
    has no block of its own) and an image inside one of :data:`_TEXT_IMAGE_NODES`. Those are
    written as the caption, as text."""
    attrs = dict(block.attributes)
    if attrs.get("caption") == "figcaption" or any(n.tag in _TEXT_IMAGE_NODES for n in stack):
        return dataclasses.replace(block, attributes=(("alt", attrs.get("alt", "")),))
    return None


_JOINTS = {"": "", "space": " ", "newline": "\n"}


def _run_text(run: list[tuple[str, Block]], line_break: str = "  \n", images: bool = True) -> str:
    """A run of blocks as inline Markdown; ``images=False`` writes an image as its alt text.

    A link that a long block's split cut in two (each part holds it round its share of the
    text) is written once, over both parts."""
    if len(run) == 1 and not run[0][0] and run[0][1].tag != "img":  # the usual run: one block
        return inline_markdown(run[0][1].html, line_break).strip()
    out = []
    prev: tuple[Block, str, int] | None = None  # the last text block, its content, its place
    for joint, block in run:
        if prev is not None and joint == "space" and (seam := _link_seam(prev, block)):
            html = prev[1][: -len("</a>")] + " " + block.html[len(seam) :]
            out[prev[2]] = inline_markdown(html, line_break)
            prev = (block, html, prev[2])
            continue
        out.append(_JOINTS.get(joint, line_break))
        prev = None
        if block.tag == "img":
            attrs = dict(block.attributes)
            if not images:
                out.append(" ".join(attrs.get("alt", "").split()))
                continue
            src = attrs.get("src", "")
            if not src:  # no address found: the caption is what there is to read
                out.append(" ".join(attrs.get("alt", "").split()))
                continue
            src = _destination(src)
            alt = " ".join(attrs.get("alt", "").split())
            out.append(f"![{alt}]({src})")
        else:
            prev = (block, block.html, len(out))
            out.append(inline_markdown(block.html, line_break))
    return "".join(out).strip()


def _link_seam(prev: tuple[Block, str, int], block: Block) -> str:
    """The link marker ``block`` opens with when it continues the link ``prev`` (the previous
    part of the same split block, with its content) ends with; '' when it does not."""
    before, html, _ = prev
    if (
        before.split is None
        or block.split is None
        or before.split[0] != block.split[0]
        or not html.endswith("</a>")
        or not block.html.startswith("<a ")
    ):
        return ""
    marker = html[html.rfind("<a ") :]
    marker = marker[: marker.find(">") + 1]
    return marker if block.html.startswith(marker) else ""


def _paragraph(text: str) -> list[str]:
    """A run's Markdown as lines. Two line breaks in a row (``<br><br>``) leave a blank line
    between two paragraphs: one blank line, and no line break before it."""
    if not text:
        return []
    if "\n" not in text:
        return [_escape_line_starts(text)]
    lines: list[str] = []
    for line in _escape_line_starts("\n".join(x.lstrip() for x in text.split("\n"))).split("\n"):
        if line.strip():
            lines.append(line)
        elif lines and lines[-1]:
            lines[-1] = lines[-1].rstrip()
            lines.append("")
    if lines and not lines[-1]:
        lines.pop()
    return lines


def _inline_of(node: _Node, images: bool = False) -> str:
    """All the text under ``node`` on one line (headings, captions, table cells), images by
    their alt text unless ``images``; a table inside is flattened (:func:`_table_line`)."""
    pieces = []
    for child in node.children:
        if isinstance(child, _Node):
            if child.tag == "table":
                pieces.append(_table_line(child, images))
            else:
                pieces.append(_inline_of(child, images))
        else:
            pieces.append(_run_text(child, " ", images=images))
    return " ".join(" ".join(pieces).split())


CELL_SEPARATOR = " · "
"""Between the cells of a table flattened into one line (a table nested in a table cell)."""
ROW_SEPARATOR = " / "
"""Between the rows of a table flattened into one line."""


def _table_line(table: _Node, images: bool = False) -> str:
    """A table on one line, for a table nested in another's cell: its rows' non-empty cells
    joined by :data:`CELL_SEPARATOR`, the rows by :data:`ROW_SEPARATOR` (its caption first)."""
    rows = []
    for child in table.children:
        if isinstance(child, _Node) and child.tag == "tr":
            line = CELL_SEPARATOR.join(c.text for c in _row_cells(child, images) if c.text)
        elif isinstance(child, _Node):
            line = _inline_of(child, images)
        else:
            line = _run_text(child, " ", images=images)
        if line:
            rows.append(line)
    return ROW_SEPARATOR.join(rows)


CONTEXT_MARK = "<!-- context -->"
"""The line above the headings a query's answer is given under, which the page has but the
answer does not (:attr:`blockdex.page.Selection.context`): a reader sees them as context, a
renderer shows nothing."""


def _is_context_heading(node: _Node | list[tuple[str, Block]]) -> bool:
    return (
        isinstance(node, _Node)
        and node.tag in _HEADINGS
        and bool(node.children)
        and isinstance(node.children[0], list)
        and is_context(node.children[0][0][1])
    )


def _blocks(node: _Node, context: bool = False) -> list[list[str]]:
    """``node``'s children as Markdown blocks (each a list of lines); ``context``: some of them
    are headings given as a query answer's context (:data:`CONTEXT_MARK` goes above them)."""
    out: list[list[str]] = []
    after_context = False
    for child in node.children:
        if context:
            heading = _is_context_heading(child)
            if heading and not after_context:
                out.append([CONTEXT_MARK])
            after_context = heading
        if isinstance(child, _Node):
            out.extend(_node_blocks(child))
        else:
            lines = _paragraph(_run_text(child))
            if lines:
                out.append(lines)
    return out


def _join(blocks: list[list[str]]) -> list[str]:
    lines: list[str] = []
    for block in blocks:
        if lines:
            lines.append("")
        lines.extend(block)
    return lines


def _runs_under(node: _Node) -> list[list[tuple[str, Block]]]:
    runs: list[list[tuple[str, Block]]] = []
    for child in node.children:
        runs.extend(_runs_under(child) if isinstance(child, _Node) else [child])
    return runs


def _code_block(node: _Node) -> list[list[str]]:
    """A fenced code block of everything under the ``<pre>``, in the language the page set."""
    runs = _runs_under(node)
    if not runs:
        return []
    lang = code_language(runs[0][0][1])
    code = "\n".join(
        "".join(_JOINTS.get(joint, "\n") + block.text for joint, block in run) for run in runs
    ).strip("\n")
    if not code.strip():
        return []
    longest = max((len(r) for r in re.findall("`{3,}", code)), default=2)
    fence = "`" * (longest + 1)
    return [[fence + lang, *code.split("\n"), fence]]


def _item_lines(item: _Node) -> list[str]:
    """A list item's lines: its paragraphs apart, a list inside it right under its text."""
    lines: list[str] = []
    for child in item.children:
        if isinstance(child, _Node):
            blocks = _node_blocks(child)
            tight = child.tag in _LISTS
        else:
            blocks = [_paragraph(_run_text(child))] if child else []
            tight = False
        for block in blocks:
            if not block:
                continue
            if lines and not tight:
                lines.append("")
            lines.extend(block)
    return lines


def _list_block(node: _Node) -> list[list[str]]:
    lines: list[str] = []
    number = 0
    for child in node.children:
        if isinstance(child, _Node) and child.tag == "li":
            number += 1
            marker = f"{number}. " if node.tag == "ol" else "- "
            body = _item_lines(child) or [""]
            pad = " " * len(marker)
            lines.append(marker + body[0])
            lines.extend(pad + line if line else "" for line in body[1:])
        else:  # a nested list or stray content directly in the list: under the previous item
            body = _join(
                _node_blocks(child) if isinstance(child, _Node) else [_paragraph(_run_text(child))]
            )
            pad = "  " if lines else ""
            lines.extend(pad + line if line else "" for line in body)
    return [lines] if lines else []


class _Cell(NamedTuple):
    text: str
    colspan: int = 1
    rowspan: int = 1
    header: bool = False


def _row_cells(tr: _Node, images: bool = True) -> list[_Cell]:
    """A row's cells with their spans, as text (``|`` not escaped yet). A row cut into several
    blocks (at a line break) is put together again; content nested in a cell (a list, a
    paragraph, an image) fills the last cell if that is empty, else it becomes a cell of its own.
    A grid row's cells (:data:`blockdex.segment.NESTED_TABLE_TAGS`) are elements of the tree:
    each is its content on one line, a nested table flattened (:func:`_table_line`)."""
    if any(isinstance(item, _Node) and item.tag in _CELL_TAGS for item in tr.children):
        grid_cells = []
        for item in tr.children:
            if isinstance(item, _Node):
                text = _inline_of(item, images)
            else:
                text = _run_text(item, " ", images=images)
            if text:
                grid_cells.append(_Cell(text, header=isinstance(item, _Node) and item.tag == "th"))
        return grid_cells
    html: list[str] = []
    nested: list[str] = []
    for item in tr.children:
        if isinstance(item, _Node):
            nested.append(_inline_of(item))
            continue
        for joint, block in item:
            if block.tag == "tr":
                html.append(("<br>" if joint == "break" else " ") if joint else "")
                html.append(block.html)
            else:
                nested.append(_run_text([("", block)], " "))
    parts = _CELL_SPLIT_RE.split("".join(html))
    # split gives text, then the four groups of each marker: (tag, colspan, rowspan) of an
    # opening one, all None for a closing one
    cells: list[_Cell] = []
    opened: tuple[str, str | None, str | None] | None = None
    for k in range(0, len(parts), 4):
        text = parts[k]
        if opened is not None or text.strip():  # text outside cells: a cell of its own
            tag, colspan, rowspan = opened or ("td", None, None)
            cells.append(
                _Cell(
                    " ".join(inline_markdown(text, " ").split()),
                    int(colspan or 1),
                    int(rowspan or 1),
                    tag == "th",
                )
            )
        if k + 1 < len(parts):
            tag = parts[k + 1]
            opened = (tag, parts[k + 2], parts[k + 3]) if tag else None
    for text in nested:
        text = " ".join(text.split())
        if not text:
            continue
        if cells and not cells[-1].text:
            cells[-1] = cells[-1]._replace(text=text)
        else:
            cells.append(_Cell(text))
    return cells


def _grid(rows: list[list[_Cell]]) -> tuple[list[list[str]], int]:
    """The rows as a rectangle, and how many of its first rows are header rows. A cell spanning
    rows is repeated in each row it covers (every row reads whole); one spanning columns is
    written once, then empty cells, except in header rows, where it is repeated so that each
    column gets its name."""
    heads = 0
    while heads < len(rows) and rows[heads] and all(c.header for c in rows[heads]):
        heads += 1
    grid: list[list[str]] = []
    carried: dict[int, tuple[str, int]] = {}  # column -> (text, rows still to cover)
    for r, row in enumerate(rows):
        line: list[str] = []
        cells = iter(row)
        col = 0
        while True:
            if col in carried:
                text, left = carried[col]
                line.append(text)
                if left <= 1:
                    del carried[col]
                else:
                    carried[col] = (text, left - 1)
                col += 1
                continue
            cell = next(cells, None)
            if cell is None:
                if any(c >= col for c in carried):
                    line.append("")
                    col += 1
                    continue
                break
            for k in range(cell.colspan):
                line.append(cell.text if k == 0 or r < heads else "")
                if cell.rowspan > 1:
                    carried[col] = (cell.text, cell.rowspan - 1)
                col += 1
        grid.append(line)
    width = max((len(line) for line in grid), default=0)
    return [line + [""] * (width - len(line)) for line in grid], heads


def _fold_header(grid: list[list[str]], heads: int) -> list[list[str]]:
    """Several header rows folded into one: each column's distinct names top down, joined by
    ``": "`` (``Score`` over ``Precision`` → ``Score: Precision``)."""
    if heads < 2:
        return grid
    folded = []
    for col in range(len(grid[0])):
        names: list[str] = []
        for row in grid[:heads]:
            if row[col] and row[col] not in names:
                names.append(row[col])
        folded.append(": ".join(names))
    return [folded, *grid[heads:]]


def _is_grid_row(tr: _Node) -> bool:
    """A row whose cells hold nested tables (:data:`blockdex.segment.NESTED_TABLE_TAGS`)."""
    return any(isinstance(c, _Node) and c.tag in _CELL_TAGS for c in tr.children)


def _arranges_tables(tr: _Node) -> bool:
    """A grid row whose cells hold nested tables and no text of their own: a layout that sets
    tables side by side (a year of month calendars), not a row of data."""
    return _is_grid_row(tr) and not any(
        isinstance(cell, list) or any(isinstance(c, list) for c in cell.children)
        for cell in tr.children
    )


def _row_node(blocks: list[Block]) -> _Node:
    tr = _Node("tr")
    tr.children.append([("break" if k else "", b) for k, b in enumerate(blocks)])
    return tr


class _Table:
    """A table of the page that has a cell spanning rows or columns: its rows' blocks (kept or
    not), and their grid once a writer asks for it (:func:`_whole_grid`), shared by every part
    of the table that is written apart."""

    __slots__ = ("_grid", "rows")

    def __init__(self, rows: list[list[Block]]) -> None:
        self.rows = rows
        self._grid: _WholeGrid | None = None

    def grid(self) -> _WholeGrid:
        if self._grid is None:
            self._grid = _whole_grid(self.rows)
        return self._grid


class _WholeGrid(NamedTuple):
    """A whole table's grid (:func:`_grid`) and what :func:`_cut_grid` checks kept rows by."""

    sizes: list[tuple[int, int]]
    """Each row's element id and how many blocks it has, in order."""
    ids: list[int]
    """The element ids of the rows with text: the grid's rows."""
    grid: list[list[str]]
    heads: int


def _whole_grid(whole: list[list[Block]]) -> _WholeGrid:
    sizes: list[tuple[int, int]] = []
    rows: list[list[_Cell]] = []
    ids: list[int] = []
    for blocks in whole:
        element = blocks[0].chain[-1][1]
        sizes.append((element, len(blocks)))
        row = _row_cells(_row_node(blocks))
        if any(c.text for c in row):
            rows.append(row)
            ids.append(element)
    grid, heads = _grid(rows)
    return _WholeGrid(sizes, ids, grid, heads)


def _cut_grid(table: _Table, trs: list[_Node]) -> list[list[str]] | None:
    """The kept rows ``trs`` of a table whose rows on the page are ``table``'s, their grid computed
    on the whole table (a cell spanning rows is repeated in each kept row it covers, also when the
    row it starts in is not kept), with every header row, folded. None when a kept row is not one
    of the table's (a grid row, nested content) or every row is kept."""
    kept: dict[int, int] = {}  # a kept row's element id -> how many of its blocks are kept
    for tr in trs:
        runs = [c for c in tr.children if isinstance(c, list)]
        if len(runs) != len(tr.children) or not runs:
            return None
        kept[runs[0][0][1].chain[-1][1]] = sum(map(len, runs))
    if len(kept) == len(table.rows):
        return None
    whole = table.grid()
    if any(element in kept and kept[element] != n for element, n in whole.sizes):
        return None  # a row kept in part is written as kept, not whole
    ids = whole.ids
    if not set(kept) <= set(ids):
        return None
    lines = [line for k, line in enumerate(whole.grid) if ids[k] in kept]
    return _fold_header(lines, sum(ids[k] in kept for k in range(whole.heads)))


def _table_block(node: _Node) -> list[list[str]]:
    out: list[list[str]] = []
    rows: list[list[_Cell]] = []
    trs: list[_Node] = []

    def flush() -> None:
        if rows:
            cut = _cut_grid(node.rows, trs) if node.rows is not None else None
            if cut is not None:
                grid = cut
            else:
                grid, heads = _grid(rows)
                grid = _fold_header(grid, heads)
            if grid and len(grid[0]) == 1 and any(map(_is_grid_row, trs)):
                # a layout table holding nested tables: each row's content as blocks, the
                # nested tables as tables of their own (not one line each)
                for tr in trs:
                    if _is_grid_row(tr):
                        out.extend(_blocks(tr))
                    else:
                        out.extend(_paragraph(c.text) for c in _row_cells(tr) if c.text)
            elif grid and len(grid[0]) == 1:  # a one-column (layout) table: its cells as lines
                out.extend(_paragraph(line[0]) for line in grid if line[0])
            else:
                lines = []
                for i, cells in enumerate(grid):
                    lines.append("|" + "".join(f" {_cell(c)} |" if c else " |" for c in cells))
                    if i == 0:
                        lines.append("|" + " --- |" * len(cells))
                out.append(lines)
            rows.clear()
            trs.clear()

    for child in node.children:
        if isinstance(child, _Node) and child.tag == "tr" and _arranges_tables(child):
            flush()
            out.extend(_blocks(child))  # its tables as tables of their own
        elif isinstance(child, _Node) and child.tag == "tr":
            row = _row_cells(child)
            if any(c.text for c in row):
                rows.append(row)
                trs.append(child)
        else:
            flush()
            out.extend(
                _node_blocks(child) if isinstance(child, _Node) else [_paragraph(_run_text(child))]
            )
    flush()
    return [b for b in out if b]


def _cell(text: str) -> str:
    """A cell's text in a pipe table: ``|`` escaped."""
    return text.replace("|", "\\|")


def _wrapped(tag: str, node: _Node) -> _Node:
    parent = _Node(tag)
    parent.children.append(node)
    return parent


def _node_blocks(node: _Node) -> list[list[str]]:
    tag = node.tag
    heading = _HEADINGS.get(tag)
    if heading is not None:
        text = _inline_of(node)
        if text.endswith("#"):  # not a closing sequence, which Markdown would drop
            text = text[:-1] + "\\#"
        return [[heading + text]] if text else []
    if tag in _LISTS:
        return _list_block(node)
    if tag == "li":  # an item whose list is further up, with other elements between
        return _list_block(_wrapped("ul", node))
    if tag == "table":
        return _table_block(node)
    if tag == "pre":
        return _code_block(node)
    if tag == "blockquote":
        return [[f"> {line}" if line else ">" for line in _join(_blocks(node))]]
    mark = _EMPHASISED.get(tag)
    if mark is not None:
        text = _inline_of(node)
        if text and mark not in text:
            return [_paragraph(f"{mark}{text}{mark}")]
        return [_paragraph(text)] if text else []
    return _blocks(node)


POST_WORDS = 40
"""Kept items of a list with at least this many words each on average are posts (a forum
thread's messages, a page's sections), written one after the other between rules; shorter
ones are records (cards, results), written as one list entry each."""
_STRUCTURE_IN_RECORD = frozenset({"table", "pre", "ul", "ol", "blockquote", "dl"})
"""A record holding one of these is written with its structure, not as one line."""
_HEADING_LINE_RE = re.compile(r"^#{1,6} ")


class _Records(NamedTuple):
    """A kept item list written as a whole: each item's kept block indices, in order."""

    items: list[list[int]]
    posts: bool
    parent: int
    """Element id of the items' parent (their list, when they are list items)."""
    ordered: bool
    """The items are an ``<ol>``'s: records are numbered."""


def _record_lists(page: Page, wanted: set[int]) -> dict[int, _Records]:
    """The kept item lists written as lists or posts, by the index of their first kept block:
    lists of records of several blocks each (a single-block item is a list item or paragraph
    already) with at least two kept items, outermost first; lists inside them stay as they are."""
    out: dict[int, _Records] = {}
    taken_until = -1
    words = {}
    kept = sorted(wanted)
    for lst in page.item_lists:  # sorted by first block, outer ones first
        first, last = lst.items[0][0], lst.items[-1][1]
        if first <= taken_until:
            continue
        if lst.signature.partition(".")[0] in _STRUCTURE_IN_RECORD or lst.signature == "table":
            continue  # a run of tables, lists or code blocks is written as such
        at = bisect_left(kept, first)
        if at == len(kept) or kept[at] > last:
            continue  # nothing kept in the list
        if sum(e > s for s, e in lst.items) * 2 < len(lst.items):
            continue
        items = [kept[bisect_left(kept, s) : bisect_right(kept, e)] for s, e in lst.items]
        items = [item for item in items if item]
        if len(items) < 2:
            continue
        enough = POST_WORDS * len(items)
        n_words = 0
        for item in items:
            for i in item:
                if i not in words:
                    words[i] = compiled.split_count(page.by_index(i).text)
                n_words += words[i]
            if n_words >= enough:  # posts: the rest need not be counted
                break
        posts = n_words >= enough
        list_tag = next((t for t, e in page.by_index(items[0][0]).chain if e == lst.parent), "")
        if posts and list_tag in _LISTS:
            continue  # a list of posts (comments in an <ol>) is written as the list it is
        out[items[0][0]] = _Records(items, posts, lst.parent, list_tag == "ol")
        taken_until = lst.items[-1][1]
    return out


def _item_blocks(page: Page, item: list[int], parent: int) -> list[Block]:
    r"""The item's blocks, without the list they are items of (when the items are ``<li>``\s
    of the parent list, the entry is written by the record list)."""
    blocks = []
    for i in item:
        b = page.by_index(i)
        chain = b.chain
        for k, (_, element) in enumerate(chain[:-1]):
            if element == parent:
                if chain[k + 1][0] == "li" and k + 2 < len(chain):
                    b = compiled.rechained(b, chain[k + 2 :], b.tag)
                elif chain[k + 1][0] == "li":  # the item's own text: a paragraph of the entry
                    b = compiled.rechained(
                        b, (("p", chain[k + 1][1]),), "p" if b.tag == "li" else b.tag
                    )
                break
        blocks.append(b)
    return blocks


def _record_line(page: Page, item: list[int], parent: int) -> list[str]:
    """One record as one list entry: its title (a heading, written bold) and its other blocks'
    lines, joined by `` · ``; as its lines, indented, when it holds a table, code or a list."""
    own = _item_blocks(page, item, parent)
    # the item's blocks as a page of their own: all of them written, in order
    steps = layout_blocks(without_variants(own) if page.images else own)
    lines = _join(_blocks(_tree_of(steps, _Tables(own), page.images)))
    if any(t in _STRUCTURE_IN_RECORD for b in own for t, _ in b.chain):
        return lines
    parts = []
    for line in lines:
        line = line.strip()
        if not line:
            continue
        if _HEADING_LINE_RE.match(line):
            line = f"**{line.lstrip('#').strip()}**"
        parts.append(line)
    return [" · ".join(parts)] if parts else []


def _records_block(page: Page, records: _Records, tables: _Tables) -> list[list[str]]:
    """A kept item list's Markdown: records as ``-`` entries; posts between ``---`` rules.
    ``tables``: the page's (:class:`_Tables`)."""
    if records.posts:
        out: list[list[str]] = []
        for k, item in enumerate(records.items):
            if k:
                out.append(["---"])
            out.extend(_blocks(_tree(page, item, tables)))
        return out
    lines: list[str] = []
    number = 0
    for item in records.items:
        body = _record_line(page, item, records.parent)
        if body:
            number += 1
            marker = f"{number}. " if records.ordered else "- "
            lines.append(marker + body[0])
            lines.extend(" " * len(marker) + line if line else "" for line in body[1:])
    return [lines] if lines else []


def blocks_markdown(page: Page, selection: Selection) -> str:
    """Markdown of the selected blocks (without the title line), ending with one newline.

    Kept item lists (:attr:`blockdex.page.Page.item_lists`) are written as wholes: a list of
    records as one entry per record, a thread of posts as posts between rules (not in a query
    answer that carries its context headings, which is written as the page has it)."""
    tables = _Tables(page.blocks)
    records = (
        _record_lists(page, set(selection.indices))
        if page.item_lists and not selection.context
        else {}
    )
    if not records:
        text = "\n".join(
            _join(_blocks(_tree(page, selection, tables), bool(selection.context)))
        ).strip()
        return text + "\n" if text else _image_captions(page, selection)
    blocks: list[list[str]] = []
    rest: list[int] = []
    indices = selection.indices
    k = 0
    while k < len(indices):
        i = indices[k]
        found = records.get(i)
        if found is None:
            rest.append(i)
            k += 1
            continue
        if rest:
            blocks.extend(_blocks(_tree(page, rest, tables)))
            rest = []
        blocks.extend(_records_block(page, found, tables))
        last = found.items[-1][-1]
        while k < len(indices) and indices[k] <= last:
            k += 1
    if rest:
        blocks.extend(_blocks(_tree(page, rest, tables)))
    text = "\n".join(_join(blocks)).strip()
    return text + "\n" if text else _image_captions(page, selection)


def _image_captions(page: Page, selection: Selection) -> str:
    """What a selection of images alone is written as when images are not written: each one's
    caption or alt text, a paragraph each (a non-empty selection never reads as nothing)."""
    if not selection:
        return ""
    lines = []
    for block in page.blocks:
        if block.index in selection and block.tag == "img":
            text = " ".join(block.text.split())
            if text and text not in lines:
                lines.append(_escape_line_starts(text))
    return "\n\n".join(lines) + "\n" if lines else ""
