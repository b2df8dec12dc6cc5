"""`blockdex train` reproduces a loadable, deterministic model (tiny run on real pages)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from blockdex import segment
from blockdex.cli import main
from blockdex.predict.content import ContentModel

pytest.importorskip("lightgbm", reason="training needs the 'train' extra (lightgbm)")


def test_train_writes_a_model_that_loads_and_is_reproducible(
    shared_data: Path, tmp_path: Path, article_html: str, capsys: pytest.CaptureFixture[str]
) -> None:
    outs = []
    for run in ("a", "b"):
        out = tmp_path / f"model-{run}.json"
        argv = ["train", "--datasets", "scrapinghub-aeb", "--limit", "16", "--trees", "4"]
        assert main([*argv, "--out", str(out)]) == 0
        outs.append(out)
    report = capsys.readouterr().out
    assert '"oof_f1_stage2"' in report
    a, b = (json.loads(o.read_text()) for o in outs)
    a["report"].pop("seconds")
    b["report"].pop("seconds")
    assert a == b  # same data, same seed: the same trees and threshold
    model = ContentModel.load(outs[0])
    probs = model.probabilities(segment(article_html))
    assert probs.shape[0] > 0 and np.isfinite(probs).all()
    assert model.trained_on == ("scrapinghub-aeb",)


def test_train_page_type_writes_a_model_that_loads_and_reports_its_cv(
    shared_data: Path, tmp_path: Path, article_html: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from blockdex.pagetype import PAGE_TYPES, PageTypeModel, classify_page

    outs = []
    for run in ("a", "b"):
        out = tmp_path / f"page-type-{run}.json"
        argv = ["train", "--page-type", "--limit", "120", "--trees", "5", "--cv-seeds", "1"]
        assert main([*argv, "--out", str(out)]) == 0
        outs.append(out)
    captured = capsys.readouterr()
    report = json.JSONDecoder().raw_decode(captured.out)[0]  # the first run's report
    assert report["pages"] == 120
    assert 0 < report["majority_baseline"] <= 1
    for cv in ("cv_by_host", "cv_at_random"):
        assert len(report[cv]["accuracy_by_seed"]) == 1
        assert sum(map(sum, report[cv]["confusion_first_seed"])) == 120
        # the same out-of-fold pages read without an address
        assert 0 < report[cv]["accuracy_without_url"] <= 1
        assert sum(map(sum, report[cv]["confusion_without_url_first_seed"])) == 120
    assert "| labelled \\ predicted |" in captured.err  # the confusion tables, as Markdown
    a, b = (json.loads(o.read_text()) for o in outs)
    a["report"].pop("seconds")
    b["report"].pop("seconds")
    assert a == b  # same pages, same seeds: the same trees, threshold and figures
    model = PageTypeModel.load(outs[0])
    assert model.classes == PAGE_TYPES and len(model.forests) == len(PAGE_TYPES)
    found = classify_page(segment(article_html), model)
    assert abs(sum(found.scores.values()) - 1) < 1e-6


def test_training_without_pages_is_a_clear_error(tmp_path: Path, capsys) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    code = main(["train", "--datasets", str(empty), "--out", str(tmp_path / "m.json")])
    assert code == 1
    assert "blockdex: error:" in capsys.readouterr().err


def _scored_page(dataset: str, n: int, probs: list[float], content: list[bool]):
    """A training page whose blocks are one word each: ``content`` marks the ground truth."""
    from collections import Counter

    from blockdex.train import PageData

    words = [[f"w{n}x{i}"] for i in range(len(probs))]
    gt = Counter(w[0] for w, c in zip(words, content, strict=True) if c)
    page = PageData(
        id=f"{dataset}-{n}",
        dataset=dataset,
        X=np.zeros((len(probs), 1), dtype=np.float32),
        groups=np.zeros((len(probs), 1), dtype=np.int32),
        share=np.asarray(content, dtype=np.float32),
        block_tokens=words,
        gt_tokens=gt,
    )
    return np.asarray(probs), page


def test_a_dataset_of_a_few_pages_does_not_vote_on_the_threshold() -> None:
    from blockdex.train import best_threshold

    # 30 pages want a high threshold (a block at 0.5 is boilerplate), 2 pages a low one
    # (their content scores 0.3): the two pages must not move the threshold.
    big = [_scored_page("big", n, [0.9, 0.5, 0.1], [True, False, False]) for n in range(30)]
    small = [_scored_page("small", n, [0.3, 0.1], [True, False]) for n in range(2)]
    probs = [p for p, _ in big + small]
    data = [d for _, d in big + small]
    t_all, _ = best_threshold([probs], data)  # every dataset votes: the small one pulls it down
    assert t_all <= 0.3
    t, f1 = best_threshold([probs], data, min_pages=20)
    assert 0.5 < t <= 0.9 and f1 == 1.0
    # when no dataset has enough pages, all of them vote rather than none
    t_few, _ = best_threshold([probs[-2:]], data[-2:], min_pages=20)
    assert t_few <= 0.3


def test_the_threshold_is_voted_by_the_mean_over_fold_assignments() -> None:
    from blockdex.train import best_threshold

    # Two runs disagree: in the first, content scores 0.7 and boilerplate 0.3 (any threshold in
    # (0.3, 0.7] is perfect); in the second, content 0.9 and boilerplate 0.6 ((0.6, 0.9]). The
    # first alone picks the lowest perfect threshold, wrong for the second; the mean over both
    # picks one in (0.6, 0.7], right for both.
    pages = [_scored_page("d", n, [0.7, 0.3], [True, False]) for n in range(25)]
    data = [d for _, d in pages]
    run_a = [np.array([0.7, 0.3]) for _ in data]
    run_b = [np.array([0.9, 0.6]) for _ in data]
    t_a, _ = best_threshold([run_a], data)
    t, f1 = best_threshold([run_a, run_b], data)
    assert t_a <= 0.6
    assert 0.6 < t <= 0.7 and f1 == 1.0


def test_repeated_fold_assignments_change_the_threshold_vote_not_the_trees(
    shared_data: Path,
) -> None:
    import dataclasses

    from blockdex.train import TrainConfig, collect, train

    data = collect(("scrapinghub-aeb",), "train", max_pages=12, progress=False)
    cfg = TrainConfig(datasets=("scrapinghub-aeb",), n_trees=4, threshold_repeats=1)
    one = train(cfg, data)
    three = train(dataclasses.replace(cfg, threshold_repeats=3), data)
    for stage in ("stage1", "stage2"):
        assert one.model[stage] == three.model[stage]
    assert three.report["threshold_repeats"] == 3
    runs = three.report["oof_f1_by_dataset_runs"]["scrapinghub-aeb"]
    assert len(runs) == 3
    assert three.report["oof_f1_by_dataset"]["scrapinghub-aeb"] == round(float(np.mean(runs)), 4)


def test_fewer_than_one_threshold_repeat_is_a_clear_error(tmp_path: Path, capsys) -> None:
    from blockdex.train import TrainConfig

    with pytest.raises(ValueError, match="threshold_repeats"):
        TrainConfig(threshold_repeats=0)
    argv = ["train", "--threshold-repeats", "0", "--out", str(tmp_path / "m.json")]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("blockdex: error:") and "threshold_repeats" in err


def test_a_model_trained_with_unit_columns_reads_them_at_run_time(
    shared_data: Path, article_html: str
) -> None:
    from blockdex.features import FEATURE_NAMES
    from blockdex.train import TrainConfig, collect, train
    from blockdex.units import UNIT_COLUMN_NAMES

    data = collect(("scrapinghub-aeb",), "train", max_pages=12, progress=False, unit_columns=True)
    assert data[0].X.shape[1] == len(FEATURE_NAMES) + len(UNIT_COLUMN_NAMES)
    cfg = TrainConfig(
        datasets=("scrapinghub-aeb",), n_trees=4, threshold_repeats=1, unit_columns=True
    )
    result = train(cfg, data)
    assert result.model["features"] == [*FEATURE_NAMES, *UNIT_COLUMN_NAMES]
    assert result.model["config"]["unit_columns"] is True
    model = ContentModel(result.model)
    assert model.unit_columns
    probs = model.probabilities(segment(article_html))
    assert probs.shape[0] > 0 and np.isfinite(probs).all()
    # the shipped model has no unit columns, and its config does not name the option
    shipped = ContentModel.load()
    assert not shipped.unit_columns
    plain = train(
        TrainConfig(datasets=("scrapinghub-aeb",), n_trees=4, threshold_repeats=1, max_pages=12)
    )
    assert "unit_columns" not in plain.model["config"]


def test_a_model_trained_with_page_type_columns_reads_them_at_run_time(
    shared_data: Path, article_html: str
) -> None:
    """Pages of a set the page-type model never learned are typed by it as in use; the page
    type's columns are the same on every block and the model reads them back."""
    from blockdex.features import FEATURE_NAMES
    from blockdex.pagetype import PAGE_TYPE_COLUMN_NAMES
    from blockdex.train import TrainConfig, collect, train, unseen_types

    assert unseen_types(("scrapinghub-aeb",), progress=False) == {}
    data = collect(
        ("scrapinghub-aeb",), "train", max_pages=12, progress=False, page_type_columns=True
    )
    n = len(FEATURE_NAMES)
    assert data[0].X.shape[1] == n + len(PAGE_TYPE_COLUMN_NAMES)
    assert (data[0].X[:, n:] == data[0].X[0, n:]).all()
    # a type given for a page stands for the one the page-type model would give it
    from blockdex.evaluate.datasets import load_dataset, split_of
    from blockdex.pagetype import PAGE_TYPES, page_type_of

    first = next(p for p in load_dataset("scrapinghub-aeb") if split_of(p.id) == "train")
    given = page_type_of({"article": 0.1, "product": 0.9}, 0.5)
    typed = collect(
        ("scrapinghub-aeb",),
        "train",
        max_pages=1,
        progress=False,
        page_type_columns=True,
        page_types={f"scrapinghub-aeb:{first.id}": given},
    )
    assert typed[0].id == first.id
    assert typed[0].X[0, n + PAGE_TYPES.index("product")] == np.float32(0.9)
    cfg = TrainConfig(
        datasets=("scrapinghub-aeb",), n_trees=4, threshold_repeats=1, page_type_columns=True
    )
    result = train(cfg, data)
    assert result.model["features"] == [*FEATURE_NAMES, *PAGE_TYPE_COLUMN_NAMES]
    model = ContentModel(result.model)
    assert model.page_type_columns and not ContentModel.load().page_type_columns
    probs = model.probabilities(segment(article_html))
    assert probs.shape[0] > 0 and np.isfinite(probs).all()


def test_a_page_given_a_type_keeps_its_blocks_primary_article_and_ids(article_html: str) -> None:
    from blockdex.pagetype import page_type_of
    from blockdex.train import with_page_type

    page = segment(article_html)
    kind = page_type_of({"article": 0.1, "product": 0.9}, 0.5)
    typed = with_page_type(page, kind)
    assert typed.page_type is kind and page.page_type.label == "article"
    assert typed.blocks == page.blocks and typed.primary == page.primary
