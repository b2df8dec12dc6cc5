"""Bytes or text → an HTML5 tree (selectolax/lexbor), with the page's encoding, title and metadata.

Encoding follows what a browser would do, with one pragmatic twist measured on real crawls:
a page whose bytes are valid UTF-8 is read as UTF-8 even when its ``<meta charset>`` names an
older encoding (servers re-encode pages and forget the meta tag). Otherwise the BOM, the HTTP
``charset`` and the ``<meta>`` declaration are honoured, then charset-normalizer guesses.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import NamedTuple
from urllib.parse import urlsplit

from selectolax.lexbor import LexborHTMLParser

from blockdex import _parse_c as compiled
from blockdex.errors import EmptyInput, NotHTML, PageTooLarge, check_minimums, setting_name


@dataclass(frozen=True, slots=True)
class ParseLimits:
    """Input limits applied before parsing."""

    max_input_bytes: int = 32 * 1024 * 1024
    """Larger inputs raise PageTooLarge: a 32 MB page is ~100x a typical article page."""
    sniff_bytes: int = 8192
    """How much of the start is inspected for BOM, meta charset and binary signatures."""
    max_control_ratio: float = 0.05
    """Share of control characters in the sniffed text above which input is treated as binary."""
    swallowed_chars: int = 300
    """A title/textarea/iframe holding this much text may have swallowed the page's markup…"""
    swallowed_tags: int = 5
    """…and it did when that text holds this many tags."""
    max_dom_nodes: int = 100_000
    """Elements (start tags) beyond this are cut off with the rest of the page, with a warning:
    lexbor needs 160-300 bytes a node, so this bounds the tree near 30 MB. The largest of the 2,618
    shared pages has 21,580; at 100k, segmentation's block cap (20,000) is reached first on
    pages of table rows or list items (a 3 MB table of 60k rows peaked at 36x its size in RSS
    with the 500k bound of before, 19x now)."""
    max_depth: int = 512
    """Elements nested deeper are flattened into their ancestor, with a warning: Blink's parser
    stops nesting at 512 too, and lexbor slows quadratically with depth (100k levels: 20 s)."""
    max_meta_chars: int = 2_000
    """Title and metadata values are cut to this length: they head every output, and a
    megabyte "title" is an attack (matching it against each heading would be quadratic)."""
    max_attributes: int = 1_000
    """Attributes of one element beyond this are dropped, with a warning: lexbor's duplicate check
    is quadratic in them (200k attributes: over a minute); real elements carry a few dozen."""

    def __post_init__(self) -> None:
        check_minimums(self, _LIMIT_MINIMUMS)
        if self.max_control_ratio > 1.0:
            raise ValueError(
                f"ParseLimits.max_control_ratio must be at most 1, not {self.max_control_ratio}"
            )


_LIMIT_MINIMUMS = {
    **dict.fromkeys(("max_input_bytes", "max_dom_nodes", "max_depth"), 1),
    **dict.fromkeys(
        ("sniff_bytes", "swallowed_chars", "swallowed_tags", "max_meta_chars", "max_attributes"), 0
    ),
    "max_control_ratio": 0.0,
}


DEFAULT_LIMITS = ParseLimits()

# File signatures of formats that are sometimes served as text/html.
_BINARY_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"%PDF-", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"GIF8", "a GIF image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"PK\x03\x04", "a ZIP archive (or an Office document)"),
    (b"\x1f\x8b", "gzip-compressed data (decompress it first)"),
    (b"\x7fELF", "an executable"),
    (b"RIFF", "a RIFF media file"),
    (b"OggS", "an Ogg media file"),
    (b"\x00\x00\x01\x00", "an icon file"),
    (b"wOFF", "a web font"),
)

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)

# One class loop between '=' and the name ([\s"']*, not \s*["']?\s*): nested optional runs of
# spaces backtrack quadratically on "charset=" followed by kilobytes of spaces.
_META_CHARSET_RE = re.compile(
    rb"""<meta[^>]{0,512}?charset\s*=[\s"']*([A-Za-z0-9_:.\-]{1,40})""", re.I
)
_HTTP_CHARSET_RE = re.compile(r"""charset\s*=\s*["']?([A-Za-z0-9_:.\-]{1,40})""", re.I)
_TAG_RE = re.compile(r"<\s*[A-Za-z!?/]")

# WHATWG encoding-label aliases that differ from Python's codecs.
_ENCODING_ALIASES = {
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "latin-1": "cp1252",
    "us-ascii": "cp1252",
    "ascii": "cp1252",
    "iso-8859-9": "cp1254",
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "x-sjis": "shift_jis",
    "unicode": "utf-16",
    "utf8": "utf-8",
}


def _normalise_encoding(label: str | None) -> str | None:
    if not label:
        return None
    label = label.strip().lower()
    label = _ENCODING_ALIASES.get(label, label)
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def _binary_kind(head: bytes) -> str | None:
    for sig, kind in _BINARY_SIGNATURES:
        if head.startswith(sig):
            return kind
    return None


def _utf16_without_bom(head: bytes) -> str | None:
    """``utf-16-le``/``-be`` when ``head`` is ASCII-range text in UTF-16 sent without a BOM."""
    if len(head) < 64:
        return None
    half = len(head) // 2
    if head[1::2].count(0) > 0.9 * half and head[0::2].count(0) < 0.1 * half:
        return "utf-16-le"
    if head[0::2].count(0) > 0.9 * half and head[1::2].count(0) < 0.1 * half:
        return "utf-16-be"
    return None


def decode_html(
    data: bytes, content_type: str | None = None, limits: ParseLimits = DEFAULT_LIMITS
) -> tuple[str, str]:
    """Decode page bytes to text; returns ``(text, encoding_name)``.

    Raises :class:`EmptyInput`, :class:`PageTooLarge` or :class:`NotHTML` for unusable input.
    """
    if len(data) > limits.max_input_bytes:
        raise PageTooLarge(
            f"input is {len(data):,} bytes, over the limit of {limits.max_input_bytes:,}; "
            f"raise {setting_name('ParseLimits.max_input_bytes')} if this page is wanted"
        )
    if not data.strip():
        raise EmptyInput("input is empty: there is no HTML to extract from")
    head = data[: limits.sniff_bytes]
    for bom, name in _BOMS:
        if head.startswith(bom):
            return data.decode(name, errors="replace"), codecs.lookup(name).name
    utf16 = _utf16_without_bom(head)
    if utf16:
        return data.decode(utf16, errors="replace"), utf16
    kind = _binary_kind(head.lstrip())
    if kind:
        raise NotHTML(f"input is {kind}, not HTML")
    declared = None
    if content_type:
        m = _HTTP_CHARSET_RE.search(content_type)
        declared = _normalise_encoding(m.group(1)) if m else None
    if declared is None:
        m2 = _META_CHARSET_RE.search(head)
        if m2:
            declared = _normalise_encoding(m2.group(1).decode("ascii", "ignore"))
    if declared in (None, "utf-8") or not head.isascii():
        try:
            return data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            pass
    if declared and declared not in ("utf-8", "utf-16", "utf-32"):
        return data.decode(declared, errors="replace"), declared
    if declared in ("utf-16", "utf-32"):
        # A declared UTF-16 page without BOM is almost always really ASCII-compatible.
        declared = None
    from charset_normalizer import from_bytes

    best = from_bytes(data[: 1 << 20]).best()
    if best is not None and best.encoding:
        name = _normalise_encoding(best.encoding) or "utf-8"
        return data.decode(name, errors="replace"), name
    return data.decode("utf-8", errors="replace"), "utf-8"


def check_html_text(text: str, limits: ParseLimits = DEFAULT_LIMITS) -> None:
    """Raise :class:`NotHTML`/:class:`EmptyInput` when decoded text cannot be a web page."""
    if not text or text.isspace():  # (not text.strip(): no copy of the page)
        raise EmptyInput("input is empty: there is no HTML to extract from")
    n_sniff = min(len(text), limits.sniff_bytes)
    controls = compiled.count_controls(text, n_sniff)
    if controls > limits.max_control_ratio * max(n_sniff, 1):
        raise NotHTML(
            f"input looks like binary data ({controls} control characters in the first "
            f"{n_sniff}), not HTML"
        )
    if not _TAG_RE.search(text, 0, 1 << 16):
        raise NotHTML(
            "input has no HTML tags in its first 64 KB; is it plain text or another format?"
        )


@dataclass(slots=True)
class Document:
    """A parsed page. The tree is mutable: :func:`blockdex.clean.clean_document` edits it."""

    tree: LexborHTMLParser
    url: str | None = None
    title: str = ""
    meta: dict[str, str] = field(default_factory=dict)
    encoding: str = "utf-8"
    html_chars: int = 0
    warnings: list[str] = field(default_factory=list)
    rescued: list[str] = field(default_factory=list)
    """Text recovered from scripts by the cleaner, appended after the page's blocks."""
    facts: list[tuple[str, str]] = field(default_factory=list)
    """A product's ``(label, value)`` facts from its JSON-LD that the visible page lacks (price,
    availability…: :func:`blockdex.clean.product_facts`), appended as a list after the blocks."""
    cleaned: bool = False
    scripts: list[tuple[str | None, str | None, str | None, int]] | None = field(
        default=None, repr=False, compare=False
    )
    """The page's scripts with text as ``(type, id, code, needles)``, found by the walk after
    parsing (code only of those the cleaner may read; needles: a mask, bit ``g`` when the code
    may hold a needle of group ``g`` of :class:`ScriptsToKeep`); None when that walk did not run,
    or was not asked for them (the
    cleaner then walks the tree itself)."""
    parsed_json: dict[str, object] = field(default_factory=dict, repr=False, compare=False)
    """Script texts already given to ``json.loads`` and what came out (the metadata reader
    and the cleaner's script rescue both read JSON-LD: each script is parsed once)."""
    interface: list[tuple[int, object]] | None = field(default=None, repr=False, compare=False)
    """What ``clean.drop_interface`` reads (hover-card and link candidates), when the compiled
    noise walk found them on its way; None: it looks itself."""
    has_math: bool | None = field(default=None, repr=False, compare=False)
    """Whether the page holds a ``<math>`` or ``<mjx-container>`` element, as the walk after
    parsing found; None when that walk did not run (the cleaner then looks itself)."""


class ScriptsToKeep(NamedTuple):
    """Which scripts the walk after parsing keeps the code of, for the step that reads them
    (:data:`blockdex.clean.SCRIPTS_READ`, the cleaner's script rescue): those with one of
    ``ids``, and those whose code holds a needle of a group of ``needles`` (bit ``g`` of a
    script's mask for group ``g``, at most 32 groups)."""

    ids: frozenset[str]
    needles: tuple[tuple[bytes, ...], ...]


BAD_JSON = object()


def load_json_once(code: str, cache: dict[str, object] | None) -> object:
    """``json.loads(code)``, remembered in ``cache``; ``BAD_JSON`` when it does not parse."""
    import json

    if cache is not None and code in cache:
        return cache[code]
    try:
        data: object = json.loads(code)
    except (ValueError, RecursionError):  # RecursionError: absurdly nested arrays
        data = BAD_JSON
    if cache is not None:
        cache[code] = data
    return data


# Metadata fields and the meta/link keys they are read from, in order of preference.
_META_SOURCES: dict[str, tuple[str, ...]] = {
    "og_title": ("og:title", "twitter:title"),
    "description": ("description", "og:description", "twitter:description"),
    "site_name": ("og:site_name", "application-name"),
    "author": (
        "author",
        "article:author",
        "byl",
        "dc.creator",
        "parsely-author",
        "sailthru.author",
    ),
    "date": (
        "article:published_time",
        "datepublished",
        "date",
        "pubdate",
        "publishdate",
        "dc.date",
        "dc.date.issued",
        "parsely-pub-date",
        "sailthru.date",
    ),
    "modified": ("article:modified_time", "datemodified", "og:updated_time"),
    "canonical": ("canonical", "og:url"),
    "keywords": ("keywords", "news_keywords"),
    "language": ("content-language", "og:locale"),
    "og_type": ("og:type",),
    "base_url": ("<base>",),  # the first <base href>: read from its row, not from a meta key
}
_META_KEY_FIELD = {key: name for name, keys in _META_SOURCES.items() for key in keys}
# JSON-LD properties (schema.org) → metadata fields, used when meta tags lack them.
_JSONLD_FIELDS = {
    "headline": "og_title",
    "datePublished": "date",
    "dateModified": "modified",
    "author": "author",
    "publisher": "site_name",
    "description": "description",
    "inLanguage": "language",
}
_MAX_JSONLD_CHARS = 1_000_000


def _jsonld_name(value: object, levels: int = 2) -> str:
    """A schema.org value as text: strings as they are, objects by their name, lists joined.

    Lists nested deeper than ``levels`` are ignored: names are never that deep, and a hostile
    page's thousand-level list must not exhaust the recursion limit.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        name = value.get("name")
        return name if isinstance(name, str) else ""
    if isinstance(value, list) and levels > 0:
        return ", ".join(n for n in (_jsonld_name(v, levels - 1) for v in value[:10]) if n)
    return ""


def _clip(text: str, max_chars: int) -> str:
    """Whitespace-normalised ``text``, at most ``max_chars`` long (no word list of a huge text)."""
    return " ".join(text[: 4 * max_chars].split())[:max_chars]


def _jsonld_metadata(
    codes: Iterable[str],
    max_chars: int = DEFAULT_LIMITS.max_meta_chars,
    json_cache: dict[str, object] | None = None,
) -> dict[str, str]:
    """Metadata fields from the page's JSON-LD scripts (their texts, in document order), and
    ``schema_types``: the schema.org types the scripts declare for their top-level items (and
    ``@graph`` members), in order, comma-separated."""
    found: dict[str, str] = {}
    types: list[str] = []
    for code in codes:
        if not code or len(code) > _MAX_JSONLD_CHARS:
            continue
        data = load_json_once(code, json_cache)
        if data is BAD_JSON:
            continue
        items = data if isinstance(data, list) else [data]
        expanded: list[object] = []
        for item in items:
            if isinstance(item, dict) and isinstance(item.get("@graph"), list):
                expanded.extend(item["@graph"])
            else:
                expanded.append(item)
        for item in expanded:
            if not isinstance(item, dict):
                continue
            declared = item.get("@type")
            for t in declared if isinstance(declared, list) else [declared]:
                name = t.strip() if isinstance(t, str) else ""
                if name and name not in types:
                    types.append(name)
            for prop, key in _JSONLD_FIELDS.items():
                if key not in found and prop in item:
                    text = _clip(_jsonld_name(item[prop]), max_chars)
                    if text:
                        found[key] = text
    if types:
        found["schema_types"] = _clip(", ".join(types), max_chars)
    return found


def _meta_rows(tree: LexborHTMLParser) -> list[tuple[str | None, ...]]:
    """The page's meta, link[rel] and JSON-LD script elements, and its first title and html
    elements, in document order: ``("meta", property, name, itemprop, http-equiv, content)``,
    ``("link", rel, href)``, ``("ld+json", text)``, ``("title", text)``, ``("html", lang,
    xml:lang)`` or, for the first ``<base>`` with an href, ``("base", href)``."""
    root = tree.root
    return [] if root is None else compiled.meta_elements(root.mem_id)


def read_metadata(
    tree: LexborHTMLParser,
    max_chars: int = DEFAULT_LIMITS.max_meta_chars,
    json_cache: dict[str, object] | None = None,
    rows: list[tuple[str | None, ...]] | None = None,
) -> tuple[str, dict[str, str]]:
    """Title and metadata from ``<title>``, meta tags (Open Graph, Dublin Core…) and JSON-LD.

    Every value is whitespace-normalised and cut to ``max_chars`` characters. ``json_cache``
    (a Document's ``parsed_json``) keeps the parsed JSON-LD for the cleaner. ``rows`` are the
    tree's :func:`_meta_rows` when already found.
    """
    candidates: dict[str, dict[str, str]] = {}
    jsonld: list[str] = []
    title_text: str | None = None
    lang: str | None = None
    for row in _meta_rows(tree) if rows is None else rows:
        if row[0] == "ld+json":
            jsonld.append(row[1] or "")
            continue
        if row[0] == "title":
            title_text = row[1]
            continue
        if row[0] == "html":
            lang = row[1] or row[2]
            continue
        if row[0] == "base":
            if row[1] and row[1].strip():
                candidates.setdefault("base_url", {})["<base>"] = row[1].strip()[:max_chars]
            continue
        if row[0] == "link":
            rels = (row[1] or "").lower().split()
            if "canonical" in rels and row[2]:
                candidates.setdefault("canonical", {})["canonical"] = row[2][:max_chars]
            continue
        key = (row[1] or row[2] or row[3] or row[4] or "").lower()
        name = _META_KEY_FIELD.get(key)
        value = row[5]
        if name and value and value.strip():
            candidates.setdefault(name, {}).setdefault(key, _clip(value, max_chars))
    meta: dict[str, str] = {}
    for name, keys in _META_SOURCES.items():
        got = candidates.get(name, {})
        for key in keys:
            if key in got:
                meta[name] = got[key]
                break
    for name, value in _jsonld_metadata(jsonld, max_chars, json_cache).items():
        meta.setdefault(name, value)
    html_title = _clip(title_text, max_chars) if title_text is not None else ""
    if html_title:
        meta["html_title"] = html_title
    if lang and lang.strip():
        meta["language"] = _clip(lang, max_chars)
    title = meta.get("og_title") or html_title
    if not title:
        h1 = tree.css_first("h1")
        if h1 is not None:
            title = _clip(h1.text(), max_chars)
    return title, meta


_TOO_DEEP = (False, [], [], False)
"""What :func:`_survey` returns, by identity, when asked to check the depth and an element is
too deep."""


def _survey(
    tree: LexborHTMLParser,
    limits: ParseLimits,
    scripts: ScriptsToKeep | None,
    check_depth: bool = False,
) -> tuple[bool, list, list, bool] | None:
    """One compiled walk after parsing: whether a raw-text element may have swallowed markup
    (:func:`repair_swallowed_markup`), the metadata rows (:func:`_meta_rows`), the scripts
    for the cleaner and whether a math element is on the page; None for a tree without a root
    (each is then found on its own). With ``check_depth``, the walk is also
    :func:`_has_deep_element`'s, and an element with ``limits.max_depth`` element ancestors
    gives :data:`_TOO_DEEP`."""
    root = tree.root
    if root is None:
        return None
    survey = compiled.page_survey(
        root.mem_id,
        _SWALLOWING,
        limits.swallowed_chars,
        scripts.needles if scripts is not None else (),
        scripts.ids if scripts is not None else frozenset(),
        limits.max_depth if check_depth else -1,
    )
    return _TOO_DEEP if survey is None else survey


_WEB_SCHEMES = ("http", "https")


def declared_address(meta: dict[str, str]) -> str | None:
    """The address a page gives itself, for a page given without one (a file, a JSONL record
    without ``url``): its canonical link (or ``og:url``), else its ``<base href>``, when that is
    an absolute web address; else None."""
    for key in ("canonical", "base_url"):
        value = (meta.get(key) or "").strip()
        try:
            parts = urlsplit(value)
        except ValueError:
            continue
        if parts.scheme.lower() in _WEB_SCHEMES and parts.netloc:
            return value
    return None


def parse_html(
    html: str | bytes,
    *,
    url: str | None = None,
    content_type: str | None = None,
    limits: ParseLimits = DEFAULT_LIMITS,
    scripts: ScriptsToKeep | None = None,
) -> Document:
    """Parse a page. Accepts bytes (encoding detected) or already-decoded text. Without a
    ``url`` the page's own (:func:`declared_address`) is its address: links and images are made
    absolute against it, and every output names it. With ``scripts`` (the cleaner's
    :data:`blockdex.clean.SCRIPTS_READ`), the walk after parsing keeps the code of those scripts
    in :attr:`Document.scripts`; without, the cleaner finds them itself."""
    if isinstance(html, bytes | bytearray | memoryview):
        text, encoding = decode_html(bytes(html), content_type, limits)
    elif isinstance(html, str):
        if len(html) > limits.max_input_bytes:
            raise PageTooLarge(
                f"input is {len(html):,} characters, over the limit of {limits.max_input_bytes:,}; "
                f"raise {setting_name('ParseLimits.max_input_bytes')} if this page is wanted"
            )
        text, encoding = html, "utf-8"
    else:
        raise TypeError(f"html must be str or bytes, not {type(html).__name__}")
    check_html_text(text, limits)
    if compiled.has_nul(text):
        text = text.replace("\x00", "\ufffd")
    # The depth check of parse_bounded is left to the survey walk (one walk over the tree
    # instead of two); a page too deep for it is bounded and parsed again, which is what
    # parse_bounded does.
    tree, text, warnings, depth_unchecked = _parse_first(text, limits, False)
    survey = _survey(tree, limits, scripts, depth_unchecked)
    if survey is _TOO_DEEP:
        text, warnings = bound_markup(text, limits)
        tree = _lexbor_parse(text)
        survey = _survey(tree, limits, scripts)
    repaired = None
    if survey is None or survey[0]:  # an element holds enough text to have swallowed markup
        repaired = repair_swallowed_markup(tree, text, limits, suspected=survey is not None)
    if repaired is not None:
        text, tag = repaired
        tree, text, more = parse_bounded(text, limits)  # the freed markup obeys them too
        warnings.extend(w for w in more if w not in warnings)
        warnings.append(f"an unclosed <{tag}> held the page's markup as text; it was closed")
        survey = _survey(tree, limits, scripts)
    parsed_json: dict[str, object] = {}
    rows = survey[1] if survey is not None else None
    title, meta = read_metadata(tree, limits.max_meta_chars, parsed_json, rows)
    return Document(
        tree=tree,
        url=url or declared_address(meta),
        title=title,
        meta=meta,
        encoding=encoding,
        html_chars=len(text),
        warnings=warnings,
        scripts=survey[2] if survey is not None and scripts is not None else None,
        parsed_json=parsed_json,
        has_math=survey[3] if survey is not None else None,
    )


# -- structural limits, enforced on the text before the parser sees it -------------------------
# A linear scan over the tags that tracks roughly what the parser's stack of open elements will
# hold. It errs on the side of counting less than the parser nests (void elements, <p>, table
# sections… are not counted; <td>, <li>, <dd>… close their open sibling as the parser does), so
# only hostile pages are changed.
_SCAN_RE = re.compile(r"<(?:(!--)|(/?)([A-Za-z][^\t\n\f\r />]*)([^<>]*))")
_ATTR_RE = re.compile(r"""[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=>]*))?""")
_VOID_TAGS = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "keygen",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    ]
)
# Never counted: end tags are optional (closed by siblings) or the element is a singleton.
_UNCOUNTED_TAGS = _VOID_TAGS | frozenset(
    [
        "html",
        "head",
        "body",
        "p",
        "thead",
        "tbody",
        "tfoot",
        "colgroup",
        "caption",
        "option",
        "optgroup",
        "rb",
        "rt",
        "rtc",
        "rp",
    ]
)
# Start tags that close an open element of the same kind (and what was left open inside it),
# unless a boundary element comes first: tag → (closes, boundaries).
_IMPLIED_CLOSE: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "td": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "th": (frozenset({"td", "th"}), frozenset({"tr", "table"})),
    "tr": (frozenset({"tr"}), frozenset({"table"})),
    "li": (frozenset({"li"}), frozenset({"ul", "ol", "menu"})),
    "dt": (frozenset({"dt", "dd"}), frozenset({"dl"})),
    "dd": (frozenset({"dt", "dd"}), frozenset({"dl"})),
}
_IMPLIED_CLOSE_WINDOW = 32  # how far down the stack a start tag looks for what it closes
# Raw-text elements: their content is not markup, up to the matching end tag.
_RAW_END_RES = {
    tag: re.compile(rf"</{tag}", re.I)
    for tag in ("script", "style", "xmp", "iframe", "noembed", "noframes", "textarea", "title")
}


_SVG_END_RE = re.compile(r"</svg[\s>/]", re.I)
SCAN_TAGS_PER_NODE = 5
"""The pre-parse scan cuts the page after ``max_dom_nodes`` elements, or after this many times
as many start tags counting the ones flattened past ``max_depth`` (which make no node)."""

PARSE_FIRST_MAX_TAGS = 20_000
"""Pages with at most this many ``<`` are parsed first and the tree is checked against the limits
(lexbor's worst case at this size, 20 000 nested ``<div>``/``<section>``/``<ul>``…, is ~0.8 s;
0.2 s at 10 000); larger pages are scanned with :func:`bound_markup` before parsing. The check
is ~4x cheaper than the scan on real pages: the two wcxb pages (of the first 200) with 11 056 and
16 237 ``<`` took 17 and 29 ms in the scan, 5 and 6 ms in lexbor."""


def _tag_count_and_crowding(text: str, max_attributes: int) -> tuple[int, bool]:
    """``text.count("<")``, and whether a tag may carry more than ``max_attributes`` attributes
    (over-counts, never under: an attribute takes at least one character, and the tag name
    counts as one). The second is only looked for when the count is at most
    PARSE_FIRST_MAX_TAGS: pages with more tags are bounded by the scan anyway."""
    # one pass; attributes counted only where name runs allow too many
    n_lt, spans = compiled.tag_scan(text, max_attributes)
    tags = (text[i:j] for i, j in spans)
    if n_lt > PARSE_FIRST_MAX_TAGS:
        return n_lt, False
    # more than max_attributes matches: stop at the first one past it (a long false "tag" in a
    # script, such as `x<vendors.length …` over 43,000 characters, has thousands)
    return n_lt, any(
        next(islice(_ATTR_RE.finditer(t), max_attributes, None), None) is not None for t in tags
    )


def _has_deep_element(tree: LexborHTMLParser, max_depth: int) -> bool:
    """Whether an element of ``tree`` has ``max_depth`` element ancestors."""
    root = tree.root
    return root is not None and compiled.has_deep_element(root.mem_id, max_depth)


def parse_bounded(
    text: str, limits: ParseLimits = DEFAULT_LIMITS
) -> tuple[LexborHTMLParser, str, list[str]]:
    """Parse ``text`` into a tree that obeys ``limits``: ``(tree, text parsed, warnings)``.

    The one way blockdex turns untrusted markup into a tree (pages and script-rescued fragments).
    """
    tree, text, warnings, _ = _parse_first(text, limits, True)
    return tree, text, warnings


def _parse_first(
    text: str, limits: ParseLimits, check_depth: bool
) -> tuple[LexborHTMLParser, str, list[str], bool]:
    """:func:`parse_bounded`, and whether the tree's depth is left unchecked (only when
    ``check_depth`` is False and the page has more start tags than ``limits.max_depth``): the
    caller then checks it with :func:`_has_deep_element` and bounds the text if it fails."""
    n_lt, crowded = _tag_count_and_crowding(text, limits.max_attributes)
    if n_lt <= min(PARSE_FIRST_MAX_TAGS, limits.max_dom_nodes) and not crowded:
        tree = _lexbor_parse(text)
        # an element can be no deeper than the number of start tags
        if n_lt <= limits.max_depth:
            return tree, text, [], False
        if not check_depth:
            return tree, text, [], True
        if not _has_deep_element(tree, limits.max_depth):
            return tree, text, [], False
    text, warnings = bound_markup(text, limits)
    return _lexbor_parse(text), text, warnings, False


def _lexbor_parse(text: str) -> LexborHTMLParser:
    """``LexborHTMLParser(text)``: selectolax encodes text with ``text.encode("utf-8",
    "ignore")`` and parses the bytes; the compiled encoder gives the same bytes, 4x faster on
    the usual two-byte page text (bytes are parsed as they are)."""
    return LexborHTMLParser(compiled.utf8_ignore(text))


def _tag_end(text: str, pos: int) -> int:
    return pos + 1 if text.startswith(">", pos) else pos


def bound_markup(text: str, limits: ParseLimits = DEFAULT_LIMITS) -> tuple[str, list[str]]:
    """``text`` with nesting, element count and attribute count brought within ``limits``.

    Returns ``(text, warnings)``; the text is returned unchanged (the same object) when every
    limit holds. Start tags nested deeper than ``max_depth`` are removed together with as many of
    their end tags, so their content joins the ancestor; the page is cut before the start tag
    that exceeds ``max_dom_nodes``; attributes beyond ``max_attributes`` are removed; an
    ``<svg>``'s content is removed (cleaning drops the element whole).
    """
    if text.count("<") <= min(limits.max_depth, limits.max_dom_nodes) and (
        len(text) <= 2 * limits.max_attributes
    ):
        return text, []
    max_depth, max_attrs = limits.max_depth, limits.max_attributes
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement), in text order
    stack: list[str] = []
    open_count: dict[str, int] = {}
    dropped: dict[str, int] = {}
    n_dropped = n_elements = n_attr_cut = 0
    cut_at = -1
    max_nodes = limits.max_dom_nodes
    skip_to = 0  # end of the comment or raw text the last tag opened
    for m in _SCAN_RE.finditer(text):
        start = m.start()
        if start < skip_to:
            continue
        is_comment, slash, name, rest = m.groups()
        if is_comment:
            end = text.find("-->", m.end())
            if end < 0:
                break
            skip_to = end + 3
            continue
        name = name.lower()
        if slash:  # an end tag
            if dropped.get(name):
                dropped[name] -= 1
                edits.append((start, _tag_end(text, m.end()), ""))
            elif open_count.get(name):
                while stack:
                    top = stack.pop()
                    open_count[top] -= 1
                    if top == name:
                        break
            continue
        n_elements += 1
        # flattened tags make no node but cost the scan an edit: at most SCAN_TAGS_PER_NODE
        # start tags per allowed node are read (4M unclosed <i>: cut at 500k, as before)
        if n_elements > max_nodes or n_elements + n_dropped > SCAN_TAGS_PER_NODE * max_nodes:
            cut_at = start
            break
        if len(rest) > max_attrs:
            attrs = list(_ATTR_RE.finditer(rest))
            if len(attrs) > max_attrs:
                n_attr_cut += 1
                keep = attrs[max_attrs - 1].end() if max_attrs > 0 else 0
                edits.append((m.start(4) + keep, m.end(4), ""))
        if name in _RAW_END_RES:
            found = _RAW_END_RES[name].search(text, m.end())
            if found is None:
                break  # the rest of the page is this element's text
            skip_to = found.start()
            continue
        if name == "plaintext":
            break
        if name in _UNCOUNTED_TAGS:
            continue
        if rest.endswith("/") and (open_count.get("svg") or open_count.get("math")):
            continue  # self-closing foreign element (SVG/MathML)
        implied = _IMPLIED_CLOSE.get(name)
        if implied is not None and any(open_count.get(t) for t in implied[0]):
            closes, boundaries = implied
            for k in range(len(stack) - 1, max(len(stack) - _IMPLIED_CLOSE_WINDOW, 0) - 1, -1):
                if stack[k] in boundaries:
                    break
                if stack[k] in closes:
                    for top in stack[k:]:
                        open_count[top] -= 1
                    del stack[k:]
                    break
        if len(stack) >= max_depth:
            n_dropped += 1
            n_elements -= 1  # removed: no node for the tree, none against max_dom_nodes
            dropped[name] = dropped.get(name, 0) + 1
            if edits and edits[-1][0] >= start:
                edits.pop()  # the attribute cut inside this tag: the whole tag goes
            edits.append((start, _tag_end(text, m.end()), ""))
            continue
        stack.append(name)
        open_count[name] = open_count.get(name, 0) + 1
        if name == "svg" and not rest.endswith("/"):
            found = _SVG_END_RE.search(text, m.end())
            if found is not None:
                # a drawing's markup: cleaning drops the whole <svg>, and parsing it costs lexbor
                # ~300 bytes a node (100k <path/>: 1.6 MB of HTML, 45 MB of tree)
                edits.append((_tag_end(text, m.end()), found.start(), ""))
                skip_to = found.start()
    warnings = []
    if n_dropped:
        warnings.append(
            f"flattened {n_dropped:,} element{'s' * (n_dropped != 1)} nested deeper than "
            f"{max_depth} levels into their ancestors ({setting_name('ParseLimits.max_depth')})"
        )
    if n_attr_cut:
        warnings.append(
            f"kept only the first {max_attrs:,} attributes of {n_attr_cut:,} "
            f"element{'s' * (n_attr_cut != 1)} (ParseLimits.max_attributes)"
        )
    if cut_at >= 0:
        warnings.append(
            f"page has more than {limits.max_dom_nodes:,} elements (or "
            f"{SCAN_TAGS_PER_NODE * limits.max_dom_nodes:,} start tags, counting those nested too "
            f"deep); the HTML after character {cut_at:,} was ignored "
            f"({setting_name('ParseLimits.max_dom_nodes')})"
        )
    if not edits and cut_at < 0:
        return text, warnings
    end_of_text = cut_at if cut_at >= 0 else len(text)
    parts: list[str] = []
    prev = 0
    for start, end, replacement in edits:
        if start >= end_of_text:
            break
        parts.append(text[prev:start])
        parts.append(replacement)
        prev = end
    parts.append(text[prev:end_of_text])
    return "".join(parts), warnings


# Elements whose content the HTML parser reads as plain text up to their end tag: one left
# unclosed (or with a mangled end tag) swallows the rest of the page, which then looks empty.
SWALLOWING_TAGS = ("title", "textarea", "xmp", "noembed", "noframes", "iframe")
_SWALLOWING = frozenset(SWALLOWING_TAGS)
_MARKUP_RE = re.compile(r"<[a-zA-Z!/]")


def repair_swallowed_markup(
    tree: LexborHTMLParser,
    text: str,
    limits: ParseLimits = DEFAULT_LIMITS,
    *,
    suspected: bool = False,
) -> tuple[str, str] | None:
    """When a raw-text element swallowed the page, the text with that element closed early.

    Returns ``(repaired_text, tag)`` or None when nothing was swallowed. The element is closed
    right before the first markup inside it, which is what its author meant. ``suspected``: the
    caller's walk already found such an element with enough text (the check is not repeated).
    """
    root = tree.root
    if (  # one walk in C rules out most pages: no such element holds that much text
        not suspected
        and root is not None
        and not compiled.swallow_suspects(root.mem_id, _SWALLOWING, limits.swallowed_chars)
    ):
        return None
    for node in tree.css(",".join(SWALLOWING_TAGS)):
        inner = node.text(deep=True)
        if len(inner) < limits.swallowed_chars:
            continue
        if len(_MARKUP_RE.findall(inner, 0, 1 << 16)) < limits.swallowed_tags:
            continue
        tag = node.tag
        start = re.search(rf"<{tag}\b[^>]*>", text, re.I)
        if start is None:
            return None
        first_markup = _MARKUP_RE.search(text, start.end())
        if first_markup is None:
            return None
        cut = first_markup.start()
        return text[:cut] + f"</{tag}>" + text[cut:], tag
    return None
