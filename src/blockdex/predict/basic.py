"""The two trivial predictors that make the pipeline runnable end to end."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from blockdex.page import Page, Selection, merge_intervals


class AllPredictor:
    """Keep every block: the page's whole cleaned content."""

    name = "all"
    reads_markup = False

    def predict(self, page: Page, query: str | None = None) -> Selection:
        if not page.blocks:
            return Selection()
        return Selection(((page.blocks[0].index, page.blocks[-1].index),))


class OraclePredictor:
    """Keep exactly the blocks given in advance (as indices or closed intervals).

    Used by tests and by the evaluation harness to measure the ceiling segmentation allows.
    """

    name = "oracle"
    reads_markup = False

    def __init__(
        self,
        indices: Iterable[int] | None = None,
        intervals: Sequence[Sequence[int]] | None = None,
    ) -> None:
        ivs = list(intervals or []) + [(i, i) for i in (indices or [])]
        self.intervals = merge_intervals(ivs)

    def predict(self, page: Page, query: str | None = None) -> Selection:
        if not self.intervals:
            return Selection(
                warnings=(
                    "the oracle keeps the blocks it is given and was given none: it measures "
                    "the segmentation ceiling in 'blockdex bench' (from the ground truth) and "
                    "in tests; use --predictor content for a page's main content",
                )
            )
        present = set(page.indices())
        kept = [i for a, b in self.intervals for i in range(a, b + 1) if i in present]
        return Selection.from_indices(kept)
