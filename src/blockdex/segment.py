"""Cut a cleaned page into numbered blocks — the segmentation rules of the index-based method.

Rules (each has a focused test in ``tests/test_segment.py``):

1. Walk the DOM depth-first from ``<body>`` (the outermost nodes when there is no body),
   iteratively, so nesting depth never hits Python's recursion limit.
2. A block-level element maps to a segment of its own; an element with no text yields nothing.
3. A block's direct text together with the text of its inline children forms one segment. When
   block children interrupt that text, each uninterrupted run becomes its own segment, so the
   page's reading order is kept (``<div>a<p>b</p>c</div>`` → ``a``, ``b``, ``c``).
4. A parent without direct text contributes no segment: it is merged into its first non-empty
   child block (the child's segment records the parent in its ``chain`` and ``path``), and the
   remaining children become segments of their own.
5. Inline elements never form a segment, except images with a caption (``alt``/``title``),
   written as ``<img>image: [src], caption: [text]</img>``; captionless images are dropped.
   ``<b> <i> <u> <br> <code>`` are kept (``strong``→``b``, ``em``→``i``), ``<a>`` becomes its
   anchor text, other inline elements keep only their text. An inline element that wraps
   block-level elements (``<a><div>…</div></a>``) is treated as a block container.
6. A table row whose cells hold only inline content is one segment (``<tr><td>…</td></tr>``);
   rows of layout tables (cells containing blocks) are walked like ``div``\\s.
7. Segments longer than ``max_block_tokens`` are split by sentences, then by words; each part
   keeps the tag and gets ``split-id``/``split-part`` (from 1)/``split-total``.
8. Blocks are numbered **0 … n-1** in reading order; text rescued from scripts comes last.
"""

from __future__ import annotations

import html as html_lib
import re
from dataclasses import dataclass

from selectolax.lexbor import LexborHTMLParser, LexborNode

from blockdex.page import Block, Page
from blockdex.parse import Document


@dataclass(frozen=True, slots=True)
class SegmentConfig:
    """Tunables of segmentation."""

    max_block_tokens: int = 200
    """Longer segments are split: a model reads ~200-token units well and indices stay precise."""
    max_attr_levels: int = 8
    """How many ancestor levels of class/id tokens a block remembers (for features)."""
    max_path_levels: int = 12
    """How many ancestor tags the block's tag path keeps."""
    max_blocks: int = 20_000
    """Blocks beyond this are dropped with a warning (bounded work on pathological pages)."""
    max_caption_chars: int = 300
    """Image captions are cut to this length."""


DEFAULT_SEGMENT = SegmentConfig()

BLOCK_TAGS = frozenset(
    """address article aside blockquote body center dd details dialog dir div dl dt fieldset
    figcaption figure footer form frameset h1 h2 h3 h4 h5 h6 header hgroup hr html legend li
    listing main menu nav ol p plaintext pre section summary table caption tbody thead tfoot tr
    td th ul xmp search optgroup option""".split()
)
BLOCK_SELECTOR = ",".join(sorted(BLOCK_TAGS))
_ROW_INNER_BLOCK_SELECTOR = ",".join(sorted(BLOCK_TAGS - {"tr", "td", "th"}))
HEADING_TAGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Elements whose nesting the assembler rebuilds (lists, tables, quotes, headings …).
STRUCTURAL_TAGS = frozenset(
    """ul ol li dl dt dd blockquote pre p figure figcaption details summary h1 h2 h3 h4 h5 h6
    caption""".split()
)
# Inline formatting kept in block HTML, mapped to the tag that is written.
KEPT_INLINE = {
    "b": "b", "strong": "b", "i": "i", "em": "i", "u": "u", "code": "code", "tt": "code",
    "kbd": "code", "samp": "code",
}
CELL_TAGS = frozenset({"td", "th"})
TABLE_SECTION_TAGS = frozenset({"thead", "tbody", "tfoot"})

_WS_RE = re.compile(r"\s+")
_TOKEN_RE = re.compile(r"\w+|[^\w\s]", re.U)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?。！？;])\s+|(?<=[。！？])")


def count_tokens(text: str) -> int:
    """Cheap, model-independent token count: words and punctuation marks."""
    return len(_TOKEN_RE.findall(text))


def _own_attr_tokens(node: LexborNode) -> str:
    attrs = node.attributes
    if not attrs:
        return ""
    parts = []
    for key in ("class", "id", "role", "itemprop"):
        v = attrs.get(key)
        if v:
            parts.append(v)
    return " ".join(parts).lower()[:200] if parts else ""


class _Frame:
    """A block-level element being walked: collects its current inline run."""

    __slots__ = (
        "attrs", "chain", "html", "inline_stack", "link_chars", "mode", "n_links", "node_id",
        "path", "tag", "text",
    )

    def __init__(
        self, tag: str, node_id: int, chain: tuple[tuple[str, int], ...], path: tuple[str, ...],
        attrs: tuple[str, ...], mode: str,
    ) -> None:
        self.tag = tag
        self.node_id = node_id
        self.chain = chain
        self.path = path
        self.attrs = attrs
        self.mode = mode  # "flow", "pre" or "row"
        self.html: list[str] = []
        self.text: list[str] = []
        self.inline_stack: list[str] = []
        self.link_chars = 0
        self.n_links = 0

    def reset_run(self) -> None:
        self.html = [f"<{t}>" for t in self.inline_stack]
        self.text = []
        self.link_chars = 0
        self.n_links = 0


@dataclass(slots=True)
class _RawBlock:
    tag: str
    html: str
    text: str
    chain: tuple[tuple[str, int], ...]
    path: str
    attrs: str
    depth: int
    link_chars: int
    n_links: int
    attributes: tuple[tuple[str, str], ...] = ()
    source: str = "dom"


def _has_block_descendant(node: LexborNode) -> bool:
    child = node.child
    if child is None or (child.next is None and child.tag == "-text"):
        return False
    return node.css_first(BLOCK_SELECTOR) is not None


def _is_atomic_row(node: LexborNode) -> bool:
    """A table row whose cells hold only inline content."""
    return node.css_first(_ROW_INNER_BLOCK_SELECTOR) is None


class _Walker:
    """One pass over a DOM subtree that emits raw blocks in reading order."""

    def __init__(self, cfg: SegmentConfig, source: str, id_offset: int = 0) -> None:
        self.cfg = cfg
        self.source = source
        self.id_offset = id_offset
        self.out: list[_RawBlock] = []
        self.frames: list[_Frame] = []
        self.link_depth = 0
        self.depth = 0
        self.table_ids: list[int] = []
        # Per entered element: what to undo on exit.
        self.exits: list[tuple[int, str]] = []

    # -- emitting ------------------------------------------------------------------------------
    def _flush(self, frame: _Frame) -> None:
        text_raw = "".join(frame.text)
        if frame.mode == "pre":
            text = text_raw.strip("\n")
            has_text = bool(text.strip())
        else:
            text = _WS_RE.sub(" ", text_raw).strip()
            has_text = bool(text)
        if has_text:
            for t in reversed(frame.inline_stack):
                frame.html.append(f"</{t}>")
            html = "".join(frame.html)
            if frame.mode != "pre":
                html = _WS_RE.sub(" ", html).strip()
            tag = frame.tag
            self.out.append(
                _RawBlock(
                    tag=tag,
                    html=html,
                    text=text,
                    chain=frame.chain,
                    path=">".join(frame.path[-self.cfg.max_path_levels :]),
                    attrs=" ".join(a for a in frame.attrs[-self.cfg.max_attr_levels :] if a),
                    depth=self.depth,
                    link_chars=frame.link_chars,
                    n_links=frame.n_links,
                    source=self.source,
                )
            )
        frame.reset_run()

    def _add_text(self, s: str) -> None:
        if not self.frames:
            return
        frame = self.frames[-1]
        frame.text.append(s)
        frame.html.append(html_lib.escape(s, quote=False))
        if self.link_depth:
            frame.link_chars += len(s.strip())

    def _image(self, node: LexborNode) -> None:
        attrs = node.attributes
        caption = (attrs.get("alt") or attrs.get("title") or "").strip()
        if not caption or not self.frames:
            return
        caption = _WS_RE.sub(" ", caption)[: self.cfg.max_caption_chars]
        src = (attrs.get("src") or attrs.get("data-src") or "").strip()
        parent = self.frames[-1]
        self._flush(parent)
        node_id = node.mem_id - self.id_offset
        self.out.append(
            _RawBlock(
                tag="img",
                html=html_lib.escape(f"image: {src}, caption: {caption}", quote=False),
                text=caption,
                chain=(*parent.chain, ("img", node_id)),
                path=">".join((*parent.path, "img")[-self.cfg.max_path_levels :]),
                attrs=" ".join(a for a in parent.attrs[-self.cfg.max_attr_levels :] if a),
                depth=self.depth + 1,
                link_chars=len(caption) if self.link_depth else 0,
                n_links=1 if self.link_depth else 0,
                attributes=(("src", src), ("alt", caption)),
                source=self.source,
            )
        )

    def _push_frame(self, node: LexborNode, tag: str, mode: str) -> None:
        parent = self.frames[-1] if self.frames else None
        node_id = node.mem_id - self.id_offset
        if parent is not None:
            self._flush(parent)
            chain, path, attrs = parent.chain, parent.path, parent.attrs
            # The parent's own element stays in the chain only if it is structural.
            if chain and chain[-1][0] not in STRUCTURAL_TAGS:
                chain = chain[:-1]
        else:
            chain, path, attrs = (), (), ()
        if (mode == "row" or tag == "caption") and self.table_ids:
            chain = (*chain, ("table", self.table_ids[-1]))
        frame = _Frame(
            tag=tag,
            node_id=node_id,
            chain=(*chain, (tag, node_id)),
            path=(*path, tag),
            attrs=(*attrs, _own_attr_tokens(node)),
            mode=mode if not (parent and parent.mode == "pre") else "pre",
        )
        self.frames.append(frame)

    # -- walking -------------------------------------------------------------------------------
    def enter(self, node: LexborNode) -> bool:
        """Handle entering ``node``; return True when its children should be walked."""
        tag = node.tag
        if tag == "-text":
            s = node.text_content
            if s:
                self._add_text(s)
            return False
        if tag is None or tag[0] in "-_!#":
            return False  # comments, doctype, processing instructions
        frame = self.frames[-1] if self.frames else None
        if frame is not None and frame.mode == "row":
            if tag in CELL_TAGS:
                frame.html.append(f"<{tag}>")
                if frame.text:
                    frame.text.append(" | ")
                self.exits.append((2, tag))
                return True
            if tag in KEPT_INLINE or tag == "a" or tag == "br" or tag == "img":
                pass  # handled below like any inline
            elif tag in BLOCK_TAGS:
                self.exits.append((0, tag))
                return True
        if tag == "br":
            if frame is not None:
                frame.text.append("\n")
                frame.html.append("<br>")
            return False
        if tag == "img":
            self._image(node)
            return False
        if tag == "table":
            self.table_ids.append(node.mem_id - self.id_offset)
            self._push_frame(node, tag, "flow")
            self.exits.append((3, tag))
            return True
        if tag == "tr" and (frame is None or frame.mode != "row") and _is_atomic_row(node):
            self._push_frame(node, "tr", "row")
            self.exits.append((1, tag))
            return True
        if tag in BLOCK_TAGS or (tag not in KEPT_INLINE and _has_block_descendant(node)):
            if tag == "a":
                self.link_depth += 1
            self._push_frame(node, tag, "pre" if tag in ("pre", "xmp", "listing", "plaintext") else "flow")
            self.exits.append((1 if tag != "a" else 4, tag))
            return True
        if frame is None:
            self.exits.append((0, tag))
            return True
        kept = KEPT_INLINE.get(tag)
        if kept is not None:
            frame.html.append(f"<{kept}>")
            frame.inline_stack.append(kept)
            self.exits.append((5, kept))
            return True
        if tag == "a":
            self.link_depth += 1
            frame.n_links += 1
            self.exits.append((6, tag))
            return True
        self.exits.append((0, tag))
        return True

    def exit(self) -> None:
        kind, tag = self.exits.pop()
        if kind == 0:
            return
        if kind in (1, 3, 4):
            frame = self.frames.pop()
            self._flush(frame)
            if kind == 3:
                self.table_ids.pop()
            elif kind == 4:
                self.link_depth -= 1
            return
        frame = self.frames[-1] if self.frames else None
        if frame is None:
            return
        if kind == 2:
            frame.html.append(f"</{tag}>")
        elif kind == 5:
            if frame.inline_stack and frame.inline_stack[-1] == tag:
                frame.inline_stack.pop()
                frame.html.append(f"</{tag}>")
        elif kind == 6:
            self.link_depth -= 1

    def walk(self, root: LexborNode, include_root: bool) -> None:
        """Depth-first walk with explicit parent/sibling moves (no recursion)."""
        if include_root:
            self._push_frame(root, root.tag or "body", "flow")
        stop_id = root.mem_id
        node = root.child
        while node is not None:
            if len(self.out) > self.cfg.max_blocks:
                break
            descend = self.enter(node)
            if descend:
                self.depth += 1
                child = node.child
                if child is not None:
                    node = child
                    continue
                self.depth -= 1
                self.exit()
            while node is not None:
                nxt = node.next
                if nxt is not None:
                    node = nxt
                    break
                parent = node.parent
                if parent is None or parent.mem_id == stop_id:
                    node = None
                    break
                self.depth -= 1
                self.exit()
                node = parent
        while self.exits:
            self.exit()
        while self.frames:
            self._flush(self.frames.pop())


def _split_text(text: str, max_tokens: int) -> list[str]:
    """Split text into parts of at most ``max_tokens`` tokens: by sentence, then by word."""
    sentences = [s for s in _SENTENCE_END_RE.split(text) if s and s.strip()]
    units: list[tuple[str, int]] = []
    for s in sentences:
        n = count_tokens(s)
        if n <= max_tokens:
            units.append((s, n))
            continue
        words = s.split(" ")
        cur: list[str] = []
        cur_n = 0
        for w in words:
            wn = count_tokens(w)
            if cur and cur_n + wn > max_tokens:
                units.append((" ".join(cur), cur_n))
                cur, cur_n = [], 0
            cur.append(w)
            cur_n += wn
        if cur:
            units.append((" ".join(cur), cur_n))
    parts: list[str] = []
    buf: list[str] = []
    buf_n = 0
    for s, n in units:
        if buf and buf_n + n > max_tokens:
            parts.append(" ".join(buf))
            buf, buf_n = [], 0
        buf.append(s.strip())
        buf_n += n
    if buf:
        parts.append(" ".join(buf))
    return parts


def _number_blocks(raw: list[_RawBlock], cfg: SegmentConfig) -> tuple[list[Block], int]:
    blocks: list[Block] = []
    split_id = 0
    for rb in raw:
        if len(rb.text) > cfg.max_block_tokens and rb.tag != "img" and count_tokens(rb.text) > cfg.max_block_tokens:
            if rb.tag == "pre":
                lines = rb.text.split("\n")
                parts: list[str] = []
                buf: list[str] = []
                n = 0
                for line in lines:
                    ln = count_tokens(line)
                    if buf and n + ln > cfg.max_block_tokens:
                        parts.append("\n".join(buf))
                        buf, n = [], 0
                    buf.append(line)
                    n += ln
                if buf:
                    parts.append("\n".join(buf))
            else:
                parts = _split_text(rb.text, cfg.max_block_tokens)
            if len(parts) > 1:
                total = len(parts)
                for k, part in enumerate(parts, 1):
                    blocks.append(
                        Block(
                            index=len(blocks), tag=rb.tag,
                            html=html_lib.escape(part, quote=False), text=part,
                            chain=rb.chain, path=rb.path, attrs=rb.attrs, depth=rb.depth,
                            link_chars=round(rb.link_chars * len(part) / max(len(rb.text), 1)),
                            n_links=rb.n_links if k == 1 else 0,
                            split=(split_id, k, total), source=rb.source, attributes=rb.attributes,
                        )
                    )
                split_id += 1
                continue
        blocks.append(
            Block(
                index=len(blocks), tag=rb.tag, html=rb.html, text=rb.text, chain=rb.chain,
                path=rb.path, attrs=rb.attrs, depth=rb.depth, link_chars=rb.link_chars,
                n_links=rb.n_links, source=rb.source, attributes=rb.attributes,
            )
        )
    return blocks, split_id


def segment_document(doc: Document, cfg: SegmentConfig = DEFAULT_SEGMENT) -> Page:
    """Segment a parsed (and normally cleaned) document into a :class:`Page`."""
    warnings = list(doc.warnings)
    walker = _Walker(cfg, "dom")
    body = doc.tree.body
    if body is not None:
        walker.walk(body, include_root=True)
    else:
        root = doc.tree.root
        if root is not None:
            walker.walk(root, include_root=True)
    raw = walker.out
    for k, fragment in enumerate(doc.rescued):
        frag_tree = LexborHTMLParser(fragment if "<" in fragment else f"<p>{html_lib.escape(fragment)}</p>")
        fbody = frag_tree.body
        if fbody is None:
            continue
        fw = _Walker(cfg, "script", id_offset=-(k + 1) * (1 << 40))
        fw.walk(fbody, include_root=True)
        raw.extend(fw.out)
    if len(raw) > cfg.max_blocks:
        warnings.append(f"page has more than {cfg.max_blocks} blocks; the rest were dropped")
        raw = raw[: cfg.max_blocks]
    blocks, _ = _number_blocks(raw, cfg)
    return Page(
        blocks=tuple(blocks),
        title=doc.title,
        url=doc.url,
        meta=dict(doc.meta),
        encoding=doc.encoding,
        warnings=tuple(warnings),
        html_bytes=doc.html_chars,
    )
