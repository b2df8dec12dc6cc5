"""The classic extraction systems blockdex is measured against, as first-class methods.

Unlike predictors (which choose block indices), a baseline works on the page its own way and
returns HTML (and its plain text); blockdex's renderer turns that into the requested format.
Each is registered here by name as ``"module:Class"`` and imported on first use.
"""

from __future__ import annotations

import html as html_lib
import importlib
import json
from dataclasses import dataclass, field, fields, replace
from typing import Any, Protocol, TypeVar, runtime_checkable

from blockdex.clean import keep_content_noscripts
from blockdex.errors import BlockdexError, UnknownPredictor
from blockdex.parse import Document, parse_html
from blockdex.render import html_to_markdown


@dataclass(frozen=True, slots=True)
class BaselineResult:
    """What a baseline extracted: an HTML document and its plain text."""

    html: str
    text: str
    title: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    """Method-specific output (e.g. VSSE records, DANAg curves) for JSON rendering."""

    def render(self, fmt: str, *, url: str | None, method: str) -> str:
        """The result in an output format (:data:`blockdex.options.FORMATS`), as
        ``blockdex extract --method NAME`` writes it; JSON names the page and the method."""
        if fmt == "html":
            return self.html
        if fmt == "text":
            return self.text
        if fmt == "json":
            record = {
                "title": self.title,
                "url": url,
                "method": method,
                "text": self.text,
                "markdown": html_to_markdown(self.html),
                **self.extra,
            }
            return json.dumps(record, ensure_ascii=False, indent=2) + "\n"
        return html_to_markdown(self.html)


def parse_page(html: str | bytes, url: str | None, keep_noscripts: bool) -> Document:
    """The page parsed as every classic method starts from it: within blockdex's parse limits,
    and with content-holding ``<noscript>`` unwrapped when ``keep_noscripts``."""
    doc = parse_html(html, url=url)
    if keep_noscripts:
        keep_content_noscripts(doc)
    return doc


def html_document(title: str, body_html: str) -> str:
    """A classic method's output page: ``title`` (escaped here) and the kept body markup."""
    return (
        f"<!DOCTYPE html><html><head><title>{html_lib.escape(title)}</title></head>"
        f"<body>{body_html}</body></html>"
    )


C = TypeVar("C")


def with_settings(config: C, overrides: dict[str, Any], method: str) -> C:
    """``config`` (a dataclass) with keyword ``overrides``; unknown names raise BlockdexError."""
    known = [f.name for f in fields(config)]  # type: ignore[arg-type]
    unknown = sorted(set(overrides) - set(known))
    if unknown:
        raise BlockdexError(
            f"unknown {method} setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return replace(config, **overrides)  # type: ignore[type-var]


@runtime_checkable
class Baseline(Protocol):
    name: str

    def run(
        self, html: str | bytes, *, url: str | None = None, query: str | None = None
    ) -> BaselineResult: ...


# name → "module:Class" (constructed with keyword options).
BASELINES: dict[str, str] = {
    "crunch": "blockdex.baselines.crunch:CrunchBaseline",
    "danag": "blockdex.baselines.danag:DanagBaseline",
    "vsse": "blockdex.baselines.vsse:VsseBaseline",
    "vsse-records": "blockdex.baselines.vsse:VsseRecordsBaseline",
    "htmlrag": "blockdex.baselines.htmlrag:HtmlRagBaseline",
    "chunk-bm25": "blockdex.baselines.chunkrerank:ChunkBM25",
    "chunk-embed": "blockdex.baselines.chunkrerank:ChunkEmbed",
}

DESCRIPTIONS: dict[str, str] = {
    "crunch": "Crunch DOM filters (Gupta et al. 2003): ads, link lists, empty tables removed",
    "danag": "DANAg (Mohammadzadeh et al. 2011): smoothed content-vs-code line diagram",
    "vsse": "VSSE: punctuated text nodes (vvtc) widened to their content areas, SimHash-refined",
    "vsse-records": "VSSE records mode: WVC-guided walk to a record; attribute-value pairs",
    "htmlrag": "HtmlRAG (Tan et al. 2025): HTML block tree pruned by BM25 to a token budget",
    "chunk-bm25": "chunk-and-rerank baseline: Markdown chunks ranked by BM25, 300-word budget",
    "chunk-embed": "chunk-and-rerank baseline: Markdown chunks ranked by MiniLM, 300-word budget",
}


def available_baselines() -> list[str]:
    return sorted(BASELINES)


def import_target(target: str) -> Any:
    """The object a ``package.module:name`` target names (a registry entry, a user's class)."""
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def get_baseline(name: str, **options: Any) -> Baseline:
    try:
        target = BASELINES[name]
    except KeyError:
        raise UnknownPredictor(f"unknown method {name!r}") from None
    return import_target(target)(**options)
