"""Property tests: whatever the input, extraction returns valid output or a BlockdexError.

Inputs are arbitrary bytes, arbitrary text, and generated HTML trees (tags, attributes, text,
entities, comments, unclosed and stray tags). For each, ``extract(…, output="json")`` must not
raise anything but :class:`blockdex.errors.BlockdexError`; its output must be a str that encodes
as UTF-8, parse as JSON, and select only indices within ``[0, n_blocks)``. ``max_examples`` is
kept small so the module runs in about half a minute; the fuzz target (fuzz/fuzz_extract.py)
explores the same property for as long as it is given.
"""

from __future__ import annotations

import json
import os

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import blockdex  # noqa: E402
from blockdex.errors import BlockdexError  # noqa: E402

# BLOCKDEX_FUZZ_EXAMPLES=5000 explores further (and with fresh randomness) than the CI default.
EXAMPLES = int(os.environ.get("BLOCKDEX_FUZZ_EXAMPLES", "150"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize="BLOCKDEX_FUZZ_EXAMPLES" not in os.environ,
)

TAGS = [
    "div", "p", "span", "a", "b", "i", "em", "strong", "code", "pre", "h1", "h2", "h3", "ul",
    "ol", "li", "dl", "dt", "dd", "table", "tr", "td", "th", "thead", "tbody", "caption",
    "blockquote", "section", "article", "nav", "header", "footer", "aside", "main", "figure",
    "figcaption", "img", "br", "hr", "form", "input", "select", "option", "textarea", "title",
    "script", "style", "noscript", "iframe", "svg", "math", "template", "details", "summary",
    "font", "center", "xmp", "plaintext", "x-custom",
]  # fmt: skip
ATTRS = ["class", "id", "style", "hidden", "alt", "title", "src", "href", "type", "role", "lang"]

attr_value = st.one_of(
    st.sampled_from(["content", "nav menu", "display:none", "language-python", "", "ld+json"]),
    st.text(max_size=20),
)
attrs = st.dictionaries(st.sampled_from(ATTRS), attr_value, max_size=3)
text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["&amp;", "&#0;", "&#xD800;", "&bogus", "<", ">", "]]>", "<!--", "-->"]),
    st.just("The quick brown fox jumps over the lazy dog. " * 5),
)


def _element(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    def render(tag: str, attributes: dict[str, str], kids: list[str], closed: bool) -> str:
        attr_text = "".join(f' {k}="{v.replace(chr(34), "&quot;")}"' for k, v in attributes.items())
        return f"<{tag}{attr_text}>" + "".join(kids) + (f"</{tag}>" if closed else "")

    return st.builds(
        render,
        st.sampled_from(TAGS),
        attrs,
        st.lists(children, max_size=5),
        st.booleans(),
    )


html_tree = st.recursive(
    st.one_of(
        text,
        st.sampled_from(
            [
                "<br>",
                "<!-- c -->",
                "</div>",
                "</p>",
                "<img alt='x'>",
                "<?php f(); ?>",
                "<![CDATA[x]]>",
            ]
        ),
    ),
    _element,
    max_leaves=40,
)
html_page = st.builds(
    lambda head, body: f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>",
    st.lists(html_tree, max_size=2).map("".join),
    st.lists(html_tree, min_size=1, max_size=6).map("".join),
)


def check(data: str | bytes, output: str = "json") -> None:
    try:
        out = blockdex.extract(data, output=output)
    except BlockdexError as exc:
        assert str(exc).strip()
        return
    assert isinstance(out, str)
    out.encode("utf-8")  # raises on lone surrogates
    if output != "json":
        return
    record = json.loads(out)
    n = record["n_blocks"]
    for a, b in record["intervals"]:
        assert 0 <= a <= b < n
    for block in record.get("blocks", []):
        assert 0 <= block["index"] < n


@SETTINGS
@given(st.binary(max_size=4096))
def test_arbitrary_bytes(data: bytes) -> None:
    check(data)


@SETTINGS
@given(st.text(max_size=2048))
def test_arbitrary_text(data: str) -> None:
    check(data)


@SETTINGS
@given(html_page)
def test_generated_html(page: str) -> None:
    check(page)


@settings(SETTINGS, max_examples=max(EXAMPLES // 3, 1))
@given(html_page, st.sampled_from(["markdown", "text", "html"]))
def test_generated_html_other_formats(page: str, output: str) -> None:
    check(page, output)


@settings(SETTINGS, max_examples=max(EXAMPLES // 3, 1))
@given(html_page, st.sampled_from(["utf-8", "utf-16", "cp1252", "shift_jis", "gb18030"]))
def test_generated_html_encoded(page: str, encoding: str) -> None:
    check(page.encode(encoding, errors="replace"))


@settings(SETTINGS, max_examples=max(EXAMPLES // 3, 1))
@given(html_page, st.binary(min_size=1, max_size=64), st.integers(min_value=0))
def test_generated_html_corrupted(page: str, noise: bytes, where: int) -> None:
    data = page.encode()
    k = where % (len(data) + 1)
    check(data[:k] + noise + data[k:])


CLASSIC = ["crunch", "danag", "vsse", "vsse-records", "htmlrag"]


@settings(SETTINGS, max_examples=max(EXAMPLES // 5, 1))
@given(html_page, st.sampled_from(CLASSIC))
def test_classic_methods_on_generated_html(page: str, method: str) -> None:
    """The classic methods walk the tree themselves: they meet every node kind the parser makes
    (comments, processing instructions such as a leaked ``<?php …?>``, CDATA as bogus comments)."""
    from blockdex.baselines import get_baseline

    try:
        result = get_baseline(method).run(page)
    except BlockdexError as exc:
        assert str(exc).strip()
        return
    assert isinstance(result.text, str)
    result.text.encode("utf-8")


@pytest.mark.parametrize("method", CLASSIC)
def test_classic_methods_survive_leaked_php(method: str) -> None:
    from blockdex.baselines import get_baseline

    page = (
        "<html><body><?php head(); ?><div><h1>Leaked PHP</h1><ul><li><?php a(); ?></li>"
        "<li>An item <?php b(); ?> with text.</li></ul><p>A paragraph of the page's text, long "
        "enough to be content.</p></div></body></html>"
    )
    result = get_baseline(method).run(page)
    if method != "vsse-records":
        assert "paragraph of the page" in result.text
