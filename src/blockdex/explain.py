"""Why was a block kept? A page's blocks side by side with the decision and the result.

:func:`explain_page` runs one method on a page through :func:`blockdex.extract.run` and returns
its :class:`blockdex.result.Result` (``Explanation`` is the same type): every block with whether it
was kept and its score, plus the extracted result. A *predictor* chooses blocks itself; a
*classic baseline* (``blockdex.baselines``) returns its own HTML, so its choice is shown by
aligning its output text to blockdex's blocks (the same 3-gram alignment the evaluation uses for
ground truth) and the per-block score is the share of the block found in that output.

:func:`render_report` draws the block-explorer view — blocks in order, kept ones green, dropped
ones red, each with index, tag and score, the method, and the Markdown result beside them — as a
standalone HTML file (``blockdex explain``) or as a fragment the server's explorer page embeds.
"""

from __future__ import annotations

import html as html_lib
from functools import lru_cache
from importlib import resources
from string import Template
from typing import Any

from blockdex.extract import check_method, run
from blockdex.extract import known_methods as known_methods  # (its old home)
from blockdex.options import DEFAULT_OPTIONS, ExtractOptions
from blockdex.result import Result

Explanation = Result
"""One method's decision on one page (:class:`blockdex.result.Result`, under its old name)."""


def explain_page(
    data: str | bytes,
    options: ExtractOptions = DEFAULT_OPTIONS,
    *,
    url: str | None = None,
    content_type: str | None = None,
) -> Result:
    """Run the method ``options`` name (a predictor or classic method; None = the default) on
    a page through :func:`blockdex.extract.run`, its blocks built with their markup whatever
    the format (the report shows them and their Markdown)."""
    check_method(options.method)
    return run(data, options.replace(format="markdown"), url=url, content_type=content_type)


# -- the report --------------------------------------------------------------------------------


@lru_cache(maxsize=8)
def template(name: str) -> str:
    """A file from the package's ``templates`` folder (CSS, page skeletons)."""
    return resources.files("blockdex").joinpath("templates", name).read_text(encoding="utf-8")


def _esc(value: object) -> str:
    return html_lib.escape(str(value), quote=True)


def _score_text(row: dict[str, Any]) -> str:
    return f"{row['score']:.3f}" if "score" in row else "–"


_UNIT_NAMES = {"items": "item list", "item": "item"}
"""How the explorer names a unit kind (``items`` reads as a word of its own)."""


def _unit_open(unit: Any, primary: int | None) -> str:
    """The opening of a unit's frame: a list item holding the label and the unit's blocks."""
    classes = f"unit {unit.kind}" + (" primary" if unit.id == primary else "")
    what = "primary article" if unit.id == primary else _UNIT_NAMES.get(unit.kind, unit.kind)
    label = f"{what} · {unit.source}"
    if unit.title:
        label += f" · {unit.title[:120]}"
    return (
        f'<li class="{classes}" data-unit="{unit.id}" data-start="{unit.start}" '
        f'data-end="{unit.end}"><div class="unit-label">{_esc(label)}</div><ol class="unit-blocks">'
    )


def _runners_up(scores: Any, n: int = 2) -> str:
    """The next most likely types after the best one, as ``listing 0.21 · article 0.05``."""
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])[1 : n + 1]
    return "then " + " · ".join(f"{k} {v:.2f}" for k, v in ranked) if ranked else "no blocks"


def render_blocks(explanation: Explanation) -> str:
    """The ordered list of blocks, each marked ``kept`` or ``dropped``, inside frames for the
    page's units (articles, item lists with their items, and sections; the primary article
    marked)."""
    page = explanation.page
    units = list(page.units)
    primary = page.primary.unit if units else None
    items = []
    open_units: list[Any] = []
    next_unit = 0
    for row in explanation.block_rows():
        index = row["index"]
        while open_units and open_units[-1].end < index:
            items.append("</ol></li>")
            open_units.pop()
        while next_unit < len(units) and units[next_unit].start <= index:
            unit = units[next_unit]
            next_unit += 1
            if unit.end < index:
                continue
            while open_units and open_units[-1].end < unit.end:  # not nested: close first
                items.append("</ol></li>")
                open_units.pop()
            items.append(_unit_open(unit, primary))
            open_units.append(unit)
        state = "kept" if row["kept"] else "dropped"
        split = ""
        if "split" in row:
            split = (
                f'<span class="split">part {row["split"]["part"]}/{row["split"]["total"]}</span>'
            )
        items.append(
            f'<li class="block {state}" data-index="{row["index"]}" data-kept="{str(row["kept"]).lower()}">'
            f'<div class="meta"><span class="index">[{row["index"]}]</span>'
            f'<span class="tag">&lt;{_esc(row["tag"])}&gt;</span>{split}'
            f'<span class="score" title="score">{_score_text(row)}</span>'
            f'<span class="state">{state}</span></div>'
            f'<div class="text">{_esc(row["text"])}</div></li>'
        )
    items.extend("</ol></li>" for _ in open_units)
    return '<ol class="blocks">' + "".join(items) + "</ol>"


def render_fragment(explanation: Explanation, *, source: str | None = None) -> str:
    """The explorer view (summary, blocks, Markdown) as an HTML fragment."""
    n = len(explanation.page.blocks)
    kept = len(explanation.selection)
    how = (
        "blocks chosen by the predictor"
        if explanation.kind == "predictor"
        else "classic method; blocks aligned to its output (score = share of the block in it)"
    )
    timings = " · ".join(f"{k} {v * 1000:.1f} ms" for k, v in explanation.timings.items())
    page_type = explanation.page.page_type
    summary = [
        f'<dt>page type</dt><dd class="page-type" data-page-type="{_esc(page_type.label)}">'
        f"{_esc(page_type.label)} <small>(confidence {page_type.confidence:.2f}; "
        f"{_esc(_runners_up(page_type.scores))})</small></dd>",
        f'<dt>method</dt><dd class="method">{_esc(explanation.method)} <small>({_esc(how)})</small></dd>',
        f"<dt>query</dt><dd>{_esc(explanation.query) if explanation.query else '<em>none: main content</em>'}</dd>",
        f'<dt>kept</dt><dd class="counts">{kept} of {n} blocks · selection {_esc(explanation.selection.format())}</dd>',
        f"<dt>timings</dt><dd>{_esc(timings)}</dd>",
    ]
    if explanation.page.title:
        summary.insert(0, f"<dt>title</dt><dd>{_esc(explanation.page.title)}</dd>")
    if source:
        summary.insert(0, f"<dt>source</dt><dd>{_esc(source)}</dd>")
    warnings = list(explanation.page.warnings) + list(explanation.selection.warnings)
    if warnings:
        summary.append("<dt>warnings</dt><dd>" + "<br>".join(_esc(w) for w in warnings) + "</dd>")
    return (
        '<section class="report">'
        f'<dl class="summary">{"".join(summary)}</dl>'
        '<p class="legend"><span class="swatch kept"></span> kept '
        '<span class="swatch dropped"></span> dropped '
        '<span class="swatch primary"></span> primary article '
        '<span class="swatch article"></span> article '
        '<span class="swatch items"></span> item list '
        '<span class="swatch section"></span> section</p>'
        '<div class="columns">'
        f'<div class="col"><h2>Blocks</h2>{render_blocks(explanation)}</div>'
        f'<div class="col"><h2>Markdown result</h2><pre class="markdown">{_esc(explanation.markdown)}</pre></div>'
        "</div></section>"
    )


def render_report(explanation: Explanation, *, source: str | None = None) -> str:
    """A standalone HTML file of the explorer view (styles inline, no scripts, no network)."""
    title = f"blockdex explain: {explanation.page.title or source or 'page'}"
    return Template(template("report.html")).substitute(
        title=_esc(title),
        css=template("explorer.css"),
        heading=_esc(title),
        body=render_fragment(explanation, source=source),
    )
