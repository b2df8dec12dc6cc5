"""Readability's decision as feature columns (blockdex.candidates) and the block field it reads."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from blockdex.candidates import CANDIDATE_NAMES, class_code, readability_columns
from blockdex.clean import clean_document
from blockdex.features import FEATURE_NAMES, block_features
from blockdex.page import Page
from blockdex.parse import parse_html

segment_module = importlib.import_module("blockdex.segment")
candidates_module = importlib.import_module("blockdex.candidates")

_PROSE = (
    "The council voted on Tuesday to extend the programme, which had run for three years, "
    "after a long debate about its cost, its reach and its future."
)

ARTICLE = f"""<html><body class="home">
<div id="header" class="site-header"><ul class="menu"><li><a href="/">Home</a></li>
<li><a href="/news">News</a></li></ul></div>
<div id="main" class="layout">
  <div class="article-body">
    <h1>Council extends programme</h1>
    <p>{_PROSE}</p><p>{_PROSE}</p><p>{_PROSE}</p>
  </div>
  <div class="related-stories"><h2>Related</h2>
    <ul><li><a href="/a">Another story about the council and its many debates</a></li>
    <li><a href="/b">A second story about the programme and its cost</a></li></ul>
  </div>
  <div id="comments" class="comment-list">
    <div class="comment-body"><p>{_PROSE}</p></div>
  </div>
</div></body></html>"""


def _page(html: str) -> Page:
    return segment_module.segment_document(clean_document(parse_html(html)))


def _columns(page: Page) -> dict[str, np.ndarray]:
    cols = readability_columns(page.blocks)
    return {name: cols[:, k] for k, name in enumerate(CANDIDATE_NAMES)}


def _rows(page: Page, needle: str) -> list[int]:
    return [i for i, b in enumerate(page.blocks) if needle in b.text]


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        ("", (False, 0)),
        ("footer", (True, -25)),  # unlikely, and negative
        ("column-footer", (False, -25)),  # "column" may be content: not removed
        ("article-body", (False, 25)),
        ("post comment", (True, 0)),  # positive and negative cancel
        ("ad-break", (True, 0)),
        ("brand", (False, 0)),  # "and" only spares an unlikely element
    ],
)
def test_class_code(tokens: str, expected: tuple[bool, int]) -> None:
    assert class_code(tokens) == expected


def test_scope_attrs_line_up_with_scope() -> None:
    page = _page(ARTICLE)
    for b in page.blocks:
        assert len(b.scope_attrs) == len(b.scope)
    (first,) = _rows(page, "Council extends")
    # body, div#main.layout (class first, then id), div.article-body, h1
    assert page.blocks[first].scope_attrs == ("home", "layout main", "article-body", "")


def test_article_kept_comments_removed_related_weighed_down() -> None:
    page = _page(ARTICLE)
    cols = _columns(page)
    prose = _rows(page, "The council voted")
    article, comment = prose[:3], prose[3]
    assert cols["rd_keep"][article].tolist() == [1.0, 1.0, 1.0]
    assert cols["rd_cand_ratio"][article].tolist() == [1.0, 1.0, 1.0]
    assert cols["rd_keep"][comment] == 0.0 and cols["rd_removed"][comment] == 1.0
    (menu,) = _rows(page, "Home")
    assert cols["rd_removed"][menu] == 1.0  # inside id=header / class=menu
    (related,) = _rows(page, "Another story")
    # nearest four: div#main.layout +1, div.related-stories -1, ul, li; the article's: body,
    # div#main.layout +1, div.article-body +1, p
    assert cols["rd_class_weight"][related] == 0.0
    assert cols["rd_class_weight"][article[0]] == 2.0
    kept = [*_rows(page, "Council extends"), *article]  # everything in div.article-body
    assert np.flatnonzero(cols["rd_keep"]).tolist() == kept
    kept_chars = sum(len(page.blocks[i].text) for i in kept)
    total = sum(len(b.text) for b in page.blocks)
    assert cols["rd_top_share"][0] == pytest.approx(kept_chars / total)


def test_columns_are_the_last_feature_columns() -> None:
    page = _page(ARTICLE)
    X = block_features(page)
    assert X.shape == (len(page.blocks), len(FEATURE_NAMES))
    assert FEATURE_NAMES[-len(CANDIDATE_NAMES) :] == CANDIDATE_NAMES
    np.testing.assert_array_equal(X[:, -len(CANDIDATE_NAMES) :], readability_columns(page.blocks))


def test_no_paragraph_no_candidate() -> None:
    page = _page("<ul><li>one</li><li>two</li></ul>")
    cols = readability_columns(page.blocks)
    assert cols.shape == (2, len(CANDIDATE_NAMES))
    assert not cols.any()
    assert readability_columns(()).shape == (0, len(CANDIDATE_NAMES))
