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


def token_prf(predicted: str | None, reference: str | None) -> PRF:
    """Bag-of-words precision, recall and F1 of ``predicted`` against ``reference``."""
    pred = Counter(word_tokens(predicted))
    ref = Counter(word_tokens(reference))
    overlap = sum((pred & ref).values())
    return prf_from_counts(overlap, sum(pred.values()), sum(ref.values()))


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
