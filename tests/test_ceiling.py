"""Round-trip fidelity on real pages: the oracle ceiling segmentation allows."""

from __future__ import annotations

import statistics
from pathlib import Path

from blockdex.evaluate.align import oracle_selection
from blockdex.evaluate.datasets import load_dataset
from blockdex.evaluate.metrics import token_prf
from blockdex.extract import Extractor
from blockdex.render import selection_text


def test_oracle_blocks_reassemble_to_the_ground_truth(shared_data: Path) -> None:
    """Blocks overlapping the ground truth, reassembled, reach token F1 >= 0.97 on scrapinghub-aeb."""
    ex = Extractor()
    scores = []
    for page in load_dataset("scrapinghub-aeb"):
        seg = ex.segment(page.html, url=page.url)
        sel = oracle_selection(seg, page.ground_truth)
        scores.append(token_prf(selection_text(seg, sel), page.ground_truth).f1)
    assert len(scores) >= 100
    assert statistics.fmean(scores) >= 0.97
