"""Scores per page type (``blockdex bench --by-type``), two ways side by side.

wcxb labels each page with one of seven types (article, service, collection, listing, product,
documentation, forum) and some pages as having no main content (an empty reference). A method's
pages of one type are scored two ways, neither replacing the other:

* **wcxb's own scorer over all pages** (:func:`~blockdex.evaluate.metrics.wcxb_prf`): a page with
  no main content scores 1 for an empty output, else 0. This is the figure to compare with
  published ones.
* **F1 over the pages with main content**, beside the **fallback rate** on the pages with none:
  the share of them where the method's output is not empty (blockdex's ``never_empty`` gives a
  user who asked for a page what it has, marked ``fallback``; wcxb's scorer counts that as 0).

A page a method failed on counts as 0 in the first figure and in the second (an empty output
where there was content), and as no fallback. Both read the per-page records of one bench run,
so a saved ``results.json`` gives the same tables (``benchmarks/by_page_type.py``).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import asdict, dataclass
from typing import Any

from blockdex.evaluate.records import PageRecord

ALL_TYPES = "all"
"""The row of every typed page together."""


@dataclass(frozen=True, slots=True)
class TypeScores:
    """One method on the pages of one type."""

    pages: int
    wcxb_f1: float
    """Mean F1 by wcxb's own scorer over all the pages."""
    main_pages: int
    """Pages with main content (a reference with words)."""
    main_f1: float | None
    """Mean F1 over the pages with main content; None when there are none."""
    empty_pages: int
    """Pages with no main content."""
    fallbacks: int
    """Pages with no main content where the output is not empty."""

    @property
    def fallback_rate(self) -> float | None:
        return self.fallbacks / self.empty_pages if self.empty_pages else None


def _type_scores(records: list[PageRecord]) -> TypeScores:
    main = [r.f1 or 0.0 for r in records if r.has_main_content]
    empty = [r for r in records if not r.has_main_content]
    return TypeScores(
        pages=len(records),
        wcxb_f1=statistics.fmean(r.wcxb_f1 or 0.0 for r in records),
        main_pages=len(main),
        main_f1=statistics.fmean(main) if main else None,
        empty_pages=len(empty),
        fallbacks=sum(r.tokens > 0 for r in empty),
    )


def scores_by_type(records: dict[str, list[PageRecord]]) -> dict[str, dict[str, TypeScores]]:
    """``{page type: {method: scores}}`` from one run's per-page records, types by page count
    (most first) and then the ``all`` row. Empty when no page carries a type."""
    typed = {m: [r for r in recs if r.page_type] for m, recs in records.items()}
    typed = {m: recs for m, recs in typed.items() if recs}
    if not typed:
        return {}
    counts = Counter(r.page_type for r in next(iter(typed.values())))
    order = sorted(counts, key=lambda t: (-counts[t], t))
    out: dict[str, dict[str, TypeScores]] = {}
    for page_type in order:
        out[page_type] = {
            m: _type_scores([r for r in recs if r.page_type == page_type])
            for m, recs in typed.items()
        }
    out[ALL_TYPES] = {m: _type_scores(recs) for m, recs in typed.items()}
    return out


def by_type_json(scores: dict[str, dict[str, TypeScores]]) -> dict[str, Any]:
    """The tables as plain data for ``results.json`` (with each fallback rate)."""
    return {
        t: {m: {**asdict(s), "fallback_rate": s.fallback_rate} for m, s in row.items()}
        for t, row in scores.items()
    }


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _fallbacks(s: TypeScores) -> str:
    if not s.empty_pages:
        return "–"
    return f"{s.fallback_rate:.0%} ({s.fallbacks}/{s.empty_pages})"


def by_type_tables(title: str, records: dict[str, list[PageRecord]]) -> str:
    """The two markdown tables: wcxb's scorer over all pages, then F1 over the pages with main
    content beside the fallback rate on the pages without. One line when no page has a type."""
    scores = scores_by_type(records)
    if not scores:
        return (
            f"{title}: no page carries a page type, so there is no table by type "
            "(--by-type needs pages labelled with page_type, as wcxb's are)\n"
        )
    methods = list(next(iter(scores.values())))
    first = methods[0]
    lines = [
        f"{title}: mean F1 by wcxb's scorer over all pages (a page with no main content "
        "scores 1 for an empty output, else 0):",
        "",
        "| page type (pages) | " + " | ".join(methods) + " |",
        "|---|" + "---:|" * len(methods),
    ]
    for page_type, row in scores.items():
        cells = " | ".join(_f(row[m].wcxb_f1) for m in methods)
        lines.append(f"| {page_type} ({row[first].pages}) | {cells} |")
    lines += [
        "",
        f"{title}: mean F1 over the pages with main content, and the fallback rate on the pages "
        "with none (share with a non-empty output):",
        "",
        "| page type (with / without main content) | "
        + " | ".join(f"{m} F1 | {m} fallback" for m in methods)
        + " |",
        "|---|" + "---:|" * (2 * len(methods)),
    ]
    for page_type, row in scores.items():
        s = row[first]
        cells = " | ".join(f"{_f(row[m].main_f1)} | {_fallbacks(row[m])}" for m in methods)
        lines.append(f"| {page_type} ({s.main_pages} / {s.empty_pages}) | {cells} |")
    unreferenced = sum(r.page_type is not None and r.f1 is None for r in records[first])
    if unreferenced:
        lines += [
            "",
            f"- {unreferenced} typed page(s) have no reference text at all: wcxb's scorer "
            "counts them as pages with no main content; the overall table leaves them out "
            "of its F1.",
        ]
    return "\n".join(lines) + "\n"
