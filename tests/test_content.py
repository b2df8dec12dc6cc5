"""The main-content model: plain-data model file, determinism, and what a reader would keep."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from blockdex import extract, segment
from blockdex.features import CONTEXT_NAMES, FEATURE_NAMES, block_features
from blockdex.predict import DEFAULT_PREDICTOR, get_predictor
from blockdex.predict.content import ContentModel, ContentPredictor, Forest

PAGES = Path(__file__).parent / "data" / "pages"


def text_of(name: str) -> str:
    return extract((PAGES / name).read_text(encoding="utf-8"), output="text")


def test_model_file_is_plain_json_and_loads_without_pickle() -> None:
    raw = resources.files("blockdex.predict").joinpath("content_model.json").read_bytes()
    assert not raw.startswith(b"\x80")  # not a pickle stream
    spec = json.loads(raw)
    assert spec["format"] == "blockdex-content-model"
    assert spec["features"] == list(FEATURE_NAMES)
    assert spec["context_features"] == list(CONTEXT_NAMES)
    model = ContentModel(spec)
    assert 0.0 < model.threshold < 1.0
    assert len(raw) < 5_000_000  # a few MB at most


def test_content_is_the_default_predictor() -> None:
    assert DEFAULT_PREDICTOR == "content"
    assert isinstance(get_predictor("content"), ContentPredictor)


def test_predictions_are_deterministic(article_html: str) -> None:
    page = segment(article_html)
    a = ContentPredictor().block_probabilities(page)
    b = ContentPredictor().block_probabilities(segment(article_html))
    assert np.array_equal(a, b)
    assert a.shape == (len(page.blocks),) and ((a >= 0) & (a <= 1)).all()


def test_forest_matches_a_hand_built_tree() -> None:
    # one tree: x0 <= 0.5 ? (x1 <= 2 ? -1 : 1) : 3
    spec = {
        "feature": [0, 1, 0, 0, 0],
        "threshold": [0.5, 2.0, "inf", "inf", "inf"],
        "left": [1, 2, 2, 3, 4],
        "right": [4, 3, 2, 3, 4],
        "value": [0, 0, -1.0, 1.0, 3.0],
        "roots": [0],
        "depth": 2,
    }
    forest = Forest(spec)
    X = np.array([[0.1, 1.0], [0.1, 5.0], [0.9, 0.0]])
    assert forest.raw(X).tolist() == [-1.0, 1.0, 3.0]


def test_forest_in_row_chunks_gives_the_same_sums(monkeypatch) -> None:
    forest = ContentModel.load().stage1
    monkeypatch.setattr(forest, "_packed", None)  # the numpy walk (a forest too large to pack)
    X = np.random.default_rng(3).random((2_500, len(FEATURE_NAMES)), dtype=np.float32) * 20
    whole = forest._raw(X)  # all rows at once
    monkeypatch.setattr(Forest, "ROWS_PER_CHUNK", 7)
    chunked = forest.raw(X)
    assert chunked.shape == (2_500,) and np.array_equal(whole, chunked)
    assert forest.raw(X[:0]).shape == (0,)


def test_model_with_other_features_is_refused() -> None:
    raw = resources.files("blockdex.predict").joinpath("content_model.json").read_text()
    spec = json.loads(raw)
    spec["features"] = spec["features"][:-1]
    with pytest.raises(Exception, match="retrain"):
        ContentModel(spec)


def test_markdown_is_headed_by_the_page_title_once() -> None:
    for name, title in (
        ("blog.html", "# Why I switched my garden to drip irrigation"),
        ("product.html", "# Fieldline 40 L Hiking Backpack"),
    ):
        md = extract((PAGES / name).read_text(encoding="utf-8"))
        assert md.startswith(title + "\n")
        assert md.count(title.lstrip("# ")) == 1


def test_article_drops_navigation_footer_and_keeps_the_story(article_html: str) -> None:
    text = extract(article_html, output="text")
    assert "The trick that makes the lagoon flexible is pumping." in text
    assert "Flood generation" in text  # the data table
    assert "Privacy policy" not in text and "Accept all" not in text


def test_blog_keeps_the_post_and_drops_comments_share_and_related() -> None:
    text = text_of("blog.html")
    assert "Each emitter delivers two litres an hour" in text
    assert "chewed by something, probably a squirrel" in text
    for boilerplate in ("Share on Facebook", "You might also like", "Leave a reply", "Theme by"):
        assert boilerplate not in text
    assert "Which timer did you use?" not in text


def test_product_page_keeps_description_and_specifications() -> None:
    text = text_of("product.html")
    assert "ventilated back panel" in text
    assert "210D recycled nylon ripstop" in text
    for boilerplate in (
        "Customers also bought",
        "newsletter",
        "All rights reserved",
        "Free shipping",
    ):
        assert boilerplate not in text


def test_forum_thread_keeps_every_post() -> None:
    text = text_of("forum.html")
    assert "smells strongly of acetone" in text
    assert "An acetone smell means the yeast and bacteria are hungry" in text
    assert "after two days the smell is gone" in text
    for boilerplate in ("Similar threads", "Powered by ForumSoft", "Forum rules"):
        assert boilerplate not in text


def test_docs_page_keeps_code_blocks_as_fences() -> None:
    md = extract((PAGES / "docs.html").read_text(encoding="utf-8"))
    assert "```python" in md
    assert 'frame = dl.read_csv("sales.csv", na_values=["n/a", "-"])' in md
    assert "## Handling missing values" in md
    for boilerplate in ("Search docs", "Built with Sphinx", "Changelog"):
        assert boilerplate not in md


def test_data_table_is_kept_whole() -> None:
    md = extract((PAGES / "table.html").read_text(encoding="utf-8"))
    rows = [" ".join(line.split()) for line in md.splitlines()]
    assert "| Month | Rainfall (mm) | Rainy days |" in rows
    for month in ("January", "June", "December"):
        assert any(r.startswith(f"| {month} |") for r in rows)
    assert "Annual rainfall averages about 738 millimetres." in md
    for boilerplate in ("We use cookies", "Popular pages", "Terms"):
        assert boilerplate not in md


def test_news_story_drops_cookie_banner_navigation_most_read_and_footer() -> None:
    text = text_of("news.html")
    assert "71 per cent backed the increase" in text
    assert "said Mayor Ingrid Saeter" in text
    assert "What happens next" in text  # a subheading inside the story
    assert "smaller passenger boat will run instead" in text
    for boilerplate in (
        "We use cookies",
        "Accept all",
        "Sport",
        "Most read",
        "Storm warning issued",
        "Share on Facebook",
        "All rights reserved",
    ):
        assert boilerplate not in text


def test_recipe_keeps_ingredients_and_method_as_lists() -> None:
    md = extract((PAGES / "recipe.html").read_text(encoding="utf-8"))
    assert "Red lentils collapse in twenty minutes" in md
    assert "- 250 g red lentils, rinsed" in md
    assert "1. Warm the oil in a large pan" in md
    assert "4. Blend half of the soup" in md
    for boilerplate in ("Popular recipes", "Banana bread", "Follow us"):
        assert boilerplate not in md


def test_question_page_keeps_the_question_and_every_answer_with_code() -> None:
    md = extract((PAGES / "qa.html").read_text(encoding="utf-8"))
    assert "The commit has not been pushed anywhere yet." in md
    assert "git reset --soft HEAD~1" in md and "```" in md
    assert "git commit --amend" in md  # the second answer
    for boilerplate in ("Hot Network Questions", "node_modules", "Log in", "CC BY-SA"):
        assert boilerplate not in md


def test_chinese_article_keeps_every_paragraph() -> None:
    """Chinese has no spaces between words: each ideograph counts as a word, so a paragraph is
    prose, not one long "word" (before, two of the four paragraphs were dropped)."""
    text = text_of("zh-news.html")
    for paragraph in (
        "从本月十五日起",
        "图书馆负责人介绍",
        "为保证夜间服务",
        "不少读者对这一变化表示欢迎",
    ):
        assert paragraph in text
    for boilerplate in ("热点排行", "地铁五号线", "版权所有", "分享到", "财经"):
        assert boilerplate not in text


def test_ad_slot_labels_between_paragraphs_are_dropped() -> None:
    # the model alone keeps all three labels here (they sit between the paragraphs)
    html = (
        "<html><body><article><h1>Harbour news</h1><p>The ferry leaves Eskholm harbour at ten "
        "past seven every morning, and the crossing takes forty minutes in calm weather.</p>"
        "<p>Advertisement</p><p>Story continues below advertisement</p><p>In winter the "
        "timetable changes and the first boat leaves at eight, the harbour master said on "
        "Monday.</p><p>Sponsored content:</p></article></body></html>"
    )
    text = extract(html, output="text")
    assert "ten past seven" in text and "harbour master said" in text
    assert "dvertisement" not in text and "Sponsored" not in text
    assert "Advertisement" not in text_of("recipe.html")
    # a sentence that merely mentions an advertisement is prose, not a label
    mention = "The advertisement ran for a week in the harbour paper before anyone noticed."
    text = extract(html.replace("<p>Advertisement</p>", f"<p>{mention}</p>"), output="text")
    assert mention in text


def test_a_thread_under_a_two_paragraph_post_is_dropped() -> None:
    text = text_of("long-comments.html")
    assert "history of the Hanseatic League" in text
    for comment in ("Russian novel my book club picked", "field guide to mushrooms", "Leave a"):
        assert comment not in text


def test_an_open_thread_keeps_its_one_line_post_and_drops_the_comments() -> None:
    # Sixteen long comments outweigh the post ten to one. The thirteenth session's model kept
    # them as the page's prose (a known miss then); the fourteenth session's drops them.
    thread = text_of("open-thread.html")
    assert "The floor is yours for the month" in thread
    for comment in ("salt trade", "lighthouse keeper", "short stories about train stations"):
        assert comment not in thread


@pytest.mark.xfail(
    strict=True,
    reason="known misses (benchmarks/NOTES.md): a newsletter box inside an article keeps its "
    "'Sign up to our free newsletter.' line (its heading is dropped); a figure caption is "
    "dropped (the training sets' annotators drop captions); a three-word 'Rate this recipe' "
    "line between the method and the star widget is kept (0.69 with the fourteenth session's "
    "model; an earlier draw dropped it). Strict: when this passes, the limitations are fixed "
    "and the mark must go.",
)
def test_known_misses_newsletter_box_caption_and_rating_line() -> None:
    news = text_of("news.html")
    assert "Get the Courier every morning" not in news
    assert "Sign up to our free newsletter" not in news
    assert "leaves Eskholm harbour on its 07:10 crossing" in news
    assert "Rate this recipe" not in text_of("recipe.html")


def test_no_comments_drops_kept_comment_blocks_and_keeps_the_post() -> None:
    # A one-line post under sixteen long comments (the scrapinghub-aeb open-thread page,
    # benchmarks/NOTES.md). Whether the model keeps the thread depends on its training draw
    # (the thirteenth session's kept it, the fourteenth's drops it), so the filter is tested
    # with every block kept (threshold 0): what --no-comments removes is then visible.
    html = (PAGES / "open-thread.html").read_text(encoding="utf-8")
    everything = extract(html, output="text", predictor=ContentPredictor(threshold=0.0))
    no_comments = ContentPredictor(threshold=0.0, comments=False)
    sel = no_comments.predict(segment(html))
    text = extract(html, output="text", predictor=no_comments)
    for comment in ("salt trade", "lighthouse keeper", "short stories about train stations"):
        assert comment in everything and comment not in text
    assert "Leave a Reply" in everything and "Leave a Reply" not in text
    assert "The floor is yours for the month" in text and not sel.warnings


def test_no_comments_keeps_a_page_that_is_all_discussion() -> None:
    # eight posts, each in a comment-named element inside id="discussion"
    html = (PAGES / "all-discussion.html").read_text(encoding="utf-8")
    page = segment(html)
    default = ContentPredictor().predict(page)
    sel = ContentPredictor(comments=False).predict(page)
    assert sel.indices == default.indices and "Post 5" in extract(html, output="text")
    assert any("comment or discussion section" in w for w in sel.warnings)


def test_words_of_scripts_without_spaces_are_their_characters() -> None:
    from blockdex.features import word_count

    assert word_count("drip line along every bed") == 5
    assert word_count("2026年10月8日") == 6  # 2026 年 10 月 8 日
    assert word_count("日本語のテキスト abc") == 9
    assert word_count("한국어 문장") == 2  # Korean separates its words with spaces


def test_features_have_the_declared_width(article_html: str) -> None:
    X = block_features(segment(article_html))
    assert X.shape[1] == len(FEATURE_NAMES)
    assert np.isfinite(X).all()


def test_heuristic_predictor_needs_no_model_and_keeps_the_story() -> None:
    from blockdex.predict.heuristic import HeuristicPredictor

    html = (PAGES / "blog.html").read_text(encoding="utf-8")
    text = extract(html, output="text", predictor="heuristic")
    assert "Each emitter delivers two litres an hour" in text
    assert "What it cost" in text  # short heading kept next to prose
    assert "Share on Facebook" not in text and "You might also like" not in text
    assert get_predictor("heuristic").name == HeuristicPredictor.name


def test_page_without_content_gives_a_reason_not_silence() -> None:
    html = "<html><body><nav><a href='/a'>Home</a> <a href='/b'>About</a></nav></body></html>"
    sel = ContentPredictor().predict(segment(html))
    assert sel.indices or sel.warnings


def test_skipping_stage_two_for_confident_blocks_keeps_every_decision() -> None:
    fast, exact = ContentPredictor(), ContentPredictor(exact=True)
    for path in sorted(PAGES.glob("*.html")):
        page = segment(path.read_text(encoding="utf-8"))
        assert fast.predict(page).intervals == exact.predict(page).intervals, path.name


def test_favor_moves_the_threshold_and_refuses_unknown_names() -> None:
    from blockdex.errors import BlockdexError
    from blockdex.predict.content import FAVOR_SHIFTS

    base = ContentPredictor()
    for favor, shift in FAVOR_SHIFTS.items():
        assert ContentPredictor(favor=favor).threshold == pytest.approx(base.threshold + shift)
    assert ContentPredictor(favor="precision", threshold=0.3).threshold == 0.3  # explicit wins
    with pytest.raises(BlockdexError, match="favor must be one of"):
        ContentPredictor(favor="accuracy")


@pytest.mark.dataset
def test_favor_recall_loses_no_ground_truth_the_balanced_decision_keeps() -> None:
    # lowering the threshold once made the stories rule take a page's own article for another
    # story (recall 1.0 -> 0.14 on a scrapinghub-aeb dev page): stories are found at the model's
    # own threshold, whatever favor asks
    from blockdex.evaluate.bench import _split
    from blockdex.evaluate.datasets import load_dataset, shared_data_dir
    from blockdex.evaluate.metrics import token_prf
    from blockdex.extract import Extractor

    if shared_data_dir() is None:
        pytest.skip("../shared/data is absent: set BLOCKDEX_DATA to run the dataset tests")
    pages = [p for p in load_dataset("scrapinghub-aeb") if _split(p) == "dev"]
    balanced, recall = Extractor(), Extractor(favor="recall")
    worse = [
        p.id
        for p in pages
        if token_prf(recall.extract(p.html, url=p.url, output="text"), p.ground_truth).recall
        < token_prf(balanced.extract(p.html, url=p.url, output="text"), p.ground_truth).recall
        - 0.02
    ]
    assert len(pages) >= 30 and not worse, worse


REPEATS = """<html><head><title>Harbour tours</title></head><body><main>
<h1>Harbour tours</h1>
<div class="slide"><p>See the old harbour from the water on a two hour boat tour.</p></div>
<div class="slide"><p>See the old harbour from the water on a two hour boat tour.</p></div>
<p>Boats leave every hour from the north pier between nine and five.</p>
<p>Book now</p><p>Book now</p>
<table><tr><td>Adult ticket</td><td>12 EUR</td></tr><tr><td>Adult ticket</td><td>12 EUR</td></tr></table>
<pre>ticket --print --adult two</pre><pre>ticket --print --adult two</pre>
</main></body></html>"""


def test_a_text_kept_twice_is_kept_once_but_short_lines_rows_and_code_stay() -> None:
    from blockdex.predict.content import REPEAT_MIN_WORDS, without_repeats

    page = segment(REPEATS)
    texts = [b.text for b in page.blocks]
    keep = np.ones(len(texts), dtype=bool)
    kept = [texts[i] for i in np.flatnonzero(without_repeats(page, keep))]
    slide = "See the old harbour from the water on a two hour boat tour."
    assert texts.count(slide) == 2 and kept.count(slide) == 1
    assert kept.count("Book now") == 2  # under REPEAT_MIN_WORDS words: a template's button
    assert "Book now".count(" ") + 1 < REPEAT_MIN_WORDS
    rows = [t for t in texts if "Adult ticket" in t]
    assert len(rows) == 2 and [t for t in kept if "Adult ticket" in t] == rows
    assert kept.count("ticket --print --adult two") == 2
    # the first copy is the one kept; only kept blocks count as seen
    first = texts.index(slide)
    only_second = keep.copy()
    only_second[first] = False
    assert without_repeats(page, only_second)[texts.index(slide, first + 1)]


def test_repeated_text_is_dropped_by_default_and_kept_on_request() -> None:
    page = segment(REPEATS)
    slide = "See the old harbour from the water on a two hour boat tour."
    assert ContentPredictor().repeats is False
    default = [page.blocks[i].text for i in ContentPredictor().predict(page).indices]
    kept_all = [page.blocks[i].text for i in ContentPredictor(repeats=True).predict(page).indices]
    assert default.count(slide) == 1 and kept_all.count(slide) == 2


def test_an_ad_label_is_found_as_its_words_are() -> None:
    """The one-match test of a kept block's text against the ad labels answers as joining the
    text's words and looking the result up (its specification)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from blockdex.features import WORD_RE
    from blockdex.predict.content import _AD_LABEL_RE, AD_LABELS

    def spec(text: str) -> bool:
        return " ".join(WORD_RE.findall(text.lower())) in AD_LABELS

    def fast(text: str) -> bool:
        return _AD_LABEL_RE.fullmatch(text.lower()) is not None

    seen = ["Ad", "ADS!", "- Advertisement -", "Sponsored  content", "adx", "xad", "ad ad"]
    seen += ["sponsored_content", "sponsored-content", " реклама ", "广告", "Anzeige:", "İ ad"]
    seen += [label.upper() for label in AD_LABELS] + [f"[{label}]" for label in AD_LABELS]
    for text in seen:
        assert fast(text) == spec(text), text
    assert fast("Story continues below advertisement")

    pieces = st.sampled_from([*sorted(AD_LABELS), " ", "-", "_", "x", "\u00a0", "·", "\n", "1"])

    @settings(max_examples=300, deadline=None)
    @given(st.lists(pieces, max_size=6).map("".join))
    def agree(text: str) -> None:
        assert fast(text) == spec(text)

    agree()
