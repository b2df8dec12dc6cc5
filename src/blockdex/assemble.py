"""Selection → clean HTML.

Kept blocks are written in page order. Each block's ``chain`` names the structural elements it
sits in (lists, list items, tables, quotes…) down to its own element; consecutive kept blocks
that share a prefix of that chain are written inside the same elements, so a list whose items
were kept comes back as one ``<ul>`` with its ``<li>``\\s, table rows come back inside their
``<table>``, and parts of a split paragraph are re-joined in one ``<p>`` in ``split-part``
order. Elements that carry no structure (``div``, ``section``, ``span``…) become ``<p>``.
"""

from __future__ import annotations

import dataclasses
import html as html_lib
import re
from collections.abc import Mapping
from typing import NamedTuple

from blockdex import _assemble_c as compiled
from blockdex.page import Block, Page, Selection
from blockdex.segment import STRUCTURAL_TAGS

# Own-element tags written as they are; anything else is written as <p>.
KEEP_TAGS = STRUCTURAL_TAGS | {"table", "tr"}
# Elements that may only appear inside another: the assembler supplies a parent when missing.
_IMPLIED_PARENT = {"li": "ul", "tr": "table", "dt": "dl", "dd": "dl", "caption": "table"}
_PARENT_TAGS = {p: frozenset({p, "ol"} if p == "ul" else {p}) for p in _IMPLIED_PARENT.values()}
"""The elements that supply an implied parent (a list item's is a ``<ul>`` or an ``<ol>``)."""
_CELLS = frozenset({"td", "th"})


def code_language(block: Block) -> str:
    """The language of a code block's content (:func:`blockdex.segment.code_language`), or ''."""
    for name, value in block.attributes:
        if name == "language":
            return value
    return ""


_CODE_CLOSE = "</code>"


def _open_tag(tag: str) -> str:
    return f"<{tag}>"


def _block_content(block: Block) -> str:
    if block.tag == "img":
        attrs = dict(block.attributes)
        src = html_lib.escape(attrs.get("src", ""), quote=True)
        alt = html_lib.escape(attrs.get("alt", ""), quote=True)
        return f'<img src="{src}" alt="{alt}">'
    if block.tag == "pre":
        # plain text in one <code>, keeping the language the page declared for the fence
        lang = code_language(block)
        open_code = f'<code class="language-{lang}">' if lang else "<code>"
        return f"{open_code}{html_lib.escape(block.text, quote=False)}</code>"
    return block.html


def selected_blocks(page: Page, wanted: set[int]) -> list[Block]:
    """The blocks of ``page`` whose index is in ``wanted``, in page order."""
    blocks = page.blocks
    if not blocks:
        return []
    first = blocks[0].index
    if blocks[-1].index - first == len(blocks) - 1:  # numbered in order without gaps
        n = len(blocks)
        return [blocks[i - first] for i in sorted(wanted) if 0 <= i - first < n]
    return [b for b in blocks if b.index in wanted]


def with_table_headers(
    page: Page, wanted: set[int], selected: list[Block] | None = None
) -> set[int]:
    """``wanted`` plus the header rows of every table one of whose body rows is wanted
    (``wanted`` itself when there is none to add). ``selected``: the blocks ``wanted`` selects,
    when the caller has them (:func:`selected_blocks`).

    A row such as ``| 2024 | 4.1 |`` means little without ``| year | growth |``; a query predictor
    that picks the answering row gets the header back, as the method's parent restoration does
    for lists and tables.
    """
    if selected is None:
        selected = selected_blocks(page, wanted)
    if not any(b.tag == "tr" for b in selected):
        return wanted
    # table element id → its first row made of <th>, and the rows of <th> only right after it
    headers: dict[int, list[int]] = {}
    complete: set[int] = set()  # tables whose header rows are all found
    for block in page.blocks:
        if block.tag == "tr" and len(block.chain) >= 2:
            table_id = block.chain[-2][1]
            if table_id in complete:
                continue
            heads = headers.get(table_id)
            if heads is None:
                if block.html.startswith(("<th>", "<th ")):
                    headers[table_id] = [block.index]
            elif block.html.startswith(("<th>", "<th ")) and "<td" not in block.html:
                heads.append(block.index)
            else:
                complete.add(table_id)
    if not headers:
        return wanted
    extra = set()
    for block in page.blocks:
        if block.index in wanted and block.tag == "tr" and len(block.chain) >= 2:
            # every header row: a rowspan or colspan of the first one reaches into the next
            for head in headers.get(block.chain[-2][1], ()):
                if head not in wanted and head < block.index:
                    extra.add(head)
    return wanted | extra


_common_prefix = compiled.common_prefix
"""Length of the common prefix of two chains (lists of ``(tag, node id)``), compared in C one
element at a time (``_assemble_c.common_prefix``): a chain hundreds of elements deep on a
hostile page costs one pass, not a Python step an element."""


class Step(NamedTuple):
    """One kept block's place in the assembled document (see :func:`layout`)."""

    block: Block
    stay: int
    """How many of the open elements stay open; the others close, innermost first."""
    opened: list[tuple[str, int]]
    """Elements opened for the block, outermost first, as ``(tag, node id)``; the last one is its
    own element, as written: an image's as ``span`` (it may sit inside a paragraph), a tag
    outside :data:`KEEP_TAGS` as ``p``. Empty when it continues the open one."""
    joint: str
    """When the block continues the element already open: ``"newline"`` (code), ``"space"``
    (the next part of a split block, or text after an image) or ``"break"``; else ``""``."""


# -- a query's answer under its headings ----------------------------------------------------------

CONTEXT = ("context", "true")
"""The attribute of a heading written as a query answer's context (not kept itself)."""
_CONTEXT_IDS = -(10**16)
"""Context headings stand in elements of their own, numbered below every real one."""


def is_context(block: Block) -> bool:
    """Whether ``block`` is a heading written as context (:func:`with_context_headings`)."""
    return CONTEXT in block.attributes


def with_context_headings(
    page: Page, selected: list[Block], context: Mapping[int, tuple[int, ...]]
) -> list[Block]:
    """``selected`` with the headings of ``context`` (:attr:`blockdex.page.Selection.context`)
    before the blocks they are given for: each in an element of its own at the top (what is
    open closes before it), marked :data:`CONTEXT`."""
    out: list[Block] = []
    for block in selected:
        for index in context.get(block.index, ()):
            heading = page.by_index(index)
            out.append(
                dataclasses.replace(
                    heading,
                    chain=((heading.tag, _CONTEXT_IDS - index),),
                    attributes=(CONTEXT,),
                    split=None,
                )
            )
        out.append(block)
    return out


# -- one image per position ---------------------------------------------------------------------

SIZE_WORDS = {
    "thumb": 1,
    "thumbnail": 1,
    "xxs": 1,
    "xs": 2,
    "sm": 3,
    "small": 3,
    "mobile": 3,
    "md": 4,
    "medium": 4,
    "lg": 5,
    "large": 5,
    "desktop": 5,
    "xl": 6,
    "xxl": 7,
    "retina": 8,
}
"""Words that name a variant's size in its file name, smallest first."""
_SIZE_MARK_RE = re.compile(
    r"(?i)(?:\d+x\d+|(?<![a-z])("
    + "|".join(sorted(SIZE_WORDS, key=len, reverse=True))
    + r")(?![a-z]))"
)
"""What sets a picture's size variants apart in its file name (``photo-300x200.jpg``,
``lg_1532.jpg``, ``hero-mobile.webp``): left out when telling whether two sources show one
picture."""
_SIZE_HINT_RE = re.compile(
    r"(?i)(?:[?&](?:w|width|size)=|(?<![a-z])[wh]_|resize:fit:)(\d{2,5})|(\d{2,5})x\d{2,5}"
)
"""A width a source's address asks for (``?w=2400``, ``width=640``, ``w_800``, ``640x425``)."""


def picture_key(src: str) -> tuple[str, str]:
    """The picture an image address shows, whatever its size: its host (lower-cased) and file
    name, the size marks (:data:`_SIZE_MARK_RE`), the query and the fragment left out."""
    rest = src.partition("#")[0].partition("?")[0]
    scheme, sep, after = rest.partition("//")
    host, _, path = after.partition("/") if sep and "/" not in scheme else ("", "", rest)
    return (host.lower(), _SIZE_MARK_RE.sub("", path.rpartition("/")[2]))


def _source_size(block: Block) -> tuple[int, int]:
    """How large an image's source is: the width it declares, else the largest width its
    address asks for (:data:`_SIZE_HINT_RE`), else 0; then the size its file name says in
    words (:data:`SIZE_WORDS`)."""
    attrs = dict(block.attributes)
    src = attrs.get("src", "")
    if attrs.get("width", "").isdigit():
        width = int(attrs["width"])
    else:
        width = max((int(a or b) for a, b in _SIZE_HINT_RE.findall(src)), default=0)
    name = src.rpartition("/")[2].partition("?")[0]
    words = [SIZE_WORDS[w.lower()] for w in _SIZE_MARK_RE.findall(name) if w]
    return width, max(words, default=0)


def image_variants(blocks: list[Block]) -> tuple[set[int], dict[int, Block]]:
    """The responsive and lazy variants among the selected ``blocks``: images with one caption
    that show one picture (:func:`picture_key`) from another source than the first of them.
    Returns the indices of the variants (not written) and, for each first image whose variants
    hold a larger source, the block written in its place with the largest source."""
    skipped: set[int] = set()
    replaced: dict[int, Block] = {}
    images = [b for b in blocks if b.tag == "img"]
    if len(images) < 2:
        return skipped, replaced
    by_caption: dict[str, list[Block]] = {}
    for block in images:
        by_caption.setdefault(block.text, []).append(block)
    first: dict[tuple[str, tuple[str, str]], list[tuple[Block, str]]] = {}
    for caption, images in by_caption.items():
        if len(images) > 1:  # a caption seen once has no variant: no address read
            for block in images:
                src = dict(block.attributes).get("src", "")
                if src:
                    first.setdefault((caption, picture_key(src)), []).append((block, src))
    for group in first.values():
        if len(group) < 2:
            continue
        head, head_src = group[0]
        variants = [b for b, src in group[1:] if src != head_src]
        if not variants:
            continue
        skipped.update(b.index for b in variants)
        best = max([head, *variants], key=_source_size)  # the first of the largest
        if best is not head:
            attrs = tuple(
                (k, dict(best.attributes)["src"]) if k == "src" else (k, v)
                for k, v in head.attributes
                if k != "width"
            )
            replaced[head.index] = dataclasses.replace(head, attributes=attrs)
    return skipped, replaced


def without_variants(blocks: list[Block]) -> list[Block]:
    """``blocks`` with each image's variants left out and its first source made the largest
    (:func:`image_variants`)."""
    skipped, replaced = image_variants(blocks)
    if skipped:
        return [replaced.get(b.index, b) for b in blocks if b.index not in skipped]
    return blocks


def layout(page: Page, selection: Selection, variants: bool = True) -> list[Step]:
    """The selected blocks (and the header rows of their tables) in page order, each with the
    elements to close and open before it: the structure both the HTML and the Markdown writers
    follow. An image's variants are written once (:func:`image_variants`; ``variants=False``:
    not looked for, the writer leaving images out); the headings a query's answer is given under
    come before their blocks (:func:`with_context_headings`)."""
    return _layout(
        page, _interval_blocks(page, selection.intervals), None, variants, selection.context
    )


def layout_kept(
    page: Page,
    wanted: set[int],
    variants: bool = True,
    context: Mapping[int, tuple[int, ...]] | None = None,
) -> list[Step]:
    """:func:`layout` of the blocks whose indices are ``wanted`` (under the ``context``
    headings of :attr:`blockdex.page.Selection.context`)."""
    return _layout(page, selected_blocks(page, wanted), wanted, variants, context)


def _interval_blocks(page: Page, intervals: tuple[tuple[int, int], ...]) -> list[Block]:
    """:func:`selected_blocks` of the indices in ``intervals``: slices of the page's blocks
    when they are numbered without gaps and the intervals sorted apart (a selection's are)."""
    blocks = page.blocks
    if not blocks:
        return []
    first = blocks[0].index
    if blocks[-1].index - first == len(blocks) - 1:
        out: list[Block] = []
        last = None
        for a, b in intervals:
            if a > b or (last is not None and a <= last):
                break  # not sorted apart: by the set below
            last = b
            stop = b - first + 1
            if stop > 0:
                out.extend(blocks[max(a - first, 0) : stop])
        else:
            return out
    return selected_blocks(page, {i for a, b in intervals for i in range(a, b + 1)})


def _layout(
    page: Page,
    selected: list[Block],
    wanted: set[int] | None,
    variants: bool,
    context: Mapping[int, tuple[int, ...]] | None,
) -> list[Step]:
    """:func:`layout` of the ``selected`` blocks (``wanted``: their indices, or None)."""
    if any(b.tag == "tr" for b in selected):  # the header rows of their tables
        if wanted is None:
            wanted = {b.index for b in selected}
        with_headers = with_table_headers(page, wanted, selected)
        if with_headers is not wanted:  # header rows added
            selected = selected_blocks(page, with_headers)
    if variants:
        selected = without_variants(selected)
    if context:
        selected = with_context_headings(page, selected, context)
    return layout_blocks(selected)


def layout_blocks(selected: list[Block]) -> list[Step]:
    """:func:`layout` of blocks chosen already, in the order given (no header rows, variants
    or context headings added): each with the elements to close and open before it."""
    return compiled.layout_steps(  # type: ignore[no-any-return]
        selected, Step, _IMPLIED_PARENT, _PARENT_TAGS, KEEP_TAGS, _CELLS
    )


_JOINTS = {"newline": "\n", "space": " ", "break": "<br>", "": ""}


def assemble_body(page: Page, selection: Selection) -> str:
    """The ``<body>`` content for the selected blocks (and the header rows of their tables)."""
    out: list[str] = []
    open_tags: list[str] = []
    for step in layout(page, selection):
        while len(open_tags) > step.stay:
            out.append(f"</{open_tags.pop()}>")
        if step.joint == "newline" and out and out[-1] == _CODE_CLOSE:
            # the next part of a code block: in the <code> the first part opened
            out[-1] = "\n"
            out.append(html_lib.escape(step.block.text, quote=False))
            out.append(_CODE_CLOSE)
            continue
        out.append(_JOINTS[step.joint])
        for tag, nid in step.opened:
            if step.block.tag == "img" and nid == step.opened[-1][1]:
                out.append(" ")
            if nid <= _CONTEXT_IDS:  # a heading given as a query answer's context
                out.append(f'<{tag} data-context="">')
            else:
                out.append(_open_tag(tag))
            open_tags.append(tag)
        content = _block_content(step.block)
        if step.block.tag == "pre":
            out.append(content[: -len(_CODE_CLOSE)])
            out.append(_CODE_CLOSE)
        else:
            out.append(content)
    while open_tags:
        out.append(f"</{open_tags.pop()}>")
    return "".join(out)


def assemble_html(page: Page, selection: Selection) -> str:
    """A complete HTML document holding only the selected blocks, titled with the page title."""
    title = html_lib.escape(page.title or "", quote=False)
    body = assemble_body(page, selection)
    lang = page.meta.get("language", "") if page.meta else ""
    lang_attr = f' lang="{html_lib.escape(lang, quote=True)}"' if lang else ""
    return (
        f'<!DOCTYPE html><html{lang_attr}><head><meta charset="utf-8"><title>{title}</title>'
        f"</head><body>{body}</body></html>"
    )
