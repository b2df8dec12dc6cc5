"""What the RAG-framework adapters share: one input → its extracted text and flat metadata.

An input is a URL (fetched with :func:`blockdex.fetch.fetch_url`, under its address policy and
limits), a local file, or HTML already in hand (a document another loader produced).
:class:`PageExtractor` runs the pipeline on it and returns an :class:`ExtractedPage`; the
:mod:`.langchain` and :mod:`.llamaindex` modules only wrap that into their ``Document`` class.

Metadata values are strings and numbers only, and absent values are left out rather than set to
None: vector stores (Chroma, Pinecone, the llama-index ones) refuse nested or null metadata.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blockdex.errors import (
    BlockdexError,
    MissingExtra,
    UnknownPredictor,
    UnsafeURL,
    UnsupportedFormat,
)
from blockdex.extract import Extraction, Extractor, extractor_for, options_config, run
from blockdex.fetch import DEFAULT_FETCH, FetchConfig, fetch_url
from blockdex.inputs import read_file
from blockdex.options import DEFAULT_OPTIONS, ExtractOptions
from blockdex.predict import Predictor

log = logging.getLogger("blockdex.integrations")

Source = str | os.PathLike[str]
"""A URL (``http://``, ``https://``) or the path of a local HTML file."""
Metadata = dict[str, str | int | float]

ON_ERROR = ("raise", "skip", "record")
"""What happens to an input that cannot be extracted (fetch error, not HTML, too large, unreadable
file): ``raise`` the :class:`~blockdex.errors.BlockdexError` (documents before it were already
yielded); ``skip`` it with a logged warning; ``record`` it as a document with empty content and
``error``/``error_kind`` in its metadata, so every input yields exactly one document."""

CONFIG_ERRORS = (UnknownPredictor, UnsupportedFormat, MissingExtra)
"""Errors of the settings, not of a page: raised whatever ``on_error`` says, since every other
page would fail the same way."""

PAGE_META_LEFT_OUT = frozenset({"og_title", "base_url"})
"""Page metadata not copied: ``og_title`` is ``title`` already, ``base_url`` only serves link
resolution."""

BOOKKEEPING_KEYS = (
    "page_type_confidence",
    "n_blocks",
    "selection",
    "predictor",
    "query",
    "fallback",
    "warnings",
    "error",
    "error_kind",
)
"""Metadata about the extraction rather than the page: worth keeping, not worth embedding."""

_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True, slots=True)
class ExtractedPage:
    """One input's extracted text (empty for a recorded error) and its flat metadata."""

    text: str
    metadata: Metadata


def is_url(source: Source) -> bool:
    """Whether ``source`` names a URL (any ``scheme://``; only http(s) ones will be fetched)."""
    return isinstance(source, str) and bool(_URL_SCHEME.match(source.strip()))


def http_url(value: object) -> str | None:
    """``value`` when it is an ``http://`` or ``https://`` URL, else None."""
    if isinstance(value, str) and value.strip().lower().startswith(("http://", "https://")):
        return value.strip()
    return None


def as_sources(sources: Source | Iterable[Source] | None) -> list[Source]:
    """One source or many as a list (a lone string is one source, not its characters)."""
    if sources is None:
        return []
    if isinstance(sources, str | os.PathLike):
        return [sources]
    return list(sources)


def page_metadata(result: Extraction, source: str | None) -> Metadata:
    """The metadata of one extracted page: where it came from, what the page says about itself
    (title, author, date, site_name, description, language, canonical…), its type
    (``page_type``, ``page_type_confidence``), and how it was read."""
    page, selection = result.page, result.selection
    meta: Metadata = {}
    if source:
        meta["source"] = source
    if page.url:
        meta["url"] = page.url
    if page.title:
        meta["title"] = page.title
    for key, value in page.meta.items():
        if key not in PAGE_META_LEFT_OUT and value and key not in meta:
            meta[key] = value
    meta.update(page.page_type.to_json())
    meta["n_blocks"] = len(page.blocks)
    meta["selection"] = selection.format()
    meta["predictor"] = result.predictor
    if result.query:
        meta["query"] = result.query
    if selection.fallback:
        meta["fallback"] = selection.fallback
    warnings = (*page.warnings, *selection.warnings)
    if warnings:
        meta["warnings"] = "\n".join(warnings)
    return meta


def error_metadata(source: str | None, error: BaseException) -> Metadata:
    """The metadata of an input recorded as failed (``on_error="record"``)."""
    meta: Metadata = {"source": source} if source else {}
    if isinstance(error, BlockdexError):
        meta.update(error=str(error), error_kind=error.kind)
    elif isinstance(error, RecursionError):
        meta.update(error="the page is nested too deeply", error_kind="too_deep")
    else:
        meta.update(error=f"internal error: {type(error).__name__}: {error}", error_kind="internal")
    return meta


class PageExtractor:
    """The settings of a loader, and the pipeline runs they make; see :data:`ON_ERROR`.

    Either ``predictor`` and the options of :class:`~blockdex.options.ExtractOptions` (``links``,
    ``comments=False``, ``max_tokens``…, as in :func:`blockdex.extract`) or a ready
    ``extractor`` (an :class:`~blockdex.extract.Extractor` with its own settings, shared by
    several loaders so models load once) choose how pages are read.
    """

    def __init__(
        self,
        *,
        query: str | None = None,
        output: str = "markdown",
        predictor: str | Predictor | None = None,
        extractor: Extractor | None = None,
        fetch_config: FetchConfig | None = None,
        on_error: str = "raise",
        **options: Any,
    ) -> None:
        if on_error not in ON_ERROR:
            raise BlockdexError(f"on_error must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
        custom = predictor is not None and not isinstance(predictor, str)
        # validated without the query first: a query given per run is checked then
        self.options = ExtractOptions.from_kwargs(
            output=output, predictor="a custom one" if custom else predictor, **options
        )
        self.query = query
        self.fetch_config = fetch_config or DEFAULT_FETCH
        self.on_error = on_error
        if extractor is not None:
            if self.options.replace(format="markdown") != DEFAULT_OPTIONS:
                raise BlockdexError(
                    "give either an extractor or predictor and extraction options (links,"
                    " comments …), not both: an Extractor carries its own settings"
                )
            self.extractor = extractor
            return
        self.check_query(query)
        if custom:
            self.extractor = Extractor(predictor, config=options_config(self.options))
        else:
            self.extractor = extractor_for(self.options)
        if query is None:
            self.extractor.predictor  # noqa: B018 - load it now: a bad name or option fails here

    @property
    def output(self) -> str:
        return self.options.format

    def run_query(self, query: str | None) -> str | None:
        """The query of a run (``query``, else the configured one), refused when an option of
        the main-content model (``comments=False``…) was asked for."""
        query = self.query if query is None else query
        self.check_query(query)
        return query

    def check_query(self, query: str | None) -> None:
        """Refuse a query when an option of the main-content model was asked for."""
        self.options.replace(query=query).validate("kwargs")

    def extract_html(
        self,
        html: str | bytes,
        *,
        source: str | None = None,
        url: str | None = None,
        content_type: str | None = None,
        query: str | None = None,
    ) -> ExtractedPage:
        """Extract from HTML in hand; ``url`` resolves links and is reported as ``url``.
        ``query`` is the run's (see :meth:`run_query`)."""
        options = self.options.replace(query=query)
        result = run(html, options, url=url, content_type=content_type, extractor=self.extractor)
        return ExtractedPage(result.render(options.format), page_metadata(result, source))

    def extract_url(self, url: str, *, query: str | None = None) -> ExtractedPage:
        """Fetch ``url`` (under :attr:`fetch_config`) and extract from it."""
        try:
            fetched = fetch_url(str(url).strip(), self.fetch_config)
        except UnsafeURL as exc:
            if "--allow-private" not in exc.message:
                raise
            raise UnsafeURL(  # the fetcher's hint names the CLI's option: name the Python one
                f"{exc.message}; from Python, pass "
                "fetch_config=blockdex.fetch.FetchConfig(allow_private=True)"
            ) from None
        return self.extract_html(
            fetched.body,
            source=str(url),
            url=fetched.url,
            content_type=fetched.content_type,
            query=query,
        )

    def extract_file(self, path: Source, *, query: str | None = None) -> ExtractedPage:
        """Read the local file ``path`` and extract from it."""
        data = read_file(Path(path), self.extractor.config.parse.max_input_bytes)
        return self.extract_html(data, source=str(path), query=query)

    def extract_source(self, source: Source, *, query: str | None = None) -> ExtractedPage:
        """A URL (see :func:`is_url`) fetched, anything else read as a file."""
        if is_url(source):
            return self.extract_url(str(source), query=query)
        return self.extract_file(source, query=query)

    def guarded(self, source: str | None, run: Callable[[], ExtractedPage]) -> ExtractedPage | None:
        """What ``run()`` returns, or what :attr:`on_error` makes of its failure (None: skip).

        ``skip`` and ``record`` also catch errors that are not blockdex's (a bug, a page nested
        beyond Python's recursion limit), as ``blockdex batch`` does: one page never stops a run.
        """
        try:
            return run()
        except CONFIG_ERRORS:
            raise
        except Exception as exc:
            if self.on_error == "raise":
                raise
            meta = error_metadata(source, exc)
            if self.on_error == "skip":
                log.warning("skipped %s: %s", source or "a document", meta["error"])
                return None
            return ExtractedPage("", meta)

    def pages(
        self, sources: Iterable[Source], *, query: str | None = None, kind: str | None = None
    ) -> Iterator[ExtractedPage]:
        """One :class:`ExtractedPage` per source, in order (fewer when ``on_error="skip"``).

        ``kind`` ``"url"`` fetches every source, ``"file"`` reads every one, None tells them
        apart by :func:`is_url`."""
        run = {"url": self.extract_url, "file": self.extract_file}.get(
            kind or "", self.extract_source
        )
        query = self.run_query(query)
        for source in sources:
            page = self.guarded(str(source), functools.partial(run, source, query=query))
            if page is not None:
                yield page
