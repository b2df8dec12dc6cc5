"""The compiled extensions: that blockdex needs them and says so, and the trickiest of their
helpers against small oracles written here.

The compiled code is the only implementation of the rules it holds (DESIGN.md, "One
implementation of each rule"). Each rule's behaviour is tested on hand-made pages in the test
file of its module (``test_segment.py``, ``test_units.py``, ``test_items.py`` …; a few more are
at the end of this file); the helpers below are the ones where a character class, a window or a
byte width is easy to get wrong, so hypothesis compares them with a plain statement of what they
compute. The oracles are test code: no user runs them.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from collections import Counter
from itertools import accumulate, pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blockdex
from blockdex.cjk import CJK_RANGES, WORD_PATTERN
from blockdex.clean import _PROBE_STRIP as PROBE_STRIP
from blockdex.clean import HTML_WRITES, SCRIPT_NEEDLE_GROUPS, SCRIPTS_READ, STATE_NAMES
from blockdex.extensions import EXTENSIONS, require, status
from blockdex.ids import block_ids, page_ids
from blockdex.page import Block
from blockdex.pagetype import PageTypeModel
from blockdex.parse import ParseLimits, parse_bounded, parse_html
from blockdex.predict.content import ContentModel
from blockdex.units import hits_needed

SRC = Path(blockdex.__file__).parent
features_module = importlib.import_module("blockdex.features")
forest_module = importlib.import_module("blockdex.forest")
pagetype_module = importlib.import_module("blockdex.pagetype")
parse_module = importlib.import_module("blockdex.parse")
from blockdex import (  # noqa: E402
    _clean_c,
    _features_c,
    _forest_c,
    _items_c,
    _parse_c,
    _segment_c,
    _units_c,
)

# -- the extensions are required ----------------------------------------------------------------


def test_every_cython_module_is_an_extension_blockdex_requires() -> None:
    pyx = {
        ".".join(p.relative_to(SRC.parent).with_suffix("").parts) for p in SRC.glob("**/_*_c.pyx")
    }
    assert set(EXTENSIONS) == pyx
    require()  # they are all built here, and the walks read this selectolax's tree
    assert status() == f"compiled extensions: {len(EXTENSIONS)} loaded"


def test_no_module_keeps_a_pure_python_path() -> None:
    """One implementation of each rule: nothing chooses between compiled and Python code."""
    for path in SRC.glob("**/*.py"):
        text = path.read_text(encoding="utf-8")
        for needle in ("compiled is None", "compiled is not None", "BLOCKDEX_PURE_PYTHON"):
            assert needle not in text, f"{path.relative_to(SRC)}: {needle}"


@pytest.mark.parametrize("missing", ["blockdex._items_c", "blockdex.predict._content_c"])
def test_a_missing_extension_stops_the_import_with_one_line_saying_how_to_build(
    missing: str,
) -> None:
    code = f"import sys; sys.modules[{missing!r}] = None; import blockdex"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode != 0
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("blockdex.extensions.ExtensionsMissing: blockdex's compiled extensions")
    assert missing in last and "pip install ." in last and "C compiler" in last


@pytest.mark.parametrize("argv0", ["/usr/local/bin/blockdex", "-m"])
def test_the_command_says_a_missing_extension_in_one_line_without_a_traceback(argv0: str) -> None:
    code = (
        f"import sys; sys.argv[0] = {argv0!r}; sys.modules['blockdex._items_c'] = None; "
        "import blockdex"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("blockdex: error: blockdex's compiled extensions were not built")
    assert "blockdex._items_c" in lines[0] and "pip install ." in lines[0]


# -- forest evaluation ----------------------------------------------------------------------------


def test_compiled_forest_sums_equal_the_numpy_walk() -> None:
    """The numpy walk is what a forest too large for the compiled layout runs."""
    model = ContentModel.load()
    rng = np.random.default_rng(7)
    n_features = int(model.stage2.feature.max()) + 1
    X = rng.normal(0.0, 2.0, size=(2500, n_features)).astype(np.float32)
    X[:5] = 0.0  # exact ties with thresholds at 0 take the same branch
    for forest in (model.stage1, model.stage2):
        # groups of 16 rows; after them up to 8 rows one by one, 9 to 15 as one more group
        for n in (2500, 0, 1, 8, 9, 15, 16, 17, 24, 25, 33):
            fast = forest.raw(X[:n])
            assert fast.shape == (n,)
            np.testing.assert_allclose(fast, forest._raw(X[:n]), rtol=0, atol=1e-9)
        # every way a row is walked adds the same values in the same order: the same sums
        alone = np.concatenate([forest.raw(X[i : i + 1]) for i in range(40)])
        assert forest.raw(X[:40]).tolist() == alone.tolist()


def test_trees_too_deep_for_the_compiled_layout_use_the_numpy_walk() -> None:
    # one tree, a chain of depth FOREST_MAX_DEPTH + 1: 2**13 - 1 nodes a tree would be written
    depth = _forest_c.FOREST_MAX_DEPTH + 1
    n = 2 * depth + 1  # inner nodes 0..depth-1 (each x <= k goes left to a leaf), the last leaf
    feature, threshold, left, right, value = [], [], [], [], []
    for k in range(depth):
        feature.append(0)
        threshold.append(float(k))
        left.append(depth + 1 + k)  # a leaf of value k
        right.append(k + 1 if k + 1 < depth else depth)
    feature.append(0), threshold.append("inf"), left.append(depth), right.append(depth)
    value = [0.0] * (depth + 1)
    value[depth] = 99.0
    for k in range(depth):
        feature.append(0), threshold.append("inf")
        left.append(depth + 1 + k), right.append(depth + 1 + k)
        value.append(float(k))
    assert len(feature) == n
    spec = {"feature": feature, "threshold": threshold, "left": left, "right": right,
            "value": value, "roots": [0], "depth": depth}  # fmt: skip
    forest = forest_module.Forest(spec)
    assert forest._packed is None
    assert forest.raw(np.array([[-1.0], [2.5], [1e9]])).tolist() == [0.0, 3.0, 99.0]


def test_shared_nodes_and_leaves_high_up_sum_as_the_numpy_walk() -> None:
    # two trees sharing their leaves, one of them a lone leaf at depth 0 of a depth-2 forest
    spec = {
        "feature": [0, 0, 0, 0, 0],
        "threshold": [0.5, "inf", "inf", 1.5, "inf"],
        "left": [1, 1, 2, 1, 4],
        "right": [2, 1, 2, 2, 4],
        "value": [0.0, -1.0, 1.0, 0.0, 0.25],
        "roots": [0, 3, 4],
        "depth": 2,
    }
    forest = forest_module.Forest(spec)
    assert forest._packed is not None
    X = np.array([[0.0], [0.5], [1.0], [1.5], [2.0], [np.nan]])
    assert (
        forest.raw(X).tolist() == forest._raw(X).tolist() == [-1.75, -1.75, 0.25, 0.25, 2.25, 2.25]
    )


def test_packed_trees_are_complete_in_heap_order() -> None:
    forest = ContentModel.load().stage1
    nodes, value = forest._packed
    depth, n_trees = forest.depth, len(forest.roots)
    packed = nodes.view(forest_module._NODE_DTYPE)
    assert _forest_c.FOREST_NODE_BYTES == 8
    assert len(packed) == n_trees * (2**depth - 1) and len(value) == n_trees * 2**depth
    # walking the first tree by hand (children 2k + 1 and 2k + 2) gives its leaf
    rng = np.random.default_rng(3)
    X = rng.normal(0.0, 2.0, size=(20, forest.n_features)).astype(np.float32)
    one = forest_module.Forest({
        "feature": forest.feature.tolist(), "threshold": forest.threshold.tolist(),
        "left": forest.left.tolist(), "right": forest.right.tolist(),
        "value": forest.value.tolist(), "roots": forest.roots[:1].tolist(), "depth": depth,
    })  # fmt: skip
    for row in X:
        k = 0
        for _ in range(depth):
            node = packed[k]
            k = 2 * k + 1 if row[node["feature"]] <= node["threshold"] else 2 * k + 2
        assert float(value[k - (2**depth - 1)]) == one.raw(row[None, :])[0]


def test_a_model_with_an_index_out_of_range_is_refused() -> None:
    spec = {
        "feature": [0, 0, 0],
        "threshold": [0.5, "inf", "inf"],
        "left": [1, 1, 2],
        "right": [2, 1, 2],
        "value": [0.0, -1.0, 1.0],
        "roots": [0],
        "depth": 1,
    }
    assert forest_module.Forest(spec).raw(np.array([[0.0], [1.0]])).tolist() == [-1.0, 1.0]
    for key, bad in (("feature", [-1, 0, 0]), ("right", [3, 1, 2]), ("roots", [-1])):
        with pytest.raises(ValueError, match="out of range"):
            forest_module.Forest({**spec, key: bad})


# -- whitespace, tokens and words -----------------------------------------------------------------

_CJK_EDGES = sorted({chr(c) for lo, hi in CJK_RANGES for c in (lo - 1, lo, hi, hi + 1)})
_SPACES = [" ", "  ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0"]
_SPACES += ["\u1680", "\u2000", "\u2028", "\u2029", "\u202f", "\u3000", "\u200b", "\ufeff"]
_wordy = st.lists(
    st.sampled_from(
        [*_SPACES, *_CJK_EDGES, "The", "the", "AND", "of", "x", "Caf\u00e9", "a" * 70, "2024",
         "of.", "Über", "und", "\U0001f600", "\u3002", "!", "_", "\u212a", "»", "ǅ", "\u1e9e",
         "图书馆", "\uff0c", "\u0660", "\u00b2", "\u0301"]
    ),
    max_size=30,
).map("".join)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(_wordy)
def test_whitespace_squash_is_split_and_join(text: str) -> None:
    assert _segment_c.squash(text) == " ".join(text.split())


def test_whitespace_squash_of_a_text_over_the_window_is_split_and_join() -> None:
    text = " lead\u3000" + "word \t\n" * 60_000 + "\xa0tail "  # the windowed path
    assert _segment_c.squash(text) == " ".join(text.split())


@settings(max_examples=500, deadline=None)
@given(
    st.one_of(
        st.text(max_size=300), _wordy, st.text(alphabet="ab.,«»()-—…\"' \xa0\u2003", max_size=60)
    ),
    st.integers(min_value=0, max_value=8),
)
def test_probe_words_are_the_stripped_tokens_long_enough(text: str, min_len: int) -> None:
    strip = PROBE_STRIP
    lower = text.lower()
    expected = [
        w for t in lower.split() if len(t) >= min_len and len(w := t.strip(strip)) >= min_len
    ]
    assert _clean_c.probe_words(lower, min_len, strip) == expected


@settings(max_examples=1500, deadline=None)
@given(st.text(alphabet="ab_1 é\u0130\u017fK\u212a\u2603\U0001f600.-\u0660\u00b2", max_size=300))
def test_word_runs_are_what_the_pattern_finds(text: str) -> None:
    """The runs of two or more word characters, listed in order and counted in the order they
    first stand in the text: the oracle is ``\\w{2,}`` with ``findall`` and ``Counter``."""
    want = re.findall(r"\w{2,}", text)
    assert _units_c.word_runs(text) == want
    counts = _units_c.word_runs(text, Counter())
    assert list(counts.items()) == list(Counter(want).items())


_PROBE_ALPHABET = "abcdé\u0100\u2603\U0001f600 "


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(st.text(alphabet=_PROBE_ALPHABET, max_size=7), min_size=1, max_size=80),
    st.text(alphabet=_PROBE_ALPHABET, max_size=400),
    st.floats(min_value=0.0, max_value=1.2),
    st.integers(min_value=0, max_value=3),
)
def test_words_found_counts_each_word_found_as_in_does(
    words: list[str], text: str, share: float, planted: int
) -> None:
    """The probe words found in one pass (some planted in the text, some repeated, more than a
    pass's 64 distinct ones, some shorter than its four characters) reach the share exactly
    when ``in`` finds that many, and below the count needed the count is exact: the oracle is
    the word-by-word search it replaces."""
    text = text + " ".join(words[:planted])
    found = sum(w in text for w in words)
    enough = hits_needed(len(words), share)
    got = _clean_c.words_found(words, text, enough)
    assert (got >= enough) == (found / len(words) >= share)
    assert got == found or (found >= enough and got >= enough)


_TOKEN_RE = re.compile(WORD_PATTERN + "|[^\\w\\s]")  # a word, one CJK character or a mark


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(max_size=300), _wordy), st.integers(min_value=0, max_value=80))
def test_token_count_stops_one_past_the_limit(text: str, limit: int) -> None:
    full = len(_TOKEN_RE.findall(text))
    assert _segment_c.count_tokens_upto(text, limit) == min(full, limit + 1)


_PUNCT_MARKS = ".,;:!?。，；：！？"
_SENT_END = (".", "!", "?", ":", '"', "”", "»", "。", "！", "？", ")")
_WORD_UNIT_RE = re.compile(
    "[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES) + r"]|[^\s"
    + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES) + "]+"
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_wordy, min_size=1, max_size=5),
    st.sampled_from(["", "The title", "a" * 70, "Über Café und \u0130", "k \u212a"]),
)
def test_block_text_columns_count_as_split_does(texts: list[str], title: str) -> None:
    """Characters, words (``str.split``'s, each CJK character one), stop words and title words
    among the lower-cased words, the sentence end, an upper-case start, marks and digits."""
    blocks = tuple(Block(index=i, tag="p", html=t, text=t) for i, t in enumerate(texts))
    stops = features_module.stopwords()
    title_words = set(features_module.WORD_RE.findall(title.lower()))
    cols = features_module._block_columns(block_ids(blocks), stops, title_words)
    for t, row in zip(texts, cols, strict=True):
        lowered = t.lower().split()
        assert row[0] == len(t)
        assert row[1] == (len(t.split()) if t.isascii() else len(_WORD_UNIT_RE.findall(t)))
        assert row[2] == sum(w in stops for w in lowered)
        assert row[3] == sum(w in title_words for w in lowered)
        assert row[8] == t.rstrip().endswith(_SENT_END)
        assert row[9] == t[:1].isupper()
        assert row[13] == sum(c in _PUNCT_MARKS for c in t)
        assert row[14] == sum("0" <= c <= "9" for c in t)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=" ab\n\t\u00a0", max_size=12), max_size=20))
def test_item_word_counts_count_spaces_plus_one(texts: list[str]) -> None:
    blocks = tuple(Block(index=i, tag="p", html=t, text=t) for i, t in enumerate(texts))
    want = [float(t.count(" ") + 1 if t else 0) for t in texts]
    assert _items_c.word_counts(block_ids(blocks)).tolist() == want
    with pytest.raises(TypeError):  # a table is made of Block objects (or the walk's rows)
        block_ids([*blocks, object()])


# -- the raw text before parsing: controls, NUL, UTF-8, long tags --------------------------------

_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_controls = st.text(
    alphabet=st.sampled_from(
        ["a", "\x00", "\x08", "\t", "\x0b", "\x0c", "\x0e", "\x1f", " ", "\x7f", "\x80",
         "\u2019", "\U0001f600"]
    ),
    max_size=300,
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(_controls, st.integers(min_value=-5, max_value=320))
def test_control_count_and_nul_check(text: str, end: int) -> None:
    assert _parse_c.count_controls(text, end) == len(_CONTROL_RE.findall(text[: max(end, 0)]))
    assert _parse_c.has_nul(text * 40) == ("\x00" in text)


@settings(max_examples=1000, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            [*("a", "<", " ", "\x7f", "\x80", "\xe9", "\xff", "\u07ff", "\u0800", "\u2019"),
             *("\ud7ff", "\ud800", "\udbff", "\udc00", "\udfff", "\ue000", "\uffff"),
             *("\U00010000", "\U0001f600", "\U0010ffff")]
        ),
        max_size=200,
    )
)  # fmt: skip
def test_utf8_encoder_drops_lone_surrogates_as_ignore_does(text: str) -> None:
    # runs of 16+ characters take the ASCII fast path, the rest the character loop
    for t in (text, text * 20, "a" * 17 + text, text + "b" * 33):
        assert _parse_c.utf8_ignore(t) == t.encode("utf-8", "ignore")


_MARKUP_PIECES = ["<", ">", "<a", "<b ", "</a>", "<!--", "-->", "x", " ", "=", '"', "é"]
_MARKUP_PIECES += ["\u013c", "\u3e3c", "\u3c00", "\u013e", "\u2019"]  # low byte '<' or '>'
_MARKUP_PIECES += ["\U0001003c", "\U0001003e", "\U00010041"]
_ATTRIBUTE_PIECES = ["<a", " ", "b", "=", '"', "'", "/", ">", "\xa0", "\u3000", "x=1", 'c="d e"']
_markupish = st.lists(st.sampled_from(_MARKUP_PIECES + _ATTRIBUTE_PIECES), max_size=60).map("".join)
_ATTR_RE = re.compile(r"""[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=>]*))?""")


@settings(max_examples=500, deadline=None)
@given(_markupish, st.integers(0, 8))
def test_tag_scan_counts_every_lt_and_finds_the_crowded_tags(text: str, limit: int) -> None:
    """A tag may be crowded when it runs ``limit`` characters or more; it is when it holds more
    than ``limit`` attributes (the parse limits' pre-check)."""
    long_tags = [m.span() for m in re.finditer(rf"<[A-Za-z][^<>]{{{limit},}}", text)]
    assert _parse_c.long_tags(text, limit) == long_tags
    n_lt, _ = _parse_c.tag_scan(text, limit)
    assert n_lt == text.count("<")
    crowded = any(len(_ATTR_RE.findall(text[i:j])) > limit for i, j in long_tags)
    assert parse_module._tag_count_and_crowding(text, limit) == (n_lt, crowded)


def test_long_tag_scan_finds_more_spans_than_its_first_buffer() -> None:
    for wide in ("", "\u3042", "\U0001f600"):  # two- and four-byte text: a fixed first buffer
        text = wide + "".join(f"<a b=1 c=2 d{k}>x" for k in range(300)) + "<"
        assert len(_parse_c.long_tags(text, 3)) == 300
        assert _parse_c.tag_scan(text, 3)[0] == text.count("<")


# -- scripts: string literals and needles ---------------------------------------------------------

# A double-quoted literal paired the way JS pairs quotes; an unclosed one runs to its line's end
_STRING_LITERAL_RE = re.compile(r'"((?:[^"\\\n]++|\\.)*+)("|\\?(?=\n)|\\?\Z)')
_scriptish = st.lists(
    st.sampled_from(['"', "\\", "\n", "\r", "a", " ", "\u00e9", '\\"', '"x"', "\\\n", "'"]),
    max_size=50,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_scriptish, st.sampled_from([0, 1, 3]))
def test_string_literal_scan_finds_the_closed_literals(code: str, min_chars: int) -> None:
    want = [
        m.span(1)
        for m in _STRING_LITERAL_RE.finditer(code)
        if m.group(2) == '"' and len(m.group(1)) >= min_chars
    ]
    assert _clean_c.long_string_literals(code, min_chars) == want


_script_texts = st.lists(
    st.sampled_from(
        [*STATE_NAMES, *HTML_WRITES, "__", "_", "__NUXT", "__DATA_", "document.", "write",
         ".inner", "HTML", "__proto__", "x", " ", "\u00e9", "\u4e2d", "\U0001f600"]
    ),
    max_size=10,
).map("".join)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(_script_texts)
def test_script_needle_masks_name_the_needle_groups_the_code_holds(code: str) -> None:
    want = sum(
        1 << g for g, group in enumerate(SCRIPT_NEEDLE_GROUPS) if any(n in code for n in group)
    )
    tree = parse_bounded(f"<body><script>{code}</script></body>")[0]
    listed = _clean_c.script_elements(tree.root.mem_id, SCRIPTS_READ.needles)
    assert [h for *_, h in listed] == ([want] if code else [])


# -- class/id token families ----------------------------------------------------------------------

_FAMILIES = features_module.ATTR_FAMILIES
_SUBSTRING = features_module._SUBSTRING_FAMILIES


def _families_oracle(level: str) -> int:
    """The families one element's tokens name: tokens are runs between whitespace, ``_`` and
    ``-`` of at least two characters; a substring family is found anywhere in one, the others
    match it whole."""
    mask = 0
    for token in re.split(r"[\s_\-]+", level):
        if len(token) < 2:
            continue
        for k, (name, rx) in enumerate(_FAMILIES):
            hit = re.search(rx, token) if name in _SUBSTRING else re.fullmatch(f"(?:{rx})", token)
            mask |= bool(hit) << k
    return mask


_family_words = [w for _, _, w in features_module._family_word_table()]
_class_strings = st.lists(
    st.one_of(
        st.sampled_from(_family_words),
        st.sampled_from([" ", "-", "_", "--", "\xa0", "\u3000", "s", "x", "1", "\u00e9", "|"]),
        st.text(alphabet="abcdeilmnoprst", max_size=4),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=600, deadline=None)
@given(_class_strings)
def test_class_families_are_the_family_patterns(level: str) -> None:
    assert _features_c.level_mask(level) == _families_oracle(level)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_class_strings, min_size=1, max_size=4).map(" | ".join), max_size=6))
def test_family_rows_hold_every_level_then_the_nearest_two(strings: list[str]) -> None:
    rows = features_module._attr_matrix(strings)
    n = len(_FAMILIES)
    for a, row in zip(strings, rows, strict=True):
        masks = [_families_oracle(level) for level in a.split(" | ")]
        far = near = 0
        for m in masks:
            far |= m
        for m in masks[-2:]:
            near |= m
        assert row.tolist() == [float(far >> k & 1) for k in range(n)] + [
            float(near >> k & 1) for k in range(n)
        ]


def test_the_family_word_table_refuses_what_the_matcher_cannot_read() -> None:
    for row in ((0, 2, "caf\u00e9"), (0, 3, "nav"), (62, 0, "nav"), (0, 0, "")):
        with pytest.raises(ValueError, match="bad family word row"):
            _features_c.set_family_words([row])
    features_module._load_family_words()  # the table in use, loaded again


# -- the second stage's context columns -----------------------------------------------------------


def _context_oracle(p: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Neighbours 1-3 before and after, window means, the group means (scope levels, then the
    path group), the running maxima before and after, the page's mean and maximum, the rank."""
    n = len(p)
    cols: list[np.ndarray] = [p]
    for k in (1, 2, 3):
        cols.append(np.concatenate([np.zeros(min(k, n)), p[: max(n - k, 0)]]))
    for k in (1, 2, 3):
        cols.append(np.concatenate([p[k:], np.zeros(min(k, n))]))
    c = np.concatenate([[0.0], np.cumsum(p)])
    idx = np.arange(n)
    for w in features_module.PROB_WINDOWS:
        lo, hi = np.maximum(idx - w, 0), np.minimum(idx + w + 1, n)
        cols.append((c[hi] - c[lo]) / (hi - lo))
    size = int(groups.max()) + 1
    for j in (*range(1, groups.shape[1]), 0):
        g = groups[:, j]
        cols.append(
            np.bincount(g, weights=p, minlength=size)[g] / np.bincount(g, minlength=size)[g]
        )
    cols.append(np.concatenate([[0.0], np.maximum.accumulate(p)[:-1]]))
    cols.append(np.concatenate([np.maximum.accumulate(p[::-1])[::-1][1:], [0.0]]))
    cols += [np.full(n, p.mean()), np.full(n, p.max())]
    cols.append(np.argsort(np.argsort(-p, kind="stable"), kind="stable") / n)
    return np.column_stack(cols).astype(np.float32)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0, 1e-300, 0.1 + 0.2]) | st.floats(0, 1),
                  st.integers(0, 5), st.integers(0, 3)),
        min_size=1,
        max_size=60,
    )
)  # fmt: skip
def test_context_columns(rows: list[tuple[float, int, int]]) -> None:
    p = np.array([r[0] for r in rows])
    groups = np.array([[r[1], r[2], r[1] + r[2], 7, r[2]] for r in rows], dtype=np.int32)
    got = features_module.context_features(p, groups)
    np.testing.assert_allclose(got, _context_oracle(p, groups), rtol=1e-6, atol=1e-7)


def test_block_groups_put_blocks_with_one_ancestor_together() -> None:
    scopes = [(1, 2, 3, 4, 6, 10), (1, 2, 3, 4, 7, 11), (1, 2, 9), (), (8,)]
    blocks = tuple(
        Block(index=i, tag="p", html="x", text="x", path="div>p", scope=s)
        for i, s in enumerate(scopes)
    )
    g = features_module.block_groups(blockdex.Page(blocks=blocks))
    assert len(set(g[:, 0])) == 1  # one tag path
    assert g[0, 1] != g[1, 1] and g[0, 2] == g[1, 2]  # parents 6 and 7, grandparent 4
    assert g[2, 4] != g[0, 4]  # too shallow for level 4: its outermost element, 1 (not 2)
    assert list(g[:, 1]).count(g[3, 1]) == 1  # no scopes: a group of its own


def _first_seen(values: list[object]) -> list[int]:
    numbers: dict[object, int] = {}
    return [numbers.setdefault(v, len(numbers)) for v in values]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["div>p", "div>ul>li", "p"]), st.sampled_from(["", "a", "a | b"]),
                  st.lists(st.integers(-(1 << 41), 50), max_size=6)),
        max_size=30,
    )
)  # fmt: skip
def test_block_ids_number_paths_attrs_and_scopes_first_seen(
    rows: list[tuple[str, str, list[int]]],
) -> None:
    blocks = tuple(
        Block(index=i, tag="p", html="x", text="x", path=p, attrs=a, scope=tuple(s))
        for i, (p, a, s) in enumerate(rows)
    )
    found = block_ids(blocks)
    assert found.blocks is blocks
    assert found.path_ids() == _first_seen([b.path for b in blocks])
    assert found.attr_ids() == _first_seen([b.attrs for b in blocks])
    assert found.paths == list(dict.fromkeys(b.path for b in blocks))
    assert found.attrs == list(dict.fromkeys(b.attrs for b in blocks))
    flat = _first_seen([e for b in blocks for e in b.scope])
    at = list(accumulate((len(b.scope) for b in blocks), initial=0))
    assert found.scope_numbers() == [tuple(flat[a:z]) for a, z in pairwise(at)]
    assert found.n_elements == len({e for b in blocks for e in b.scope})


def test_page_ids_are_numbered_once_a_page_and_again_for_a_slice() -> None:
    page = blockdex.segment(
        "<html><body><div class='a'><p>One two three.</p><p>Four five.</p></div>"
        "<ul><li>Six</li><li>Seven</li></ul></body></html>"
    )
    ids = page_ids(page)
    assert ids is page.facts.ids and ids.blocks is page.blocks  # the walk's page brings them
    assert page_ids(page) is ids
    assert page.blocks.made_count() == 0  # read off the walk's rows: no Block was made
    sub = page.slice(1, 3)
    sub_ids = page_ids(sub)
    assert sub_ids is not ids and sub_ids.blocks is sub.blocks
    assert sub_ids.texts == [b.text for b in sub.blocks] == ids.texts[1:3]
    assert sub_ids.first == 1 and sub_ids.n == 2
    with pytest.raises(ValueError, match="wrong shape"):  # a reader checks the table's size
        features_module.compiled.block_groups(
            sub_ids, features_module.PROB_SCOPE_LEVELS, np.zeros((4, 5), dtype=np.int32)
        )


def test_block_ids_refuse_a_scope_element_past_64_bits() -> None:
    with pytest.raises(OverflowError):
        block_ids((Block(index=0, tag="p", html="x", text="x", scope=(1 << 70,)),))


# -- rules on hand-made pages that had only the twins' comparison ---------------------------------


def test_prose_in_framework_state_is_rescued_and_ids_are_not() -> None:
    story = " ".join(["The river rose overnight and the town gathered on the bridge."] * 4)
    html = (
        "<html><body><div id='app'></div>"
        '<script id="__NEXT_DATA__" type="application/json">'
        f'{{"props": {{"id": "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4", "body": "{story}"}}}}'
        "</script></body></html>"
    )
    page = blockdex.segment(html)
    rescued = [b.text for b in page.blocks if b.source == "script"]
    assert rescued and story.split(".")[0] in " ".join(rescued)
    assert "a1b2c3d4" not in " ".join(b.text for b in page.blocks)


def test_attributes_past_the_limit_are_dropped_with_a_warning() -> None:
    attrs = " ".join(f"data-k{k}='{k}'" for k in range(12))
    doc = parse_html(
        f"<body><p {attrs} class=x>Text</p></body>", limits=ParseLimits(max_attributes=5)
    )
    p = doc.tree.css_first("p")
    assert p is not None and len(p.attributes) == 5
    assert any("attributes" in w for w in doc.warnings)


def test_nul_characters_become_replacement_characters() -> None:
    page = blockdex.segment("<body><p>before\x00after and more words here</p></body>")
    assert page.blocks[0].text == "before\ufffdafter and more words here"


def test_markdown_tree_refuses_a_step_that_is_not_a_layout_step() -> None:
    from blockdex import _markdown_c

    for bad in (["not a step"], [("block", 0, [])]):
        with pytest.raises(TypeError, match="Step of 4 fields"):
            _markdown_c.tree_of(bad, True, 8, lambda: {}, lambda block, stack: None)


def test_forests_in_one_call_give_each_forests_own_sums() -> None:
    """``Forests.raw`` walks several forests in one compiled call: each column is what that
    forest alone gives, bit for bit, for one row (a page type) and for many."""
    model = PageTypeModel.load()
    forests = forest_module.Forests(model.forests)
    assert forests._packed is not None
    rng = np.random.default_rng(11)
    X = rng.normal(0.0, 1.0, size=(40, forests.n_features)).astype(np.float32)
    X[:3] = 0.0
    for n in (1, 2, 9, 17, 40):
        together = forests.raw(X[:n])
        assert together.shape == (n, len(model.forests)) and together.flags.c_contiguous
        alone = np.stack([f.raw(X[:n]) for f in model.forests], axis=1)
        assert together.tobytes() == alone.tobytes()
    with pytest.raises(ValueError):
        forests.raw(X[:, :5])


_PRONOUN_PIECES = st.sampled_from(
    ["we", "We", "WE", "our", "us", "you", "your", "i", "I", "my", "me", "wee", "k", "\u212a",
     "\u0130", "\u00e9", "w\u00e9", " ", " ", "  ", "\n", "\t", "\u00a0", "-", "2024"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(_PRONOUN_PIECES, max_size=8).map("".join), max_size=6))
def test_pronouns_count_as_str_count_over_the_joined_text(texts: list[str]) -> None:
    """Each PRONOUNS group's count is what ``str.count`` finds of `` word `` in the texts joined
    by newlines, lower-cased, a space added at each end: a token across two texts holds the
    newline, and `` we we `` counts once."""
    blocks = tuple(Block(index=i, tag="p", html=t, text=t) for i, t in enumerate(texts))
    sums = pagetype_module._block_sums(block_ids(blocks), pagetype_module.DEFAULT_PAGE_TYPE)
    joined = " " + "\n".join(texts).lower() + " "
    want = [sum(joined.count(f" {w} ") for w in ws) for ws in pagetype_module.PRONOUNS.values()]
    assert sums.pronouns == want
