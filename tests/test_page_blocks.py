"""``Page.blocks`` as users read it: the contract a change of how blocks are stored keeps (issue 45).

A page's blocks are a sequence: its length, indexing from either end, slicing, iteration in
document order, the same ``Block`` object each time one position is read, and the fields a
predictor reads. A user's own predictor reads them by position and keeps working whatever the
pipeline stores underneath.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from blockdex import segment
from blockdex.extract import Extractor
from blockdex.page import Block, Selection

PAGE = """<html><head><title>Harbour news</title></head><body>
<nav class="menu"><a href="/">Home</a> <a href="/sport">Sport</a></nav>
<article class="story main">
  <h1>The harbour reopens</h1>
  <p class="lead">The harbour reopened on Monday after three weeks of repairs.</p>
  <p>Fishing boats were the first to return, followed by the ferry to the islands.</p>
  <div class="ad-slot"><p>Buy a boat today</p></div>
  <p>The council thanked the divers who <b>cleared the wreck</b> from the entrance.</p>
  <img src="/harbour.jpg" alt="The harbour at dawn">
</article>
<footer class="site-footer"><p>Contact the newsroom</p></footer>
</body></html>"""


def test_the_blocks_are_a_sequence() -> None:
    blocks = segment(PAGE).blocks
    n = len(blocks)
    assert n == 8
    assert [b.index for b in blocks] == list(range(n))  # iteration, in document order
    assert blocks[0].text == "Home Sport" and blocks[1].text == "The harbour reopens"
    assert blocks[-1] is blocks[n - 1] and blocks[-1].text == "Contact the newsroom"
    assert blocks[-n] is blocks[0]
    with pytest.raises(IndexError):
        blocks[n]
    with pytest.raises(IndexError):
        blocks[-n - 1]
    part = blocks[2:5]
    assert len(part) == 3 and [b.index for b in part] == [2, 3, 4]
    assert all(a is b for a, b in zip(part, (blocks[2], blocks[3], blocks[4]), strict=True))
    assert [b.index for b in blocks[::-3]] == [7, 4, 1]
    assert len(blocks[5:2]) == 0
    assert [b.index for b in reversed(blocks)] == list(range(n - 1, -1, -1))
    assert blocks[3] in blocks and blocks.index(blocks[3]) == 3


def test_a_position_reads_the_same_block_object_each_time() -> None:
    page = segment(PAGE)
    first = [page.blocks[i] for i in range(len(page.blocks))]
    assert all(a is b for a, b in zip(first, page.blocks, strict=True))
    assert all(page.blocks[i] is first[i] for i in range(len(first)))
    assert all(page.by_index(b.index) is b for b in first)
    assert all(page[i] is first[i] for i in range(len(first)))  # the page indexes its blocks


def test_a_slice_of_the_page_keeps_the_blocks_and_their_indices() -> None:
    page = segment(PAGE)
    chunk = page.slice(3, 6)
    assert len(chunk.blocks) == 3 and chunk.first_index == 3
    assert all(chunk.blocks[k] is page.blocks[3 + k] for k in range(3))
    assert chunk.by_index(4) is page.blocks[4]
    assert chunk.indices() == (3, 4, 5)


def test_every_block_field_is_there() -> None:
    page = segment(PAGE)
    lead = next(b for b in page.blocks if b.text.startswith("The harbour reopened"))
    assert isinstance(lead, Block)
    assert lead.tag == "p" and lead.attrs.endswith("lead") and "story main" in lead.attrs
    assert lead.path == "body>article>p" and lead.depth == 1
    assert lead.chain[-1][0] == "p" and lead.element_id == lead.chain[-1][1]
    assert lead.scope[-1] == lead.element_id and lead.scope_attrs[-1] == "lead"
    assert lead.split is None and lead.source == "dom" and lead.link_chars == 0
    menu = page.blocks[0]
    assert menu.n_links == 2 and menu.link_chars == len("HomeSport")
    image = next(b for b in page.blocks if b.tag == "img")
    assert dict(image.attributes)["src"] == "/harbour.jpg" and image.text == "The harbour at dawn"
    bold = next(b for b in page.blocks if "wreck" in b.text)
    assert "<b>cleared the wreck</b>" in bold.html
    assert bold.tagged().startswith(f"[{bold.index}] <p>")


class _StoryParagraphs:
    """A user's predictor that reads blocks by position: the paragraphs and headings inside an
    element whose class names a story, without the ones an ad slot holds."""

    name = "story-paragraphs"
    reads_markup = False

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    def predict(self, page, query=None):
        keep = []
        for i in range(len(page.blocks)):
            block = page.blocks[i]
            self.seen.append((block.tag, block.attrs, block.text))
            if block.tag in ("h1", "p") and "story" in block.attrs and "ad-slot" not in block.attrs:
                keep.append(block.index)
        return Selection.from_indices(keep)


def test_a_users_predictor_reads_text_tag_and_attrs() -> None:
    predictor = _StoryParagraphs()
    ex = Extractor(predictor)
    text = ex.extract(PAGE, output="text")
    assert text.splitlines() == [
        "The harbour reopens",
        "The harbour reopened on Monday after three weeks of repairs.",
        "Fishing boats were the first to return, followed by the ferry to the islands.",
        "The council thanked the divers who cleared the wreck from the entrance.",
    ]
    assert ("p", "ad-slot", "Buy a boat today") in {
        (tag, attrs.rsplit(" | ", 1)[-1], t) for tag, attrs, t in predictor.seen
    }
    markdown = ex.extract(PAGE, output="markdown")
    assert "\n# The harbour reopens\n" in markdown and "**cleared the wreck**" in markdown
    assert "Buy a boat" not in markdown and "newsroom" not in markdown
    data = json.loads(ex.extract(PAGE, output="json"))
    assert [b["text"] for b in data["blocks"]] == text.splitlines()


def test_text_output_makes_no_block_object() -> None:
    """The text path reads the blocks' table (columns written by the walk): a ``Block`` is made
    only when something reads ``page.blocks`` (issue 45: blocks never touched are never
    built)."""
    result = Extractor().run(PAGE, output="text")
    text = result.render("text")
    assert "The harbour reopened on Monday" in text
    assert result.page.blocks.made_count() == 0
    lead = result.page.blocks[2]  # made when read, once
    assert result.page.blocks.made_count() == 1 and result.page.blocks[2] is lead
    assert lead.text.startswith("The harbour reopened")


def test_a_page_of_hand_made_blocks_reads_the_same() -> None:
    """A page built from ``Block`` objects (a tuple: the table is made from them) gives the
    walk's page's text and selection."""
    ex = Extractor()
    walked = ex.run(PAGE, output="text")
    page = walked.page
    made = dataclasses.replace(page, blocks=tuple(page.blocks), facts=page.facts.fresh())
    again = ex.predictor.predict(made)
    assert again.indices == walked.selection.indices


def test_the_scores_read_as_the_dict_of_each_blocks_probability() -> None:
    """The content predictor's scores are a mapping over its probability array: the same floats
    a dict of them holds, for the page's indices only, and they pickle as that dict."""
    import pickle

    page = segment(PAGE)
    predictor = Extractor().predictor
    selection = predictor.predict(page)
    scores = selection.scores
    probs = predictor.block_probabilities(page)
    assert len(scores) == len(page.blocks) and list(scores) == list(range(len(page.blocks)))
    plain = {i: float(p) for i, p in enumerate(probs)}
    assert dict(scores) == plain and scores == plain
    assert 3 in scores and len(page.blocks) not in scores and "3" not in scores
    with pytest.raises(KeyError):
        scores[len(page.blocks)]
    assert pickle.loads(pickle.dumps(scores)) == plain
    assert selection.union(selection).scores == plain
