"""Round-trip fidelity on real pages: the oracle ceiling segmentation allows."""

from __future__ import annotations

import statistics
from pathlib import Path

from blockdex.evaluate.align import align_tokens, oracle_selection
from blockdex.evaluate.datasets import load_dataset
from blockdex.evaluate.metrics import token_prf
from blockdex.extract import Extractor
from blockdex.render import selection_text

# A novel's chapter index: a list of short titles with no paragraph among them.
CHAPTERS = [f"第{n}章 {title}" for n, title in enumerate(
    ["天降奇缘", "山中古寺", "夜雨孤灯", "江湖旧事", "铁剑无名", "月下重逢", "风起云涌", "故人归来"],
    start=1,
)]  # fmt: skip
INDEX_PAGE = (
    "<html><head><title>长河记 目录</title></head><body>"
    '<div class="nav"><a href="/">首页</a> <a href="/top">排行</a> <a href="/new">最新</a></div>'
    "<h1>长河记</h1><ul>"
    + "".join(f'<li><a href="/c/{n}.html">{c}</a></li>' for n, c in enumerate(CHAPTERS))
    + '</ul><div class="footer">版权所有 © 2026</div></body></html>'
)


def test_alignment_reads_each_cjk_character_as_a_word() -> None:
    assert align_tokens("第一章 天降奇缘, Hello World") == [
        "第", "一", "章", "天", "降", "奇", "缘", "hello", "world",
    ]  # fmt: skip
    # To \\w+ each title is one or two "words", so every list item was a short block without
    # the long neighbour a short block needs, and the oracle kept none of the chapters.
    seg = Extractor().segment(INDEX_PAGE)
    sel = oracle_selection(seg, "长河记\n\n" + "\n".join(CHAPTERS))
    kept = selection_text(seg, sel)
    assert all(c in kept for c in CHAPTERS)
    assert "首页" not in kept and "版权所有" not in kept


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
