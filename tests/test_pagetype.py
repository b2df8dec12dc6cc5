"""The page type: hand-made pages of each kind are typed as such, and every output carries it."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from blockdex import Extractor, extract, segment
from blockdex.cli import main
from blockdex.errors import BlockdexError
from blockdex.explain import explain_page, render_report
from blockdex.pagetype import (
    FEATURE_NAMES,
    OTHER,
    PAGE_TYPES,
    PageTypeConfig,
    PageTypeModel,
    classify_page,
    page_type_columns,
    page_type_features,
    page_type_of,
)

PAGES = Path(__file__).parent / "data" / "page_types"

KINDS = {
    # file: (the address it was read from, the type a reader would say it is)
    "product.html": ("https://northwind.example/products/kettle-pro-1-7l", "product"),
    "forum.html": (
        "https://homerepair.example/threads/garage-door-opener-clicks.48213/",
        "forum",
    ),
    "docs.html": ("https://tabkit.example/docs/2.4/api/read_table/", "documentation"),
    "listing.html": ("https://energyreview.example/search?q=solar+batteries", "listing"),
    "article.html": (
        "https://valleyledger.example/environment/2025/04/08/harwick-river-weirs/",
        "article",
    ),
}


def _page(name: str) -> tuple[str, str]:
    url, _ = KINDS[name]
    return (PAGES / name).read_text(encoding="utf-8"), url


@pytest.mark.parametrize("name", sorted(KINDS))
def test_each_kind_of_page_is_typed_as_it_reads(name: str) -> None:
    html, url = _page(name)
    found = segment(html, url=url).page_type
    expected = KINDS[name][1]
    assert found.label == expected, found.scores
    assert found.confidence == max(found.scores.values())
    assert found.scores[expected] > 0.5
    assert set(found.scores) == set(PAGE_TYPES)
    assert abs(sum(found.scores.values()) - 1) < 1e-3


@pytest.mark.parametrize("name", sorted(KINDS))
def test_a_page_read_without_its_address_is_typed_as_it_reads(name: str) -> None:
    """``extract(html)`` with no ``url=`` and no canonical link: the URL's columns are blank, a
    case the model learned (every training page is also shown to it without its address)."""
    html, _ = _page(name)
    assert 'rel="canonical"' not in html
    found = segment(html).page_type
    assert found.label == KINDS[name][1], found.scores


def test_a_news_article_without_an_address_is_not_a_list() -> None:
    html = (Path(__file__).parent / "data" / "kinds" / "article_figure.html").read_text("utf-8")
    found = segment(html).page_type
    assert found.label == "article", found.scores
    assert found.scores["listing"] + found.scores["collection"] + found.scores["product"] < 0.5


def test_the_same_page_is_typed_the_same_in_text_and_json_output() -> None:
    """The type reads no block HTML, which text output does not build."""
    html, url = _page("listing.html")
    ex = Extractor()
    as_text = ex.run(html, url=url, output="text")
    as_json = ex.run(html, url=url)
    assert as_text.text_only and not as_json.text_only
    assert as_text.page.page_type == as_json.page.page_type


def test_a_type_below_the_confidence_floor_is_other() -> None:
    html, url = _page("forum.html")
    page = segment(html, url=url)
    sure = classify_page(page)
    assert sure.label == "forum"
    just_above = PageTypeConfig(min_confidence=sure.confidence + 1e-6)
    unsure = classify_page(page, cfg=just_above)
    assert unsure.label == OTHER
    assert unsure.confidence == sure.confidence and unsure.scores == sure.scores
    assert classify_page(page, cfg=PageTypeConfig(min_confidence=sure.confidence)).label == "forum"
    # the shipped floor was chosen by cross-validation and lies between chance and certainty
    assert 0.2 < PageTypeModel.load().min_confidence < 0.9


def test_the_page_type_columns_repeat_its_probabilities_on_every_block() -> None:
    html, url = _page("product.html")
    page = segment(html, url=url)
    cols = page_type_columns(page)
    assert cols.shape == (len(page.blocks), len(PAGE_TYPES))
    assert (cols == cols[0]).all()
    assert PAGE_TYPES[int(cols[0].argmax())] == page.page_type.label == "product"
    assert abs(float(cols[0].sum()) - 1) < 1e-3


def test_a_type_given_by_its_scores_has_the_floor_of_the_model() -> None:
    scores = {"article": 0.2, "forum": 0.55, "product": 0.25}
    assert page_type_of(scores, 0.5).label == "forum"
    assert page_type_of(scores, 0.6).label == OTHER
    assert page_type_of(scores, 0.6).confidence == 0.55


def test_a_page_without_blocks_is_other_with_no_confidence() -> None:
    page = segment("<html><head><title>Empty</title></head><body></body></html>")
    assert page.page_type.label == OTHER and page.page_type.confidence == 0.0


def test_open_graph_type_is_metadata_named_og_type() -> None:
    html, url = _page("article.html")
    record = json.loads(extract(html, url=url, output="json"))
    assert record["metadata"]["og_type"] == "article"
    assert "page_type" not in record["metadata"]
    assert record["page_type"] == "article"
    assert 0.5 < record["page_type_confidence"] <= 1.0


def test_cli_json_output_carries_the_page_type(capsys: pytest.CaptureFixture[str]) -> None:
    url = KINDS["product.html"][0]
    assert main(["extract", str(PAGES / "product.html"), "--url", url, "-f", "json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["page_type"] == "product"
    assert isinstance(record["page_type_confidence"], float)


def test_explorer_summary_shows_the_page_type() -> None:
    html, url = _page("docs.html")
    report = render_report(explain_page(html, url=url))
    assert 'data-page-type="documentation"' in report
    assert "<dt>page type</dt>" in report


def test_features_read_no_block_markup() -> None:
    html, url = _page("product.html")
    full = segment(html, url=url)
    bare = Extractor().run(html, url=url, output="text").page
    assert (page_type_features(full) == page_type_features(bare)).all()
    assert len(page_type_features(full)) == len(FEATURE_NAMES)


def test_a_model_for_other_columns_is_refused(tmp_path: Path) -> None:
    shipped = resources.files("blockdex.data").joinpath("page_type_model.json")
    spec = json.loads(shipped.read_text(encoding="utf-8"))
    spec["features"] = spec["features"][:-1]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(BlockdexError, match="retrain"):
        PageTypeModel.load(path)


def test_markdown_and_text_output_never_compute_the_type(monkeypatch: pytest.MonkeyPatch) -> None:
    import blockdex.pagetype

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the page type was computed")

    monkeypatch.setattr(blockdex.pagetype, "classify_page", refuse)
    html, url = _page("article.html")
    assert "Harwick" in extract(html, url=url)
    assert "Harwick" in extract(html, url=url, output="text")
    with pytest.raises(AssertionError, match="computed"):
        extract(html, url=url, output="json")


def test_a_canonical_link_that_does_not_parse_is_read_as_no_address() -> None:
    """A page's own canonical link can be anything (``https://shop.n]rthfield.example/…`` makes
    ``urlsplit`` raise): the page-kind rules still run (the page has a canonical link) and the
    page type reads it as no address, instead of the extraction failing (found by fuzzing)."""
    html, _ = _page("product.html")
    broken = html.replace(
        "<head>",
        '<head><link rel="canonical" href="https://shop.n]rthfield.example/collections/x">',
        1,
    )
    assert broken != html
    data = json.loads(extract(broken, output="json"))
    assert data["page_type"] in (*PAGE_TYPES, OTHER)
    assert "Kettle" in data["markdown"]
