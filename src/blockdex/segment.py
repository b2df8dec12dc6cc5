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
   anchor text, other inline elements keep only their text. Block-level elements inside an
   inline one (``<a><div>…</div></a>``) still form their own segments; the inline element's
   text around them joins the enclosing block's runs.
6. A table row whose cells hold only inline content is one segment (``<tr><td>…</td></tr>``);
   rows of layout tables (cells containing blocks) are walked like ``div``\\s. A row whose
   cells hold nested tables and no other block content (a *grid row*) is walked like a layout
   row, but its blocks keep the outer table, row and cell in their ``chain``.
7. Segments longer than ``max_block_tokens`` are split by sentences, then by words; each part
   keeps the tag and gets ``split-id``/``split-part`` (from 1)/``split-total``.
8. Blocks are numbered **0 … n-1** in reading order; text rescued from scripts comes last.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import html as html_lib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from urllib.parse import urljoin, urlsplit

from selectolax.lexbor import LexborNode

from blockdex import _segment_c as compiled
from blockdex import pagetype
from blockdex.cjk import WORD_PATTERN
from blockdex.errors import check_minimums, setting_name
from blockdex.ids import block_ids
from blockdex.items import find_item_lists
from blockdex.page import Block, Page, PageFacts
from blockdex.parse import Document, parse_bounded
from blockdex.units import find_primary, page_units


@dataclass(frozen=True, slots=True)
class SegmentConfig:
    """Tunables of segmentation."""

    max_block_tokens: int = 200
    """Longer segments are split: a model reads ~200-token units well and indices stay precise."""
    max_attr_levels: int = 8
    """How many levels of class/id tokens (the element's and its ancestors') a block remembers,
    for features; at least 2."""
    max_path_levels: int = 12
    """How many tags (the element's and its ancestors') the block's tag path keeps; at least 2."""
    max_blocks: int = 20_000
    """Blocks beyond this (also after splitting) are dropped with a warning: bounded work."""
    max_block_chars: int = 4_000
    """Longer blocks are cut into parts of this many characters even where no sentence or word
    boundary allows it (base64, minified code, CJK without punctuation): ~4x a 200-token block."""
    check_time_every: int = 4096
    """How many DOM nodes the walk visits between two looks at the clock (time budget)."""
    max_caption_chars: int = 300
    """Image captions are cut to this length."""
    max_figure_levels: int = 4
    """How far up from an image to look for the ``<figure>`` whose figcaption captions it."""
    max_language_levels: int = 2
    """How far up from a ``<pre>`` to look for the language of its code: Sphinx writes
    ``<div class="highlight-python"><div class="highlight"><pre>``."""
    min_chars_per_token: float = 2.5
    """Texts shorter than this many chars per budget token are not counted (speed)."""
    links: bool = False
    """Keep links: a block's content holds ``<a href="absolute URL">`` round its anchor text
    (resolved against ``<base href>``, then the page's URL); Markdown writes ``[text](url)``.
    Links that lead nowhere a reader can follow (empty, ``#fragment``, ``javascript:``) stay
    plain text. Off by default: the URLs are tokens most readers do not need."""
    markup: bool = True
    """Build each block's HTML content (``Block.html``), which Markdown, HTML and JSON output
    read. Off, every block's ``html`` is ``""``: the blocks' text and every other field, and so
    every predictor's decision and the text output, are the same, and segmenting costs less
    (``Extractor.extract(output="text")`` turns it off)."""
    images: bool = False
    """Write kept images in Markdown as ``![caption](absolute URL)`` (the page records it:
    :attr:`blockdex.page.Page.images`). Off by default: an image's alt text is mostly not what
    the page says (on the shared wcxb pages only one kept alt text in ten is found in the ground
    truth), so Markdown leaves images out and keeps only a figure's caption. The blocks, their
    text and every predictor's decision are the same either way."""

    def __post_init__(self) -> None:
        check_minimums(self, _SEGMENT_MINIMUMS)


_SEGMENT_MINIMUMS = {
    **dict.fromkeys(("max_block_tokens", "max_block_chars", "check_time_every"), 1),
    # The walks keep ``levels - 1`` ancestors (a slice from ``1 - levels``): 1 would keep them
    # all and 0 only the element, so the smallest meaningful value is 2 (element and parent).
    **dict.fromkeys(("max_attr_levels", "max_path_levels"), 2),
    **dict.fromkeys(
        (
            "max_blocks",
            "max_caption_chars",
            "max_figure_levels",
            "max_language_levels",
            "min_chars_per_token",
        ),
        0,
    ),
}
DEFAULT_SEGMENT = SegmentConfig()

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
"""The heading tags, in level order."""

BLOCK_TAGS = frozenset(
    [
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "center",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "frameset",
        *HEADINGS,
        "header",
        "hgroup",
        "hr",
        "html",
        "legend",
        "li",
        "listing",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "plaintext",
        "pre",
        "section",
        "summary",
        "table",
        "caption",
        "tbody",
        "thead",
        "tfoot",
        "tr",
        "td",
        "th",
        "ul",
        "xmp",
        "search",
        "optgroup",
        "option",
    ]
)
ROW_INNER_TAGS = BLOCK_TAGS - {"tr", "td", "th"}
"""Block elements that make a table row a layout row (walked like divs), not an atomic one."""
NESTED_TABLE_TAGS = frozenset({"table", "thead", "tbody", "tfoot", "caption"})
"""The block elements a *grid row* holds besides rows and cells: a row whose cells hold nested
tables and no other block content. Its cells are walked like divs (each nested table's rows are
blocks of their own), but the blocks keep the outer table, row and cell in their chain, so the
writers can put the row together again (Markdown flattens the nested table into the cell)."""
HEADING_TAGS = frozenset(HEADINGS)
# Elements whose nesting the assembler rebuilds (lists, tables, quotes, headings …).
STRUCTURAL_TAGS = frozenset(
    [
        "ul",
        "ol",
        "li",
        "dl",
        "dt",
        "dd",
        "blockquote",
        "pre",
        "p",
        "figure",
        "figcaption",
        "details",
        "summary",
        *HEADINGS,
        "caption",
    ]
)
# Inline formatting kept in block HTML, mapped to the tag that is written.
KEPT_INLINE = {
    "b": "b",
    "strong": "b",
    "i": "i",
    "em": "i",
    "u": "u",
    "code": "code",
    "tt": "code",
    "kbd": "code",
    "samp": "code",
}
CELL_TAGS = frozenset({"td", "th"})
MAX_SPAN = 50
"""A cell's ``colspan``/``rowspan`` is read up to this (a table's Markdown grid stays bounded)."""
_SPAN_RE = re.compile(r"[ \t\n\f\r]*([0-9]{1,6})")  # HTML's whitespace and digits only


_UNFOLLOWABLE = ("javascript:", "vbscript:", "data:")


@functools.lru_cache(maxsize=16)
def _origin(base: str) -> tuple[str, str, str] | None:
    """``(scheme, "scheme://host", folder)`` of an ``http(s)`` base address, the folder being
    what ``urljoin`` puts before a relative name (``https://h/a/b.html`` → ``https://h/a/``);
    None for another base (``urljoin`` decides)."""
    parts = urlsplit(base)
    if parts.scheme not in ("http", "https") or not parts.netloc or base != base.strip():
        return None
    return parts.scheme, f"{parts.scheme}://{parts.netloc}", urljoin(base, "x")[:-1]


def resolved_url(base: str, href: str) -> str:
    """``urljoin(base, href)`` (raises ValueError as it does), at once for the usual addresses
    (``urljoin`` takes ~8 µs, a page has dozens of images): an absolute ``http(s)`` one it would
    give back unchanged, and, against an ``http(s)`` base, one from the host's root (``/a.png``),
    the scheme's (``//cdn.example/a.png``) or the base's folder (``img/a.png``), when the
    address has nothing for ``urljoin`` to change (no space or control character at its ends,
    no empty query, parameters or fragment, no dot segment, no tab or newline). In C
    (``_segment_c.resolved_url``), which the walk calls for each image too. Checked equal to
    ``urljoin`` on the 1.8 million addresses of the shared pages against three bases, and on 2.3
    million random ones (``tests/test_segment.py`` draws more)."""
    return compiled.resolved_url(base, href)  # type: ignore[no-any-return]


def link_open(href: str | None, base: str) -> str | None:
    """The marker a block's content holds where a kept link opens, ``<a href="…">`` with the
    address resolved against ``base``; None for a link a reader cannot follow from the text
    (no href, empty, a ``#fragment`` of the page itself, ``javascript:``/``data:``)."""
    if href is None:
        return None
    href = href.strip()
    if not href or href[0] == "#" or href[:11].lower().startswith(_UNFOLLOWABLE):
        return None
    try:
        url = resolved_url(base, href) if base else href
    except ValueError:
        return None
    return f'<a href="{html_lib.escape(url, quote=True)}">'


_PLACEHOLDER_WORDS = ("blank.", "spacer.", "pixel.", "placeholder", "transparent.")
"""What a placeholder image's address holds (a ``data:`` address is one too)."""
_PLACEHOLDER_RE = re.compile(
    "(?:^data:|" + "|".join(map(re.escape, _PLACEHOLDER_WORDS)) + ")", re.I
)
"""A placeholder's address, as the compiled walk tests it for an address past ASCII (an ASCII
one is tested on its lower-cased text for ``data:`` and the words)."""


def _largest_candidate(srcset: str | None) -> str:
    """The ``srcset`` candidate with the largest width (or density) descriptor; '' if none
    (candidates split at commas: an address holding one is cut, as some browsers do)."""
    best, size = "", -1.0
    for part in (srcset or "").split(","):
        bits = part.split()
        if not bits or bits[0].startswith("data:"):
            continue
        value = 1.0
        if len(bits) > 1 and bits[1][-1:] in ("w", "x"):
            with contextlib.suppress(ValueError):
                value = float(bits[1][:-1])
        if value > size:
            best, size = bits[0], value
    return best


def image_source(attrs: dict[str, str | None], sources: list[str], base: str) -> str | None:
    """The address an image shows, absolute against ``base`` (when there is one): ``src``
    unless it is a placeholder (a ``data:`` URI, a blank/spacer/pixel file), else the
    lazy-loading attributes (``data-src``, ``data-lazy-src``, ``data-original``), else the
    largest ``srcset`` candidate (the image's, then its ``<picture>``'s ``<source>``\\ s:
    ``sources``). '' when it has none; None for a tracking pixel (1×1 or 0×0), which is not
    an image a reader sees. In C (``_segment_c.image_source``): the walk reads the ``<img>``'s
    attributes itself."""
    return compiled.image_source(attrs, sources, base)  # type: ignore[no-any-return]


def cell_span(value: str | None) -> int:
    """A ``colspan``/``rowspan`` value as HTML reads it (leading digits; 0, junk or none: 1),
    at most :data:`MAX_SPAN`."""
    if not value:
        return 1
    m = _SPAN_RE.match(value)
    return min(max(int(m.group(1)), 1), MAX_SPAN) if m else 1


HEADER_ROW = (("row", "header"),)
"""The attributes of a table row whose cells are all ``<th>`` (in every walk, also without
markup): query mode keeps a table's header rows with its answering rows."""


def cell_open(tag: str, colspan: str | None, rowspan: str | None) -> str:
    """The marker a table row's block holds where a cell opens: ``<td>``, or with its spans
    when they exceed 1 (``<th colspan=2>``, ``<td rowspan=3>``), for the Markdown grid."""
    c, r = cell_span(colspan), cell_span(rowspan)
    if c == 1 and r == 1:
        return f"<{tag}>"
    return f"<{tag}{f' colspan={c}' if c > 1 else ''}{f' rowspan={r}' if r > 1 else ''}>"


TABLE_SECTION_TAGS = frozenset({"thead", "tbody", "tfoot"})

_WS_RE = re.compile(r"\s+")
_SPACE_RE = re.compile(" ")
_NEWLINE_RE = re.compile("\n")
_TOKEN_RE = re.compile(WORD_PATTERN + "|[^\\w\\s]")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?。！？;])\s+|(?<=[。！？])")
BREAK_MARK = "\x00"
"""What a ``<br>`` adds to a run's text while it is walked: a character no text node holds (the
parser drops or replaces NUL), so that squashing the run's whitespace keeps the breaks apart."""
LINE_BREAK = "\n"
"""A block's text holds this where one ``<br>`` broke the line."""
PARAGRAPH_BREAK = "\n\n"
"""…and this where two or more ``<br>`` (with only whitespace between) started a paragraph."""
_BREAK_RUN_RE = re.compile("\n+")


def count_tokens(text: str) -> int:
    """Cheap, model-independent token count: words and punctuation marks, each character of a
    script written without spaces (:data:`blockdex.cjk.CJK_RANGES`) a word."""
    return len(_TOKEN_RE.findall(text))


def _count_tokens_upto(text: str, limit: int) -> int:
    """:func:`count_tokens`, but stops counting past ``limit`` (no token list for huge texts):
    a count above ``limit`` is some number above it."""
    return compiled.count_tokens_upto(text, limit)  # ``limit + 1`` once past the limit


_SQUASH_WINDOW = 1 << 18  # characters squashed at a time in huge texts


def _squash_ws(s: str) -> str:
    """Runs of whitespace as one space, ends stripped (the compiled walk's squash hands texts
    longer than ``_SQUASH_WINDOW`` to this).

    Huge texts go window by window (cut at whitespace): a 20 MB text node as one word list, or
    through ``re.sub``, peaks at ~15x its size in short-lived strings.
    """
    if len(s) <= _SQUASH_WINDOW:
        return " ".join(s.split())
    out: list[str] = []
    start, n = 0, len(s)
    while start < n:
        m = _WS_RE.search(s, min(start + _SQUASH_WINDOW, n))
        end = m.start() if m else n
        squashed = " ".join(s[start:end].split())
        if squashed:
            out.append(squashed)
        start = m.end() if m else n
    return " ".join(out)


def squash_breaks(text: str) -> str:
    """A run's text squashed as :func:`_squash_ws` squashes it, but for its breaks
    (:data:`BREAK_MARK`): one between two pieces of text is a :data:`LINE_BREAK`, two or more a
    :data:`PARAGRAPH_BREAK`; breaks at either end are dropped. The compiled walk calls this."""
    out: list[str] = []
    last = -1
    for i, piece in enumerate(text.split(BREAK_MARK)):
        squashed = _squash_ws(piece)
        if not squashed:
            continue
        if last >= 0:
            out.append(LINE_BREAK if i - last == 1 else PARAGRAPH_BREAK)
        out.append(squashed)
        last = i
    return "".join(out)


def text_content(text: str) -> str:
    """Block content (HTML) for plain text: ``& < >`` escaped, its breaks as ``<br>``."""
    content = _escape(text)
    return content.replace(LINE_BREAK, "<br>") if LINE_BREAK in content else content


def _cut(text: str, max_chars: int) -> list[str]:
    """``text`` in pieces of at most ``max_chars`` characters, cut at spaces when there are any."""
    pieces: list[str] = []
    while len(text) > max_chars:
        cut = text.rfind(" ", max_chars // 2, max_chars)
        cut = cut if cut > 0 else max_chars
        pieces.append(text[:cut])
        text = text[cut:].lstrip(" ")
    if text:
        pieces.append(text)
    return pieces


def _escape(s: str) -> str:
    if "<" in s or ">" in s or "&" in s:
        return html_lib.escape(s, quote=False)
    return s


_PRE_TAGS = frozenset({"pre", "xmp", "listing", "plaintext"})
CODE_LANGUAGE_ATTRIBUTES = ("data-lang", "data-language")
"""Attributes in which a code block, or an element around it, names its language."""
_LANG_CLASS_RE = re.compile(
    r"(?:^|\s)(?:(?:language|lang|highlight(?:-source)?)-|brush:\s*)([A-Za-z0-9_+#.-]{1,20})"
)
"""A class naming a code block's language: ``language-python``, ``lang-js`` (Prettify),
``highlight-python`` (Sphinx's wrapper), ``highlight-source-python`` (GitHub), ``brush: js``
(SyntaxHighlighter)."""
_LANG_NAME_RE = re.compile(r"[a-z0-9_+#.-]{1,20}")
NOT_LANGUAGES = frozenset({"default", "none", "nohighlight", "no-highlight", "auto", "undefined"})
"""Class values in a language's place that name none (Sphinx's ``highlight-default``)."""


def code_language(classes: str | None, declared: str | None) -> str:
    """The language an element declares for the code in it, lower-cased: from its class
    (:data:`_LANG_CLASS_RE`), else from ``declared`` (its ``data-lang``); '' when it names none
    (:data:`NOT_LANGUAGES`). The compiled walk calls this."""
    found = [m.group(1) for m in _LANG_CLASS_RE.finditer(classes)] if classes else []
    for lang in (*found, (declared or "").strip()):
        lang = lang.lower()
        if lang not in NOT_LANGUAGES and _LANG_NAME_RE.fullmatch(lang):
            return lang
    return ""


def _pieces(text: str, sep_re: re.Pattern[str]) -> Iterator[str]:
    """The pieces of ``text`` between matches of ``sep_re``, lazily (like ``sep_re.split``).

    Lazy so that a 20 MB block is never turned into millions of strings at once: splitting stops
    as soon as the page's block budget is spent.
    """
    start = 0
    for m in sep_re.finditer(text):
        yield text[start : m.start()]
        start = m.end()
    yield text[start:]


def _pack(
    units: Iterable[tuple[str, int]], max_tokens: int, max_chars: int, sep: str
) -> Iterator[tuple[str, int]]:
    """Consecutive ``(text, tokens)`` units joined by ``sep`` into parts within both budgets
    (a unit over budget on its own stays a part of its own); yields ``(part, tokens)``."""
    buf: list[str] = []
    n = chars = 0
    for unit, k in units:
        if buf and (n + k > max_tokens or chars + len(unit) > max_chars):
            yield sep.join(buf), n
            buf, n, chars = [], 0, 0
        buf.append(unit)
        n += k
        chars += len(unit) + 1
    if buf:
        yield sep.join(buf), n


def _split_text(text: str, max_tokens: int, max_chars: int) -> Iterator[str]:
    """Split text into parts of at most ``max_tokens`` tokens: by sentence, then by word.

    A break (:data:`LINE_BREAK`, :data:`PARAGRAPH_BREAK`) ends a sentence too, and stays in the
    text: inside a part where it was, and at the end of a part that ends at it (so the writers
    can tell a paragraph cut in two from two paragraphs). A word longer than ``max_chars`` is cut
    into pieces of that length first, so no part grows past ``max_chars`` (but for a break at its
    end) however the text looks. Parts are produced lazily.
    """
    buf: list[str] = []
    n = chars = 0  # the part's tokens and characters so far
    for unit, k, joint in _text_units(text, max_tokens, max_chars):
        if buf and (n + k > max_tokens or chars + len(joint) + len(unit) > max_chars):
            if joint != " ":
                buf.append(joint)  # the part ends at a break: it keeps it
            yield "".join(buf)
            buf, n, chars = [], 0, 0
        elif buf:
            buf.append(joint)
            chars += len(joint)
        buf.append(unit)
        n += k
        chars += len(unit)
    if buf:
        yield "".join(buf)


def _text_units(text: str, max_tokens: int, max_chars: int) -> Iterator[tuple[str, int, str]]:
    """Sentences within the budget, else runs of words within it, stripped, with their token
    counts and what joins each to the one before: a break where the text has one, else a space.
    """
    lines = _pieces_with_ends(text, _BREAK_RUN_RE) if LINE_BREAK in text else ((text, ""),)
    joint = " "
    for line, end in lines:
        for s in _pieces(line, _SENTENCE_END_RE):
            if not s or not s.strip():
                continue
            n = _count_tokens_upto(s, max_tokens)
            if n <= max_tokens and len(s) <= max_chars:
                yield s.strip(), n, joint
                joint = " "
                continue
            words = (
                (w, _count_tokens_upto(w, max_tokens))
                for word in _pieces(s, _SPACE_RE)
                for w in (_cut(word, max_chars) if len(word) > max_chars else (word,))
            )
            for run, k in _pack(words, max_tokens, max_chars, " "):
                if run.strip():
                    yield run.strip(), k, joint
                    joint = " "
        if end:
            joint = end


def _pieces_with_ends(text: str, sep_re: re.Pattern[str]) -> Iterator[tuple[str, str]]:
    """:func:`_pieces`, each with the separator after it ('' after the last), lazily."""
    start = 0
    for m in sep_re.finditer(text):
        yield text[start : m.start()], m.group()
        start = m.end()
    yield text[start:], ""


def _split_pre(text: str, max_tokens: int, max_chars: int) -> Iterator[str]:
    """Split preformatted text at line ends into parts of at most ``max_tokens`` tokens.

    Lines longer than ``max_chars`` are cut into pieces of that length first. Lazy.
    """
    lines = (
        (piece, _count_tokens_upto(piece, max_tokens))
        for line in _pieces(text, _NEWLINE_RE)
        for piece in (_cut(line, max_chars) if len(line) > max_chars else (line,))
    )
    for part, _ in _pack(lines, max_tokens, max_chars, "\n"):
        yield part


_MARKUP_RE = re.compile(r"(<[^<>]*>)")
_NON_SPACE_RE = re.compile(r"\S")


def _unescape_content(text: str) -> str:
    """Block content's text unescaped (it escapes ``& < >`` only)."""
    if "&" not in text:
        return text
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _link_spans(html: str) -> list[tuple[int, int, str]]:
    """The kept links of a block's content (:attr:`SegmentConfig.links`) as ``(start, end,
    open marker)``, counted in the non-space characters of its text, in order; links without
    text are left out. As the Markdown writer reads them: an ``<a>`` inside an open link is
    ignored, and the first ``</a>`` closes the open one."""
    spans: list[tuple[int, int, str]] = []
    pos = 0
    opened: tuple[int, str] | None = None
    for k, piece in enumerate(_MARKUP_RE.split(html)):
        if k % 2 == 0:
            pos += len("".join(_unescape_content(piece).split()))
        elif piece.startswith("<a ") and opened is None:
            opened = (pos, piece)
        elif piece == "</a>" and opened is not None:
            if pos > opened[0]:
                spans.append((opened[0], pos, opened[1]))
            opened = None
    if opened is not None and pos > opened[0]:
        spans.append((opened[0], pos, opened[1]))
    return spans


def _split_links(html: str, text: str, parts: list[str]) -> list[str] | None:
    """The content of each part of a split block with the block's kept links in it: each part
    holds the links whose text lies in it (a link the split cuts is in both parts, round its
    share of the text); other markup is dropped, as in every split part. None when the block
    has no link with text, or when its text and its content's text differ beyond spacing (a
    table row's text separates cells with ``|``): then the parts are plain text."""
    spans = _link_spans(html)
    if not spans:
        return None
    plain = _unescape_content("".join(_MARKUP_RE.split(html)[::2]))
    if "".join(plain.split()) != "".join(text.split()):
        return None
    starts = [a for a, _, _ in spans]
    out: list[str] = []
    g = 0  # the part's first character, counted in the text's non-space characters
    for part in parts:
        end = g + len("".join(part.split()))
        i = max(bisect.bisect_right(starts, g) - 1, 0)  # the first link that may reach the part
        cuts: list[tuple[int, str]] = []  # (offset in the part, marker)
        offsets: list[int] | None = None  # the part's non-space characters
        while i < len(spans) and spans[i][0] < end:
            a, b, marker = spans[i]
            if b > g:
                if offsets is None:
                    offsets = [m.start() for m in _NON_SPACE_RE.finditer(part)]
                cuts.append((offsets[max(a, g) - g], marker))
                cuts.append((offsets[min(b, end) - g - 1] + 1, "</a>"))
            i += 1
        pieces = []
        at = 0
        for offset, marker in cuts:
            pieces.append(text_content(part[at:offset]))
            pieces.append(marker)
            at = offset
        pieces.append(text_content(part[at:]))
        out.append("".join(pieces))
        g = end
    return out


def _split_long(
    cfg: SegmentConfig, tag: str, text: str, html: str, link_chars: int, room: int
) -> list[tuple[str, str, int]] | None:
    """The parts a long block is cut into, at most ``room + 1``: ``(text, html, link
    characters)`` each (the block's link characters shared by the parts' lengths); None when
    it stays whole (it is within the token budget). :meth:`BlockRows.number` calls this for
    each block longer than ``min_chars_per_token * max_block_tokens`` characters.

    Cheap pre-check first: text shorter than ~2.5 chars per token cannot exceed the budget
    except for punctuation-dense strings, which the soft limit tolerates."""
    if not (
        len(text) > cfg.max_block_chars
        or _count_tokens_upto(text, cfg.max_block_tokens) > cfg.max_block_tokens
    ):
        return None
    split = _split_pre if tag == "pre" else _split_text
    parts = list(islice(split(text, cfg.max_block_tokens, cfg.max_block_chars), room + 1))
    if len(parts) <= 1:
        return None
    kept = parts[:room]
    linked = (
        _split_links(html, text, kept)
        if cfg.markup and tag not in ("pre", "tr") and '<a href="' in html
        else None
    )
    out = []
    for k, part in enumerate(parts):
        if k >= len(kept):
            out.append((part, "", 0))  # past the room: cut off by the caller
            continue
        part_html = (
            linked[k]
            if linked is not None
            else (_escape(part) if tag == "pre" else text_content(part))
            if cfg.markup
            else ""
        )
        out.append((part, part_html, round(link_chars * len(part) / max(len(text), 1))))
    return out


def _walk(
    root: LexborNode,
    cfg: SegmentConfig,
    rows: compiled.BlockRows,
    source: str,
    id_offset: int = 0,
    deadline: float | None = None,
    base: str = "",
) -> bool:
    """Write the blocks of ``root``'s subtree (root included) to ``rows``; whether the deadline
    hit. The walk is compiled (``_segment_c.walk``, over lexbor's nodes)."""
    return compiled.walk(root.mem_id, cfg, source, id_offset, deadline, rows, base)  # type: ignore[no-any-return]


def segment_document(
    doc: Document, cfg: SegmentConfig = DEFAULT_SEGMENT, *, deadline: float | None = None
) -> Page:
    """Segment a parsed (and normally cleaned) document into a :class:`Page`.

    ``deadline`` (a :func:`time.perf_counter` value) ends the walk early, with a warning, so a
    page that takes too long still yields the blocks found so far.
    """
    warnings = list(doc.warnings)
    body = doc.tree.body  # a lookup in the tree: once
    root = body if body is not None else doc.tree.root
    base = doc.url or ""  # links and images: against <base href>, itself against the page's URL
    if "base_url" in doc.meta:
        with contextlib.suppress(ValueError):  # a malformed base: the page's own address
            base = urljoin(base, doc.meta["base_url"])
    rows = compiled.BlockRows(cfg)
    timed_out = (
        _walk(root, cfg, rows, "dom", deadline=deadline, base=base) if root is not None else False
    )
    for k, fragment in enumerate(doc.rescued):
        if timed_out:
            break
        frag_tree = parse_bounded(
            fragment if "<" in fragment else f"<p>{html_lib.escape(fragment)}</p>"
        )[0]
        fbody = frag_tree.body
        if fbody is None:
            continue
        timed_out = _walk(
            fbody,
            cfg,
            rows,
            "script",
            id_offset=-(k + 1) * (1 << 40),
            deadline=deadline,
            base=base,
        )
    if doc.facts and not timed_out:
        items = "".join(
            f"<li>{html_lib.escape(label)}: {html_lib.escape(value)}</li>"
            for label, value in doc.facts
        )
        fbody = parse_bounded(f'<ul class="product-facts">{items}</ul>')[0].body
        if fbody is not None:
            timed_out = _walk(
                fbody, cfg, rows, "facts", id_offset=-(len(doc.rescued) + 1) * (1 << 40),
                deadline=deadline, base=base,
            )  # fmt: skip
    if timed_out:
        warnings.append(
            f"the time budget ran out while segmenting; blocks after the first "
            f"{rows.raw_count:,} were dropped ({setting_name('ExtractConfig.time_budget_s')})"
        )
    complete = rows.number(
        cfg.max_blocks,
        cfg.min_chars_per_token * cfg.max_block_tokens,
        functools.partial(_split_long, cfg),
    )
    if not complete or rows.raw_count > cfg.max_blocks:
        warnings.append(
            f"page has more than {cfg.max_blocks:,} blocks; the rest were dropped "
            "(SegmentConfig.max_blocks)"
        )
    numbered = compiled.BlockList(rows, Block)  # Block objects made when first read
    ids = block_ids(numbered)  # the readers' table, read off the rows: no Block made
    item_lists = find_item_lists(numbered, ids=ids)
    return Page(
        blocks=numbered,
        title=doc.title,
        url=doc.url,
        meta=dict(doc.meta),
        encoding=doc.encoding,
        warnings=tuple(warnings),
        html_bytes=doc.html_chars,
        units=page_units(root, numbered, item_lists=item_lists),
        item_lists=tuple(item_lists),
        images=cfg.images,
        facts=PageFacts(find_primary, pagetype.classify_page, ids),  # looked up per page: swappable
    )
