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
