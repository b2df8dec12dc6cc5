"""scripts/train_indexlm.py: a few CPU steps on a tiny random model from `blockdex dataset sft` data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from blockdex.cli import main

ROOT = Path(__file__).parent.parent


def test_smoke_training_runs_on_sft_data(tmp_path: Path) -> None:
    pytest.importorskip(
        "torch", reason="the IndexLM training script needs torch (not a blockdex extra)"
    )
    pytest.importorskip("transformers", reason="the IndexLM training script needs transformers")
    sft = tmp_path / "sft.jsonl"
    assert (
        main(
            [
                "dataset",
                "sft",
                "--datasets",
                str(ROOT / "tests/data/eval"),
                "--split",
                "all",
                "--out",
                str(sft),
            ]
        )
        == 0
    )
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts/train_indexlm.py"),
            "--data",
            str(sft),
            "--smoke",
            "--out",
            str(tmp_path / "model"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["steps"] == 3 and report["last_loss"] > 0
    assert (tmp_path / "model" / "config.json").exists()
