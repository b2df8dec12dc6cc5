"""Quality metrics, each defined once.

Token P/R/F1 is computed on multisets (bags) of lower-cased ``\\w+`` tokens — the metric of the
index-based method's paper and of WCXB's evaluate.py. An empty prediction for an empty reference
scores 1.0; anything else against an empty reference scores 0.0.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

_WORD_RE = re.compile(r"\w+", re.U)


def word_tokens(text: str | None) -> list[str]:
    """Lower-cased ``\\w+`` tokens."""
    return _WORD_RE.findall(text.lower()) if text else []


@dataclass(frozen=True, slots=True)
class PRF:
    precision: float
    recall: float
    f1: float


def prf_from_counts(overlap: int, n_pred: int, n_ref: int) -> PRF:
    if n_ref == 0:
        v = 1.0 if n_pred == 0 else 0.0
        return PRF(v, v, v)
    if n_pred == 0 or overlap == 0:
        # An empty prediction against a non-empty reference scores 0 on all three (not P=1).
        return PRF(0.0, 0.0, 0.0)
    p = overlap / n_pred
    r = overlap / n_ref
    return PRF(p, r, 2 * p * r / (p + r))


def snippet_prf(
    tp: float | np.ndarray, fn: float | np.ndarray, fp: float | np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Snippet precision, recall and F1 from counts summed over pages: must-have snippets found
    (``tp``) and missed (``fn``), must-not-have snippets found (``fp``). Elementwise, so one call
    scores a vector of sums (one per bootstrap resample); a scalar gives 0-d arrays."""
    tp, fn, fp = (np.asarray(x, dtype=np.float64) for x in (tp, fn, fp))
    p = tp / np.maximum(tp + fp, 1)
    r = tp / np.maximum(tp + fn, 1)
    s = p + r
    return p, r, np.divide(2 * p * r, s, out=np.zeros_like(s), where=s > 0)


def token_prf(predicted: str | None, reference: str | None) -> PRF:
    """Bag-of-words precision, recall and F1 of ``predicted`` against ``reference``."""
    pred = Counter(word_tokens(predicted))
    ref = Counter(word_tokens(reference))
    overlap = sum((pred & ref).values())
    return prf_from_counts(overlap, sum(pred.values()), sum(ref.values()))


def wcxb_prf(predicted: str | None, reference: str | None) -> PRF:
    """One page's precision, recall and F1 by WCXB's own scorer (``word_f1`` in the benchmark's
    ``evaluate.py``), the figure its published tables report as the mean over all pages.

    Tokens are ``re.findall(r'\\w+', text.lower())``; P = overlap / |predicted|,
    R = overlap / |reference| on bags of tokens. A page whose reference has no word is a page
    with no main content: it scores 1.0 on all three if the prediction has no word either, else
    0.0. A missing reference counts as empty, as upstream reads ``main_content`` with
    ``or ''``: wcxb's no-main-content pages are scored, not left out.

    The bag rule is :func:`token_prf`'s; what is wcxb's own is that every page counts, the
    ones with no main content included (the bench leaves a page with no reference text at all
    out of its F1).
    """
    return token_prf(predicted, reference or "")


def mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def summarise(scores: Iterable[PRF]) -> dict[str, float]:
    """Mean and median of per-page precision, recall and F1."""
    s = list(scores)
    return {
        "precision": mean([x.precision for x in s]),
        "recall": mean([x.recall for x in s]),
        "f1": mean([x.f1 for x in s]),
        "f1_median": median([x.f1 for x in s]),
        "pages": float(len(s)),
    }


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence of two token sequences.

    Bit-parallel (Hyyrö 2004): one Python big integer holds a DP column, so the work is
    O(len(a) · len(b) / word size) and memory O(len(a) + vocabulary) — a 10k × 10k token pair
    takes milliseconds, where the textbook table would need 100M cells.
    """
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return 0
    masks: dict[str, int] = {}
    for i, tok in enumerate(a):
        masks[tok] = masks.get(tok, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for tok in b:
        u = v & masks.get(tok, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - v.bit_count()


def lcs_prf(predicted: str | None, reference: str | None) -> PRF:
    """Precision/recall/F1 of the longest common token subsequence (Gottron/DANAg style).

    Unlike the bag-of-words metric it rewards keeping the reference's order.
    """
    pred = word_tokens(predicted)
    ref = word_tokens(reference)
    if not pred or not ref:
        return prf_from_counts(0, len(pred), len(ref))
    return prf_from_counts(lcs_length(pred, ref), len(pred), len(ref))
