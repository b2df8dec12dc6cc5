"""Each page's own decision threshold, learned from page-level columns (issue 41).

The content model ranks the blocks of a page made of many items about as well as an article's
(median AUC 0.92–0.95 on wcxb dev), but it places their content lower: half of a listing's
content blocks score under 0.5, so one threshold for all pages drops them. The threshold that
fits differs from page to page (``benchmarks/NOTES.md``, "How well the model ranks the blocks of
each kind of page"). This small forest reads a page's probabilities as a whole (how many of its
words reach each level, their mean, the best block, the page's size) together with a candidate
threshold, and predicts how much the page's token F1 would gain over the model's own threshold.
The page is cut at the candidate with the highest predicted gain when that gain reaches the
model's margin, else at the model's threshold.

It learns from the training pages' out-of-fold probabilities (:func:`blockdex.train.train` with
``TrainConfig.page_threshold``), so it sees the probabilities an unseen page gets. Every column is
a property of the probabilities and of the page's size: nothing names a site or a kind of page.

The shipped model has none. Measured through the whole pipeline it lowered wcxb dev from 0.875 to
0.871: the raw gain on listings and collections does not survive the page-kind rules, and on
products a lower cut keeps the reviews. It stays a training option for the next attempt
(``benchmarks/NOTES.md``, "Each page's own threshold").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from blockdex.forest import Forest

WORD_SHARE_LEVELS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
"""The probabilities at which a page's share of words at or above is a column."""
BLOCK_SHARE_LEVELS = (0.3, 0.55)
"""The probabilities at which a page's share of blocks at or above is a column."""
PAGE_THRESHOLD_COLUMN_NAMES = (
    "page_log_blocks",
    "page_log_words",
    *(f"page_words_p{round(t * 100):02d}" for t in WORD_SHARE_LEVELS),
    *(f"page_blocks_p{round(t * 100):02d}" for t in BLOCK_SHARE_LEVELS),
    "page_mean_p_by_words",
    "page_max_p",
    "candidate_threshold",
)
"""The forest's input: the page's columns (:func:`page_columns`), then the candidate threshold."""
CANDIDATES = tuple(round(0.1 + 0.05 * k, 2) for k in range(16))
"""The thresholds a page can be cut at: 0.10 to 0.85."""


def page_columns(probs: np.ndarray, words: np.ndarray) -> np.ndarray:
    """A page's columns (:data:`PAGE_THRESHOLD_COLUMN_NAMES` but the candidate) from its blocks'
    probabilities and word counts."""
    w = np.asarray(words, dtype=np.float64)
    total = float(w.sum())
    scale = 1.0 / max(total, 1.0)
    cols = [float(np.log1p(len(probs))), float(np.log1p(total))]
    cols += [float(w[probs >= t].sum()) * scale for t in WORD_SHARE_LEVELS]
    n = max(len(probs), 1)
    cols += [float(np.count_nonzero(probs >= t)) / n for t in BLOCK_SHARE_LEVELS]
    cols.append(float(w @ probs) * scale)
    cols.append(float(probs.max()) if len(probs) else 0.0)
    return np.asarray(cols)


def candidate_rows(columns: np.ndarray, candidates: tuple[float, ...] = CANDIDATES) -> np.ndarray:
    """One row per candidate threshold: the page's columns, then the candidate."""
    rows = np.empty((len(candidates), len(columns) + 1), dtype=np.float32)
    rows[:, :-1] = columns
    rows[:, -1] = candidates
    return rows


class PageThreshold:
    """The learned per-page threshold of a content model (its JSON ``page_threshold`` part)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        if tuple(spec["columns"]) != PAGE_THRESHOLD_COLUMN_NAMES:
            raise ValueError("the page threshold was trained with other columns")
        self.candidates = tuple(float(t) for t in spec["candidates"])
        self.margin = float(spec["margin"])
        self.forest = Forest(spec["forest"])

    def gains(self, probs: np.ndarray, words: np.ndarray) -> np.ndarray:
        """The predicted F1 gain over the model's threshold of cutting at each candidate."""
        return self.forest.raw(candidate_rows(page_columns(probs, words), self.candidates))

    def of(self, probs: np.ndarray, words: np.ndarray, default: float) -> float:
        """The threshold for a page whose blocks have ``probs`` and ``words``: the candidate with
        the highest predicted gain when it reaches the margin, else ``default``."""
        if not len(probs):
            return default
        gains = self.gains(probs, words)
        best = int(np.argmax(gains))
        return self.candidates[best] if gains[best] >= self.margin else default
