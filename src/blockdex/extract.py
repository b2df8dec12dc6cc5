"""The pipeline in one place: parse → clean → segment → predict → assemble → render.

:func:`run` is the one request path under every entry point, for predictors and classic methods
alike; it returns a :class:`blockdex.result.Result`."""

from __future__ import annotations

import dataclasses
import functools
import html as html_lib
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from blockdex.baselines import BASELINES, available_baselines, get_baseline
from blockdex.clean import DEFAULT_CLEAN, SCRIPTS_READ, CleanConfig, clean_document
from blockdex.errors import UnknownPredictor, UnsupportedFormat
from blockdex.evaluate.align import DEFAULT_ALIGN, block_labels
from blockdex.features import readable
from blockdex.ids import page_ids
from blockdex.intervals import cap_selection
from blockdex.options import DEFAULT_OPTIONS, ExtractOptions
from blockdex.page import Block, Page, Selection
from blockdex.parse import DEFAULT_LIMITS, ParseLimits, decode_html, parse_html
from blockdex.predict import (
    DEFAULT_PREDICTOR,
    DEFAULT_QUERY_PREDICTOR,
    Predictor,
    available_predictors,
    get_predictor,
)
from blockdex.render import FORMATS, page_headline
from blockdex.result import Result
from blockdex.segment import DEFAULT_SEGMENT, SegmentConfig, count_tokens, segment_document
from blockdex.units import section_context
from blockdex.urls import read_page_links


@dataclass(frozen=True, slots=True)
class ExtractConfig:
    """Settings of every pipeline step."""

    parse: ParseLimits = DEFAULT_LIMITS
    clean: CleanConfig = DEFAULT_CLEAN
    segment: SegmentConfig = DEFAULT_SEGMENT
    time_budget_s: float | None = 30.0
    """Per-page time budget: once parsing, cleaning and segmenting have taken this long, the walk
    stops and the blocks found so far are used, with a warning (None: no budget). Parsing itself
    is bounded by the ParseLimits, not by the clock; the predictor runs after the budget."""

    def deadline(self, start: float) -> float | None:
        """The :func:`time.perf_counter` value at which a page begun at ``start`` is out of time."""
        return None if self.time_budget_s is None else start + self.time_budget_s


Extraction = Result
"""The result of :meth:`Extractor.run` (:class:`blockdex.result.Result`, under its old name)."""


class Extractor:
    """A configured pipeline. Reuse one instance for many pages (models load once).

    ``predictor`` is used when no query is given, ``query_predictor`` when one is; each may be a
    registered name (see :func:`blockdex.predict.available_predictors`) or a Predictor object.
    """

    def __init__(
        self,
        predictor: str | Predictor | None = None,
        *,
        query_predictor: str | Predictor | None = None,
        config: ExtractConfig | None = None,
        **predictor_options: Any,
    ) -> None:
        self.config = config or ExtractConfig()
        self._options = predictor_options
        self._predictor_spec = predictor or DEFAULT_PREDICTOR
        self._query_spec = query_predictor or (
            predictor if predictor is not None else DEFAULT_QUERY_PREDICTOR
        )
        self._cache: dict[str, Predictor] = {}

    def _resolve(self, spec: str | Predictor) -> Predictor:
        if not isinstance(spec, str):
            return spec
        if spec not in self._cache:
            self._cache[spec] = get_predictor(spec, **self._options)
        return self._cache[spec]

    @property
    def predictor(self) -> Predictor:
        return self._resolve(self._predictor_spec)

    def segment(
        self, html: str | bytes, *, url: str | None = None, content_type: str | None = None
    ) -> Page:
        """Parse, clean and segment a page into numbered blocks."""
        deadline = self.config.deadline(time.perf_counter())
        doc = parse_html(
            html, url=url, content_type=content_type, limits=self.config.parse, scripts=SCRIPTS_READ
        )
        clean_document(doc, self.config.clean)
        return segment_document(doc, self.config.segment, deadline=deadline)

    def run(
        self,
        html: str | bytes,
        *,
        url: str | None = None,
        query: str | None = None,
        content_type: str | None = None,
        output: str | None = None,
        page_links: bool = False,
    ) -> Result:
        """Run the whole pipeline and return the page, the selection and timings.

        ``output="text"`` says the result will be rendered as text only: the blocks' HTML is
        then not built (segmenting costs less; the text and the selection are the same), unless
        the predictor reads it (a predictor without ``reads_markup = False``, e.g. ``llm``), and
        the result refuses other formats (:attr:`Extraction.text_only`). ``page_links=True``
        also reads what the page links to (:attr:`Extraction.page_links`)."""
        t0 = time.perf_counter()
        deadline = self.config.deadline(t0)
        query = query.strip() if query and query.strip() else None
        predictor = self._resolve(self._query_spec if query else self._predictor_spec)
        text_only = output == "text" and getattr(predictor, "reads_markup", True) is False
        segment_cfg = _without_markup(self.config.segment) if text_only else self.config.segment
        doc = parse_html(
            html, url=url, content_type=content_type, limits=self.config.parse, scripts=SCRIPTS_READ
        )
        links = read_page_links(doc, url) if page_links else None  # before cleaning drops any
        t1 = time.perf_counter()
        clean_document(doc, self.config.clean)
        t2 = time.perf_counter()
        page = segment_document(doc, segment_cfg, deadline=deadline)
        del doc  # the tree: freed before a fallback parses the page again (peak memory)
        t3 = time.perf_counter()
        selection = predictor.predict(page, query) if page.blocks else Selection()
        if query is None and (not selection or selection.fallback is not None):
            page, selection = self._never_empty(
                html, url, content_type, deadline, predictor, page, selection, segment_cfg
            )
        if query is not None and selection:  # the answer under the headings of its sections
            context = section_context(page, selection.indices, page_headline(page)[0])
            selection = dataclasses.replace(selection, context=context)
        t4 = time.perf_counter()
        return Result(
            page=page,
            selection=selection,
            predictor=getattr(predictor, "name", type(predictor).__name__),
            query=query,
            timings={"parse": t1 - t0, "clean": t2 - t1, "segment": t3 - t2, "predict": t4 - t3},
            text_only=text_only,
            page_links=links,
        )

    def _never_empty(
        self,
        html: str | bytes,
        url: str | None,
        content_type: str | None,
        deadline: float | None,
        predictor: Predictor,
        page: Page,
        selection: Selection,
        segment_cfg: SegmentConfig,
    ) -> tuple[Page, Selection]:
        """The page-level fallbacks when main content came back empty or from a fallback.

        1. Some pages hide their whole content (``visibility:hidden`` on a wrapper, React's
           streamed ``<div hidden>``) until a script shows it: read again with hidden elements
           kept, and use that when the model then finds content.
        2. A page whose HTML holds no readable text at all (an app shell that scripts fill in)
           but carries a description in its metadata: that description."""
        cfg = self.config
        doc = parse_html(
            html, url=url, content_type=content_type, limits=cfg.parse, scripts=SCRIPTS_READ
        )
        clean_document(doc, dataclasses.replace(cfg.clean, drop_hidden=False))
        shown = segment_document(doc, segment_cfg, deadline=deadline)
        if _readable_words(shown) > _readable_words(page):
            retry = predictor.predict(shown) if shown.blocks else Selection()
            if retry and retry.fallback is None:
                note = (
                    "the page hides its content until a script shows it; it was read with its "
                    "hidden elements kept"
                )
                return shown, dataclasses.replace(
                    retry, fallback="hidden-content", warnings=(*retry.warnings, note)
                )
        if _readable_words(page) == 0 and getattr(predictor, "never_empty", True):
            description = page.meta.get("description", "").strip()
            if description:
                block = Block(
                    index=0,
                    tag="p",
                    html=html_lib.escape(description, quote=False),
                    text=description,
                    source="meta",
                )
                note = (
                    "the page's HTML holds no readable text (scripts build it); kept the "
                    "description from its metadata"
                )
                return dataclasses.replace(page, blocks=(block,), units=()), Selection(
                    ((0, 0),), {0: 1.0}, (note,), "description"
                )
        return page, selection

    def extract(
        self,
        html: str | bytes,
        *,
        url: str | None = None,
        query: str | None = None,
        output: str = "markdown",
        content_type: str | None = None,
    ) -> str:
        """Extract and render in one call."""
        if output not in FORMATS:
            raise UnsupportedFormat(
                f"unknown output format {output!r}; choose one of: {', '.join(FORMATS)}"
            )
        return self.run(
            html, url=url, query=query, content_type=content_type, output=output
        ).render(output)


@functools.lru_cache(maxsize=8)
def _without_markup(cfg: SegmentConfig) -> SegmentConfig:
    return dataclasses.replace(cfg, markup=False)


def _readable_words(page: Page) -> int:
    return sum(len(t.split()) for t in page_ids(page).texts if readable(t))


def output_config(*, links: bool = False, images: bool = False) -> ExtractConfig | None:
    """The pipeline's settings when links or images are kept (:attr:`SegmentConfig.links`,
    :attr:`SegmentConfig.images`); None (the defaults) when neither is."""
    if not (links or images):
        return None
    return ExtractConfig(segment=dataclasses.replace(DEFAULT_SEGMENT, links=links, images=images))


def options_config(options: ExtractOptions, config: ExtractConfig | None = None) -> ExtractConfig:
    """``config`` (the defaults when None) with what ``options`` change in it."""
    config = config or ExtractConfig()
    if options.links or options.images:
        segment_cfg = dataclasses.replace(
            config.segment, links=options.links, images=options.images
        )
        config = dataclasses.replace(config, segment=segment_cfg)
    return config


class _Extractors(threading.local):
    """One :class:`Extractor` per method, predictor options and settings, per thread (models
    load once per thread; no predictor object is shared between threads)."""

    def __init__(self) -> None:
        self.cache: dict[tuple[Any, ...], Extractor] = {}


_EXTRACTORS = _Extractors()


def extractor_for(
    options: ExtractOptions,
    config: ExtractConfig | None = None,
    method_options: Mapping[str, Any] | None = None,
) -> Extractor:
    """The (per thread, cached) :class:`Extractor` that runs ``options`` under ``config``;
    ``method_options`` are keyword options of the method that no request may set, only its
    operator (the command line's ``--llm-url``)."""
    predictor_options = {**options.predictor_options(), **(method_options or {})}
    key = (
        options.method,
        tuple(sorted(predictor_options.items())),
        options.links,
        options.images,
        config,
    )
    cache = _EXTRACTORS.cache
    extractor = cache.get(key)
    if extractor is None:
        if len(cache) >= 32:  # a long-lived process asked for many settings: start over
            cache.clear()
        extractor = Extractor(
            options.method, config=options_config(options, config), **predictor_options
        )
        cache[key] = extractor
    return extractor


def run(
    document: str | bytes,
    options: ExtractOptions = DEFAULT_OPTIONS,
    *,
    url: str | None = None,
    content_type: str | None = None,
    config: ExtractConfig | None = None,
    method_options: Mapping[str, Any] | None = None,
    extractor: Extractor | None = None,
    page_links: bool = False,
) -> Result:
    """The one request path under every entry point: extract ``document`` as ``options`` ask,
    with a predictor or a classic method (:data:`blockdex.baselines.BASELINES`).

    ``options`` are taken as validated (:meth:`ExtractOptions.validate`). ``config`` holds the
    pipeline's limits; ``extractor`` replaces the one the options name (a custom predictor, or
    a caller's own pipeline: its options then only say the query and the format);
    ``method_options`` are the method's own keyword options (a classic method's settings).
    ``page_links=True`` also reads what the page links to (:attr:`Result.page_links`)."""
    if extractor is None and options.method in BASELINES:
        return _run_classic(
            document, options.method, options, url, content_type, config, method_options
        )
    ex = extractor if extractor is not None else extractor_for(options, config, method_options)
    result = ex.run(
        document,
        url=url,
        query=options.query,
        content_type=content_type,
        output=options.format,
        page_links=page_links,
    )
    if options.max_tokens is not None:
        capped = cap_selection(result.page, result.selection, options.max_tokens, count_tokens)
        if capped is not result.selection:
            result = dataclasses.replace(result, selection=capped)
    return result


def _run_classic(
    document: str | bytes,
    method: str,
    options: ExtractOptions,
    url: str | None,
    content_type: str | None,
    config: ExtractConfig | None,
    method_options: Mapping[str, Any] | None,
) -> Result:
    """A classic method's own output, with its choice of blocks: the page segmented as the
    predictors see it, and each block kept when the method's text holds enough of it (the
    3-gram alignment the evaluation uses for ground truth; its share is the block's score)."""
    query = options.query.strip() if options.has_query else None
    segmenter = extractor_for(
        DEFAULT_OPTIONS.replace(links=options.links, images=options.images), config
    )
    t0 = time.perf_counter()
    page = segmenter.segment(document, url=url, content_type=content_type)
    text = (
        document
        if isinstance(document, str)
        else decode_html(document, content_type, segmenter.config.parse)[0]
    )
    t1 = time.perf_counter()
    output = get_baseline(method, **(method_options or {})).run(text, url=url, query=query)
    t2 = time.perf_counter()
    labels = block_labels(page, output.text)
    scores = {b.index: s for b, s in zip(page.blocks, labels, strict=True)}
    selection = Selection.from_indices(
        (i for i, s in scores.items() if s >= DEFAULT_ALIGN.min_ngram_share), scores=scores
    )
    t3 = time.perf_counter()
    return Result(
        page=page,
        selection=selection,
        predictor=method,
        query=query,
        timings={"segment": t1 - t0, "baseline": t2 - t1, "align": t3 - t2},
        classic=output,
    )


def known_methods() -> tuple[list[str], list[str]]:
    """``(predictor names, classic method names)`` that :func:`run` accepts."""
    return available_predictors(), available_baselines()


def check_method(method: str | None) -> None:
    """Raise :class:`UnknownPredictor` for a name that is neither a predictor nor a classic
    method (None: the default predictor)."""
    if method is None:
        return
    predictors, baselines = known_methods()
    if method not in predictors and method not in baselines:
        raise UnknownPredictor(
            f"unknown method {method!r}; predictors: {', '.join(predictors) or 'none'}; "
            f"classic methods: {', '.join(baselines) or 'none'} ('blockdex methods' lists them)"
        )


def extract(
    html: str | bytes,
    *,
    url: str | None = None,
    query: str | None = None,
    output: str = "markdown",
    predictor: str | Predictor | None = None,
    **options: Any,
) -> str:
    """Extract what an LLM should read from ``html``.

    With no ``query`` the page's main content is kept; with one, the blocks relevant to it.
    ``output`` is ``markdown`` (default), ``text``, ``html`` or ``json``. The other keywords are
    the options of :class:`blockdex.options.ExtractOptions` (``docs/options.md``), e.g.
    ``links=True`` keeps links as ``[text](absolute url)`` and ``max_tokens=500`` cuts the result
    at 500 tokens, between blocks.
    """
    custom = predictor is not None and not isinstance(predictor, str)
    opts = ExtractOptions.from_kwargs(
        query=query, output=output, predictor="a custom one" if custom else predictor, **options
    )
    if custom:
        extractor = Extractor(predictor, config=output_config(links=opts.links, images=opts.images))
        return run(html, opts, url=url, extractor=extractor).render(opts.format)
    return run(html, opts, url=url).render(opts.format)


def segment(html: str | bytes, *, url: str | None = None) -> Page:
    """Parse, clean and segment ``html`` into a :class:`Page` of numbered blocks."""
    return extractor_for(DEFAULT_OPTIONS).segment(html, url=url)
