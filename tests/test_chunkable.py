"""Markdown a RAG pipeline can chunk (issue 43): each rule on a small hand-made page, in every
output format it touches."""

from __future__ import annotations

import json

import pytest

from blockdex.extract import ExtractConfig, Extractor
from blockdex.predict.basic import OraclePredictor
from blockdex.segment import SegmentConfig


def outputs(html: str, extractor: Extractor | None = None, **run: object) -> dict[str, str]:
    """The page in every format, every block kept unless ``extractor`` says otherwise."""
    result = (extractor or Extractor("all")).run(html, **run)  # type: ignore[arg-type]
    return {fmt: result.render(fmt) for fmt in ("markdown", "text", "html", "json")}


def small_blocks(tokens: int = 30) -> Extractor:
    """An extractor whose blocks are split past ``tokens`` tokens (200 by default)."""
    return Extractor("all", config=ExtractConfig(segment=SegmentConfig(max_block_tokens=tokens)))


# -- 1. breaks survive splitting -----------------------------------------------------------------

_PARAGRAPHS = [
    " ".join(f"Sentence {s} of paragraph {p} says a few words." for s in range(4)) for p in range(3)
]
BR_ARTICLE = (
    "<html><head><title>Breaks</title></head><body><article><p>"
    + "<br /><br />".join(_PARAGRAPHS)
    + "<br>A line after a single break.</p></article></body></html>"
)


def test_breaks_survive_a_long_paragraph_split_by_sentence() -> None:
    out = outputs(BR_ARTICLE, small_blocks())
    md = out["markdown"]
    # each <br><br> is a paragraph break, the single <br> a line break, wherever the split fell
    assert md == (
        f"# Breaks\n\n{_PARAGRAPHS[0]}\n\n{_PARAGRAPHS[1]}\n\n{_PARAGRAPHS[2]}  \n"
        "A line after a single break.\n"
    )
    assert out["text"] == "\n".join([*_PARAGRAPHS, "A line after a single break."]) + "\n"
    html = out["html"]
    assert html.count("<br><br>") == 2 and "<br> A line after" in html
    record = json.loads(out["json"])
    assert len(record["blocks"]) > 3  # it was split
    texts = "".join(b["text"] for b in record["blocks"])
    assert texts.count("\n\n") == 2
    assert record["markdown"] == md


def test_a_paragraph_break_is_a_sentence_boundary() -> None:
    # no full stop before the break: the split still falls there, not mid-sentence
    html = "<p>" + "word " * 20 + "no stop here<br><br>" + "Next paragraph starts. " * 2 + "</p>"
    record = json.loads(outputs(html, small_blocks(25))["json"])
    first = record["blocks"][0]["text"]
    assert first.endswith("no stop here\n\n")


def test_unsplit_blocks_keep_their_breaks_in_every_format() -> None:
    html = "<div><p>Name: Ada<br>Born: 1815<br><br><br>Notes follow.</p></div>"
    out = outputs(html)
    assert out["markdown"] == "Name: Ada  \nBorn: 1815\n\nNotes follow.\n"
    assert out["text"] == "Name: Ada\nBorn: 1815\nNotes follow.\n"
    assert "Name: Ada<br>Born: 1815<br><br><br>Notes follow." in out["html"]
    assert json.loads(out["json"])["blocks"][0]["text"] == "Name: Ada\nBorn: 1815\n\nNotes follow."


def test_headings_and_table_rows_stay_on_one_line() -> None:
    html = "<h2>Title<br>subtitle</h2><table><tr><td>a<br>b</td><td>c</td></tr></table>"
    out = outputs(html)
    assert out["text"] == "Title subtitle\na b | c\n"
    assert out["markdown"].startswith("## Title subtitle\n")


# -- 3. code fences with their language ----------------------------------------------------------

CODE_PAGE = (
    '<div class="highlight-python notranslate"><div class="highlight"><pre><span></span>'
    '<span class="kn">import</span> flask</pre></div></div>'
    '<pre class="brush: js; gutter: false">var x = 1;</pre>'
    '<pre data-lang="ruby">puts 1</pre>'
    '<pre><code class="lang-go">fmt.Println()</code></pre>'
    '<pre><code class="language-Rust">fn main() {}</code></pre>'
    '<div class="highlight-default"><pre>no_language()</pre></div>'
)


def test_code_fences_carry_the_language_the_page_declares() -> None:
    out = outputs(CODE_PAGE)
    fences = [line for line in out["markdown"].splitlines() if line.startswith("```")]
    assert fences == [
        "```python", "```", "```js", "```", "```ruby", "```", "```go", "```", "```rust", "```",
        "```", "```",
    ]  # fmt: skip
    html = out["html"]
    for lang in ("python", "js", "ruby", "go", "rust"):
        assert f'<code class="language-{lang}">' in html
    assert "<pre><code>no_language()</code></pre>" in html
    assert out["text"].splitlines()[0] == "import flask"  # text carries no fences
    assert json.loads(out["json"])["markdown"] == out["markdown"]


def test_a_long_code_block_keeps_its_language_in_every_part() -> None:
    code = "\n".join(f"value_{k} = compute({k}, {k + 1})" for k in range(30))
    html = f'<div class="highlight-python"><div class="highlight"><pre>{code}</pre></div></div>'
    out = outputs(html, small_blocks())
    assert len(json.loads(out["json"])["blocks"]) > 1  # split into parts
    assert out["markdown"] == f"```python\n{code}\n```\n"
    assert out["html"].count('<code class="language-python">') == 1


# -- 2. headings without permalink anchors -------------------------------------------------------

ANCHOR_PAGE = (
    "<html><head><title>Docs</title></head><body><article>"
    '<section id="a-minimal-application"><h2>A Minimal Application'
    '<a class="headerlink" href="#a-minimal-application" title="Link to this heading">¶</a></h2>'
    "<p>Text one.</p></section>"
    '<h2 id="routing">Routing <a href="#routing">#</a></h2><p>Text two.</p>'
    '<h3 id="x">Variables<a class="hash-link" href="#x" aria-label="Direct link">\u200b</a></h3>'
    '<h3 id="s">Sessions <a href="#s">Permalink</a></h3>'
    '<h3 id="k">Keep <a href="#k">the words</a></h3>'  # words, not a permalink
    '<h3>Footnote <a href="#fn1">*</a></h3>'  # a glyph, but to another element
    '<dl><dt id="f">flask.run()<a class="headerlink" href="#f">¶</a></dt><dd>Runs.</dd></dl>'
    "</article></body></html>"
)


def test_permalink_anchors_leave_headings_bare() -> None:
    out = outputs(ANCHOR_PAGE)
    md = out["markdown"]
    for heading in (
        "## A Minimal Application",
        "## Routing",
        "### Variables",
        "### Sessions",
        "### Keep the words",
        "### Footnote *",
    ):
        assert heading in md.splitlines(), heading
    assert "¶" not in md and "¶" not in out["text"] and "¶" not in out["html"]
    assert "flask.run()\n" in out["text"] and "Permalink" not in out["text"]
    assert "<h2>A Minimal Application</h2>" in out["html"]
    record = json.loads(out["json"])
    titles = [u["title"] for u in record["units"] if u["kind"] == "section"]
    assert "A Minimal Application" in titles and "Routing" in titles


# -- 4. no hover cards -----------------------------------------------------------------------------

CARD_PAGE = (
    "<html><head><title>Cards</title></head><body><article><p>South Dakota Gov. "
    '<span class="rollover-people"><a class="rollover-people-link" href="/people/kristi-noem">'
    'Kristi Noem</a><span class="rollover-people-block"><span class="rollover-block"><span>'
    '<img src="/n.jpg" width="100" height="100" alt="">'
    '<a class="name" href="/people/kristi-noem">Kristi Lynn Noem</a>'
    '<a class="people-articles" href="/news/1">South Dakota governor doubles down</a> '
    '<a class="more" href="/people/kristi-noem">MORE<span></span></a></span></span></span></span>'
    " (R) is defending the campaign.</p>"
    '<p>A <span class="tooltip">term<span class="tooltiptext">What the term means.</span></span>'
    ' and <a class="glossary-tooltip" title="A tip" href="/t">containers</a>,'
    ' <span class="c-hovercard">Card text on hover</span> and'
    ' <span class="popover"><span class="popover-content">Popover body</span></span> end.</p>'
    '<p>Served by <span class="tooltip" data-tooltip="we are in Europe">(GMT +1)</span>'
    ' for <span class="servings-adjustable-tooltip">12</span> people.</p>'
    '<div class="ss-tooltip"><button class="ss-tooltip-label">Ada Lovelace</button></div>'
    "</article></body></html>"
)


def test_hover_cards_go_and_the_names_stay() -> None:
    out = outputs(CARD_PAGE)
    text = out["text"]
    assert text == (
        "South Dakota Gov. Kristi Noem (R) is defending the campaign.\n"
        "A term and containers, and end.\n"
        "Served by (GMT +1) for 12 people.\n"
        "Ada Lovelace\n"
    )
    assert out["markdown"] == "# Cards\n\n" + text.replace("\n", "\n\n").rstrip("\n") + "\n"
    for gone in ("Kristi Lynn Noem", "MORE", "What the term", "Card text", "Popover body"):
        assert gone not in out["html"] and gone not in out["json"]


# -- 5. the title is the page's headline -----------------------------------------------------------


def _paragraphs_only(html: str) -> Extractor:
    """An extractor that keeps the page's paragraphs and nothing else (no heading)."""
    page = Extractor("all").segment(html)
    return Extractor(OraclePredictor(indices=[b.index for b in page.blocks if b.tag == "p"]))


TITLED_PAGE = (
    "<html><head><title>{title}</title>{meta}</head><body>"
    '<header><h1 class="logo">Harbour Notes</h1></header>'
    "<article>{headline}<p>Spring tides are higher than neap tides, twice a month.</p>"
    "</article></body></html>"
)


@pytest.mark.parametrize(
    ("title", "meta", "headline", "url", "expected"),
    [
        # the primary article's h1, not the <title> with the site's name, nor the logo's h1
        (
            "Tide tables for small harbours - Harbour Notes",
            "",
            "<h1>Tide tables for small harbours</h1>",
            None,
            "Tide tables for small harbours",
        ),
        (
            "Harbour Notes - Tide tables for small harbours",  # holds the logo's h1 too
            "",
            "<h1>Tide tables for small harbours, explained</h1>",
            None,
            "Tide tables for small harbours, explained",
        ),
        # no h1 names the page: the title without the site's name (og:site_name, the host, or
        # the shorter part at a separator)
        (
            "Harbour Notes | Tide tables for small harbours",
            '<meta property="og:site_name" content="Harbour Notes">',
            "",
            None,
            "Tide tables for small harbours",
        ),
        (
            "Tide tables for small harbours – Harbour Notes – Sailing",
            "",
            "",
            "https://harbournotes.example/tides",
            "Tide tables for small harbours – Harbour Notes – Sailing",  # no site piece at the end
        ),
        (
            "Tide tables: how they work — HarbourNotes",
            "",
            "",
            "https://www.harbournotes.example/tides",
            "Tide tables: how they work",
        ),
        ("Tide tables for small harbours - Notes", "", "", None, "Tide tables for small harbours"),
        # an h1 that says a piece of the title whole (once its permalink is gone)
        (
            "Quickstart — Flask Documentation (3.1.x)",
            "",
            '<h1>Quickstart<a class="headerlink" href="#q">¶</a></h1>',
            None,
            "Quickstart",
        ),
        ("Tide tables", "", "", None, "Tide tables"),
    ],
)
def test_the_markdown_title_is_the_page_headline(
    title: str, meta: str, headline: str, url: str | None, expected: str
) -> None:
    html = TITLED_PAGE.format(title=title, meta=meta, headline=headline)
    out = outputs(html, _paragraphs_only(html), url=url)
    assert out["markdown"].splitlines()[0] == f"# {expected}"
    assert json.loads(out["json"])["markdown"] == out["markdown"]
    assert out["text"] == "Spring tides are higher than neap tides, twice a month.\n"


def test_no_title_line_when_the_headline_is_kept() -> None:
    html = TITLED_PAGE.format(
        title="Tide tables for small harbours - Harbour Notes",
        meta="",
        headline="<h1>Tide tables for small harbours</h1>",
    )
    md = outputs(html)["markdown"]
    assert md.startswith("# Harbour Notes\n\n# Tide tables for small harbours\n\nSpring tides")


# -- 6. one image per position -------------------------------------------------------------------

IMAGE_PAGE = (
    "<html><head><title>Harbour</title></head><body><article>"
    "<p>The harbour is busiest at dawn, when the boats go out.</p>"
    '<div class="hero"><img class="desktop" src="/img/harbour-1200x800.jpg" alt="The harbour" '
    'width="1200"><img class="mobile" src="/img/harbour-400x300.jpg" alt="The harbour"></div>'
    '<p>Tides.</p><div><img src="/img/sm_tide.jpg" alt="Tide chart">'
    '<img src="/img/lg_tide.jpg" alt="Tide chart"></div>'
    '<p>Rated <img src="/star.png" alt="star"><img src="/star.png" alt="star"> by readers.</p>'
    '<div><img src="/boats/one.jpg" alt="Boats"><img src="/boats/two.jpg" alt="Boats"></div>'
    "</article></body></html>"
)


def test_an_image_and_its_variants_are_written_once_with_the_largest_source() -> None:
    images = Extractor("all", config=ExtractConfig(segment=SegmentConfig(images=True)))
    url = "https://harbour.example/"
    out = outputs(IMAGE_PAGE, images, url=url)
    md = out["markdown"]
    assert md.count("![The harbour](") == 1
    assert "![The harbour](https://harbour.example/img/harbour-1200x800.jpg)" in md
    assert md.count("![Tide chart](") == 1 and "lg_tide.jpg" in md and "sm_tide.jpg" not in md
    assert md.count("![star](https://harbour.example/star.png)") == 2  # one image, twice
    assert "boats/one.jpg" in md and "boats/two.jpg" in md  # two pictures, one caption
    html = out["html"]
    assert html.count('alt="The harbour"') == 1 and "harbour-400x300" not in html
    assert html.count('alt="Tide chart"') == 1 and "lg_tide.jpg" in html
    assert json.loads(out["json"])["markdown"] == md
    # text output and the blocks are the page's: each image's caption, as before
    assert out["text"].count("The harbour\n") == 2


# -- 7. a query's answer under its headings -----------------------------------------------------

MOVERS_PAGE = (
    "<html><head><title>Top movers in NYC | Movers Guide</title></head><body><article>"
    "<h1>Top movers in NYC</h1><p>We rated the movers we hired ourselves.</p>"
    "<h2>1. Red Van</h2><p>Red Van moves flats.</p><p><b>Average Rating: 4.1</b></p>"
    "<h2>3. Blue Moving</h2><p>Blue Moving is family owned.</p>"
    "<ul><li>Trucks: 12</li><li><b>Average Rating: 4.8</b></li></ul>"
    "<h3>Prices</h3><p>From $400 a room.</p>"
    "</article></body></html>"
)


def _answer(keep: list[str], query: str | None = "What is the average rating of Blue Moving?"):
    """The page run with a predictor that keeps the blocks whose text is one of ``keep``."""
    page = Extractor("all").segment(MOVERS_PAGE)
    wanted = [b.index for b in page.blocks if b.text in keep]
    return Extractor(OraclePredictor(indices=wanted)).run(MOVERS_PAGE, query=query)


def test_a_query_answer_comes_under_the_headings_of_its_section() -> None:
    result = _answer(["Average Rating: 4.8"])
    md = result.render("markdown")
    assert md == (
        "# Top movers in NYC\n\n<!-- context -->\n\n## 3. Blue Moving\n\n"
        "- **Average Rating: 4.8**\n"
    )
    assert '<h2 data-context="">3. Blue Moving</h2><ul><li>' in result.render("html")
    record = json.loads(result.render("json"))
    (block,) = record["blocks"]
    assert block["context"] == [
        {"index": block["index"] - 3, "tag": "h2", "text": "3. Blue Moving"}
    ]
    assert record["markdown"] == md
    assert result.render("text") == "Average Rating: 4.8\n"  # text output: the kept blocks only


def test_each_section_path_comes_once_above_its_first_kept_block() -> None:
    result = _answer(["Blue Moving is family owned.", "Trucks: 12", "From $400 a room."])
    md = result.render("markdown")
    assert md == (
        "# Top movers in NYC\n\n<!-- context -->\n\n## 3. Blue Moving\n\n"
        "Blue Moving is family owned.\n\n- Trucks: 12\n\n<!-- context -->\n\n### Prices\n\n"
        "From $400 a room.\n"
    )
    contexts = [b.get("context") for b in json.loads(result.render("json"))["blocks"]]
    assert [c and [h["text"] for h in c] for c in contexts] == [
        ["3. Blue Moving"],
        None,
        ["Prices"],
    ]


def test_a_kept_heading_is_not_repeated_and_main_content_has_no_context() -> None:
    result = _answer(["3. Blue Moving", "Blue Moving is family owned."])
    assert "<!-- context -->" not in result.render("markdown")
    assert result.selection.context == {}
    main = _answer(["Average Rating: 4.8"], query=None)
    assert main.selection.context is None and "context" not in main.render("html")
