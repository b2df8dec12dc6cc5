"""Units: articles and sections on the page, the primary article, never an empty result, and
queries that name a unit (issue 29). Hand-made pages in ``tests/data/units``."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blockdex
from blockdex.extract import Extractor
from blockdex.page import Unit
from blockdex.predict.content import ContentPredictor
from blockdex.predict.relevance import HybridPredictor
from blockdex.units import named_unit, title_variants, url_slug

UNITS = Path(__file__).parent / "data" / "units"
LIBRARY = "The new Riverton public library opened its doors on Saturday morning"
FOOTBALL = "Harbour United came from behind to beat Eastfield Rovers"
NIGHT_SKY = "the night sky has grown measurably darker"


def _page(name: str) -> str:
    return (UNITS / name).read_text(encoding="utf-8")


# -- units on the page -----------------------------------------------------------------------


def test_articles_sections_and_the_primary_article_are_on_the_page() -> None:
    page = blockdex.segment(_page("next-story.html"))
    articles = [u for u in page.units if u.kind == "article"]
    titles = {u.title for u in articles}
    assert "Riverton opens its new public library after four years of work" in titles
    assert "Harbour United snatch late win against Eastfield Rovers" in titles
    primary = page.primary_unit
    assert primary is not None and primary.title.startswith("Riverton opens")
    library = next(b for b in page.blocks if b.text.startswith(LIBRARY))
    football = next(b for b in page.blocks if b.text.startswith(FOOTBALL))
    assert primary.holds(library.index) and not primary.holds(football.index)
    # every block's innermost unit, and the units nest (outer ones first)
    assert page.unit_of(library.index) is not None
    for u in page.units:
        if u.parent is not None:
            assert page.units[u.parent].contains(u)


def test_units_are_whole_named_tuples() -> None:
    page = blockdex.segment(_page("next-story.html"))
    assert page.units
    for u in page.units:  # made without the named tuple's __new__: every field is there
        assert type(u) is Unit and len(u) == len(Unit._fields)
        assert u == Unit(*u) and u._asdict() == Unit(*u)._asdict()
        assert u.source and u.kind in ("article", "items", "item", "section")


def test_sections_run_to_the_next_heading_of_the_same_or_a_higher_level() -> None:
    page = blockdex.segment((Path(__file__).parent / "data" / "sections.html").read_text())
    sections = {u.title: u for u in page.units if u.kind == "section"}
    battery = sections["Battery life and charging"]
    motor = sections["Motor and ride quality"]
    assert battery.end == motor.start - 1
    assert battery.level == 2 and sections["Voltway E3 review: a commuter e-bike tested"].level == 1


def test_json_output_carries_units_the_primary_article_and_each_blocks_unit() -> None:
    out = json.loads(blockdex.extract(_page("next-story.html"), output="json"))
    assert out["units"] and out["primary_unit"] is not None
    primary = out["units"][out["primary_unit"]]
    assert primary["kind"] == "article" and primary["title"].startswith("Riverton")
    assert all("unit" in b for b in out["blocks"])


# -- main content comes from the primary article ---------------------------------------------


def test_the_next_story_appended_below_the_article_is_dropped() -> None:
    html = _page("next-story.html")
    text = blockdex.extract(html, output="text")
    assert LIBRARY in text and FOOTBALL not in text
    # without the rule the model keeps both stories: the test above can fail
    both = Extractor(ContentPredictor(stories=False)).extract(html, output="text")
    assert LIBRARY in both and FOOTBALL in both


# -- never an empty result -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("one-line.html", "The office is closed on Monday"),
        ("headings-and-images.html", "The Voltway E3 cargo version"),
        ("paragraphs-in-link.html", "Members get early access from Thursday evening"),
    ],
)
def test_a_page_with_text_never_gives_an_empty_result(name: str, expected: str) -> None:
    out = json.loads(blockdex.extract(_page(name), output="json"))
    assert expected in out["markdown"]
    if "fallback" in out:  # the model kept nothing (so far it keeps nothing of these pages)
        assert out["fallback"] == "whole-page"
        assert any("tiny" in w for w in out["warnings"])


def test_when_the_model_keeps_nothing_a_fallback_chooses_and_says_which() -> None:
    import numpy as np

    from blockdex.predict.content import never_empty

    tiny = blockdex.segment(_page("paragraphs-in-link.html"))
    keep, fallback, _ = never_empty(tiny, np.zeros(len(tiny.blocks)))
    assert keep.all() and fallback == "whole-page"
    story = blockdex.segment(_page("next-story.html"))
    keep, fallback, note = never_empty(story, np.zeros(len(story.blocks)))
    unit = story.primary_unit
    assert fallback == "primary-unit" and unit is not None
    kept = [b.index for b, k in zip(story.blocks, keep, strict=True) if k]
    assert kept and kept[0] >= unit.start and kept[-1] <= unit.end
    assert "title names" in note[0]
    probs = np.zeros(len(story.blocks))
    probs[5] = 0.3
    bare = Extractor().segment(_page("next-story.html").replace("<title>", "<title>x"))
    keep, fallback, _ = never_empty(bare, probs)
    assert fallback in ("best-blocks", "primary-unit") and keep.any()


def test_content_hidden_until_a_script_runs_is_read() -> None:
    out = json.loads(blockdex.extract(_page("hidden-until-script.html"), output="json"))
    assert "Our drum roaster takes twelve kilograms at a time" in out["markdown"]
    assert out["fallback"] == "hidden-content"


def test_a_page_built_by_scripts_gives_its_description() -> None:
    out = json.loads(blockdex.extract(_page("description-only.html"), output="json"))
    assert "The Eagle Ridge loop is open again" in out["markdown"]
    assert out["fallback"] == "description"


def test_a_page_without_any_text_stays_empty_and_says_why() -> None:
    out = json.loads(blockdex.extract("<html><body><div></div><hr></body></html>", output="json"))
    assert out["intervals"] == [] and "fallback" not in out


def test_the_cli_warns_on_stderr_when_a_fallback_chose_the_blocks(capsys) -> None:
    from blockdex.cli import main

    assert main(["extract", str(UNITS / "description-only.html")]) == 0
    captured = capsys.readouterr()
    assert "The Eagle Ridge loop is open again" in captured.out
    assert "description from its metadata" in captured.err


# -- queries that name a unit ----------------------------------------------------------------


def test_a_title_query_with_its_site_suffix_selects_that_article_of_a_digest() -> None:
    html = _page("digest.html")
    query = "Riverton opens its new public library after four years of work | The Valley Courier"
    text = blockdex.extract(html, query=query, output="text")
    assert LIBRARY in text and "The old reading room will become a community workshop" in text
    assert FOOTBALL not in text and NIGHT_SKY not in text
    named = named_unit(blockdex.segment(html), query)
    assert named is not None and named.kind == "article"


def test_a_section_query_selects_the_whole_section_and_nothing_else() -> None:
    html = (Path(__file__).parent / "data" / "sections.html").read_text()
    page = blockdex.segment(html)
    named = named_unit(page, "battery life and charging")
    assert named is not None and named.kind == "section"
    text = blockdex.extract(html, query="Battery life and charging", output="text")
    section = page.units[[u.title for u in page.units].index("Battery life and charging")]
    body = [b.text for b in page.blocks if section.start < b.index <= section.end]
    assert body and all(t in text for t in body)
    assert "Motor and ride quality" not in text


def test_a_query_naming_nothing_still_gets_the_relevance_model_or_nothing() -> None:
    page = blockdex.segment(_page("digest.html"))
    assert named_unit(page, "volcanic eruption in Iceland") is None
    assert named_unit(page, "Comments") is None  # one word names nothing
    out = Extractor(HybridPredictor()).run(_page("digest.html"), query="volcano eruption lava")
    assert not out.selection


def test_title_helpers() -> None:
    assert title_variants("Big storm hits the coast | The Daily Example") == [
        "Big storm hits the coast | The Daily Example",
        "Big storm hits the coast",
    ]
    assert title_variants("Jean-Paul wins the cup") == ["Jean-Paul wins the cup"]
    assert url_slug("https://example.org/2024/05/big-storm-hits-town.html") == "big storm hits town"
    assert url_slug("https://example.org/item/12345") == ""


# -- on pages made of real pages (skipped without the shared data) ---------------------------


def _composite(kind: str, limit: int) -> list:
    from blockdex.evaluate.composite import CompositeConfig, make_composite
    from blockdex.evaluate.datasets import _page_from_record, shared_data_dir

    if shared_data_dir() is None:
        pytest.skip("../shared/data is absent: set BLOCKDEX_DATA to run the dataset tests")
    cfg = CompositeConfig(pages_per_dataset=limit)
    records = make_composite(("scrapinghub-aeb",), cfg, kinds=(kind,), progress=False)
    return [_page_from_record(r, "composite", n) for n, r in enumerate(records)]


@pytest.mark.dataset
def test_next_story_pages_keep_the_titled_story() -> None:
    from blockdex.evaluate.metrics import token_prf

    pages = _composite("next-story", 30)
    assert {p.meta["split"] for p in pages} <= {"dev", "test"}
    ex = Extractor()
    f1 = [token_prf(ex.extract(p.html, output="text"), p.ground_truth).f1 for p in pages]
    # measured 0.94 on these 30 pages' composites (0.64 without the stories rule)
    assert statistics.fmean(f1) >= 0.85, statistics.fmean(f1)


@pytest.mark.dataset
def test_composite_pages_are_made_the_same_way_every_time() -> None:
    first = [p.html for p in _composite("multi-article", 8)]
    again = [p.html for p in _composite("multi-article", 8)]
    assert first == again and len(first) == 8


def test_a_masthead_image_is_not_the_title_line() -> None:
    # l3s-gn1 dev page efc2e03c: "<title>India in control - Market Rasen Today" (the longer
    # piece is the site's name) and a masthead <img alt="Market Rasen Today">; taken for the
    # title's line, it made the page's own story read as another one (F1 0.97 -> 0.0)
    from blockdex.units import title_block

    html = (
        "<title>India in control - Market Rasen Today</title>"
        "<div><img src='m.gif' alt='Market Rasen Today'></div>"
        "<p>Home News Sport</p><h2>India in control</h2><p>" + "Laxman scored runs. " * 30 + "</p>"
    )
    page = blockdex.segment(html)
    at = title_block(page)
    assert at is not None and page.blocks[at].tag == "h2"


def test_the_site_named_piece_of_a_title_is_not_the_story() -> None:
    from blockdex.units import site_keys

    # "India in control - Market Rasen Today": the longer piece is the site, named by its host
    site = site_keys(None, "https://www.marketrasentoday.co.uk/sport/cricket/india-1-123")
    assert title_variants("India in control - Market Rasen Today", site)[1] == "India in control"
    assert title_variants("India in control - Market Rasen Today")[1] == "Market Rasen Today"
    # og:site_name names it too; a story that only mentions the brand stays the story
    site = site_keys("The Wall Street Journal", "https://www.wsj.com/articles/x")
    assert title_variants("Fed holds rates | The Wall Street Journal", site)[1] == "Fed holds rates"
    apple = site_keys("Apple", "https://www.apple.com/newsroom/x")
    story = "Apple opens its largest store in Europe"
    assert title_variants(f"{story} - Apple Newsroom", apple)[1] == story
    assert title_variants(f"Newsroom - {story}", apple)[1] == story
    # when every piece looks like the site, the longest is still taken
    assert title_variants("Apple - Apple Store", apple)[1] == "Apple Store"


def test_unit_columns_mark_the_primary_story_and_its_rivals() -> None:
    from blockdex.units import UNIT_COLUMN_NAMES, unit_columns

    body = "The council voted to rebuild the old harbour wall before the winter storms. " * 6
    other = "A new bakery opened on the high street, selling bread made with local flour. " * 6
    html = (
        "<title>Harbour wall to be rebuilt | Town News</title>"
        "<article><h1>Harbour wall to be rebuilt</h1><p>" + body + "</p></article>"
        "<article><h1>Bakery opens on the high street</h1><p>" + other + "</p></article>"
    )
    page = blockdex.segment(html)
    cols = unit_columns(page)
    assert cols.shape == (len(page.blocks), len(UNIT_COLUMN_NAMES))
    texts = [b.text for b in page.blocks]
    own = texts.index("Harbour wall to be rebuilt")
    rival = texts.index("Bakery opens on the high street")
    assert cols[own].tolist()[:2] == [1.0, 0.0] and cols[own + 1, 0] == 1.0
    assert cols[rival].tolist()[:2] == [0.0, 1.0] and cols[rival + 1, 1] == 1.0
    assert cols[own, 2] == 1.0 and cols[rival, 2] < 0.5  # the headlines' title match
    assert 0.3 < cols[own, 3] < 0.7  # each story holds about half the page's text
    assert not unit_columns(blockdex.segment("<p>No units on this page at all.</p>")).any()


_story_texts = st.lists(
    st.lists(
        st.sampled_from(["Storm", "STORM", "storms", "ΟΔΟΣ", "οδος", "town", " ", "-", "x", "Σ"]),
        max_size=8,
    ).map("".join),
    min_size=1,
    max_size=6,
)


@settings(max_examples=300, deadline=None)
@given(_story_texts, st.sampled_from([0.0, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.75, 0.8, 1.0]))
def test_title_share_block_by_block_equals_the_joined_text(texts: list[str], share: float) -> None:
    from blockdex.units import _holds_title_share

    title_words = frozenset({"storm", "town", "οδος", "οδοσ", "σ"})
    joined = " ".join(texts).lower()
    found = sum(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", joined) is not None for w in title_words)
    expected = found / len(title_words) >= share
    assert _holds_title_share(title_words, texts, share) == expected
    assert _holds_title_share(frozenset(), texts, share) == (share <= 0.0)


@pytest.mark.dataset
def test_a_slice_reaching_into_a_unit_whose_heading_lies_outside_it_finds_its_primary() -> None:
    # a slice keeps the units that reach into it whole, so a rival story's heading can lie past
    # the slice's end (found on these pages, sliced at 5 and n - 7: IndexError before)
    from blockdex.evaluate.datasets import load_dataset, shared_data_dir

    if shared_data_dir() is None:
        pytest.skip("../shared/data is absent: set BLOCKDEX_DATA to run the dataset tests")
    wanted = ("markeich.de.impressum", "weinlachgummis.blogspot.com.rezi")
    pages = [p for p in load_dataset("trafilatura-eval") if p.id.startswith(wanted)]
    assert len(pages) == 2
    ex = Extractor("all")
    outside = 0
    for item in pages:
        page = ex.segment(item.html, url=item.url)
        sub = page.slice(5, len(page.blocks) - 7)
        last = sub.blocks[-1].index
        outside += any(u.heading is not None and u.heading > last for u in sub.units)
        primary = sub.primary
        assert primary.unit is None or sub.units[primary.unit].kind == "article"
    assert outside  # the case this test is for is still there


_title_lines = st.lists(
    st.tuples(
        st.sampled_from(["h1", "p", "img"]),
        st.lists(
            st.sampled_from(["Storm", "STORM", "town", "Ünter", "ünter", "İstanbul", "x", " "]),
            max_size=6,
        ).map("".join),
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(_title_lines, st.integers(0, 4), st.integers(0, 3))
def test_title_candidates_hold_enough_title_words_in_the_lower_cased_text(
    lines: list[tuple[str, str]], max_spaces: int, need: int
) -> None:
    from blockdex import _units_c
    from blockdex.ids import block_ids
    from blockdex.page import Block

    blocks = tuple(Block(index=k, tag=t, html="", text=x) for k, (t, x) in enumerate(lines))
    probe = ("storm", "town", "ünter", "i̇stanbul")
    needs = ((("storm", "town"), 2), (("ünter",), 1), (("i̇stanbul",), 1))
    expected = []
    for pos, b in enumerate(blocks):
        lower = b.text.lower()
        if not 2 <= len(b.text) <= 30 or b.tag == "img" or b.text.count(" ") >= max_spaces:
            continue
        if sum(w in lower for w in probe) >= need and any(
            sum(w in lower for w in ws) >= k for ws, k in needs
        ):
            expected.append(pos)
    table = block_ids(blocks)
    assert _units_c.title_candidates(table, None, 2, 30, max_spaces, probe, need, needs) == expected
    # a choice of blocks: the places in it of those that pass
    some = list(range(0, len(blocks), 2))
    assert _units_c.title_candidates(table, some, 2, 30, max_spaces, probe, need, needs) == [
        k for k, pos in enumerate(some) if pos in expected
    ]
