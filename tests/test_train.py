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
    t_all, _ = best_threshold(probs, data)  # every dataset votes: the small one pulls it down
    assert t_all <= 0.3
    t, f1 = best_threshold(probs, data, min_pages=20)
    assert 0.5 < t <= 0.9 and f1 == 1.0
    # when no dataset has enough pages, all of them vote rather than none
    t_few, _ = best_threshold(probs[-2:], data[-2:], min_pages=20)
    assert t_few <= 0.3
