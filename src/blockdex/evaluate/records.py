"""What the evaluation harness writes for one method on one page (:mod:`blockdex.evaluate.bench`)
and the tables by page type read (:mod:`blockdex.evaluate.page_types`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class PageRecord:
    """One method on one page."""

    page: str
    method: str
    seconds: float
    tokens: int
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    lcs_f1: float | None = None
    snippets: tuple[int, int, int, int] | None = None
    """(with found, with missed, without found, without absent)."""
    error: str | None = None
    empty: bool = False
    """The output has no word although the ground truth has some (a reader got nothing)."""
    page_type: str | None = None
    """The page's labelled type (wcxb's ``page_type``); None on a dataset without types."""
    has_main_content: bool | None = None
    """On a typed page: whether its reference has any word (wcxb labels some pages as having
    no main content)."""
    wcxb_f1: float | None = None
    """On a typed page: F1 by wcxb's own scorer (:func:`~blockdex.evaluate.metrics.wcxb_prf`);
    0 on a page the method failed on."""
