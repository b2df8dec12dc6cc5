"""Assembly and the four output formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blockdex import extract, segment
from blockdex.errors import UnsupportedFormat
from blockdex.extract import Extractor
from blockdex.page import Selection
from blockdex.predict.basic import OraclePredictor
from blockdex.render import render

DATA = Path(__file__).parent / "data"

PAGE = """<html><head><title>Doc page</title></head><body>
<nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>
<h1>Install</h1><p>Run the <code>pip</code> command:</p>
<pre><code class="language-bash">pip install blockdex
blockdex --help</code></pre>
<h2>Options</h2>
<ul><li>fast mode</li><li>slow mode</li><li>other mode</li></ul>
<table><tr><th>Name</th><th>Default</th></tr><tr><td>format</td><td>markdown</td></tr>
<tr><td>predictor</td><td>content</td></tr></table>
<footer>Copyright 2026</footer></body></html>"""


def by_text(page, *needles: str) -> list[int]:
    return [b.index for b in page.blocks if any(n in b.text for n in needles)]


def test_markdown_has_headings_fenced_code_lists_and_pipe_tables() -> None:
    md = extract(PAGE, output="markdown", predictor="all")
    assert "# Install" in md and "## Options" in md
    assert "```bash" in md and "pip install blockdex\nblockdex --help" in md
    assert "- fast mode" in md
    rows = [" ".join(line.split()) for line in md.splitlines()]
    assert "| Name | Default |" in rows and "| format | markdown |" in rows


def test_selected_list_items_get_their_list_back() -> None:
    page = segment(PAGE)
    sel = Selection.from_indices(by_text(page, "slow mode", "other mode"))
    html = render(page, sel, "html")
    assert "<ul><li>slow mode</li><li>other mode</li></ul>" in html
    assert "fast mode" not in html
    assert render(page, sel, "markdown").strip() == "# Doc page\n\n- slow mode\n- other mode"


def test_selected_rows_get_their_table_back() -> None:
    page = segment(PAGE)
    sel = Selection.from_indices(by_text(page, "predictor"))
    md = render(page, sel, "markdown")
    assert "| predictor | content |" in [" ".join(line.split()) for line in md.splitlines()]
    assert "<table>" in render(page, sel, "html")


def test_html_output_is_a_document_with_the_title() -> None:
    html = extract(PAGE, output="html", predictor="all")
    assert html.startswith("<!DOCTYPE html><html><head>")
    assert "<title>Doc page</title>" in html and html.rstrip().endswith("</html>")


def test_text_output_has_no_markup() -> None:
    text = extract(PAGE, output="text", predictor="all")
    assert "<" not in text and "Install" in text and "Copyright 2026" in text


def test_a_run_for_text_only_builds_no_markup_and_gives_the_same_text() -> None:
    ex = Extractor()
    full = ex.run(PAGE)
    text_only = ex.run(PAGE, output="text")
    assert text_only.text_only and not full.text_only
    assert text_only.text == full.text == ex.extract(PAGE, output="text")
    assert text_only.selection == full.selection
    assert {b.html for b in text_only.page.blocks} == {""}
    assert [b.text for b in text_only.page.blocks] == [b.text for b in full.page.blocks]
    for fmt in ("markdown", "html", "json"):
        with pytest.raises(UnsupportedFormat, match="text output only"):
            text_only.render(fmt)
    with pytest.raises(UnsupportedFormat):
        _ = text_only.markdown
    with pytest.raises(UnsupportedFormat, match="unknown output format"):
        text_only.render("xml")


class _ReadsHtml:
    """A user's predictor that reads the blocks' HTML (no ``reads_markup``): it keeps the
    blocks whose HTML holds inline code."""

    name = "reads-html"

    def predict(self, page, query=None):
        return Selection.from_indices(
            [b.index for b in page.blocks if "<code>" in b.html and b.tag != "pre"]
        )


def test_a_predictor_that_may_read_markup_gets_it_in_a_text_run() -> None:
    ex = Extractor(_ReadsHtml())
    result = ex.run(PAGE, output="text")
    assert not result.text_only
    assert result.text == "Run the pip command:\n"
    assert ex.extract(PAGE, output="text") == result.text


def test_json_output_fields() -> None:
    page = segment(PAGE)
    keep = by_text(page, "Install", "pip install")
    result = Extractor(OraclePredictor(indices=keep)).run(PAGE)
    data = json.loads(result.render("json"))
    assert data["title"] == "Doc page"
    assert [b["index"] for b in data["blocks"]] == keep  # the selected blocks, with their text
    assert data["intervals"] == [list(iv) for iv in Selection.from_indices(keep).intervals]
    assert "pip install blockdex" in data["markdown"]
    assert data["predictor"] == "oracle"


def test_order_is_kept_and_unselected_blocks_are_absent() -> None:
    page = segment(PAGE)
    keep = by_text(page, "Copyright", "Install")
    text = render(page, Selection.from_indices(keep), "text")
    assert text.index("Install") < text.index("Copyright")
    assert "Home" not in text and "fast mode" not in text


def test_empty_selection_renders_empty_text() -> None:
    page = segment(PAGE)
    assert render(page, Selection(), "text").strip() == ""


def test_a_selected_row_brings_its_table_header_back() -> None:
    page = segment(
        "<body><p>Intro</p><table><tr><th>Year</th><th>Growth</th></tr>"
        "<tr><td>2023</td><td>3.9</td></tr><tr><td>2024</td><td>4.1</td></tr></table></body>"
    )
    row = by_text(page, "2024")
    md = render(page, Selection.from_indices(row), "markdown")
    rows = [" ".join(line.split()) for line in md.splitlines() if line.startswith("|")]
    assert rows[0] == "| Year | Growth |" and rows[-1] == "| 2024 | 4.1 |"
    assert "2023" not in md
    assert render(page, Selection.from_indices(row), "text") == "2024 | 4.1\n"  # text: as selected


def test_markdown_converter_built_once_matches_the_public_api() -> None:
    from html_to_markdown import convert

    from blockdex.render import _markdown_converter, markdown_options

    options = markdown_options()
    pages = [PAGE] + [p.read_text(encoding="utf-8") for p in sorted(DATA.glob("pages/*.html"))]
    assert len(pages) > 3
    for html in pages:
        assert _markdown_converter()(html) == convert(html, options).content


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 2)), max_size=8),
    st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 2)), max_size=8),
)
def test_common_prefix_is_the_length_the_lists_share(
    a: list[tuple[str, int]], b: list[tuple[str, int]]
) -> None:
    from blockdex.assemble import _common_prefix

    k = 0
    while k < min(len(a), len(b)) and a[k] == b[k]:
        k += 1
    assert _common_prefix(a, b) == k
    assert _common_prefix(a, a + b) == len(a)  # one holds the other
