"""The Markdown writer that works from the blocks (blockdex.markdown)."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from pathlib import Path

import pytest

from blockdex import segment
from blockdex.assemble import assemble_html
from blockdex.markdown import MAX_NESTING, blocks_markdown, inline_markdown
from blockdex.page import Selection
from blockdex.render import html_to_markdown

DATA = Path(__file__).parent / "data"


def md_all(html: str, images: bool = False) -> str:
    page = segment(html)
    if images:
        page = dataclasses.replace(page, images=True)
    return blocks_markdown(page, Selection.from_indices([b.index for b in page.blocks]))


@pytest.mark.parametrize(
    ("html", "expected"),
    [
        ("plain &amp; &lt;simple&gt;", "plain & <simple>"),
        ("a <b>bold</b> and <i>it</i>", "a **bold** and *it*"),
        ("a<b> spaced </b>word", "a **spaced** word"),  # marks hug the text, not its spaces
        ("x<b></b>y<i> </i>z", "xy z"),  # empty emphasis is dropped
        ("<i>New York Times</i><i>.</i>", "*New York Times.*"),  # adjacent runs are one
        ("<i><i>twice</i></i>", "*twice*"),  # nested tags of one kind count once
        ("<u>under</u>lined", "underlined"),
        ("run <code>a*b</code>", "run `a*b`"),
        ("<code>a`b</code>", "`` a`b ``"),
        ("<code>one<br>two</code>", "`one`  \n`two`"),
        ("line<br>next", "line  \nnext"),
        ("<b>head<br> </b>tail", "**head**  \n tail"),  # the mark closes before the break
        ("<b>never closed", "**never closed**"),
    ],
)
def test_inline_markdown(html: str, expected: str) -> None:
    assert inline_markdown(html) == expected


def test_line_starts_that_markdown_would_read_as_markup_are_escaped() -> None:
    md = md_all(
        "<p>1. not a list</p><p># not a heading</p><p>- not an item</p><p>&gt; not a quote</p>"
        "<p>802.11 is fine</p><h2>Section #</h2>"
    )
    lines = md.splitlines()
    assert "1\\. not a list" in lines and "\\# not a heading" in lines
    assert "\\- not an item" in lines and "\\> not a quote" in lines
    assert "802.11 is fine" in lines
    assert "## Section \\#" in lines  # not a closing sequence


def test_lists_nest_and_number() -> None:
    md = md_all(
        "<ul><li>one</li><li>two<ul><li>inner</li></ul></li></ul>"
        "<ol><li>first</li><li>second<ol><li>deep</li></ol></li></ol>"
    )
    assert "- one\n- two\n  - inner" in md
    assert "1. first\n2. second\n   1. deep" in md


def test_quote_code_and_headings() -> None:
    md = md_all(
        "<h3>Title <b>bold</b></h3><blockquote><p>first</p><p>second</p></blockquote>"
        '<pre><code class="language-py">x = 1\n\ny = 2</code></pre>'
    )
    assert "### Title **bold**" in md
    assert "> first\n>\n> second" in md
    assert "```py\nx = 1\n\ny = 2\n```" in md


def test_tables_get_a_header_row_and_escaped_pipes() -> None:
    md = md_all(
        "<table><tr><th>Name</th><th>Value</th></tr><tr><td>a|b</td><td>1</td></tr>"
        "<tr><td>only one</td></tr><tr><td>split<br>cell</td><td>2</td></tr></table>"
    )
    rows = md.strip().splitlines()
    assert rows[:2] == ["| Name | Value |", "| --- | --- |"]
    assert "| a\\|b | 1 |" in rows
    assert "| only one | |" in rows  # short rows are padded to the table's width
    assert "| split cell | 2 |" in rows


def test_an_image_stays_in_its_paragraph() -> None:
    html = '<p>Before the picture <img src="/a b.png" alt="A  cat"> and after.</p>'
    md = md_all(html, images=True)
    assert "![A cat](</a b.png>)" in md
    assert md.count("\n") == 1  # one paragraph
    assert md_all(html) == "Before the picture and after.\n"  # without images: left out


def test_deep_nesting_is_flattened_not_a_crash() -> None:
    depth = MAX_NESTING * 20
    md = md_all("<blockquote>" * depth + "<p>deep text</p>" + "</blockquote>" * depth)
    assert "deep text" in md


def test_empty_selection_gives_empty_markdown() -> None:
    page = segment("<p>Some text</p>")
    assert blocks_markdown(page, Selection()) == ""


def _words(md: str) -> Counter[str]:
    # images: html-to-markdown drops some (an image outside any paragraph), and it
    # percent-decodes their addresses
    md = re.sub(r"!\[[^\]]*\]\([^)]*\)", " ", md)
    return Counter(re.findall(r"\w+", md))


@pytest.mark.parametrize(
    "name",
    [
        "article.html",
        "sections.html",
        *[f"pages/{p.name}" for p in sorted((DATA / "pages").glob("*.html"))],
    ],
)
def test_same_words_as_converting_the_assembled_html(name: str) -> None:
    """The writer says what html-to-markdown says of the assembled HTML: the same words, each
    as often (the Markdown around them may differ)."""
    page = dataclasses.replace(segment((DATA / name).read_text(encoding="utf-8")), images=True)
    sel = Selection.from_indices([b.index for b in page.blocks])
    assert _words(blocks_markdown(page, sel)) == _words(html_to_markdown(assemble_html(page, sel)))


TABLES_MARKDOWN = """\
# Scores with spans

The table below compares two methods on two measures, with a header over two rows.

| Method | Score: Precision | Score: Recall |
| --- | --- | --- |
| blockdex | 0.95 | 0.97 |
| readability | 0.91 | 0.96 |

Rows that share a group name span it down the first column.

| Group | Item | Count |
| --- | --- | --- |
| Fruit | Apple | 3 |
| Fruit | Pear | 5 |
| Total | | 8 |

A one-column layout table is written as lines:

First line of a layout table

Second line of it

A table nested in a cell is flattened into the cell.

| Model | Dimensions | Price |
| --- | --- | --- |
| Alpha | Boxed: Size · Weight / 10 cm · 2 kg with strap | 5 EUR |
| Beta | 12 cm · 3 kg | 7 EUR |

Tables set side by side by an outer table stay tables.

| January | Rain |
| --- | --- |
| Week 1 | 12 mm |

| February | Rain |
| --- | --- |
| Week 1 | 9 mm |
"""


def test_tables_with_spans_become_a_grid_with_one_header_row() -> None:
    from blockdex.extract import Extractor

    html = (Path(__file__).parent / "data" / "fidelity" / "tables.html").read_text()
    assert Extractor("all").extract(html) == TABLES_MARKDOWN
    # HTML output puts a nested table back inside its cell
    assert (
        "<tr><td>Beta</td><td><table><tr><td>12 cm</td><td>3 kg</td></tr></table></td>"
        "<td>7 EUR</td></tr>" in Extractor("all").extract(html, output="html")
    )


def test_cell_spans_are_read_as_html_reads_them() -> None:
    from blockdex.segment import MAX_SPAN, cell_open, cell_span

    assert [cell_span(v) for v in (None, "", "2", " 3", "4x", "0", "-1", "x", "\u0663")] == [
        1, 1, 2, 3, 4, 1, 1, 1, 1,
    ]  # fmt: skip
    assert cell_span("100000") == MAX_SPAN
    assert cell_open("th", "2", None) == "<th colspan=2>"
    assert cell_open("td", "1", "3") == "<td rowspan=3>"
    assert cell_open("td", None, None) == "<td>"


LINKS_MARKDOWN = """\
[Home](https://docs.example.org/)

# Links kept

Read the [installation notes](https://docs.example.org/guide/install.html) first, then **the \
[reference](https://cdn.example.net/ref)** and the [other site](https://other.example.com/x?a=1&b=2).

A fragment link, a script link, an empty link and a bare anchor stay plain text, while \
[an odd address](<https://docs.example.org/faq (old).html>) is kept.
"""


def test_links_are_kept_absolute_when_asked() -> None:
    from blockdex.extract import ExtractConfig, Extractor
    from blockdex.segment import SegmentConfig

    html = (Path(__file__).parent / "data" / "fidelity" / "links.html").read_text()
    linked = Extractor("all", config=ExtractConfig(segment=SegmentConfig(links=True)))
    # <base href> wins over the page's URL; the base itself is absolute here
    assert linked.extract(html, url="https://elsewhere.example/p") == LINKS_MARKDOWN
    plain = Extractor("all").extract(html)
    assert "](" not in plain and "Read the installation notes first" in plain
    # the text output and the blocks' text are the same with and without links
    assert linked.extract(html, output="text") == Extractor("all").extract(html, output="text")


def test_relative_links_resolve_against_the_page_url_without_a_base() -> None:
    import blockdex

    html = "<h1>T</h1><p>" + "Words of a paragraph. " * 12 + "<a href='../b/c'>next</a></p>"
    out = blockdex.extract(html, url="https://example.org/a/x/page", links=True)
    assert "[next](https://example.org/a/b/c)" in out
    assert "[next](../b/c)" in blockdex.extract(html, links=True)  # no address: as written


SPLIT_LINKS_HTML = (
    '<h1>Harbour notes</h1><p>The tide tables are <a href="/tides">published each week</a> by the'
    ' port. Pilots read them <b>before</b> every crossing. <a href="/pilots">The pilots\' guide'
    ' says more. It covers night crossings too.</a> Storm warnings come from <a href="https://'
    'met.example/">the met office</a> & the coastguard. A <a href="javascript:void(0)">script'
    " link</a> stays text.</p>"
)
SPLIT_LINKS_MARKDOWN = """\
# Harbour notes

The tide tables are [published each week](https://port.example/tides) by the port. Pilots read \
them before every crossing. [The pilots' guide says more. It covers night crossings \
too.](https://port.example/pilots) Storm warnings come from [the met office](https://met.example/) \
& the coastguard. A script link stays text.
"""


def test_links_survive_the_split_of_a_long_block() -> None:
    from blockdex.extract import ExtractConfig, Extractor
    from blockdex.segment import SegmentConfig

    # a block budget of 12 tokens cuts the paragraph into sentences, one link in two parts
    cfg = ExtractConfig(segment=SegmentConfig(links=True, max_block_tokens=12))
    ex = Extractor("all", config=cfg)
    url = "https://port.example/notes/"
    parts = [b.html for b in ex.segment(SPLIT_LINKS_HTML, url=url).blocks if b.split]
    assert parts == [
        'The tide tables are <a href="https://port.example/tides">published each week</a> by the'
        " port.",
        "Pilots read them before every crossing.",
        '<a href="https://port.example/pilots">The pilots\' guide says more.</a>',
        '<a href="https://port.example/pilots">It covers night crossings too.</a>',
        'Storm warnings come from <a href="https://met.example/">the met office</a> &amp; the'
        " coastguard.",
        "A script link stays text.",
    ]  # each part holds the links whose text lies in it
    for block in ex.segment(SPLIT_LINKS_HTML, url=url).blocks:  # and says what its text says
        assert inline_markdown(re.sub(r"<a [^>]*>|</a>", "", block.html)) == block.text
    assert ex.extract(SPLIT_LINKS_HTML, url=url) == SPLIT_LINKS_MARKDOWN
    # without links the parts are plain text, as before
    plain = Extractor("all", config=ExtractConfig(segment=SegmentConfig(max_block_tokens=12)))
    assert "](" not in plain.extract(SPLIT_LINKS_HTML, url=url)


def test_links_survive_the_split_at_the_default_block_budget() -> None:
    import blockdex

    filler = "This sentence pads the paragraph with plain words about tides and harbours. "
    html = f'<h1>T</h1><p>{filler * 8}Read <a href="/a">the first guide</a> now. {filler * 8}</p>'
    page = blockdex.segment(html)
    assert len([b for b in page.blocks if b.split]) > 1  # the paragraph is split
    out = blockdex.extract(html, url="https://ex.org/p/", links=True, predictor="all")
    assert "Read [the first guide](https://ex.org/a) now." in out


def test_inline_links_with_emphasis_and_without_text() -> None:
    assert inline_markdown('<b><a href="u">t</a></b>') == "**[t](u)**"
    assert inline_markdown('see <a href="u"> spaced </a>now') == "see [spaced](u) now"
    assert inline_markdown('<a href="u"></a>x') == "x"  # nothing to click: dropped
    assert inline_markdown('<a href="u">open to the end') == "[open to the end](u)"
    assert inline_markdown("a</a>b") == "ab"  # a close without an open: ignored
    assert inline_markdown('<code><a href="u">c</a></code>') == "`c`"


IMAGES_MARKDOWN = """\
# Images found

A plain image with its address as written.

![A plain image](https://site.example/img/plain.png)

A lazy image whose src is a placeholder.

![A lazy image](https://site.example/img/lazy.jpg)

An image known only by its srcset.

![A responsive image](https://site.example/img/large.jpg)

A picture element with sources.

![A picture](https://site.example/img/pic@2x.webp)

A tracking pixel is no image.

A figure whose only caption is its figcaption.

![Sales by year](https://site.example/img/chart.png)

An image in a table cell.

| Country | Flag |
| --- | --- |
| Germany | ![Black, red and gold](https://site.example/flags/de.png) |
"""

# Without --images: images left out, but a figure's caption and a cell's image stay as text.
IMAGES_LEFT_OUT_MARKDOWN = """\
# Images found

A plain image with its address as written.

A lazy image whose src is a placeholder.

An image known only by its srcset.

A picture element with sources.

A tracking pixel is no image.

A figure whose only caption is its figcaption.

Sales by year

An image in a table cell.

| Country | Flag |
| --- | --- |
| Germany | Black, red and gold |
"""


def test_image_addresses_lazy_srcset_absolute_and_no_pixels() -> None:
    import blockdex
    from blockdex.extract import ExtractConfig, Extractor
    from blockdex.segment import SegmentConfig

    html = (Path(__file__).parent / "data" / "fidelity" / "images.html").read_text()
    url = "https://site.example/post/1"
    with_images = Extractor("all", config=ExtractConfig(segment=SegmentConfig(images=True)))
    assert with_images.extract(html, url=url) == IMAGES_MARKDOWN
    assert blockdex.extract(html, url=url, predictor="all", images=True) == IMAGES_MARKDOWN
    assert Extractor("all").extract(html, url=url) == IMAGES_LEFT_OUT_MARKDOWN
    # the blocks, their text and the choice are the same with and without images
    assert with_images.extract(html, url=url, output="text") == Extractor("all").extract(
        html, url=url, output="text"
    )


def test_image_source_rules() -> None:
    from blockdex.segment import image_source

    assert image_source({"src": "a.png"}, [], "") == "a.png"  # no base: as written
    assert image_source({"src": "/blank.gif", "data-original": "b.jpg"}, [], "http://x/") == (
        "http://x/b.jpg"
    )
    assert image_source({"srcset": "s.jpg 1x, l.jpg 2x"}, [], "") == "l.jpg"
    assert image_source({}, ["p.webp 400w, q.webp 800w"], "") == "q.webp"
    assert image_source({"src": "t.gif", "width": "1", "height": "1"}, [], "") is None
    assert image_source({"src": "data:image/png;base64,AA=="}, [], "") == ""
