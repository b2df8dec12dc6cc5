"""Interval parsing of messy model outputs, and chunking under a token budget."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blockdex import segment
from blockdex.intervals import chunk_page, format_intervals, parse_interval_text, parse_intervals
from blockdex.page import Selection, intervals_from_indices, merge_intervals
from blockdex.predict import predict_in_chunks
from blockdex.predict.basic import AllPredictor, OraclePredictor
from blockdex.segment import count_tokens

VALID = range(0, 10)


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("[[1,2],[3,5],[7,7]]", ((1, 5), (7, 7))),
        ("[1,3]", ((1, 3),)),
        ("1-3, 7", ((1, 3), (7, 7))),
        ("1 to 3 and 8", ((1, 3), (8, 8))),
        ("[2, 4, 6]", ((2, 2), (4, 4), (6, 6))),
        ("NA", ()),
        ("n/a", ()),
        ("[]", ()),
        (
            "The relevant blocks are [[2, 3], [6, 6]] because they hold the answer.",
            ((2, 3), (6, 6)),
        ),
        ("```json\n[[0,1],[4,4]]\n```", ((0, 1), (4, 4))),
        ("Sure!\n```\n[[5,3]]\n```", ((3, 5),)),  # reversed pair swapped
        ("[[1,4],[2,6],[7,8]]", ((1, 8),)),  # overlapping and touching merged
        ("[[0,2]] [9]", ((0, 2), (9, 9))),
    ],
)
def test_messy_answers_parse_to_sorted_merged_intervals(answer: str, expected: tuple) -> None:
    sel = parse_intervals(answer, VALID)
    assert sel.intervals == expected
    assert not sel.warnings


def test_out_of_range_indices_are_dropped_with_a_warning() -> None:
    sel = parse_intervals("[[2,3],[8,15],[40,50]]", VALID)
    assert sel.intervals == ((2, 3), (8, 9))
    assert any("outside" in w for w in sel.warnings)


@pytest.mark.parametrize("garbage", ["I cannot help with that.", "{}", "[[a,b]]", "", "   "])
def test_garbage_never_raises(garbage: str) -> None:
    sel = parse_intervals(garbage, VALID)
    assert sel.intervals == ()


def test_garbage_with_words_says_why() -> None:
    _, warnings = parse_interval_text("I cannot help with that.")
    assert warnings and "could not read" in warnings[0]


def test_non_contiguous_valid_indices_are_respected() -> None:
    sel = parse_intervals("[[0,9]]", [2, 3, 7])
    assert sel.indices == (2, 3, 7)


def test_format_round_trips() -> None:
    assert format_intervals([(3, 5), (1, 2), (9, 9)]) == "[[1,5],[9,9]]"
    assert format_intervals([]) == "NA"
    assert parse_intervals(format_intervals([(0, 2), (5, 6)]), VALID).intervals == ((0, 2), (5, 6))


@pytest.fixture(scope="module")
def big_page():
    html = (
        "<body>"
        + "".join(
            f"<h2>Section {i}</h2><p>{'Some words in a paragraph. ' * (3 + i % 7)}</p>"
            for i in range(60)
        )
        + "</body>"
    )
    return segment(html)


@pytest.mark.parametrize("budget", [60, 200, 1000])
def test_no_chunk_exceeds_the_budget(big_page, budget: int) -> None:
    chunks = chunk_page(big_page, budget, count_tokens)
    assert len(chunks) > 1
    covered = [b.index for c in chunks for b in c.blocks]
    assert covered == list(big_page.indices())  # every block once, in order
    for chunk in chunks:
        size = sum(count_tokens(b.tagged()) + 1 for b in chunk.blocks)
        assert size <= budget or len(chunk.blocks) == 1


def test_chunked_prediction_equals_unchunked(big_page) -> None:
    wanted = [i for i in big_page.indices() if i % 3 == 0 or 40 <= i <= 55]
    oracle = OraclePredictor(indices=wanted)
    whole = oracle.predict(big_page)
    chunked = predict_in_chunks(oracle, big_page, None, 80, count_tokens)
    assert chunked.intervals == whole.intervals
    assert predict_in_chunks(AllPredictor(), big_page, None, 80, count_tokens).indices == (
        big_page.indices()
    )


def test_selection_algebra() -> None:
    a = Selection.from_indices([1, 2, 3, 7])
    b = Selection.from_indices([4, 9])
    assert a.intervals == ((1, 3), (7, 7))
    assert a.union(b).intervals == ((1, 4), (7, 7), (9, 9))
    assert 7 in a and 5 not in a
    assert Selection().format() == "NA"


@given(st.lists(st.integers(min_value=-5, max_value=60), max_size=40))
@settings(max_examples=300, deadline=None)
def test_intervals_from_indices_are_the_merged_single_intervals(indices: list[int]) -> None:
    got = intervals_from_indices(indices)
    assert got == merge_intervals((i, i) for i in indices)
    assert {i for a, b in got for i in range(a, b + 1)} == set(indices)
