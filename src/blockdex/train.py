"""Training the main-content model: labelled blocks → two stages of gradient-boosted trees.

1. Each page of the chosen datasets is segmented; its ground truth is aligned to the blocks
   (:func:`blockdex.evaluate.align.block_labels`, a block is content when most of its word
   3-grams occur in the ground truth); :func:`blockdex.features.block_features` describes each block.
2. Stage 1 learns P(content | block features). Its *out-of-fold* probabilities (pages split into
   folds, each fold predicted by a model that never saw it) feed stage 2, which adds the
   neighbourhood of those probabilities (:func:`blockdex.features.context_features`) — a learned
   sequence smoother. Stage 2 is trained on the same pages.
3. The decision threshold maximises mean token F1 over the training pages, out of fold, averaged
   over several assignments of pages to folds (repeated cross-validation: one assignment's vote
   moved with the seed alone).
4. The trees are exported as plain JSON arrays (no pickle) that
   :class:`blockdex.predict.content.ContentModel` evaluates with numpy.

Only pages of the ``train`` split (:func:`blockdex.evaluate.datasets.split_of`) are used unless
asked otherwise, so the ``dev`` split stays clean for measurements.

    blockdex train --datasets scrapinghub-aeb,wcxb --out model.json
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from blockdex.boosting import TrainResult, export_booster, lgb_params
from blockdex.errors import BlockdexError, MissingExtra, check_minimums
from blockdex.evaluate.align import block_labels
from blockdex.evaluate.datasets import EvalPage, load_dataset, split_of
from blockdex.evaluate.metrics import word_tokens
from blockdex.extract import Extractor
from blockdex.features import block_groups, context_features
from blockdex.items import page_block_words, slot_means
from blockdex.page import Page, PageFacts, PageType
from blockdex.pagetype import PageTypeModel, page_type_of
from blockdex.predict.content import context_column_names, model_features, stage1_column_names
from blockdex.predict.page_threshold import (
    CANDIDATES,
    PAGE_THRESHOLD_COLUMN_NAMES,
    candidate_rows,
    page_columns,
)

SHIPPED_DATASETS = ("scrapinghub-aeb", "wcxb", "trafilatura-eval", "webmainbench-samples")
"""Datasets whose licences allow shipping a model trained on them (l3s-gn1 is research-only)."""


@dataclass(frozen=True, slots=True)
class TrainConfig:
    """How the model is trained."""

    datasets: tuple[str, ...] = SHIPPED_DATASETS
    split: str = "train"
    """Which pages train the model: ``train`` (default, keeps ``dev`` clean) or ``all``."""
    label_share: float = 0.5
    """A block is content when this share of its 3-grams occurs in the ground truth."""
    folds: int = 4
    """Folds for the out-of-fold stage-1 probabilities stage 2 learns from."""
    seed: int = 20261122
    n_trees: int = 180
    """Boosting rounds per stage. Chosen by out-of-fold F1 on the train split (no dev page):
    180 at learning rate 0.08 scored at least what 250 at 0.06 did on scrapinghub-aeb and wcxb
    with 28% fewer trees to walk per block (``benchmarks/model_size.py``, NOTES.md)."""
    max_depth: int = 7
    """Shallow trees bound inference work (one numpy step per level)."""
    num_leaves: int = 63
    learning_rate: float = 0.08
    min_child_samples: int = 40
    feature_fraction: float = 0.8
    bagging_fraction: float = 0.8
    word_weight_cap: int = 200
    """Block weight grows with its words (token F1 counts words), capped so one block can't dominate."""
    page_balance: bool = True
    """Scale weights so every page counts about the same (big pages would otherwise rule)."""
    dataset_balance: float = 0.5
    """Weights scale with (mean pages per dataset / pages of this dataset) ** this: small sets count."""
    threshold_min_pages: int = 20
    """A dataset votes on the decision threshold only with at least this many fully labelled
    pages: the mean F1 of fewer pages moves by several hundredths with one page, and each
    voting dataset counts alike (webmainbench-samples' 3 training pages once moved the
    threshold of a candidate model from 0.6 to 0.4)."""
    threshold_repeats: int = 12
    """Assignments of pages to folds whose out-of-fold F1 the threshold maximises on average (the
    first uses ``seed``; the shipped trees are the same whatever this is). With one assignment the
    vote was a lottery: four seeds voted 0.45, 0.525, 0.525 and 0.575 for the same recipe, and
    scrapinghub-aeb's out-of-fold F1 moved by 0.03 across those thresholds (NOTES.md, tenth
    session). Four were not enough either: one more block among 401,630 (a Chinese paragraph
    split in two) moved the vote of four from 0.575 to 0.475, while over twelve assignments macro
    F1 is flat from 0.50 to 0.55 (0.8950, 0.8949) and lower at 0.45 and 0.60 (thirteenth
    session)."""
    max_pages: int | None = None
    item_columns: bool = False
    """Give stage 1 the page's item columns (:data:`blockdex.items.ITEM_COLUMN_NAMES`: the item
    list a block sits in, its share of the page, the block's template slot) and stage 2 the
    mean first-stage probability of the block's slot across the list's items (issue 41)."""
    page_type_columns: bool = False
    """Give stage 1 the page type's probabilities (:data:`blockdex.pagetype.PAGE_TYPE_COLUMN_NAMES`),
    the same on every block of a page (issue 41). Train on page types from a model that never
    saw the page: the shipped page-type model learned every wcxb page."""
    unit_columns: bool = False
    """Give stage 1 the page's unit columns too (:data:`blockdex.units.UNIT_COLUMN_NAMES`: in
    the primary article, in a rival story, the unit headline's title match, its share of the
    page). An experiment for leave-one-dataset-out (issue 29): the shipped model has none."""
    page_threshold: bool = False
    """Learn each page's own threshold from page-level columns
    (:mod:`blockdex.predict.page_threshold`), on the out-of-fold probabilities of the threshold
    vote's assignments (issue 41). An experiment: through the whole pipeline it lowered wcxb dev
    (0.875 → 0.871, ``benchmarks/NOTES.md``), so the shipped model has none."""
    page_threshold_margin: float = 0.01
    """The predicted F1 gain a page's own threshold must reach to replace the model's."""
    page_threshold_trees: int = 200
    """Boosting rounds of the page-threshold forest (depth 4, 15 leaves)."""

    def __post_init__(self) -> None:
        check_minimums(self, {"threshold_repeats": 1})


REPEAT_SEED_STEP = 100
"""Seed distance between fold assignments: the fits of one assignment use ``seed + fold`` and
``seed + 10 + fold``, so assignments 100 apart never share a fit's seed."""


@dataclass(slots=True)
class PageData:
    """One training page reduced to what training needs."""

    id: str
    dataset: str
    X: np.ndarray
    groups: np.ndarray
    share: np.ndarray
    block_tokens: list[list[str]]
    gt_tokens: Counter[str]
    labelled: np.ndarray | None = None
    """Blocks with a known label (snippet-only pages label only the blocks holding a snippet)."""
    slots: np.ndarray | None = None
    """Each block's item slot group (:func:`blockdex.items.item_columns`), with item columns."""
    words: np.ndarray | None = None
    """Each block's words as the predictor counts them (:func:`blockdex.items.page_block_words`),
    which the page threshold's columns read."""


def _snippet_labels(seg: Any, page: EvalPage) -> tuple[np.ndarray, np.ndarray] | None:
    """Labels from must-have/must-not-have snippets: only blocks holding one are labelled."""
    norm = [" ".join(b.text.lower().split()) for b in seg.blocks]
    share = np.zeros(len(norm), dtype=np.float32)
    known = np.zeros(len(norm), dtype=bool)
    for snippets, value in ((page.without_snippets, 0.0), (page.with_snippets, 1.0)):
        for snip in snippets:
            s = " ".join(snip.lower().split())
            if len(s) < 8:
                continue
            for i, t in enumerate(norm):
                if s in t:
                    share[i] = value
                    known[i] = True
    return (share, known) if known.any() else None


def page_data(
    page: EvalPage,
    extractor: Any,
    unit_columns: bool = False,
    item_columns: bool = False,
    page_type_columns: bool = False,
    page_type: PageType | None = None,
) -> PageData | None:
    """Segment, featurise and label one page (None when it has no usable ground truth);
    ``page_type`` stands for the type the page-type model would give it."""
    has_text = page.ground_truth is not None  # "" is a label too: a page without content
    if not has_text and not page.with_snippets:
        return None
    try:
        seg = extractor.segment(page.html, url=page.url)
    except BlockdexError:
        return None
    if not seg.blocks:
        return None
    if page_type is not None:
        seg = with_page_type(seg, page_type)
    X, slots = model_features(seg, unit_columns, item_columns, page_type_columns)
    if not has_text:
        labels = _snippet_labels(seg, page)
        if labels is None:
            return None
        return PageData(
            id=page.id,
            dataset=page.dataset,
            X=X,
            groups=block_groups(seg),
            share=labels[0],
            block_tokens=[word_tokens(b.text) for b in seg.blocks],
            gt_tokens=Counter(),
            labelled=labels[1],
            slots=slots,
            words=page_block_words(seg),
        )
    return PageData(
        id=page.id,
        dataset=page.dataset,
        X=X,
        groups=block_groups(seg),
        share=np.asarray(block_labels(seg, page.ground_truth), dtype=np.float32),
        block_tokens=[word_tokens(b.text) for b in seg.blocks],
        gt_tokens=Counter(word_tokens(page.ground_truth)),
        slots=slots,
        words=page_block_words(seg),
    )


def collect(
    datasets: tuple[str, ...],
    split: str,
    max_pages: int | None = None,
    progress: bool = True,
    unit_columns: bool = False,
    item_columns: bool = False,
    page_type_columns: bool = False,
    page_types: Mapping[str, PageType] | None = None,
) -> list[PageData]:
    """Training pages of ``datasets`` restricted to ``split`` (``train``, ``dev`` or ``all``);
    ``unit_columns`` adds :func:`blockdex.units.unit_columns` to their features,
    ``item_columns`` :func:`blockdex.items.item_columns`, ``page_type_columns``
    :func:`blockdex.pagetype.page_type_columns`, read from ``page_types`` (``"dataset:id"`` →
    type: :func:`unseen_types`, worked out here when not given) for the pages it holds."""
    from tqdm import tqdm

    ex = Extractor("all")
    out: list[PageData] = []
    unseen: Mapping[str, PageType] = {}
    if page_type_columns:
        unseen = unseen_types(datasets, progress) if page_types is None else page_types
    for name in datasets:
        pages = [p for p in load_dataset(name) if split == "all" or split_of(p.id) == split]
        if max_pages:
            pages = pages[:max_pages]
        for page in tqdm(pages, desc=f"featurising {name}", disable=not progress, file=sys.stderr):
            kind = unseen.get(f"{name}:{page.id}")
            d = page_data(page, ex, unit_columns, item_columns, page_type_columns, kind)
            if d is not None:
                out.append(d)
    return out


def unseen_types(datasets: tuple[str, ...], progress: bool = True) -> dict[str, PageType]:
    """The page types the content model's page-type columns learn from, for the pages of
    ``datasets`` that the shipped page-type model learned (wcxb's): each from models that never
    saw the page's host (:func:`blockdex.train_page_type.unseen_page_types`), labelled with the
    shipped model's ``other`` floor. Other pages are typed by the shipped model as in use."""
    from blockdex.train_page_type import unseen_page_types

    floor = PageTypeModel.load().min_confidence
    return {
        key: page_type_of(scores, floor)
        for key, scores in unseen_page_types(datasets, progress=progress).items()
    }


def with_page_type(page: Page, kind: PageType) -> Page:
    """``page`` whose type is ``kind`` (its primary article and ids as before)."""
    facts = PageFacts(page.facts.find_primary, lambda _: kind, page.facts.ids)
    return dataclasses.replace(page, facts=facts)


def dataset_factors(names: Sequence[str], balance: float) -> dict[str, float]:
    """Each dataset's weight factor for pages whose datasets are ``names`` (one per page):
    ``(mean pages per dataset / pages of this dataset) ** balance``, so small sets count."""
    per_dataset = Counter(names)
    mean_pages = len(names) / max(len(per_dataset), 1)
    return {name: (mean_pages / n) ** balance for name, n in per_dataset.items()}


def _weights(data: list[PageData], cfg: TrainConfig) -> np.ndarray:
    factor = dataset_factors([d.dataset for d in data], cfg.dataset_balance)
    ws = []
    for d in data:
        w = np.array([min(len(t), cfg.word_weight_cap) + 1.0 for t in d.block_tokens])
        w = np.sqrt(w)
        if cfg.page_balance:
            w = w * (len(w) / w.sum()) * (200.0 / max(len(w), 200)) ** 0.5
        w = w * factor[d.dataset]
        if d.labelled is not None:
            w = np.where(d.labelled, w, 0.0)
        ws.append(w)
    return np.concatenate(ws)


def _fit(X: np.ndarray, y: np.ndarray, w: np.ndarray, cfg: TrainConfig, seed: int) -> Any:
    import lightgbm as lgb

    ds = lgb.Dataset(X, label=y, weight=w, free_raw_data=False)
    return lgb.train(lgb_params(cfg, seed), ds, num_boost_round=cfg.n_trees)


def page_f1(pred_blocks: np.ndarray, d: PageData) -> float:
    """Token F1 of the selected blocks' words against the page's ground truth."""
    got: Counter[str] = Counter()
    for i in np.flatnonzero(pred_blocks):
        got.update(d.block_tokens[i])
    overlap = sum((got & d.gt_tokens).values())
    if overlap == 0:
        return 1.0 if not got and not d.gt_tokens else 0.0
    p = overlap / sum(got.values())
    r = overlap / sum(d.gt_tokens.values())
    return 2 * p * r / (p + r)


def _full_pages_by_dataset(data: list[PageData]) -> dict[str, list[int]]:
    """Positions of the pages with a full ground truth (not snippets only), per dataset."""
    out: dict[str, list[int]] = {}
    for i, d in enumerate(data):
        if d.labelled is None:
            out.setdefault(d.dataset, []).append(i)
    return out


def _mean_f1(
    probs: Sequence[np.ndarray], data: list[PageData], pages: list[int], t: float
) -> float:
    """Mean token F1 of ``pages`` when their blocks at or above ``t`` are kept."""
    return float(np.mean([page_f1(probs[i] >= t, data[i]) for i in pages]))


def best_threshold(
    runs: Sequence[Sequence[np.ndarray]], data: list[PageData], min_pages: int = 1
) -> tuple[float, float]:
    """The threshold with the highest macro F1, averaged over ``runs`` (each run: one probability
    array per page, out of fold for one assignment of pages to folds).

    Macro: per-dataset mean page F1, averaged over datasets, so the largest dataset does not
    choose the threshold for all page types (the targets are per dataset). Pages with snippet
    labels only are left out (no full ground truth), and so are datasets with fewer than
    ``min_pages`` fully labelled pages, unless no dataset has that many.
    """
    by_dataset = _full_pages_by_dataset(data)
    voting = {k: v for k, v in by_dataset.items() if len(v) >= min_pages}
    by_dataset = voting or by_dataset
    best = (0.5, -1.0)
    for t in np.arange(0.2, 0.81, 0.025):
        f1 = float(
            np.mean(
                [_mean_f1(probs, data, pages, t) for probs in runs for pages in by_dataset.values()]
            )
        )
        if f1 > best[1]:
            best = (float(round(t, 3)), f1)
    return best


def _split_pages(values: np.ndarray, data: list[PageData]) -> list[np.ndarray]:
    out, start = [], 0
    for d in data:
        out.append(values[start : start + len(d.share)])
        start += len(d.share)
    return out


@dataclass(slots=True)
class OutOfFold:
    """One assignment of pages to folds: each page scored by models that never saw it."""

    stage1: np.ndarray
    stage2: np.ndarray
    X2: np.ndarray
    """Features and stage-1 context columns (from ``stage1``): what stage 2 learns from."""


def _out_of_fold(
    X: np.ndarray, y: np.ndarray, w: np.ndarray, data: list[PageData], cfg: TrainConfig, seed: int
) -> OutOfFold:
    """Both stages' out-of-fold probabilities for the page folds drawn with ``seed``."""
    page_fold = np.random.default_rng(seed).integers(0, cfg.folds, len(data))
    row_fold = np.concatenate(
        [np.full(len(d.share), f) for d, f in zip(data, page_fold, strict=True)]
    )
    oof1 = np.zeros(len(y))
    for f in range(cfg.folds):
        m = _fit(X[row_fold != f], y[row_fold != f], w[row_fold != f], cfg, seed + f)
        oof1[row_fold == f] = m.predict(X[row_fold == f])
    ctx = np.vstack(
        [stage2_context(p, d) for p, d in zip(_split_pages(oof1, data), data, strict=True)]
    )
    X2 = np.hstack([X, ctx])
    oof2 = np.zeros(len(y))
    for f in range(cfg.folds):
        m = _fit(X2[row_fold != f], y[row_fold != f], w[row_fold != f], cfg, seed + 10 + f)
        oof2[row_fold == f] = m.predict(X2[row_fold == f])
    return OutOfFold(oof1, oof2, X2)


def stage2_context(prob: np.ndarray, d: PageData) -> np.ndarray:
    """Stage 2's columns from stage 1's probabilities of one page: the context columns, then
    with item columns the slot means (:func:`blockdex.items.slot_means`)."""
    ctx = context_features(prob, d.groups)
    if d.slots is None:
        return ctx
    return np.hstack([ctx, slot_means(prob, d.slots)])


def page_threshold_rows(
    runs: Sequence[Sequence[np.ndarray]], data: list[PageData], t0: float, dataset_balance: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The page-threshold forest's training rows: for each fully labelled page of each run (one
    out-of-fold probability array per page), one row per candidate threshold
    (:func:`blockdex.predict.page_threshold.candidate_rows`), its target the page's token F1 at
    the candidate minus its F1 at ``t0``, its weight the page's dataset's factor
    (:func:`dataset_factors` over these pages)."""
    full = [i for i, d in enumerate(data) if d.labelled is None and d.words is not None]
    factor = dataset_factors([data[i].dataset for i in full], dataset_balance)
    X, y, w = [], [], []
    for probs in runs:
        for i in full:
            d, p = data[i], probs[i]
            X.append(candidate_rows(page_columns(p, d.words)))
            base = page_f1(p >= t0, d)
            y.append([page_f1(p >= t, d) - base for t in CANDIDATES])
            w.append(np.full(len(CANDIDATES), factor[d.dataset]))
    if not X:
        raise BlockdexError("no fully labelled training page to learn the page threshold from")
    return np.vstack(X), np.concatenate(y), np.concatenate(w)


def fit_page_threshold(
    runs: Sequence[Sequence[np.ndarray]], data: list[PageData], t0: float, cfg: TrainConfig
) -> dict[str, Any]:
    """The page-threshold part of a content model (:class:`blockdex.predict.page_threshold.
    PageThreshold`), learned from ``runs``' out-of-fold probabilities of ``data``."""
    import lightgbm as lgb

    X, y, w = page_threshold_rows(runs, data, t0, cfg.dataset_balance)
    params = {
        **lgb_params(cfg, cfg.seed + 20),
        "objective": "regression",
        "num_leaves": 15,
        "max_depth": 4,
        "learning_rate": 0.05,
        "min_child_samples": 100,
        "feature_fraction": 0.9,
    }
    booster = lgb.train(params, lgb.Dataset(X, label=y, weight=w), cfg.page_threshold_trees)
    return {
        "columns": list(PAGE_THRESHOLD_COLUMN_NAMES),
        "candidates": list(CANDIDATES),
        "margin": cfg.page_threshold_margin,
        "forest": export_booster(booster),
    }


def train(cfg: TrainConfig, data: list[PageData] | None = None) -> TrainResult:
    """Train both stages on ``data`` (collected from ``cfg.datasets`` when not given)."""
    try:
        import lightgbm  # noqa: F401
    except ImportError:
        raise MissingExtra("lightgbm", "train", "training the main-content model") from None
    t0 = time.perf_counter()
    if data is None:
        data = collect(
            cfg.datasets,
            cfg.split,
            cfg.max_pages,
            unit_columns=cfg.unit_columns,
            item_columns=cfg.item_columns,
            page_type_columns=cfg.page_type_columns,
        )
    if not data:
        raise BlockdexError("no training pages with ground truth were found")
    X = np.vstack([d.X for d in data])
    y = (np.concatenate([d.share for d in data]) >= cfg.label_share).astype(np.float32)
    w = _weights(data, cfg)
    runs = [
        _out_of_fold(X, y, w, data, cfg, cfg.seed + REPEAT_SEED_STEP * r)
        for r in range(cfg.threshold_repeats)
    ]
    stage1 = _fit(X, y, w, cfg, cfg.seed)
    stage2 = _fit(runs[0].X2, y, w, cfg, cfg.seed + 10)  # the first assignment's stage-1 OOF

    t1, f1_stage1 = best_threshold(
        [_split_pages(r.stage1, data) for r in runs], data, cfg.threshold_min_pages
    )
    stage2_runs = [_split_pages(r.stage2, data) for r in runs]
    t2, f1_stage2 = best_threshold(stage2_runs, data, cfg.threshold_min_pages)
    per_dataset = {
        name: [_mean_f1(probs, data, pages, t2) for probs in stage2_runs]
        for name, pages in sorted(_full_pages_by_dataset(data).items())
    }
    imp = stage2.feature_importance("gain")
    stage1_names = list(
        stage1_column_names(cfg.unit_columns, cfg.item_columns, cfg.page_type_columns)
    )
    context_names = list(context_column_names(cfg.item_columns))
    if X.shape[1] != len(stage1_names):
        raise BlockdexError(
            f"the training pages have {X.shape[1]} feature columns where the configuration "
            f"asks for {len(stage1_names)}: collect them with the same unit/item/page-type columns"
        )
    names = [*stage1_names, *context_names]
    top = sorted(zip(names, imp, strict=True), key=lambda kv: -kv[1])[:15]
    report = {
        "pages": len(data),
        "blocks": len(y),
        "content_share": float(y.mean()),
        "oof_f1_stage1": round(f1_stage1, 4),
        "oof_f1_stage2": round(f1_stage2, 4),
        "oof_f1_by_dataset": {k: round(float(np.mean(v)), 4) for k, v in per_dataset.items()},
        "oof_f1_by_dataset_runs": {k: [round(x, 4) for x in v] for k, v in per_dataset.items()},
        "threshold_repeats": len(runs),
        "threshold_stage1": t1,
        "threshold": t2,
        "seconds": round(time.perf_counter() - t0, 1),
        "top_features": [(k, round(float(v), 1)) for k, v in top],
    }
    model = {
        "format": "blockdex-content-model",
        "version": 1,
        "features": stage1_names,
        "context_features": context_names,
        "threshold": t2,
        "stage1": export_booster(stage1),
        "stage2": export_booster(stage2),
        "trained_on": list(cfg.datasets),
        "config": {
            k: v
            for k, v in asdict(cfg).items()
            if k != "datasets"
            and not (
                k in ("unit_columns", "item_columns", "page_type_columns", "page_threshold")
                and not v
            )
            and not (k.startswith("page_threshold_") and not cfg.page_threshold)
        },
        "report": report,
    }
    if cfg.page_threshold:
        model["page_threshold"] = fit_page_threshold(stage2_runs, data, t2, cfg)
    return TrainResult(model=model, report=report)


def save_model(model: dict[str, Any], path: str | Path) -> None:
    """Write a model as compact JSON (floats rounded to float32 precision)."""

    def compact(o: Any, exact: bool = False) -> Any:
        if isinstance(o, float):
            if not np.isfinite(o):
                return "inf" if o > 0 else "-inf"
            return o if exact else float(f"{o:.7g}")
        if isinstance(o, dict):
            # split thresholds keep full precision: rounding could move one across a feature
            # value and flip a decision; leaf values only add up, so 7 digits are plenty
            return {k: compact(v, exact or k == "threshold") for k, v in o.items()}
        if isinstance(o, list | tuple):
            return [compact(v, exact) for v in o]
        return o

    Path(path).write_text(json.dumps(compact(model), separators=(",", ":")), encoding="utf-8")
