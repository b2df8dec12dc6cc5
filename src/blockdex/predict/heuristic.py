"""Main content by rules only — no model file, no learning.

For users who want behaviour they can read in one screen. The rules use the same per-block
measurements as the model (:func:`blockdex.features.block_features`):

1. The *main container* is the deepest element holding most of the page's prose (blocks with
   enough words and little link text). Blocks outside it are dropped.
2. Inside it, a block is dropped when its link density is high (navigation, tag lists), or when
   its own or its parent's class/id says comment, share, related, advertising, overlay,
   navigation or footer.
3. Short blocks (headings, list items, table rows, captions) are kept when prose is near
   (within ``max_gap`` blocks), so a section's heading and a paragraph's list survive.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from blockdex.features import FEATURE_NAMES, block_features
from blockdex.page import Page, Selection

_COL = {name: i for i, name in enumerate(FEATURE_NAMES)}
NOISE_FAMILIES = ("comment", "share", "related", "ad", "overlay", "nav", "footer", "sidebar")


@dataclass(frozen=True, slots=True)
class HeuristicConfig:
    max_link_density: float = 0.5
    """Blocks whose text is more than half link text are navigation."""
    prose_min_words: int = 8
    """A block with this many words (and low link density) is prose."""
    max_gap: int = 3
    """Short blocks are kept when prose lies within this many blocks."""


class HeuristicPredictor:
    """Rules over the main container, link density and class/id names."""

    name = "heuristic"
    reads_markup = False

    def __init__(self, config: HeuristicConfig | None = None) -> None:
        self.config = config or HeuristicConfig()

    def predict(self, page: Page, query: str | None = None) -> Selection:
        if not page.blocks:
            return Selection()
        cfg = self.config
        X = block_features(page)
        in_main = X[:, _COL["in_main_container"]] > 0
        link = X[:, _COL["link_density"]]
        words = np.expm1(X[:, _COL["log_words"]])
        noise = np.zeros(len(page.blocks), dtype=bool)
        for fam in NOISE_FAMILIES:
            noise |= X[:, _COL[f"near_attr_{fam}"]] > 0
        content_hint = X[:, _COL["near_attr_content"]] > 0
        noise &= ~content_hint | (X[:, _COL["near_attr_comment"]] > 0)
        candidate = in_main & (link <= cfg.max_link_density) & ~noise
        prose = candidate & (words >= cfg.prose_min_words)
        if not prose.any():
            prose = candidate
        prose_idx = np.flatnonzero(prose)
        keep = prose.copy()
        if prose_idx.size:
            pos = np.arange(len(page.blocks))
            at = np.searchsorted(prose_idx, pos)
            left = prose_idx[np.clip(at - 1, 0, prose_idx.size - 1)]
            right = prose_idx[np.clip(at, 0, prose_idx.size - 1)]
            nearest = np.minimum(np.abs(pos - left), np.abs(right - pos))
            keep |= candidate & (nearest <= cfg.max_gap)
        indices = [b.index for b, k in zip(page.blocks, keep, strict=True) if k]
        warnings = () if indices else ("no block looked like main content",)
        return Selection.from_indices(indices, warnings=warnings)
