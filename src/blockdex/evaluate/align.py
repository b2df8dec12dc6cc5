r"""Block labels from ground-truth text: which of blockdex's blocks hold the main content.

A block is labelled *content* when most of its word 3-grams occur in the ground truth (for
blocks of fewer than three words: when its words occur there as a contiguous run and a
neighbouring block is content, so a lone "Home" or "Share" matching a word of the article is not
taken). The selection of content blocks rendered as text gives the *oracle* score: the ceiling
that segmentation allows any index predictor on that page.

Words are those of the token metric (lower-cased ``\w+``), except that each Chinese or Japanese
character is a word of its own (:mod:`blockdex.cjk`): a run of ideographs has no spaces, so to
``\w+`` a chapter title or a whole clause is one "word", every block of a list of such titles
is "short" and none has the long neighbour a short block needs.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from blockdex.cjk import WORD_PATTERN
from blockdex.page import Page, Selection

_ALIGN_WORD_RE = re.compile(WORD_PATTERN)


def align_tokens(text: str | None) -> list[str]:
    r"""Lower-cased ``\w+`` words, each CJK character a word of its own."""
    return _ALIGN_WORD_RE.findall(text.lower()) if text else []


@dataclass(frozen=True, slots=True)
class AlignConfig:
    min_ngram_share: float = 0.5
    """Share of a block's 3-grams that must occur in the ground truth for it to be content."""
    short_block_tokens: int = 3
    """Blocks with fewer word tokens are judged by contiguous match plus a content neighbour."""


DEFAULT_ALIGN = AlignConfig()


def _ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    return [tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)]


def block_labels(page: Page, ground_truth: str, cfg: AlignConfig = DEFAULT_ALIGN) -> list[float]:
    """Per block, the share of its 3-grams found in ``ground_truth`` (1.0/0.0 for short blocks)."""
    gt = align_tokens(ground_truth)
    gt3 = set(_ngrams(gt, 3))
    gt_small = set(gt) | set(_ngrams(gt, 2))
    scores: list[float] = []
    short: list[int] = []
    for pos, block in enumerate(page.blocks):
        toks = align_tokens(block.text)
        if not toks:
            scores.append(0.0)
            continue
        if len(toks) < cfg.short_block_tokens:
            key = toks[0] if len(toks) == 1 else tuple(toks)
            scores.append(1.0 if key in gt_small else 0.0)
            short.append(pos)
            continue
        grams = _ngrams(toks, 3)
        scores.append(sum(g in gt3 for g in grams) / len(grams))
    # Short blocks count only next to content.
    for pos in short:
        if scores[pos] <= 0:
            continue
        neighbours = [
            scores[j] for j in (pos - 1, pos + 1) if 0 <= j < len(scores) and j not in short
        ]
        if not any(s >= cfg.min_ngram_share for s in neighbours):
            scores[pos] = 0.0
    return scores


def oracle_selection(page: Page, ground_truth: str, cfg: AlignConfig = DEFAULT_ALIGN) -> Selection:
    """The blocks aligned to the ground truth, as a selection."""
    labels = block_labels(page, ground_truth, cfg)
    return Selection.from_indices(
        b.index for b, s in zip(page.blocks, labels, strict=True) if s >= cfg.min_ngram_share
    )
