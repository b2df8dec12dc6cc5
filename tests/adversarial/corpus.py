"""A deterministic corpus of hostile and broken pages (issue #10).

Each case is a name, the page bytes, a ``fast`` flag (fast cases run in the default test run;
slow ones are marked ``slow``) and optionally the HTTP ``Content-Type`` it is served with.
Cases are built on demand from a seeded generator, so the same name always gives the same bytes.

Besides classic breakage (random bytes, bad encodings, absurd nesting and sizes) there is a
probe for every regular expression on the extraction path: long runs of the characters the
pattern loops on, ending in a tail that makes the match fail, which is what exposes
catastrophic (or merely quadratic) backtracking. :data:`REGEX_PROBES` holds direct probes of
every module-level pattern in ``src/blockdex``, including those not on the default path.

Run ``python -m tests.adversarial.corpus`` to list the cases with their sizes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

SEED = 20261122
KB = 1024
MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    data: bytes
    fast: bool
    content_type: str | None = None


def _rng(name: str) -> random.Random:
    return random.Random(f"{SEED}:{name}")


def _page(body: str, head: str = "", title: str = "Adversarial page") -> bytes:
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title>{head}</head>'
        f"<body>{body}</body></html>"
    ).encode()


_PROSE = (
    "The committee met on Tuesday to review the budget, and after a long discussion it agreed "
    "to fund the new library, the bridge repairs and a study of the river's water quality. "
)


def _article(paragraphs: int = 6) -> str:
    return "<article><h1>Real headline</h1>" + f"<p>{_PROSE}</p>" * paragraphs + "</article>"


# -- encodings and bytes ------------------------------------------------------------------------
def random_bytes(r: random.Random) -> bytes:
    return r.randbytes(256 * KB)


def random_bytes_with_tags(r: random.Random) -> bytes:
    parts = [r.randbytes(r.randrange(1, 64)) + b"<p>" for _ in range(4000)]
    return b"<html><body>" + b"".join(parts)


def nul_bytes(r: random.Random) -> bytes:
    return b"\x00" * (200 * KB)


def nul_bytes_in_html(r: random.Random) -> bytes:
    html = _page(_article()).decode()
    return "\x00".join(html[i : i + 7] for i in range(0, len(html), 7)).encode()


def truncated_utf8(r: random.Random) -> bytes:
    text = _page("<p>" + "Grüße, naïve café — 東京 😀 " * 400 + "</p>")
    # cut multi-byte sequences in the middle and at the very end
    return text[:5001] + text[5003:-3] + "😀".encode()[:2]


def invalid_utf8_everywhere(r: random.Random) -> bytes:
    page = _page(_article(20))
    out = bytearray()
    for i in range(0, len(page), 50):
        out += page[i : i + 50] + bytes([r.choice([0x80, 0xC0, 0xE2, 0xF0, 0xFF])])
    return bytes(out)


def utf16_without_bom(r: random.Random) -> bytes:
    return _page(_article() + "<p>東京 مرحبا 😀</p>").decode().encode("utf-16-le")


def utf16_be_without_bom(r: random.Random) -> bytes:
    return _page(_article()).decode().encode("utf-16-be")


def utf32_with_bom(r: random.Random) -> bytes:
    return _page(_article()).decode().encode("utf-32")


def wrong_meta_charset(r: random.Random) -> bytes:
    body = _article() + "<p>Grüße aus Köln, ça va très bien.</p>"
    html = (
        '<html><head><meta charset="shift_jis"><title>Falsch</title></head>'
        f"<body>{body}</body></html>"
    )
    return html.encode("cp1252")


def meta_charset_utf16_ascii(r: random.Random) -> bytes:
    return (
        '<html><head><meta charset="utf-16"></head><body>' + _article() + "</body></html>"
    ).encode("ascii")


def meta_charset_bogus(r: random.Random) -> bytes:
    return (
        '<html><head><meta charset="x-no-such-codec-\xff"><meta http-equiv="Content-Type" '
        'content="text/html; charset=rot13"></head><body>' + _article() + "</body></html>"
    ).encode("latin-1")


def bom_and_meta_disagree(r: random.Random) -> bytes:
    html = '<html><head><meta charset="iso-8859-1"></head><body>' + _article() + "</body></html>"
    return b"\xef\xbb\xbf" + html.encode()


def binary_signature_then_html(r: random.Random) -> bytes:
    return b"%PDF-1.7\n" + _page(_article())


def lone_surrogate_escapes(r: random.Random) -> bytes:
    script = '<script>document.write("<p>' + "\\ud83d x " * 300 + '</p>")</script>'
    return _page(_article() + script)


# -- tree shape ----------------------------------------------------------------------------------
def nested_div(depth: int) -> Callable[[random.Random], bytes]:
    def make(r: random.Random) -> bytes:
        return _page("<div>" * depth + _article() + "</div>" * depth)

    return make


def nested_mixed_unclosed(r: random.Random) -> bytes:
    tags = ["div", "span", "blockquote", "section", "ul", "li", "b", "i", "a", "font", "table"]
    return _page("".join(f"<{r.choice(tags)}>x" for _ in range(60_000)))


def nested_blockquote_text(r: random.Random) -> bytes:
    return _page("<blockquote>quoted text " * 20_000)


def nested_formatting(r: random.Random) -> bytes:
    return _page("<p>" + "<b>bold <i>italic " * 30_000)


def nested_inline_span(r: random.Random) -> bytes:
    return _page("<p>" + "<span>t " * 100_000 + "</span>" * 100_000)


def sibling_spans(n: int) -> Callable[[random.Random], bytes]:
    def make(r: random.Random) -> bytes:
        return _page("<p>" + "<span>a</span>" * n + "</p>")

    return make


def sibling_empty_tags(r: random.Random) -> bytes:
    return _page("<i>" * 4_000_000)


def many_paragraphs(r: random.Random) -> bytes:
    return _page(
        "".join(f"<p>paragraph {k} {_PROSE[: r.randrange(20, 150)]}</p>" for k in range(60_000))
    )


def unclosed_everywhere(r: random.Random) -> bytes:
    tags = ["div", "p", "span", "li", "td", "tr", "table", "ul", "a", "b", "h2", "pre", "code"]
    parts = []
    for _ in range(20_000):
        t = r.choice(tags)
        parts.append(f"<{t} class='c{r.randrange(99)}'>{_PROSE[: r.randrange(0, 60)]}")
        if r.random() < 0.1:
            parts.append(f"</{r.choice(tags)}>")
    return ("<html><body>" + "".join(parts)).encode()


def tiny_tables(r: random.Random) -> bytes:
    return _page("".join(f"<table><tr><td>{k}</td><td>v</td></tr></table>" for k in range(8000)))


def nested_tables(r: random.Random) -> bytes:
    return _page("<table><tr><td>cell " * 20_000)


def huge_table(r: random.Random) -> bytes:
    rows = "".join(f"<tr><td>{k}</td><td>value {k}</td><td>x</td></tr>" for k in range(60_000))
    return _page(f"<table><tr><th>id</th><th>value</th><th>z</th></tr>{rows}</table>")


def unclosed_comment(r: random.Random) -> bytes:
    return _page(_article() + "<!-- " + "<div><p>hidden</p></div>" * 20_000)


def svg_self_closing(r: random.Random) -> bytes:
    return _page(_article() + "<svg>" + '<path d="M0 0"/>' * 100_000 + "</svg>")


# -- sizes --------------------------------------------------------------------------------------
def text_node(size: int, word: str = "a") -> Callable[[random.Random], bytes]:
    def make(r: random.Random) -> bytes:
        return _page("<p>" + word * (size // len(word)) + "</p>")

    return make


def huge_title(title_chars: int, headings: int) -> Callable[[random.Random], bytes]:
    # render.title_heading matches the title against every heading: quadratic without a cap
    def make(r: random.Random) -> bytes:
        body = "".join(f"<h2>zq{k}x</h2><p>{_PROSE}</p>" for k in range(headings))
        title = "word " * (title_chars // 5)
        return _page(body, title=title, head=f'<meta property="og:title" content="{title}">')

    return make


def huge_attribute(r: random.Random) -> bytes:
    value = "x" * (5 * MB)
    return _page(f'<div class="{value}" data-x="{value[:100]}">' + _article() + "</div>")


def huge_attribute_code_class(r: random.Random) -> bytes:
    # segment._LANG_CLASS_RE reads the class of <code> inside <pre>
    cls = " lang" + " " * (2 * MB) + "!"
    return _page(f'<pre><code class="{cls}">print(1)\n</code></pre>' + _article())


def many_attributes(r: random.Random) -> bytes:
    attrs = " ".join(f"a{k}='{k}'" for k in range(200_000))
    return _page(f"<div {attrs}>" + _article() + "</div>")


def script_never_closed(r: random.Random) -> bytes:
    return _page(_article() + "<script>var x = 1;" + "<p>not markup</p>" * 5000)


def style_never_closed(r: random.Random) -> bytes:
    return _page("<style>p { color: red }" + _article(50))


def title_swallowed_page(r: random.Random) -> bytes:
    return ("<html><head><title>Broken" + "<p>" + _PROSE + "</p>" * 2000).encode()


def textarea_swallowed_page(r: random.Random) -> bytes:
    return _page("<textarea>" + _article(200))


def next_data_json(size: int) -> Callable[[random.Random], bytes]:
    def make(r: random.Random) -> bytes:
        items = []
        total = 0
        while total < size:
            body = " ".join(r.choice(_PROSE.split()) for _ in range(r.randrange(40, 120)))
            items.append({"id": len(items), "body": body, "tags": ["a", "b"]})
            total += len(body) + 40
        state = json.dumps({"props": {"pageProps": {"items": items}}})
        script = f'<script id="__NEXT_DATA__" type="application/json">{state}</script>'
        return _page(_article(), head=script)

    return make


def _word(r: random.Random) -> str:
    """A random lower-case word (text no other part of the page contains)."""
    return "".join(r.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(r.randrange(3, 10)))


def next_data_huge_literal(r: random.Random) -> bytes:
    # one 3 MB prose string: a per-character regex group used to cost ~140 bytes per character
    body = " ".join(_word(r) for _ in range(400_000))
    state = json.dumps({"props": {"pageProps": {"html": f"<p>{body}</p>"}}})
    return _page(_article(), head=f'<script id="__NEXT_DATA__">{state}</script>')


def huge_document_write(r: random.Random) -> bytes:
    body = " ".join(_word(r) for _ in range(60_000))
    return _page(_article(), head=f'<script>document.write("<p>{body}</p>");</script>')


def jsonld_deep_nesting(r: random.Random) -> bytes:
    deep = "[" * 200_000 + "]" * 200_000
    script = f'<script type="application/ld+json">{deep}</script>'
    return _page(_article(), head=script)


def jsonld_deep_names(r: random.Random) -> bytes:
    deep = '{"headline": ' + "[" * 900 + '"t"' + "]" * 900 + "}"
    script = f'<script type="application/ld+json">{deep}</script>'
    return _page(_article(), head=script)


def next_data_deep_nesting(r: random.Random) -> bytes:
    deep = '{"a":' * 100_000 + '"' + _PROSE * 3 + '"' + "}" * 100_000
    return _page(_article(), head=f'<script id="__NEXT_DATA__">{deep}</script>')


def giant_pre(r: random.Random) -> bytes:
    lines = [
        f"{k:08d} " + "x = compute(y, z)  # " + "=" * r.randrange(0, 80) for k in range(60_000)
    ]
    return _page("<pre><code class='language-python'>" + "\n".join(lines) + "</code></pre>")


def giant_pre_one_line(r: random.Random) -> bytes:
    return _page("<pre>" + "x" * (3 * MB) + "</pre>")


def scripts_with_huge_writes(r: random.Random) -> bytes:
    chunk = "<p>" + _PROSE * 3 + "</p>"
    writes = "".join(f'document.write("{chunk}");' for _ in range(2000))
    return _page(_article(), head=f"<script>{writes}</script>")


# -- scripts and languages -----------------------------------------------------------------------
def cjk_rtl_emoji(r: random.Random) -> bytes:
    cjk = "東京都は日本の首都であり、世界最大の都市圏を持つ。" * 40
    rtl = "هذه فقرة باللغة العربية تحتوي على نص طويل للاختبار. " * 40
    heb = "זוהי פסקה בעברית עם טקסט ארוך לבדיקה. " * 40
    emoji = "🎉👩‍👩‍👧‍👦🏳️‍🌈 " * 400
    mixed = "\u202eRTL override\u202c \u200bzero\u200bwidth \ufeff BOM-in-text"
    body = "".join(
        f"<p dir='{d}'>{t}</p>"
        for d, t in [("ltr", cjk), ("rtl", rtl), ("rtl", heb), ("ltr", emoji), ("ltr", mixed)]
    )
    return _page(body, title="多言語 🌐 متعدد")


def cjk_no_punctuation(r: random.Random) -> bytes:
    return _page("<p>" + "東京都日本首都世界最大都市圏" * 40_000 + "</p>")


def combining_marks(r: random.Random) -> bytes:
    return _page("<p>Z" + "\u0301\u0302\u0303" * 100_000 + "</p>" + _article())


def astral_and_private_use(r: random.Random) -> bytes:
    chars = "".join(
        chr(r.choice([0x1F600, 0xE000, 0x10FFFD, 0x1D11E, 0xFFFD])) for _ in range(30_000)
    )
    return _page(f"<p>{chars}</p>")


def entity_soup(r: random.Random) -> bytes:
    ents = ["&amp;", "&#0;", "&#x110000;", "&#xD800;", "&nbsp;", "&bogus;", "&#99999999999;"]
    return _page("<p>" + "".join(r.choice(ents) for _ in range(100_000)) + "</p>")


# -- regex probes on the extraction path ---------------------------------------------------------
def probe_meta_charset(r: random.Random) -> bytes:
    # parse._META_CHARSET_RE: many <meta within reach of "charset=" followed by a run of spaces
    # and no name (took 35 s on the 8 KB head before the pattern was fixed)
    head = "<meta " * 80 + "charset=" + " " * 7600 + "!"
    return ("<html><head>" + head + "</head><body>" + _article()).encode()


def probe_http_charset(r: random.Random) -> bytes:
    return _page(_article())


def probe_tag_re(r: random.Random) -> bytes:
    # parse._TAG_RE and the control count: a long run of '<' followed by non-tag characters
    return ("< " * (300 * KB) + "<p>x").encode()


def probe_swallowed_markup(r: random.Random) -> bytes:
    # parse.repair_swallowed_markup: <title\b[^>]*> and _MARKUP_RE on a swallowed page
    return (
        "<html><head><title " + "<title " * 50_000 + ">" + "<p>x</p><a>" * 2000 + "</head>"
    ).encode()


def probe_state_assign(r: random.Random) -> bytes:
    # clean._STATE_ASSIGN_RE: names followed by whitespace but never '='
    code = ("window.__INITIAL_STATE__" + " " * 2000 + ";") * 1000
    return _page(_article(), head=f"<script>{code}</script>")


def probe_js_write_unclosed(r: random.Random) -> bytes:
    # clean._JS_HTML_WRITE_RE: a quoted string full of escaped quotes that never closes
    code = 'document.write("' + '\\"' * (1 * MB)
    return _page(_article(), head=f"<script>{code}</script>")


def probe_js_write_alternating(r: random.Random) -> bytes:
    code = "".join(f"document.write({q}" + "x" * 50 for q in ("'", "`", '"') * 20_000)
    return _page(_article(), head=f"<script>{code}</script>")


def probe_inner_html_spaces(r: random.Random) -> bytes:
    code = (".innerHTML" + " " * 1000 + "+") * 2000
    return _page(_article(), head=f"<script>{code}</script>")


def probe_has_tag_in_write(r: random.Random) -> bytes:
    # clean._HAS_TAG_RE: '<a' repeated with no closing '>' inside a rescued string
    code = 'document.write("' + "<a " * 150_000 + '");'
    return _page(_article(), head=f"<script>{code}</script>")


def probe_has_tag_in_state(r: random.Random) -> bytes:
    text = "words words " * 20 + "<a " * 300_000
    state = json.dumps({"props": {"body": text}})
    return _page(_article(), head=f'<script id="__NEXT_DATA__">{state}</script>')


def probe_long_literal_escaped_quotes(r: random.Random) -> bytes:
    # the string-literal scan (_clean_c): '"' followed by escaped quotes and never closed
    code = '{"a": "' + '\\"' * (1 * MB)
    return _page(_article(), head=f'<script id="__NEXT_DATA__">{code}</script>')


def probe_long_literal_newlines(r: random.Random) -> bytes:
    code = ('"' + "word " * 100 + "\n") * 5000
    return _page(_article(), head=f'<script id="__NEXT_DATA__">{code}</script>')


def probe_js_escapes(r: random.Random) -> bytes:
    # clean._JS_ESCAPE_RE: runs of broken escapes
    code = 'document.write("<p>' + "\\u12\\x4\\u{110000}\\" * 20_000 + 'x</p>");'
    return _page(_article(), head=f"<script>{code}</script>")


def probe_whitespace_runs(r: random.Random) -> bytes:
    # segment._WS_RE / _SENTENCE_END_RE: sentence ends followed by whitespace runs, no words
    return _page("<p>" + (". " + " \t\n" * 50) * 20_000 + "x</p>")


def probe_punctuation_tokens(r: random.Random) -> bytes:
    # segment._TOKEN_RE: every character is its own token
    return _page("<p>" + ".,;:!?" * 500_000 + "</p>")


def probe_sentence_ends(r: random.Random) -> bytes:
    return _page("<p>" + "。" * 300_000 + "！？" * 100_000 + "</p>")


def probe_code_class(r: random.Random) -> bytes:
    # segment._LANG_CLASS_RE
    cls = "language-" + "a" * 100_000 + '"<'
    return _page(f"<pre><code class='{cls}'>code\n</code></pre>" + _article())


def probe_feature_tokens(r: random.Random) -> bytes:
    # features: the class/id families (advert.*, …) and the token split on class/id tokens
    cls = "advert" * 40 + "-_" * 5000 + " sponsor" * 1000
    divs = "".join(
        f'<div class="{cls}" id="{"-" * 3000}"><p>{_PROSE}</p></div>' for _ in range(200)
    )
    return _page(divs)


def probe_digits_and_words(r: random.Random) -> bytes:
    return _page("<p>" + "1" * 500_000 + "</p><p>" + "\u00e9" * 500_000 + "</p>")


# name → (fast, factory[, content_type])
CASES: dict[str, tuple[bool, Callable[[random.Random], bytes], str | None]] = {
    "random_bytes": (True, random_bytes, None),
    "random_bytes_with_tags": (True, random_bytes_with_tags, None),
    "nul_bytes": (True, nul_bytes, None),
    "nul_bytes_in_html": (True, nul_bytes_in_html, None),
    "truncated_utf8": (True, truncated_utf8, None),
    "invalid_utf8_everywhere": (True, invalid_utf8_everywhere, None),
    "utf16_without_bom": (True, utf16_without_bom, None),
    "utf16_be_without_bom": (True, utf16_be_without_bom, None),
    "utf32_with_bom": (True, utf32_with_bom, None),
    "wrong_meta_charset": (True, wrong_meta_charset, None),
    "meta_charset_utf16_ascii": (True, meta_charset_utf16_ascii, None),
    "meta_charset_bogus": (True, meta_charset_bogus, None),
    "bom_and_meta_disagree": (True, bom_and_meta_disagree, None),
    "binary_signature_then_html": (True, binary_signature_then_html, None),
    "lone_surrogate_escapes": (True, lone_surrogate_escapes, None),
    "nested_div_1k": (True, nested_div(1_000), None),
    "nested_div_100k": (True, nested_div(100_000), None),
    "nested_mixed_unclosed": (True, nested_mixed_unclosed, None),
    "nested_blockquote_text": (True, nested_blockquote_text, None),
    "nested_formatting": (True, nested_formatting, None),
    "nested_inline_span": (True, nested_inline_span, None),
    "nested_tables": (True, nested_tables, None),
    "sibling_span_100k": (True, sibling_spans(100_000), None),
    "sibling_span_1m": (False, sibling_spans(1_000_000), None),
    "sibling_empty_tags_4m": (False, sibling_empty_tags, None),
    "many_paragraphs": (False, many_paragraphs, None),
    "unclosed_everywhere": (True, unclosed_everywhere, None),
    "tiny_tables": (True, tiny_tables, None),
    "huge_table": (False, huge_table, None),
    "unclosed_comment": (True, unclosed_comment, None),
    "svg_self_closing": (True, svg_self_closing, None),
    "text_node_1mb": (True, text_node(1 * MB), None),
    "text_node_20mb": (False, text_node(20 * MB), None),
    "text_node_20mb_words": (False, text_node(20 * MB, "lorem ipsum dolor sit amet. "), None),
    "text_node_too_large": (False, text_node(40 * MB), None),
    "huge_title": (True, huge_title(2 * MB, 2000), None),
    "huge_title_30mb": (False, huge_title(15 * MB, 20_000), None),
    "huge_attribute": (True, huge_attribute, None),
    "huge_attribute_code_class": (True, huge_attribute_code_class, None),
    "many_attributes": (True, many_attributes, None),
    "script_never_closed": (True, script_never_closed, None),
    "style_never_closed": (True, style_never_closed, None),
    "title_swallowed_page": (True, title_swallowed_page, None),
    "textarea_swallowed_page": (True, textarea_swallowed_page, None),
    "next_data_1mb": (True, next_data_json(1 * MB), None),
    "next_data_5mb": (False, next_data_json(5 * MB), None),
    "next_data_huge_literal": (True, next_data_huge_literal, None),
    "huge_document_write": (True, huge_document_write, None),
    "jsonld_deep_nesting": (True, jsonld_deep_nesting, None),
    "jsonld_deep_names": (True, jsonld_deep_names, None),
    "next_data_deep_nesting": (True, next_data_deep_nesting, None),
    "giant_pre": (True, giant_pre, None),
    "giant_pre_one_line": (False, giant_pre_one_line, None),
    "scripts_with_huge_writes": (True, scripts_with_huge_writes, None),
    "cjk_rtl_emoji": (True, cjk_rtl_emoji, None),
    "cjk_no_punctuation": (True, cjk_no_punctuation, None),
    "combining_marks": (True, combining_marks, None),
    "astral_and_private_use": (True, astral_and_private_use, None),
    "entity_soup": (True, entity_soup, None),
    "probe_meta_charset": (True, probe_meta_charset, None),
    "probe_http_charset": (
        True,
        probe_http_charset,
        "text/html; charset" + " " * 100_000 + "=" + "=" * 100_000 + "x",
    ),
    "probe_tag_re": (True, probe_tag_re, None),
    "probe_swallowed_markup": (True, probe_swallowed_markup, None),
    "probe_state_assign": (True, probe_state_assign, None),
    "probe_js_write_unclosed": (True, probe_js_write_unclosed, None),
    "probe_js_write_alternating": (True, probe_js_write_alternating, None),
    "probe_inner_html_spaces": (True, probe_inner_html_spaces, None),
    "probe_has_tag_in_write": (True, probe_has_tag_in_write, None),
    "probe_has_tag_in_state": (True, probe_has_tag_in_state, None),
    "probe_long_literal_escaped_quotes": (True, probe_long_literal_escaped_quotes, None),
    "probe_long_literal_newlines": (True, probe_long_literal_newlines, None),
    "probe_js_escapes": (True, probe_js_escapes, None),
    "probe_whitespace_runs": (True, probe_whitespace_runs, None),
    "probe_punctuation_tokens": (True, probe_punctuation_tokens, None),
    "probe_sentence_ends": (True, probe_sentence_ends, None),
    "probe_code_class": (True, probe_code_class, None),
    "probe_feature_tokens": (True, probe_feature_tokens, None),
    "probe_digits_and_words": (True, probe_digits_and_words, None),
}


def build(name: str) -> Case:
    """The case called ``name`` (the same bytes on every call and machine)."""
    fast, factory, content_type = CASES[name]
    return Case(name, factory(_rng(name)), fast, content_type)


def names(fast: bool | None = None) -> list[str]:
    """Case names; only the fast (``True``) or slow (``False``) ones when ``fast`` is given."""
    return [n for n, (f, _, _) in CASES.items() if fast is None or f == fast]


def cases(fast: bool | None = None) -> Iterator[Case]:
    for name in names(fast):
        yield build(name)


# -- direct probes of every module-level pattern in src/blockdex ----------------------------------
# (module, attribute, method, subject): the subject is built lazily; a linear-time pattern handles
# each in well under a second, a backtracking one takes minutes.
REGEX_PROBES: tuple[tuple[str, str, str, Callable[[], str | bytes]], ...] = (
    ("parse", "_META_CHARSET_RE", "search", lambda: b"<meta " * 2000 + b"charset=" + b" " * 8000),
    ("parse", "_META_CHARSET_RE", "search", lambda: b"<meta " * 80 + b"charset=" + b" " * 7600),
    ("parse", "_SCAN_RE", "findall", lambda: "<a" * 300_000),
    ("parse", "_SCAN_RE", "findall", lambda: "<a " * 300_000),
    ("parse", "_SCAN_RE", "findall", lambda: "<!--" * 300_000),
    ("parse", "_ATTR_RE", "findall", lambda: 'a="' * 300_000),
    ("parse", "_ATTR_RE", "findall", lambda: "a= " * 300_000 + "'"),
    ("parse", "_HTTP_CHARSET_RE", "search", lambda: "charset" + " " * 200_000 + "=" * 200_000),
    ("parse", "_TAG_RE", "search", lambda: "< " * 500_000),
    ("parse", "_MARKUP_RE", "findall", lambda: "<" * 500_000),
    ("_markdown_c", "_INLINE_RE", "split", lambda: "</b" * 300_000),
    ("_markdown_c", "_BACKTICKS_RE", "findall", lambda: "`" * 300_000 + "x`" * 100_000),
    ("markdown", "_HEADING_LINE_RE", "match", lambda: "#" * 500_000),
    ("predict.content", "_AD_LABEL_RE", "fullmatch", lambda: " " * 300_000 + "x"),
    ("predict.content", "_AD_LABEL_RE", "fullmatch", lambda: "ad" + "-" * 300_000 + "s"),
    (
        "predict.content",
        "_AD_LABEL_RE",
        "fullmatch",
        lambda: "story" + " " * 300_000 + "continues" + " " * 300_000 + "below x",
    ),
    ("clean", "_SCHEMA_WORD_RE", "split", lambda: "aB" * 300_000),
    ("pagetype", "_URL_SPLIT_RE", "split", lambda: "-_" * 300_000 + "a"),
    ("pagetype", "_URL_EXT_RE", "search", lambda: ".htm" * 200_000 + "x"),
    ("pagetype", "_URL_YEAR_RE", "search", lambda: "2019a" * 200_000),
    ("pagetype", "_URL_DIGITS_RE", "findall", lambda: "1a" * 300_000),
    ("pagetype", "_LETTERS_RE", "findall", lambda: "a1" * 300_000),
    ("pagetype", "PRICE_RE", "findall", lambda: "$1" * 300_000),
    ("pagetype", "YEAR_RE", "findall", lambda: "2020" * 200_000 + "1"),
    ("pagetype", "RELATIVE_DATE_RE", "findall", lambda: " agox" * 200_000),
    ("markdown", "_LINE_START_RE", "findall", lambda: "- " * 300_000 + "x"),
    ("markdown", "_LINE_START_RE", "findall", lambda: "\n1" * 300_000),
    ("markdown", "_LINE_START_RE", "findall", lambda: "=\t" * 300_000 + "x"),
    ("markdown", "_CELL_SPLIT_RE", "split", lambda: "</t" * 300_000),
    ("clean", "_STATE_ASSIGN_RE", "search", lambda: ("__NUXT__" + " " * 500) * 2000),
    ("clean", "_JS_HTML_WRITE_RE", "findall", lambda: 'document.write("' + '\\"' * 600_000),
    ("clean", "_JS_HTML_WRITE_RE", "findall", lambda: ".innerHTML" + " " * 500_000),
    ("clean", "_HAS_TAG_RE", "search", lambda: "<a " * 200_000),
    ("clean", "_HAS_TAG_RE", "search", lambda: "<" + " " * 500_000),
    ("clean", "_JS_ESCAPE_RE", "findall", lambda: "\\" * 500_001),
    ("segment", "_WS_RE", "findall", lambda: " \t\n" * 300_000 + "x"),
    ("segment", "_TOKEN_RE", "findall", lambda: "a." * 300_000),
    ("segment", "_TOKEN_RE", "findall", lambda: "图a。é" * 150_000),
    ("segment", "_SENTENCE_END_RE", "split", lambda: (". " + " " * 100) * 5000),
    ("segment", "_SPACE_RE", "findall", lambda: " " * 500_000),
    ("segment", "_NEWLINE_RE", "findall", lambda: "\n" * 500_000),
    ("segment", "_LANG_CLASS_RE", "search", lambda: " lang" + " " * 500_000 + "!"),
    ("segment", "_LANG_CLASS_RE", "search", lambda: " language-" * 100_000),
    ("segment", "_LANG_CLASS_RE", "search", lambda: " brush:" + " " * 500_000 + "!"),
    ("segment", "_LANG_NAME_RE", "fullmatch", lambda: "a" * 500_000),
    ("segment", "_BREAK_RUN_RE", "findall", lambda: "\n" * 500_000 + "x"),
    ("assemble", "_SIZE_MARK_RE", "findall", lambda: "1x" * 300_000),
    ("assemble", "_SIZE_MARK_RE", "findall", lambda: "thumbnai" * 100_000),
    ("assemble", "_SIZE_HINT_RE", "findall", lambda: "?w=" * 200_000 + "1" * 100_000),
    ("assemble", "_SIZE_HINT_RE", "findall", lambda: "12345x" * 100_000),
    ("clean", "CARD_CLASS_RE", "search", lambda: "tooltip-" * 100_000 + "x"),
    ("clean", "CARD_CLASS_RE", "search", lambda: "a-" * 200_000 + "popover-" + "-" * 100_000),
    ("clean", "CARD_TRIGGER_RE", "search", lambda: "tool-tip-" * 100_000),
    ("clean", "MORE_LINK_RE", "fullmatch", lambda: " " * 300_000 + "more" + "»" * 100_000 + "x"),
    ("intervals", "_FENCE_RE", "findall", lambda: "```" + "a" * 300_000 + "``" * 100_000),
    ("intervals", "_FENCE_RE", "findall", lambda: "```x\n" * 100_000),
    ("intervals", "_NA_RE", "match", lambda: "[ " * 200_000 + "x"),
    ("intervals", "_PAIR_RE", "findall", lambda: "[ " + " " * 100_000 + "1, " * 100_000),
    ("intervals", "_SINGLE_BRACKET_RE", "findall", lambda: "[1 " * 200_000),
    ("intervals", "_RANGE_RE", "findall", lambda: "1" * 200_000 + " " * 100_000 + "to x"),
    ("intervals", "_NUMBER_RE", "findall", lambda: "1." * 300_000),
    ("intervals", "_FLAT_LIST_RE", "findall", lambda: "[" + "1 , " * 200_000 + "x"),
    ("intervals", "_FLAT_LIST_RE", "findall", lambda: "[1" * 200_000),
    ("features", "WORD_RE", "findall", lambda: "a " * 300_000),
    ("predict.kinds", "_NUMBERED_RE", "search", lambda: "post-body text " * 200_000),
    ("features", "_WORD_UNIT_RE", "findall", lambda: "图a " * 200_000 + "é" * 300_000),
    ("evaluate.metrics", "_WORD_RE", "findall", lambda: "a " * 300_000),
    ("evaluate.qe", "_CELL_MARK_RE", "split", lambda: "<td a>" * 50_000 + "x" * 100_000),
    ("evaluate.qe", "_CELL_MARK_RE", "split", lambda: "<th" + " a" * 100_000),
    ("evaluate.qe", "_TAG_RE", "findall", lambda: "<" * 200_000),
    ("evaluate.qe", "_STRUCTURE_RE", "search", lambda: "<tabl" * 100_000),
    ("predict.structure", "DEFINITION_RE", "finditer", lambda: "export " * 50_000 + "def"),
    (
        "predict.structure",
        "DEFINITION_RE",
        "finditer",
        lambda: ("def " + "a" * 40 + " " * 30 + "\n") * 5_000,
    ),
    (
        "predict.structure",
        "_COMMAND_RE",
        "findall",
        lambda: ("$ " + "a" * 30 + " " * 40 + "\n") * 5_000,
    ),
    ("predict.structure", "IDENTIFIER_HINT", "search", lambda: "A" * 300_000),
    ("predict.structure", "_IDENTIFIER_PART", "findall", lambda: "aA1" * 100_000),
    ("evaluate.align", "_ALIGN_WORD_RE", "findall", lambda: "图a，é " * 150_000),
    ("server.proxy", "_TAG_SPLIT_RE", "split", lambda: "<" * 300_000),
    ("units", "_WORD_RE", "findall", lambda: "图a，é " * 150_000),
    ("units", "TITLE_SEPARATORS", "split", lambda: " |" * 200_000 + " -" * 100_000 + "x"),
    ("units", "TITLE_SEPARATORS", "split", lambda: "\t" * 300_000 + "»"),
    ("units", "ARTICLE_ITEMTYPE_RE", "search", lambda: "Articl" * 200_000),
    ("units", "_SLUG_ID_RE", "match", lambda: "a" * 500_000),
    ("units", "_NOT_ALNUM_RE", "findall", lambda: "-_ \u00e9" * 200_000 + "x"),
    ("units", "_SLUG_EXT_RE", "search", lambda: ".a" * 250_000 + "!"),
    ("units", "_SLUG_SPLIT_RE", "split", lambda: "-_+ " * 200_000),
    ("_markdown_c", "_HREF_RE", "search", lambda: 'href="' * 200_000 + 'href="x'),
    ("mathtex", "_STYLE_WRAPPER_RE", "match", lambda: "{\\displaystyle " + "}{ " * 300_000),
    ("mathtex", "_SPACES_RE", "findall", lambda: "\t \n" * 300_000 + "x"),
    ("mathtex", "_CONTROL_WORD_RE", "fullmatch", lambda: "\\" + "a" * 500_000 + "1"),
    ("mathtex", "_CONTROL_WORD_END_RE", "search", lambda: "\\a1" * 300_000),
    ("segment", "_SPAN_RE", "match", lambda: " \t" * 300_000 + "x"),
    ("segment", "_PLACEHOLDER_RE", "search", lambda: "blank" * 200_000),
    ("segment", "_MARKUP_RE", "split", lambda: "<" * 300_000),
    ("segment", "_NON_SPACE_RE", "search", lambda: " " * 500_000),
    ("parse", "_SVG_END_RE", "search", lambda: "</svg" * 200_000),
)


if __name__ == "__main__":
    for case in cases():
        kind = "fast" if case.fast else "slow"
        print(f"{case.name:36s} {kind}  {len(case.data):>12,d} bytes")
