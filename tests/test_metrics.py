"""Metrics on hand-computed examples."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from blockdex.evaluate.metrics import (
    lcs_length,
    lcs_prf,
    snippet_prf,
    summarise,
    token_prf,
    word_tokens,
)


def _lcs_table(a: list[str], b: list[str]) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def test_word_tokens_lowercase_and_split_on_non_word() -> None:
    assert word_tokens("Hello, World! it's 2026") == ["hello", "world", "it", "s", "2026"]


def test_token_prf_hand_computed() -> None:
    # predicted bag {a:2, b:1, c:1}; reference bag {a:1, b:1, d:2}: overlap a:1 + b:1 = 2
    s = token_prf("a a b c", "a b d d")
    assert s.precision == pytest.approx(2 / 4)
    assert s.recall == pytest.approx(2 / 4)
    assert s.f1 == pytest.approx(0.5)


def test_snippet_prf_hand_computed_and_elementwise() -> None:
    # 6 must-haves found, 2 missed, 3 must-not-haves found: P 6/9, R 6/8
    p, r, f = snippet_prf(6, 2, 3)
    assert (float(p), float(r)) == pytest.approx((6 / 9, 6 / 8))
    assert float(f) == pytest.approx(2 * (6 / 9) * (6 / 8) / (6 / 9 + 6 / 8))
    assert float(snippet_prf(0, 4, 2)[2]) == 0.0  # nothing found: 0, not a division by zero
    assert float(snippet_prf(0, 0, 0)[2]) == 0.0
    # one call over rows of sums (a bootstrap's resamples) gives each row's own scores
    tp, fn, fp = np.array([6, 0, 3]), np.array([2, 4, 0]), np.array([3, 2, 1])
    rows = snippet_prf(tp, fn, fp)[2]
    assert rows.tolist() == pytest.approx(
        [float(snippet_prf(a, b, c)[2]) for a, b, c in zip(tp, fn, fp, strict=True)]
    )


def test_empty_cases() -> None:
    assert token_prf("", "").f1 == 1.0
    assert token_prf("", "some words").f1 == 0.0
    assert token_prf("words", "").f1 == 0.0


def test_lcs_hand_computed() -> None:
    assert lcs_length(["a", "b", "c", "d", "e"], ["a", "c", "e"]) == 3
    assert lcs_length(["a", "b", "c"], ["c", "b", "a"]) == 1
    s = lcs_prf("the cat sat on the mat", "the mat sat")  # LCS "the sat" or "the mat": 2
    assert s.precision == pytest.approx(2 / 6)
    assert s.recall == pytest.approx(2 / 3)


def test_lcs_order_matters_where_bag_of_words_does_not() -> None:
    assert token_prf("c b a", "a b c").f1 == 1.0
    assert lcs_prf("c b a", "a b c").f1 == pytest.approx(1 / 3)


def test_lcs_matches_the_textbook_table_on_random_sequences() -> None:
    rng = random.Random(7)
    for n, m in itertools.product((0, 1, 5, 40, 130), (0, 3, 70)):
        a = [rng.choice("abcde") for _ in range(n)]
        b = [rng.choice("abcdef") for _ in range(m)]
        assert lcs_length(a, b) == _lcs_table(a, b)


def test_lcs_is_fast_enough_for_long_pages() -> None:
    a = [f"w{i % 997}" for i in range(20_000)]
    b = list(reversed(a))
    assert 0 < lcs_length(a, b) <= 20_000  # completes: memory is O(n), not O(n*m)


def test_summarise_mean_and_median() -> None:
    scores = [token_prf("a", "a"), token_prf("a b", "a c"), token_prf("x", "y")]
    out = summarise(scores)
    assert out["f1"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert out["f1_median"] == pytest.approx(0.5)
    assert out["pages"] == 3
