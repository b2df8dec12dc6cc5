"""Each page's own threshold: its columns, the choice among candidates, the predictor's use of it
and its training rows (issue 41)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from importlib import resources
from typing import Any

import numpy as np
import pytest

from blockdex import segment
from blockdex.predict.content import ContentModel, ContentPredictor
from blockdex.predict.page_threshold import (
    CANDIDATES,
    PAGE_THRESHOLD_COLUMN_NAMES,
    PageThreshold,
    candidate_rows,
    page_columns,
)

CANDIDATE_COLUMN = len(PAGE_THRESHOLD_COLUMN_NAMES) - 1


def _tree_on_candidate(low: float, high: float, gain: float, spec_margin: float = 0.01) -> dict:
    """A one-tree forest predicting ``gain`` for candidates in (low, high] and a loss elsewhere."""
    forest = {
        # node 0: candidate <= low → leaf 1 (a loss); else node 2: candidate <= high → leaf 3
        # (the gain), else leaf 4 (a loss)
        "feature": [CANDIDATE_COLUMN, 0, CANDIDATE_COLUMN, 0, 0],
        "threshold": [low, float("inf"), high, float("inf"), float("inf")],
        "left": [1, 1, 3, 3, 4],
        "right": [2, 1, 4, 3, 4],
        "value": [0.0, -0.02, 0.0, gain, -0.01],
        "roots": [0],
        "depth": 2,
    }
    return {
        "columns": list(PAGE_THRESHOLD_COLUMN_NAMES),
        "candidates": list(CANDIDATES),
        "margin": spec_margin,
        "forest": forest,
    }


def test_page_columns_read_the_words_at_each_level() -> None:
    probs = np.array([0.95, 0.6, 0.25, 0.05])
    words = np.array([10, 30, 40, 20])
    cols = page_columns(probs, words)
    assert len(cols) == len(PAGE_THRESHOLD_COLUMN_NAMES) - 1
    named = dict(zip(PAGE_THRESHOLD_COLUMN_NAMES, cols, strict=False))
    assert named["page_words_p50"] == pytest.approx(0.4)  # 10 + 30 of 100 words
    assert named["page_words_p20"] == pytest.approx(0.8)
    assert named["page_words_p90"] == pytest.approx(0.1)
    assert named["page_blocks_p55"] == pytest.approx(0.5)
    assert named["page_mean_p_by_words"] == pytest.approx((9.5 + 18 + 10 + 1) / 100)
    assert named["page_max_p"] == pytest.approx(0.95)
    rows = candidate_rows(cols)
    assert rows.shape == (len(CANDIDATES), len(PAGE_THRESHOLD_COLUMN_NAMES))
    assert rows[:, -1].tolist() == pytest.approx(list(CANDIDATES))


def test_the_page_threshold_is_the_best_candidate_only_when_it_gains_enough() -> None:
    probs, words = np.array([0.9, 0.4, 0.2]), np.array([5, 5, 5])
    gaining = PageThreshold(_tree_on_candidate(0.275, 0.325, gain=0.04))
    assert gaining.of(probs, words, default=0.55) == pytest.approx(0.3)
    small = PageThreshold(_tree_on_candidate(0.275, 0.325, gain=0.005))
    assert small.of(probs, words, default=0.55) == 0.55  # under the margin: the model's own
    assert small.of(np.zeros(0), np.zeros(0), default=0.55) == 0.55


def test_a_page_threshold_with_other_columns_is_refused() -> None:
    spec = _tree_on_candidate(0.275, 0.325, gain=0.04)
    spec["columns"] = spec["columns"][:-1]
    with pytest.raises(ValueError):
        PageThreshold(spec)


def _shipped_spec() -> dict[str, Any]:
    ref = resources.files("blockdex.predict").joinpath("content_model.json")
    return json.loads(ref.read_text(encoding="utf-8"))


def test_the_predictor_cuts_each_page_at_its_own_threshold(article_html: str) -> None:
    spec = copy.deepcopy(_shipped_spec())
    assert "page_threshold" not in spec  # the shipped model has one threshold for all pages
    plain = ContentModel(spec)
    spec["page_threshold"] = _tree_on_candidate(0.175, 0.225, gain=0.05)
    model = ContentModel(spec)
    page = segment(article_html)
    probs = model.probabilities(page)
    own = ContentPredictor(model)
    assert own.page_threshold(page, probs) == pytest.approx(0.2)
    # favor moves the page's threshold as it moves the model's, within the allowed range
    precise = ContentPredictor(model, favor="precision")
    assert precise.page_threshold(page, probs) == pytest.approx(0.4)
    assert ContentPredictor(model, favor="recall").page_threshold(page, probs) == 0.05
    # an explicit threshold wins; a model without a page threshold uses its own
    assert ContentPredictor(model, threshold=0.7).page_threshold(page, probs) == 0.7
    assert ContentPredictor(plain).page_threshold(page, probs) == plain.threshold
    low = set(own.predict(page).indices)
    high = set(ContentPredictor(model, threshold=model.threshold).predict(page).indices)
    assert high == set(ContentPredictor(plain).predict(page).indices)
    assert low >= high  # a lower cut keeps at least what the model's own keeps here


def test_an_unreadable_page_threshold_is_a_clear_error() -> None:
    from blockdex.errors import BlockdexError

    spec = copy.deepcopy(_shipped_spec())
    spec["page_threshold"] = {"columns": list(PAGE_THRESHOLD_COLUMN_NAMES)}
    with pytest.raises(BlockdexError, match="page threshold"):
        ContentModel(spec)


def test_training_rows_are_each_candidates_gain_over_the_models_threshold() -> None:
    from blockdex.train import PageData, page_threshold_rows

    # one page of three one-word blocks, content the first two; the second scores 0.3
    words = [["a"], ["b"], ["c"]]
    page = PageData(
        id="p",
        dataset="d",
        X=np.zeros((3, 1), dtype=np.float32),
        groups=np.zeros((3, 1), dtype=np.int32),
        share=np.array([1, 1, 0], dtype=np.float32),
        block_tokens=words,
        gt_tokens=Counter(["a", "b"]),
        words=np.array([1.0, 1.0, 1.0]),
    )
    probs = [np.array([0.9, 0.3, 0.05])]
    X, y, w = page_threshold_rows([probs], [page], t0=0.55, dataset_balance=0.5)
    assert X.shape == (len(CANDIDATES), len(PAGE_THRESHOLD_COLUMN_NAMES))
    gain = dict(zip(CANDIDATES, y, strict=True))
    # at 0.55 only "a" is kept (F1 2/3); from 0.1 to 0.3 "a" and "b" (F1 1)
    assert gain[0.3] == pytest.approx(1 / 3) and gain[0.1] == pytest.approx(1 / 3)
    assert gain[0.55] == 0 and gain[0.85] == 0
    assert (w == 1).all()


def test_train_learns_a_page_threshold_that_loads(shared_data, tmp_path, article_html) -> None:
    pytest.importorskip("lightgbm", reason="training needs the 'train' extra (lightgbm)")
    from blockdex.cli import main

    out = tmp_path / "model.json"
    argv = ["train", "--datasets", "scrapinghub-aeb", "--limit", "24", "--trees", "4"]
    assert main([*argv, "--threshold-repeats", "1", "--page-threshold", "--out", str(out)]) == 0
    spec = json.loads(out.read_text())
    assert spec["page_threshold"]["columns"] == list(PAGE_THRESHOLD_COLUMN_NAMES)
    model = ContentModel.load(out)
    assert model.page_threshold is not None
    page = segment(article_html)
    probs = model.probabilities(page)
    assert ContentPredictor(model).page_threshold(page, probs) in (*CANDIDATES, model.threshold)
