"""Training the page-type model: pages labelled with their type → one forest of trees per type.

1. Each page of the chosen datasets (those whose records carry a ``page_type``: wcxb's seven
   types) is segmented as the pipeline segments it, and :func:`blockdex.pagetype.page_type_features`
   describes it in one row.
2. **Cross-validation** measures the recipe before it is trusted: five folds, repeated with
   several seeds, two ways — pages assigned to folds at random, and pages of one host kept in
   one fold (no site is then both learned and tested; the stricter figure). The report gives
   each seed's accuracy, their mean, the majority-class baseline and the confusion table, and
   the same for the out-of-fold pages read without an address (their URL columns blanked).
3. **The ``other`` threshold** comes from the same out-of-fold probabilities (pages of one
   host kept in one fold, all seeds together): the largest confidence where the pages just below
   it have their best type wrong more often than right. Below it, a page is ``other``.
4. LightGBM's multiclass model (softmax over one forest per type) is fitted on all pages and
   written as plain JSON arrays (no pickle), which :class:`blockdex.pagetype.PageTypeModel`
   evaluates with numpy.

    blockdex train --page-type --out page_type_model.json
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from blockdex.boosting import TrainResult, export_classes, lgb_params
from blockdex.errors import BlockdexError, MissingExtra, check_minimums
from blockdex.evaluate.datasets import load_dataset, split_of
from blockdex.extract import Extractor
from blockdex.pagetype import (
    FEATURE_NAMES,
    PAGE_TYPES,
    URL_COLUMNS,
    PageTypeModel,
    page_type_features,
    url_columns,
)

PAGE_TYPE_DATASETS = ("wcxb",)
"""Datasets whose pages carry a page type."""


@dataclass(frozen=True, slots=True)
class PageTypeTrainConfig:
    """How the page-type model is trained and measured."""

    datasets: tuple[str, ...] = PAGE_TYPE_DATASETS
    split: str = "all"
    """Which pages: ``all`` (default: wcxb's 1,358 pages here are its dev pages; its own test
    split is held out and not in the shared data), ``train`` or ``dev``."""
    folds: int = 5
    cv_seeds: int = 5
    """Assignments of pages to folds the accuracy is averaged over."""
    seed: int = 20261122
    n_trees: int = 250
    """Boosting rounds (each one tree per type). Chosen by cross-validation on the pages of
    one host per fold: 250 rounds of 7-leaf trees at rate 0.05 scored as well as 400 or 600
    rounds and as 15-leaf trees (benchmarks/NOTES.md)."""
    num_leaves: int = 7
    max_depth: int = 4
    learning_rate: float = 0.05
    min_child_samples: int = 10
    feature_fraction: float = 0.7
    bagging_fraction: float = 0.8
    confidence_grid: tuple[float, ...] = tuple(round(0.3 + 0.05 * i, 2) for i in range(9))
    """Candidate ``other`` thresholds (0.30 … 0.70)."""
    confidence_band: float = 0.05
    """Width of the band of probabilities just below a candidate threshold whose accuracy
    decides it (see :func:`choose_min_confidence`)."""
    max_pages: int | None = None
    without_url_copies: bool = False
    """Learn every page twice: as read, and with its URL columns as for a page read without an
    address (:func:`without_url`). Off: it lifts the accuracy without an address (0.756 →
    0.834, pages of one host per fold) but lowers it with one (0.860 → 0.842), more than the
    0.005 a change may cost (benchmarks/NOTES.md, "Page type without a URL")."""

    def __post_init__(self) -> None:
        check_minimums(self, {"folds": 2, "cv_seeds": 1, "n_trees": 1})


@dataclass(frozen=True, slots=True)
class LabelledPages:
    """The training pages as the model sees them."""

    X: np.ndarray
    y: np.ndarray
    """Positions in :data:`PAGE_TYPES`."""
    hosts: tuple[str, ...]
    ids: tuple[str, ...]


def collect_page_types(cfg: PageTypeTrainConfig, progress: bool = True) -> LabelledPages:
    """Segment and describe every typed page of ``cfg.datasets`` (untyped pages are skipped)."""
    from tqdm import tqdm

    ex = Extractor()
    rows: list[np.ndarray] = []
    labels: list[int] = []
    hosts: list[str] = []
    ids: list[str] = []
    for name in cfg.datasets:
        pages = [
            p
            for p in load_dataset(name)
            if p.meta.get("page_type") in PAGE_TYPES
            and (cfg.split == "all" or split_of(p.id) == cfg.split)
        ]
        if cfg.max_pages:
            pages = pages[: cfg.max_pages]
        for p in tqdm(pages, desc=f"describing {name}", disable=not progress, file=sys.stderr):
            try:
                page = ex.segment(p.html, url=p.url)
            except BlockdexError:
                continue
            rows.append(page_type_features(page))
            labels.append(PAGE_TYPES.index(p.meta["page_type"]))
            hosts.append(urlsplit(p.url or "").hostname or f"{name}:{p.id}")
            ids.append(f"{name}:{p.id}")
    if not rows:
        raise BlockdexError(
            f"no pages with a page type in {', '.join(cfg.datasets)} (wcxb's pages have one)"
        )
    return LabelledPages(np.vstack(rows), np.asarray(labels), tuple(hosts), tuple(ids))


def _params(cfg: PageTypeTrainConfig, seed: int) -> dict[str, Any]:
    """The content model's LightGBM settings (:func:`blockdex.boosting.lgb_params`), multiclass."""
    return {**lgb_params(cfg, seed), "objective": "multiclass", "num_class": len(PAGE_TYPES)}


def without_url(X: np.ndarray) -> np.ndarray:
    """``X`` with every row's URL columns as :func:`blockdex.pagetype.url_columns` gives them for
    a page without an address (neither ``url=`` nor a canonical link)."""
    blank = X.copy()
    blank[:, URL_COLUMNS] = url_columns(None)
    return blank


def _fit(X: np.ndarray, y: np.ndarray, cfg: PageTypeTrainConfig, seed: int) -> Any:
    import lightgbm as lgb

    if cfg.without_url_copies:
        X, y = np.vstack([X, without_url(X)]), np.concatenate([y, y])
    return lgb.train(_params(cfg, seed), lgb.Dataset(X, label=y), num_boost_round=cfg.n_trees)


def fold_of(data: LabelledPages, folds: int, seed: int, by_host: bool) -> np.ndarray:
    """Each page's fold: at random, or (``by_host``) all pages of one host in one fold."""
    rng = np.random.default_rng(seed)
    if not by_host:
        return rng.permutation(len(data.y)) % folds
    hosts = sorted(set(data.hosts))
    order = rng.permutation(len(hosts))
    fold = {hosts[i]: k % folds for k, i in enumerate(order)}
    return np.asarray([fold[h] for h in data.hosts])


def out_of_fold(
    data: LabelledPages, cfg: PageTypeTrainConfig, seed: int, by_host: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Type probabilities of every page from a model that never saw it (or its host): as read,
    and with its URL columns blanked (:func:`without_url`)."""
    fold = fold_of(data, cfg.folds, seed, by_host)
    probs = np.zeros((len(data.y), len(PAGE_TYPES)))
    blank = np.zeros_like(probs)
    X_blank = without_url(data.X)
    for f in range(cfg.folds):
        test = fold == f
        if test.all() or not test.any():
            continue
        model = _fit(data.X[~test], data.y[~test], cfg, seed + f)
        probs[test] = model.predict(data.X[test])
        blank[test] = model.predict(X_blank[test])
    return probs, blank


def out_of_fold_runs(
    data: LabelledPages, cfg: PageTypeTrainConfig, by_host: bool
) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`out_of_fold` once for each of ``cfg.cv_seeds`` assignments of pages to folds."""
    return [out_of_fold(data, cfg, cfg.seed + 100 * r, by_host) for r in range(cfg.cv_seeds)]


def unseen_page_types(
    datasets: Sequence[str], cfg: PageTypeTrainConfig | None = None, progress: bool = True
) -> dict[str, dict[str, float]]:
    """Type probabilities of every typed page of ``datasets`` (``"dataset:id"`` → type →
    probability) from models that never saw the page's host: :func:`out_of_fold` with pages of
    one host in one fold, averaged over ``cfg.cv_seeds`` assignments (3 by default here). What
    the content model's page-type columns are trained and judged on for the pages the shipped
    page-type model learned (``TrainConfig.page_type_columns``)."""
    typed = tuple(n for n in datasets if n in PAGE_TYPE_DATASETS)
    if not typed:
        return {}
    cfg = cfg or PageTypeTrainConfig(cv_seeds=3)
    cfg = replace(cfg, datasets=typed)
    data = collect_page_types(cfg, progress)
    probs = np.mean([p for p, _ in out_of_fold_runs(data, cfg, by_host=True)], axis=0)
    return {
        key: {t: float(p) for t, p in zip(PAGE_TYPES, row, strict=True)}
        for key, row in zip(data.ids, probs, strict=True)
    }


def confusion(y: np.ndarray, predicted: np.ndarray) -> list[list[int]]:
    """Rows: the labelled type; columns: the predicted one (both in :data:`PAGE_TYPES` order)."""
    table = np.zeros((len(PAGE_TYPES), len(PAGE_TYPES)), dtype=int)
    np.add.at(table, (y, predicted), 1)
    return table.tolist()


def choose_min_confidence(
    runs: list[np.ndarray], y: np.ndarray, grid: tuple[float, ...], band: float
) -> tuple[float, dict[str, float | None]]:
    """The largest ``t`` of ``grid`` such that the pages whose best type's probability lies just
    below it (in ``[t - band, t)``) have that type right less than half the time, over all
    ``runs`` of out-of-fold probabilities; 0 when there is none. Below ``t`` the model's guess is
    then more often wrong than right. Returns ``t`` and, for it, the share of pages that become
    ``other``, how many of those the best type had right, and the accuracy with ``other``
    counted wrong."""
    conf = np.concatenate([p.max(axis=1) for p in runs])
    right = np.concatenate([p.argmax(axis=1) == y for p in runs])
    chosen = 0.0
    for t in grid:
        near = (conf >= t - band) & (conf < t)
        if near.any() and right[near].mean() < 0.5:
            chosen = t
    below = conf < chosen
    return chosen, {
        "other_share": round(float(below.mean()), 4),
        "right_among_other": round(float(right[below].mean()), 4) if below.any() else None,
        "accuracy_with_other": round(float((right & ~below).mean()), 4),
    }


def _cv_report(data: LabelledPages, cfg: PageTypeTrainConfig, by_host: bool) -> dict[str, Any]:
    both = out_of_fold_runs(data, cfg, by_host)
    runs = [p for p, _ in both]
    accs = [float((p.argmax(axis=1) == data.y).mean()) for p in runs]
    blank_accs = [float((b.argmax(axis=1) == data.y).mean()) for _, b in both]
    first = runs[0].argmax(axis=1)
    table = confusion(data.y, first)
    per_type = {}
    for k, name in enumerate(PAGE_TYPES):
        got = sum(row[k] for row in table)
        per_type[name] = {
            "pages": int((data.y == k).sum()),
            "recall": round(table[k][k] / max(sum(table[k]), 1), 3),
            "precision": round(table[k][k] / max(got, 1), 3),
        }
    return {
        "runs": runs,
        "accuracy": round(float(np.mean(accs)), 4),
        "accuracy_by_seed": [round(a, 4) for a in accs],
        "confusion_first_seed": table,
        "by_type": per_type,
        # the same out-of-fold pages read without an address
        "accuracy_without_url": round(float(np.mean(blank_accs)), 4),
        "accuracy_without_url_by_seed": [round(a, 4) for a in blank_accs],
        "confusion_without_url_first_seed": confusion(data.y, both[0][1].argmax(axis=1)),
    }


def train_page_type(cfg: PageTypeTrainConfig, data: LabelledPages | None = None) -> TrainResult:
    """Cross-validate the recipe on ``data`` (collected from ``cfg.datasets`` when not given),
    choose the ``other`` threshold, fit on all pages and return the model with its report."""
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        raise MissingExtra("lightgbm", "train", "training the page-type model") from None
    t0 = time.perf_counter()
    if data is None:
        data = collect_page_types(cfg)
    counts = Counter(data.y.tolist())
    by_host = _cv_report(data, cfg, by_host=True)
    at_random = _cv_report(data, cfg, by_host=False)
    min_confidence, other = choose_min_confidence(
        by_host.pop("runs"), data.y, cfg.confidence_grid, cfg.confidence_band
    )
    at_random.pop("runs")
    booster = _fit(data.X, data.y, cfg, cfg.seed)
    imp = booster.feature_importance("gain")
    top = sorted(zip(FEATURE_NAMES, imp, strict=True), key=lambda kv: -kv[1])[:20]
    report = {
        "pages": len(data.y),
        "types": {PAGE_TYPES[k]: n for k, n in sorted(counts.items())},
        "majority_baseline": round(max(counts.values()) / len(data.y), 4),
        "folds": cfg.folds,
        "cv_seeds": cfg.cv_seeds,
        "cv_by_host": by_host,
        "cv_at_random": at_random,
        "min_confidence": min_confidence,
        "other": other,
        "seconds": round(time.perf_counter() - t0, 1),
        "top_features": [(k, round(float(v), 1)) for k, v in top],
    }
    model = {
        "format": PageTypeModel.FORMAT,
        "version": 1,
        "features": list(FEATURE_NAMES),
        "classes": list(PAGE_TYPES),
        "min_confidence": min_confidence,
        "forests": export_classes(booster),
        "trained_on": list(cfg.datasets),
        "config": {k: v for k, v in asdict(cfg).items() if k != "datasets"},
        "report": report,
    }
    return TrainResult(model=model, report=report)


def confusion_markdown(table: list[list[int]]) -> str:
    """The confusion table as Markdown: labelled type per row, predicted type per column."""
    head = "| labelled \\ predicted | " + " | ".join(PAGE_TYPES) + " | recall |"
    lines = [head, "|---|" + "---:|" * (len(PAGE_TYPES) + 1)]
    for k, row in enumerate(table):
        recall = row[k] / max(sum(row), 1)
        cells = " | ".join(f"**{v}**" if j == k else str(v) for j, v in enumerate(row))
        lines.append(f"| {PAGE_TYPES[k]} | {cells} | {recall:.2f} |")
    return "\n".join(lines)
