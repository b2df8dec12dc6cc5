"""Fit the relevance predictors' numbers on the QE set's dev split (``blockdex train-relevance``).

For every dev record the page is segmented, each block labelled relevant when it aligns to the
record's relevant text, and the :data:`~blockdex.predict.relevance.FEATURES` computed. Then:

* ``hybrid``: a logistic regression (Newton steps, L2) over the features, and a grid search of
  the keep rule (threshold, section fill threshold, container share, NA threshold) for the best
  mean token F1 per record, empty-vs-empty counting 1.0;
* ``lexical`` and ``embedding``: a grid search of their keep share/margin and NA floor.

The result is plain JSON (``relevance_model.json``); the test split is never read.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from blockdex.boosting import export_booster
from blockdex.evaluate.align import block_labels
from blockdex.evaluate.metrics import word_tokens
from blockdex.extract import Extractor
from blockdex.predict.relevance import (
    FEATURES,
    HYBRID_EMBED_TOKENS,
    _content_probabilities,
    hybrid_probabilities,
    relevance_scores,
    structured_keep,
)


@dataclass(slots=True)
class Example:
    id: str
    kind: str
    page: Any
    features: np.ndarray
    labels: np.ndarray
    counts: np.ndarray  # (n_blocks, vocab) word counts
    ref: np.ndarray  # (vocab,)


def _counts(page: Any, relevant: str) -> tuple[np.ndarray, np.ndarray]:
    vocab: dict[str, int] = {}
    rows = [Counter(word_tokens(b.text)) for b in page.blocks]
    ref = Counter(word_tokens(relevant))
    for c in [*rows, ref]:
        for w in c:
            vocab.setdefault(w, len(vocab))
    mat = np.zeros((len(rows), len(vocab)), dtype=np.float32)
    for i, c in enumerate(rows):
        for w, k in c.items():
            mat[i, vocab[w]] = k
    r = np.zeros(len(vocab), dtype=np.float32)
    for w, k in ref.items():
        r[vocab[w]] = k
    return mat, r


_PAGE_CACHE: dict[str, tuple[Any, np.ndarray]] = {}


def example(rec: dict[str, Any]) -> Example | None:
    key = hashlib.sha1(rec["html"].encode("utf-8", "surrogatepass")).hexdigest()
    if key not in _PAGE_CACHE:
        _PAGE_CACHE.clear()  # records of one page come together; keep one page
        page = Extractor("all").segment(rec["html"], url=rec.get("url"))
        _PAGE_CACHE[key] = (page, _content_probabilities(page) if page.blocks else np.zeros(0))
    page, prob = _PAGE_CACHE[key]
    if not page.blocks:
        return None
    rs = relevance_scores(
        page, rec["query"], embed=True, content_prob=prob, embed_tokens=HYBRID_EMBED_TOKENS
    )
    relevant = rec.get("relevant_text") or ""
    labels = (
        np.array([s >= 0.5 for s in block_labels(page, relevant)], dtype=np.float32)
        if relevant.strip()
        else np.zeros(len(page.blocks), dtype=np.float32)
    )
    counts, ref = _counts(page, relevant)
    return Example(rec["id"], rec["kind"], page, rs.features, labels, counts, ref)


def f1_of(ex: Example, keep: list[int] | np.ndarray) -> float:
    n_ref = float(ex.ref.sum())
    if len(keep) == 0:
        return 1.0 if n_ref == 0 else 0.0
    got = ex.counts[np.asarray(keep)].sum(axis=0)
    n_pred = float(got.sum())
    if n_ref == 0:
        return 1.0 if n_pred == 0 else 0.0
    overlap = float(np.minimum(got, ex.ref).sum())
    if overlap == 0:
        return 0.0
    p, r = overlap / n_pred, overlap / n_ref
    return 2 * p * r / (p + r)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, steps: int = 25) -> np.ndarray:
    """Weights (last = bias) of an L2-regularised logistic regression, by Newton's method."""
    xb = np.hstack([x, np.ones((len(x), 1), dtype=x.dtype)]).astype(np.float64)
    w = np.zeros(xb.shape[1])
    reg = np.full(xb.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(xb @ w)))
        grad = xb.T @ (p - y) + reg * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + np.diag(reg + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w


def _mean_f1(examples: list[Example], keeps: list[Any]) -> float:
    return float(np.mean([f1_of(ex, k) for ex, k in zip(examples, keeps, strict=True)]))


GBDT_PARAMS = {
    "objective": "binary",
    "learning_rate": 0.08,
    "num_leaves": 15,
    "max_depth": 4,
    "min_data_in_leaf": 50,
    "num_threads": 2,
    "seed": 0,
    "deterministic": True,
    "force_row_wise": True,
    "verbose": -1,
}
GBDT_TREES = 150
FOLDS = 3
"""Out-of-fold probabilities (folds by source page) choose the keep rule, so the rule is not
tuned on probabilities the trees saw in training."""


def _fit_hybrid(x: np.ndarray, y: np.ndarray, kind: str) -> dict[str, Any]:
    if kind == "gbdt":
        import lightgbm as lgb

        booster = lgb.train(GBDT_PARAMS, lgb.Dataset(x, label=y), num_boost_round=GBDT_TREES)
        return {"features": list(FEATURES), "forest": export_booster(booster)}
    mean = x.mean(axis=0)
    scale = x.std(axis=0)
    scale[scale == 0] = 1.0
    w = fit_logistic((x - mean) / scale, y)
    return {
        "features": list(FEATURES),
        "mean": mean.tolist(),
        "scale": scale.tolist(),
        "weights": w[:-1].tolist(),
        "bias": float(w[-1]),
    }


def _source_fold(ex: Example) -> int:
    source = ex.id.split(":")[1] if ":" in ex.id else ex.id
    return int(hashlib.sha1(source.encode("utf-8")).hexdigest(), 16) % FOLDS


def fit(examples: list[Example], log: Any = sys.stderr, kind: str | None = None) -> dict[str, Any]:
    if kind is None:
        try:
            import lightgbm  # noqa: F401

            kind = "gbdt"
        except ImportError:
            kind = "logistic"
    folds = np.array([_source_fold(e) for e in examples])
    probs: list[np.ndarray] = [np.zeros(0)] * len(examples)
    for k in range(FOLDS):
        train = [e for e, f in zip(examples, folds, strict=True) if f != k]
        part = _fit_hybrid(
            np.vstack([e.features for e in train]), np.concatenate([e.labels for e in train]), kind
        )
        for i in np.flatnonzero(folds == k):
            probs[i] = hybrid_probabilities(part, examples[i].features)
    hybrid = _fit_hybrid(
        np.vstack([e.features for e in examples]),
        np.concatenate([e.labels for e in examples]),
        kind,
    )
    hybrid["kind"] = kind
    best = (-1.0, {})
    grid = itertools.product(
        (0.2, 0.3, 0.4, 0.5, 0.6),  # threshold
        (0.05, 0.1, 0.2, 0.3),  # fill threshold (relative cap: ≤ threshold)
        (0.0, 0.3, 0.4, 0.5, 0.6, 0.7),  # NA threshold
        (0.5, 2.0),  # container share (2.0 = off)
    )
    for t, fill, na, cshare in grid:
        if fill > t:
            continue
        params = {
            "threshold": t,
            "fill_threshold": fill,
            "na_threshold": max(na, 0.0),
            "container_share": cshare,
        }
        keeps = [structured_keep(e.page, p, params) for e, p in zip(examples, probs, strict=True)]
        score = _mean_f1(examples, keeps)
        if score > best[0]:
            best = (score, params)
    hybrid["params"] = best[1]
    print(f"hybrid ({kind}): out-of-fold dev mean F1 {best[0]:.4f} with {best[1]}", file=log)

    col = {name: FEATURES.index(name) for name in ("bm25_share", "coverage", "cos")}
    best_lex = (-1.0, {})
    for share, cov in itertools.product(
        (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9), (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 1.0)
    ):
        keeps = [
            []
            if e.features[:, col["coverage"]].max() < cov
            else np.flatnonzero(e.features[:, col["bm25_share"]] >= share)
            for e in examples
        ]
        score = _mean_f1(examples, keeps)
        if score > best_lex[0]:
            best_lex = (score, {"keep_share": share, "min_coverage": cov})
    print(f"lexical: dev mean F1 {best_lex[0]:.4f} with {best_lex[1]}", file=log)

    best_emb = (-1.0, {})
    for margin, floor in itertools.product(
        (0.02, 0.05, 0.08, 0.1, 0.15, 0.2, 0.3), (0.0, 0.2, 0.3, 0.4, 0.5, 0.6)
    ):
        keeps = []
        for e in examples:
            cos = e.features[:, col["cos"]]
            keeps.append([] if cos.max() < floor else np.flatnonzero(cos >= cos.max() - margin))
        score = _mean_f1(examples, keeps)
        if score > best_emb[0]:
            best_emb = (score, {"keep_margin": margin, "min_cos": floor})
    print(f"embedding: dev mean F1 {best_emb[0]:.4f} with {best_emb[1]}", file=log)
    return {
        "version": 1,
        "trained_on": f"{len(examples)} QE dev records",
        "dev_f1": {"hybrid": best[0], "lexical": best_lex[0], "embedding": best_emb[0]},
        "hybrid": hybrid,
        "lexical": best_lex[1],
        "embedding": best_emb[1],
    }


def save_relevance_model(model: dict[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(model, indent=None) + "\n", encoding="utf-8")


def load_records(path: str | Path, split: str) -> list[dict[str, Any]]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as fh:
        recs = [json.loads(line) for line in fh if line.strip()]
    return [r for r in recs if r.get("split") == split]
