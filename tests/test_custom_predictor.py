"""A user's own predictor through the public API: it reads each block's text, tag and class/id
attributes (``page.blocks[i].text``, ``.tag``, ``.attrs``), and the result keeps exactly the
blocks it chose — no more (no figure, product fact or list item added to them) and no fewer.
Markdown output adds only the page's headline above them."""

from __future__ import annotations

import json

import pytest

import blockdex
from blockdex import predict as predict_module
from blockdex.page import Page, Selection

PAGE = """<html><head><title>Trail Lamp 400 review</title></head><body>
<nav class="site-nav"><a href="/">Home</a> <a href="/lamps">Lamps</a></nav>
<main><article class="story">
<h1>Trail Lamp 400 review</h1>
<p>The Trail Lamp 400 is a headlamp for long nights on the hill, and we wore it for a month.</p>
<p>Its beam reaches far enough to find a cairn in fog, and the strap stays put on a run.</p>
<h2 class="specs-title">Specifications</h2>
<ul class="specs">
<li class="spec">Battery: 12 hours on the low setting</li>
<li class="spec">Weight: 86 grams with the strap</li>
<li class="promo">Free delivery on orders over 50 euros</li>
<li class="spec">Beam: 400 lumens at the highest setting</li>
</ul>
<p>Our verdict: the best lamp we have worn at this price, if a little heavy.</p>
</article></main>
<aside class="sidebar"><p>Note: prices were checked on the day of writing.</p>
<p>Subscribe to our newsletter for more reviews.</p></aside>
<footer><p>Note: we were lent the lamp by its maker.</p></footer>
</body></html>"""

CHOSEN = [
    "Specifications",
    "Battery: 12 hours on the low setting",
    "Weight: 86 grams with the strap",
    "Beam: 400 lumens at the highest setting",
    "Note: prices were checked on the day of writing.",
    "Note: we were lent the lamp by its maker.",
]
"""What the predictor below keeps, in page order: not what the content model would keep (it
leaves out the review's prose and keeps the sidebar's and footer's notes)."""


class SpecsAndNotes:
    """Keeps the specification list's items and its heading (by their class), and paragraphs
    that start with "Note:" (by their text), wherever they are."""

    name = "specs-and-notes"

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    def predict(self, page: Page, query: str | None = None) -> Selection:
        chosen = []
        for i in range(len(page.blocks)):
            text, tag, attrs = page.blocks[i].text, page.blocks[i].tag, page.blocks[i].attrs
            self.seen.append((text, tag, attrs))
            spec = tag == "li" and "spec" in attrs.split()
            heading = tag == "h2" and "specs-title" in attrs
            note = tag == "p" and text.startswith("Note:")
            if spec or heading or note:
                chosen.append(page.blocks[i].index)
        return Selection.from_indices(chosen)


def _kept(doc: dict) -> list[str]:
    return [b["text"] for b in doc["blocks"]]


def test_a_predictor_object_keeps_exactly_the_blocks_it_chose() -> None:
    predictor = SpecsAndNotes()
    doc = json.loads(blockdex.extract(PAGE, predictor=predictor, output="json"))
    assert _kept(doc) == CHOSEN
    page = blockdex.segment(PAGE)
    chosen = [b.index for b in page.blocks if b.text in CHOSEN]
    assert [b["index"] for b in doc["blocks"]] == chosen
    assert doc["selection"] == Selection.from_indices(chosen).format()
    # it read every block, with its tag and the classes around it
    assert len(predictor.seen) == len(page.blocks)
    assert ("Weight: 86 grams with the strap", "li", predictor.seen[chosen[2]][2]) in predictor.seen
    assert "spec" in predictor.seen[chosen[2]][2].split()
    # text output is those blocks and nothing else
    text = blockdex.extract(PAGE, predictor=SpecsAndNotes(), output="text")
    assert text.splitlines() == CHOSEN
    markdown = blockdex.extract(PAGE, predictor=SpecsAndNotes())
    lines = [line.lstrip("#- ") for line in markdown.splitlines() if line.strip()]
    assert lines == ["Trail Lamp 400 review", *CHOSEN]  # the headline, then the blocks


def test_a_registered_predictor_is_used_by_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(predict_module, "_REGISTRY", dict(predict_module._REGISTRY))
    blockdex.register_predictor("specs-and-notes", SpecsAndNotes, "specs and notes")
    assert "specs-and-notes" in blockdex.available_predictors()
    doc = json.loads(blockdex.extract(PAGE, predictor="specs-and-notes", output="json"))
    assert _kept(doc) == CHOSEN
    result = blockdex.Extractor("specs-and-notes").run(PAGE)
    assert [result.page.by_index(i).text for i in result.selection.indices] == CHOSEN


def test_a_predictor_that_keeps_nothing_gets_nothing_added() -> None:
    class Nothing:
        name = "nothing"

        def predict(self, page: Page, query: str | None = None) -> Selection:
            return Selection.from_indices([])

    doc = json.loads(blockdex.extract(PAGE, predictor=Nothing(), output="json"))
    assert doc["blocks"] == [] and doc["selection"] == Selection.from_indices([]).format()
    assert blockdex.extract(PAGE, predictor=Nothing(), output="text").strip() == ""
