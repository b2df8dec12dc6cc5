"""The result of running a method on a page, and how it renders in each output format.

One type for every method and every door: :func:`blockdex.extract.run` returns it for a
predictor (blocks chosen by index) and for a classic method (``blockdex.baselines``: its own
HTML and text, its choice of blocks found by aligning that text to the page's blocks). The
explanation of a result — every block with its decision, the block-explorer view — is worked
out from the page and the selection only when it is asked for (:meth:`Result.block_rows`,
:mod:`blockdex.explain`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from blockdex.assemble import assemble_html
from blockdex.baselines import BaselineResult
from blockdex.errors import UnsupportedFormat
from blockdex.options import FORMATS
from blockdex.page import Page, Selection
from blockdex.render import (
    block_rows,
    html_to_markdown,
    selection_json,
    selection_markdown,
    selection_text,
)
from blockdex.urls import PageLinks


@dataclass(frozen=True, slots=True)
class Result:
    """What a method kept of one page, ready to render or serialise."""

    page: Page
    selection: Selection
    predictor: str
    """The method that chose: a predictor's name or a classic method's (also :attr:`method`)."""
    query: str | None = None
    timings: dict[str, float] = field(default_factory=dict)
    """Seconds per step."""
    text_only: bool = False
    """The blocks were built without their HTML (``Extractor.run(output="text")``): the result
    renders as text only."""
    classic: BaselineResult | None = None
    """A classic method's own output: the result's HTML and text are its (the selection is its
    output aligned to the page's blocks); None for a predictor, whose blocks are the result."""
    page_links: PageLinks | None = None
    """What the whole page links to (its links, canonical URL and feeds), read from the same
    parse before cleaning, when asked (``Extractor.run(page_links=True)``: a crawler's
    discovery); else None."""

    @property
    def method(self) -> str:
        return self.predictor

    @property
    def kind(self) -> str:
        """``predictor`` (blocks chosen directly) or ``baseline`` (blocks aligned to its output)."""
        return "predictor" if self.classic is None else "baseline"

    @property
    def baseline_html(self) -> str | None:
        """A classic method's own HTML (None for a predictor)."""
        return None if self.classic is None else self.classic.html

    def _markup(self, fmt: str) -> None:
        if self.text_only:
            raise UnsupportedFormat(
                f"this extraction was run for text output only; run it again without "
                f"output='text' to render it as {fmt}"
            )

    @property
    def html(self) -> str:
        """The extracted page as an HTML document."""
        if self.classic is not None:
            return self.classic.html
        self._markup("html")
        return assemble_html(self.page, self.selection)

    @property
    def markdown(self) -> str:
        """Markdown of the result: for a predictor exactly what ``blockdex extract`` prints."""
        if self.classic is not None:
            return html_to_markdown(self.classic.html)
        self._markup("markdown")
        return selection_markdown(self.page, self.selection)

    @property
    def text(self) -> str:
        if self.classic is not None:
            return self.classic.text
        return selection_text(self.page, self.selection)

    def render(self, fmt: str = "markdown") -> str:
        """The result in one of :data:`blockdex.options.FORMATS`."""
        if fmt == "markdown":
            return self.markdown
        if fmt == "text":
            return self.text
        if fmt == "html":
            return self.html
        if fmt == "json":
            return json.dumps(self.to_json(), ensure_ascii=False, indent=2) + "\n"
        raise UnsupportedFormat(
            f"unknown output format {fmt!r}; choose one of: {', '.join(FORMATS)}"
        )

    def to_json(
        self, include_blocks: bool = True, *, extra: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The JSON record (:func:`blockdex.render.selection_json`); ``extra``: the keys the
        door adds last (by default the method as ``predictor``, the query and the timings)."""
        self._markup("json")
        if extra is None:
            extra = {
                "predictor": self.predictor,
                "query": self.query,
                "timings_ms": {k: round(v * 1000, 3) for k, v in self.timings.items()},
            }
        return selection_json(
            self.page,
            self.selection,
            markdown=None if self.classic is None else self.markdown,
            include_blocks=include_blocks,
            query=self.query,
            extra=extra,
        )

    def block_rows(self) -> list[dict[str, Any]]:
        """Every block with its decision (:func:`blockdex.render.block_rows`)."""
        return block_rows(self.page, self.selection)
