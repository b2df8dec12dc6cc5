"""VSSE: punctuated text nodes seed the content area; SimHash refinement; records mode."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from blockdex.baselines import BASELINES, get_baseline
from blockdex.baselines.vsse import (
    VsseBaseline,
    attribute_names,
    content_areas,
    leaf_text_nodes,
    text_distance,
    vvtc_scores,
)
from blockdex.cli import main
from blockdex.errors import BlockdexError
from blockdex.parse import parse_html

PARAGRAPHS = [
    "After a decade away, barn owls have returned to nest in the old mill above the village, "
    "volunteers said on Tuesday; the trust hopes they will stay for good this time.",
    "The birds were first seen in March, and two clutches have hatched since then. The chicks "
    "were ringed by a licensed handler, who said they were healthy, heavy and loud.",
    "Farmers nearby have agreed to leave rough grass at field margins, where voles thrive, so "
    "that the owls can hunt close to the mill without crossing the busy main road.",
]
NAV = "".join(
    f'<li><a href="/{w.lower()}">{w}</a></li>'
    for w in ("Home", "World", "Business", "Sport", "Weather", "Travel", "Culture", "Opinion")
)


def page(extra_body: str = "") -> str:
    article = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    return f"""<!DOCTYPE html><html><head><title>Barn owls return to the old mill</title>
<meta name="description" content="Barn owls nest again in the old mill above the village.">
</head><body>
<div class="top"><ul class="menu">{NAV}</ul></div>
<div class="main"><h1>Barn owls return to the old mill</h1>
<div class="story">{article}</div></div>
<div class="footer"><p>Copyright 2026 Example News | Privacy | Terms</p></div>
{extra_body}
</body></html>"""


def test_registered() -> None:
    assert BASELINES["vsse"] == "blockdex.baselines.vsse:VsseBaseline"
    assert BASELINES["vsse-records"] == "blockdex.baselines.vsse:VsseRecordsBaseline"
    assert get_baseline("vsse-records").config.records


def test_vvtc_ranks_the_punctuated_paragraphs_over_the_nav_list() -> None:
    doc = parse_html(page())
    leaves = leaf_text_nodes(doc.tree.body)
    scores = vvtc_scores(leaves)
    by_text = dict(zip((leaf.text for leaf in leaves), scores, strict=True))
    assert min(by_text[p] for p in PARAGRAPHS) > 0
    assert by_text["Home"] == 0.0  # no punctuation
    best = max(by_text, key=by_text.get)
    assert best in PARAGRAPHS


def test_extracts_the_paragraph_run_and_not_the_nav() -> None:
    result = VsseBaseline().run(page())
    for p in PARAGRAPHS:
        assert p in result.text
    for word in ("Home", "Weather", "Copyright"):
        assert word not in result.text
    assert result.extra["vsse"]["areas"][-1].endswith("div.story")


def test_lcp_aggregation_finds_the_deepest_common_ancestor() -> None:
    html = (
        "<body><div id=a><div id=b><section><p>One, two; three.</p></section>"
        "<section><p>Four, five; six.</p></section></div></div>"
        "<div id=c><p>Seven, eight.</p></div></body>"
    )
    leaves = leaf_text_nodes(parse_html(html).tree.body)
    areas = content_areas(leaves, [0, 1])
    assert [a[-1].attributes.get("id") for a in areas] == ["b"]
    # one kept paragraph: the area is the element holding it, never the paragraph alone
    areas = content_areas(leaves, [2])
    assert [a[-1].attributes.get("id") for a in areas] == ["c"]
    # different tag paths: two areas, in document order
    areas = content_areas(leaves, [0, 2])
    assert [a[-1].tag for a in areas] == ["section", "div"]


def test_simhash_distance_identical_near_far() -> None:
    a = "The barn owls nested in the old mill above the village this spring."
    near = "The barn owls nested in the old mill above the village this summer."
    far = "Quarterly earnings of the semiconductor maker beat analyst expectations."
    assert text_distance(a, a) == 0
    assert text_distance(a, near) < text_distance(a, far)
    assert text_distance(a, far) > 10


def test_refinement_modes() -> None:
    # the paper's T2 = 3 keeps next to nothing: on → almost empty, auto → refinement skipped
    forced = VsseBaseline(refine="on").run(page())
    assert forced.extra["vsse"]["refine"]["applied"]
    assert len(forced.text) < len(VsseBaseline(refine="off").run(page()).text)
    auto = VsseBaseline().run(page())
    assert not auto.extra["vsse"]["refine"]["applied"]
    assert all(p in auto.text for p in PARAGRAPHS)
    loose = VsseBaseline(refine="on", t2=64).run(page())
    assert all(p in loose.text for p in PARAGRAPHS)


def test_bad_options() -> None:
    with pytest.raises(BlockdexError):
        VsseBaseline(refine="sometimes")
    with pytest.raises(BlockdexError):
        VsseBaseline(nonsense=1)


def test_page_without_punctuation_is_empty_not_an_error() -> None:
    result = VsseBaseline().run(f"<html><body><ul>{NAV}</ul></body></html>")
    assert result.text == ""


PRODUCT = """<!DOCTYPE html><html><head><title>Acme Kettle K2</title></head><body>
<nav><a href="/">Home</a> | <a href="/shop">Shop</a> | <a href="/help">Help</a></nav>
<div class="page"><h1>Acme Kettle K2</h1>
<p>A quiet kettle for small kitchens.</p>
<div class="specs"><table>
<tr><th>Brand</th><td>Acme</td></tr>
<tr><th>Model</th><td>K2</td></tr>
<tr><th>Weight:</th><td>1.2 kg</td></tr>
<tr><th>Color</th><td>Steel grey</td></tr>
<tr><th>Price</th><td>$49</td></tr>
</table></div></div>
<footer>Contact us</footer>
</body></html>"""

BOOK = """<html><body><div class="nav"><a href="/">Books</a></div>
<div class="book"><h2>A Field Guide to Owls</h2>
<dl><dt>Author</dt><dd>J. Smith</dd><dt>Publisher:</dt><dd>Nature Press</dd>
<dt>Date</dt><dd>2021-04-01</dd><dt>ISBN</dt><dd>978-0-00-000000-0</dd></dl>
<ul><li><span class="label">Pages:</span> <span class="value">320</span></li>
<li><span class="label">Language:</span> <span class="value">English</span></li></ul>
<p>Format: Paperback</p>
</div></body></html>"""


def _pairs(html: str) -> dict[str, str]:
    result = get_baseline("vsse-records").run(html)
    return {r["attribute"]: r["value"] for r in result.extra["records"]}


def test_records_from_a_spec_table() -> None:
    pairs = _pairs(PRODUCT)
    assert pairs == {
        "Brand": "Acme",
        "Model": "K2",
        "Weight": "1.2 kg",
        "Color": "Steel grey",
        "Price": "$49",
    }


def test_records_from_a_dl_label_spans_and_lines() -> None:
    pairs = _pairs(BOOK)
    assert pairs["Author"] == "J. Smith"
    assert pairs["Publisher"] == "Nature Press"
    assert pairs["ISBN"] == "978-0-00-000000-0"
    assert pairs["Pages"] == "320"
    assert pairs["Language"] == "English"
    assert pairs["Format"] == "Paperback"
    result = get_baseline("vsse-records").run(BOOK)
    assert result.extra["vsse"]["record_area"].endswith("div.book")


def test_records_none_on_a_page_without_characteristics() -> None:
    result = get_baseline("vsse-records").run("<html><body><p>Just words here</p></body></html>")
    assert result.extra["records"] == []


def test_attribute_dictionary_is_package_data() -> None:
    names = attribute_names()
    assert {"price", "brand", "model", "weight", "color", "email"} <= set(names)


def test_cli_json_carries_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "p.html"
    f.write_text(PRODUCT, encoding="utf-8")
    assert main(["extract", str(f), "--method", "vsse-records", "-f", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"attribute": "Brand", "value": "Acme"} in out["records"]
    assert main(["extract", str(f), "--method", "vsse", "-f", "text"]) == 0
    capsys.readouterr()
    assert main(["extract", str(f), "--records", "-f", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"attribute": "Price", "value": "$49"} in out["records"]
    assert main(["extract", str(f), "--records", "--method", "crunch"]) != 0


@pytest.mark.dataset
def test_vsse_quality_on_scrapinghub_first_pages(shared_data: Path) -> None:
    from blockdex.evaluate.datasets import load_dataset
    from blockdex.evaluate.metrics import token_prf

    pages = load_dataset(str(shared_data / "scrapinghub-aeb"), limit=30)
    method = VsseBaseline()
    f1 = [token_prf(method.run(p.html, url=p.url).text, p.ground_truth).f1 for p in pages]
    # measured 0.76 (whole-page text scores about 0.4 here)
    assert statistics.fmean(f1) > 0.6
