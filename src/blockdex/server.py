"""The HTTP API, the proxy mode and the block-explorer page (``blockdex serve``).

One Starlette app, served by uvicorn:

- ``POST /v1/extract`` and ``POST /v1/extract/batch``: JSON in, extracted page(s) out;
- ``GET /v1/proxy``: fetch a URL (under :mod:`blockdex.fetch`'s SSRF policy) and return the
  extracted page as a browsable HTML document or as Markdown;
- ``GET /`` and ``POST /``: the block explorer (kept blocks green, dropped red), and
  ``POST /v1/explain``, the same view as an HTML fragment;
- ``GET /healthz``, ``GET /metrics`` (Prometheus text) and ``GET /openapi.json``.

Extraction is CPU-bound, so it never runs on the event loop: each request that extracts takes a
*slot* (checked without waiting; none free → 503 with ``Retry-After``) and runs, fetch included,
in a bounded thread pool with one thread per slot, under a per-request time limit (→ 504). A
slot is given back when its thread really finishes, not when the client gives up, so a page
that overruns its time limit still counts against capacity until it is done.

Every error is a JSON body ``{"error": kind, "detail": message}`` with the status of the
:class:`~blockdex.errors.BlockdexError` that caused it.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import dataclasses
import html as html_lib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import asdict, dataclass, field
from string import Template
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urljoin, urlsplit

from blockdex.cliargs import FAVOR_CHOICES, check_no_comments, comments_option
from blockdex.errors import BlockdexError, MissingExtra, UnsupportedFormat

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

    from blockdex.explain import Explanation
    from blockdex.extract import Extractor
    from blockdex.fetch import FetchConfig

log = logging.getLogger("blockdex.server")

CONFIG_ENV = "BLOCKDEX_SERVER_CONFIG"
"""Environment variable carrying the JSON :class:`ServerConfig` to uvicorn's worker processes."""


def _default_concurrency() -> int:
    return max(4, 2 * (os.cpu_count() or 2))


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Limits and policy of one server."""

    host: str = "127.0.0.1"
    """Address to listen on; loopback by default so nothing is exposed by accident."""
    port: int = 8080
    workers: int = 1
    """uvicorn worker processes; each has its own thread pool, slots and metrics."""
    allow_private: bool = False
    """Let /v1/proxy and ``url`` inputs reach loopback/private addresses (local testing only)."""
    allowed_networks: tuple[str, ...] = ()
    """CIDRs reachable even though the fetch policy blocks them (see FetchConfig)."""
    max_body_bytes: int = 32 * 1024 * 1024
    """Request bodies above this are refused with 413 before they are read in full."""
    max_page_bytes: int = 16 * 1024 * 1024
    """Fetched pages above this are refused with 413 (the download is streamed and cut)."""
    time_limit: float = 20.0
    """Seconds one request may take (fetch + extraction) before it is answered with 504."""
    max_concurrency: int = field(default_factory=_default_concurrency)
    """Requests extracting at once (= worker threads); more are refused with 503 at once."""
    max_batch: int = 32
    """Pages one /v1/extract/batch request may hold."""
    retry_after: int = 1
    """Seconds a client told 503 should wait before trying again (``Retry-After``)."""
    fetch_timeout: float = 10.0
    """Seconds for connecting to and each read from a fetched site."""

    def fetch_config(self) -> FetchConfig:
        from blockdex.fetch import FetchConfig

        return FetchConfig(
            timeout=self.fetch_timeout,
            max_seconds=self.time_limit,
            max_bytes=self.max_page_bytes,
            allow_private=self.allow_private,
            allowed_networks=self.allowed_networks,
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ServerConfig:
        data = json.loads(text)
        data["allowed_networks"] = tuple(data.get("allowed_networks") or ())
        return cls(**data)


class RequestError(BlockdexError):
    """A request the server refuses, with its HTTP status and error kind."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.http_status = status
        self.kind = kind


PROXY_FORMATS = ("html", "markdown")
# Labels of /metrics: the known routes; anything else is counted as "other" so that scanning
# clients cannot blow up the number of series.
ROUTES = (
    "/",
    "/v1/extract",
    "/v1/extract/batch",
    "/v1/proxy",
    "/v1/explain",
    "/healthz",
    "/metrics",
    "/openapi.json",
)
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 60.0)


# -- limits ------------------------------------------------------------------------------------


class ConcurrencyLimiter:
    """A counting semaphore that never waits: :meth:`try_acquire` says no when all slots are busy.

    Thread-safe, because slots are given back from worker threads when their job ends.
    """

    def __init__(self, capacity: int) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self._busy = 0
        self._lock = threading.Lock()

    @property
    def busy(self) -> int:
        return self._busy

    def try_acquire(self) -> bool:
        with self._lock:
            if self._busy >= self.capacity:
                return False
            self._busy += 1
            return True

    def release(self) -> None:
        with self._lock:
            if self._busy <= 0:
                raise RuntimeError("release() without a matching try_acquire()")
            self._busy -= 1


class Metrics:
    """Request counts, latency histograms and error counts, written in Prometheus text format."""

    def __init__(self, buckets: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.buckets = buckets
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, str, int], int] = {}
        self._errors: dict[tuple[str, str], int] = {}
        self._hist: dict[str, list[int]] = {}
        self._sum: dict[str, float] = {}
        self._count: dict[str, int] = {}
        self.started = time.time()

    @staticmethod
    def route_label(path: str) -> str:
        return path if path in ROUTES else "other"

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        with self._lock:
            key = (route, method, status)
            self._requests[key] = self._requests.get(key, 0) + 1
            counts = self._hist.setdefault(route, [0] * len(self.buckets))
            for i, bound in enumerate(self.buckets):
                if seconds <= bound:
                    counts[i] += 1
            self._sum[route] = self._sum.get(route, 0.0) + seconds
            self._count[route] = self._count.get(route, 0) + 1

    def error(self, route: str, kind: str) -> None:
        with self._lock:
            self._errors[(route, kind)] = self._errors.get((route, kind), 0) + 1

    def render(self, gauges: dict[str, tuple[str, float]] | None = None) -> str:
        """The exposition text; ``gauges`` maps a metric name to ``(help, value)``."""
        out: list[str] = []
        with self._lock:
            out.append("# HELP blockdex_http_requests_total HTTP requests by route and status.")
            out.append("# TYPE blockdex_http_requests_total counter")
            for (route, method, status), n in sorted(self._requests.items()):
                out.append(
                    f'blockdex_http_requests_total{{route="{route}",method="{method}",'
                    f'status="{status}"}} {n}'
                )
            out.append("# HELP blockdex_http_request_duration_seconds Request latency.")
            out.append("# TYPE blockdex_http_request_duration_seconds histogram")
            for route in sorted(self._hist):
                for bound, n in zip(self.buckets, self._hist[route], strict=True):
                    out.append(
                        f'blockdex_http_request_duration_seconds_bucket{{route="{route}",'
                        f'le="{bound:g}"}} {n}'
                    )
                out.append(
                    f'blockdex_http_request_duration_seconds_bucket{{route="{route}",le="+Inf"}} '
                    f"{self._count[route]}"
                )
                out.append(
                    f'blockdex_http_request_duration_seconds_sum{{route="{route}"}} '
                    f"{self._sum[route]:.6f}"
                )
                out.append(
                    f'blockdex_http_request_duration_seconds_count{{route="{route}"}} '
                    f"{self._count[route]}"
                )
            out.append("# HELP blockdex_errors_total Error responses by route and error kind.")
            out.append("# TYPE blockdex_errors_total counter")
            for (route, kind), n in sorted(self._errors.items()):
                out.append(f'blockdex_errors_total{{route="{route}",kind="{kind}"}} {n}')
        for name, (help_text, value) in (gauges or {}).items():
            out.append(f"# HELP {name} {help_text}")
            out.append(f"# TYPE {name} gauge")
            out.append(f"{name} {value:g}")
        return "\n".join(out) + "\n"


class MetricsMiddleware:
    """Pure ASGI middleware timing every HTTP request and counting it by route and status."""

    def __init__(self, app: Any, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_wrapper(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            self.metrics.observe(
                Metrics.route_label(scope["path"]),
                scope["method"],
                status,
                time.perf_counter() - start,
            )


# -- requests ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExtractRequest:
    """One page to extract, validated."""

    html: str | bytes | None = None
    url: str | None = None
    base_url: str | None = None
    """The page's address when ``html`` is given (metadata, links)."""
    query: str | None = None
    format: str = "markdown"
    method: str | None = None
    blocks: bool = False
    content_type: str | None = None
    comments: bool = True
    """False: drop reader comments the main-content model keeps (``blockdex --no-comments``)."""
    favor: str = "balanced"
    """``precision`` or ``recall``: move the main-content model's decision (``--favor``)."""
    links: bool = False
    """Keep links as ``[text](absolute url)`` (``blockdex extract --links``)."""


def _optional_str(payload: dict[str, Any], name: str) -> str | None:
    value = payload.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise RequestError(400, "invalid_request", f"'{name}' must be a string")
    return value


def query_flag(value: str, name: str) -> bool:
    """A true/false option given in a query string (``?comments=0``)."""
    low = value.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise RequestError(400, "invalid_request", f"'{name}' must be true or false, not {value!r}")


def parse_extract_request(payload: Any, defaults: dict[str, Any] | None = None) -> ExtractRequest:
    """Validate one JSON object of /v1/extract (or one item of a batch)."""
    from blockdex.explain import check_method
    from blockdex.render import FORMATS

    if not isinstance(payload, dict):
        raise RequestError(400, "invalid_request", "the request body must be a JSON object")
    merged = {**(defaults or {}), **payload}
    html = _optional_str(merged, "html")
    url = _optional_str(merged, "url")
    if html is None and url is None:
        raise RequestError(
            400, "invalid_request", "give the page as 'html' (a string) or as 'url' to fetch"
        )
    if html is not None and url is not None:
        raise RequestError(
            400,
            "invalid_request",
            "give either 'html' or 'url', not both; pass the address of given HTML as 'base_url'",
        )
    fmt = _optional_str(merged, "format") or "markdown"
    if fmt not in FORMATS:
        raise UnsupportedFormat(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    method = _optional_str(merged, "method") or None
    check_method(method)
    blocks = merged.get("blocks", False)
    if not isinstance(blocks, bool):
        raise RequestError(400, "invalid_request", "'blocks' must be true or false")
    comments = merged.get("comments", True)
    if not isinstance(comments, bool):
        raise RequestError(400, "invalid_request", "'comments' must be true or false")
    links = merged.get("links", False)
    if not isinstance(links, bool):
        raise RequestError(400, "invalid_request", "'links' must be true or false")
    query = _optional_str(merged, "query")
    favor = _optional_str(merged, "favor") or "balanced"
    if favor not in FAVOR_CHOICES:
        raise RequestError(
            400, "invalid_request", f"'favor' must be one of {', '.join(FAVOR_CHOICES)}"
        )
    for given, option in ((not comments, "'comments': false"), (favor != "balanced", "'favor'")):
        if given:
            try:
                check_no_comments(
                    method, query, option=option, query_name="query", method_name="method"
                )
            except BlockdexError as exc:
                raise RequestError(400, "invalid_request", exc.message) from None
    return ExtractRequest(
        html=html,
        url=url,
        base_url=_optional_str(merged, "base_url"),
        query=query,
        format=fmt,
        method=method,
        blocks=blocks,
        comments=comments,
        favor=favor,
        links=links,
    )


# -- the work (runs in worker threads) ---------------------------------------------------------


class ThreadExtractors(threading.local):
    """One :class:`~blockdex.extract.Extractor` per predictor name per thread (models load once
    per thread; no predictor object is shared between threads)."""

    def __init__(self) -> None:
        self.cache: dict[tuple[str | None, bool, str, bool], Extractor] = {}

    def get(
        self, name: str | None, comments: bool = True, favor: str = "balanced", links: bool = False
    ) -> Extractor:
        """The extractor of predictor ``name``; ``comments=False`` is the main-content model
        that drops reader comments, ``favor`` moves its decision (both refused for other
        predictors by the request check); ``links`` keeps links."""
        key = (name, comments, favor, links)
        if key not in self.cache:
            from blockdex.extract import Extractor, links_config

            self.cache[key] = Extractor(
                name, config=links_config(links), **comments_option(comments, favor)
            )
        return self.cache[key]


@dataclass(frozen=True, slots=True)
class PageResult:
    """A page explained, with where it came from and how long each step took."""

    explanation: Explanation
    data: str | bytes
    url: str | None
    content_type: str | None
    timings: dict[str, float]


def explain_request(
    req: ExtractRequest, fetch_config: FetchConfig, extractors: ThreadExtractors
) -> PageResult:
    """Fetch (when ``req.url``) and run the method; blocking, for a worker thread."""
    from blockdex.explain import explain_page
    from blockdex.fetch import fetch_url

    timings: dict[str, float] = {}
    data: str | bytes
    if req.url is not None:
        t0 = time.perf_counter()
        fetched = fetch_url(req.url, fetch_config)
        timings["fetch"] = time.perf_counter() - t0
        data, url, ctype = fetched.body, fetched.url, fetched.content_type
    else:
        data, url, ctype = req.html or "", req.base_url, req.content_type
    explanation = explain_page(
        data,
        method=req.method,
        query=req.query,
        url=url,
        content_type=ctype,
        extractor_for=lambda name: extractors.get(name, req.comments, req.favor, req.links),
    )
    timings.update(explanation.timings)
    return PageResult(explanation, data, url, ctype, timings)


def extract_result(
    req: ExtractRequest, fetch_config: FetchConfig, extractors: ThreadExtractors
) -> dict[str, Any]:
    """The /v1/extract response body for one page."""
    result = explain_request(req, fetch_config, extractors)
    exp = result.explanation
    t0 = time.perf_counter()
    content = exp.render(req.format)
    result.timings["render"] = time.perf_counter() - t0
    body: dict[str, Any] = {
        "title": exp.page.title,
        "url": result.url,
        "method": exp.method,
        "query": exp.query,
        "format": req.format,
        "content": content,
        "indices": [list(iv) for iv in exp.selection.intervals],
        "n_blocks": len(exp.page.blocks),
    }
    if exp.selection.fallback is not None:
        body["fallback"] = exp.selection.fallback
    if req.blocks:
        body["blocks"] = exp.block_rows()
        body["units"] = [u.to_json() for u in exp.page.units]
        body["primary_unit"] = exp.page.primary.unit if exp.page.units else None
    warnings = [*exp.page.warnings, *exp.selection.warnings]
    if warnings:
        body["warnings"] = warnings
    body["timings"] = {k: round(v * 1000, 3) for k, v in result.timings.items()}
    return body


def error_body(exc: BlockdexError) -> dict[str, str]:
    return {"error": exc.kind, "detail": exc.message}


def extract_batch(
    items: list[ExtractRequest | BlockdexError],
    fetch_config: FetchConfig,
    extractors: ThreadExtractors,
    deadline: float,
) -> list[dict[str, Any]]:
    """Each item's result or ``{error, detail}``; items not started by ``deadline`` time out."""
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, BlockdexError):
            out.append(error_body(item))
        elif time.monotonic() > deadline:
            out.append({"error": "timeout", "detail": "the batch's time limit ran out first"})
        else:
            try:
                out.append(extract_result(item, fetch_config, extractors))
            except BlockdexError as exc:
                out.append(error_body(exc))
    return out


# -- proxy output ------------------------------------------------------------------------------

_LINK_SCHEMES = ("http", "https")
_TAG_SPLIT_RE = re.compile(r"(<[^<>]*>)")  # [^<>]: a stray "<" cannot make it quadratic
LINK_SEARCH_WINDOW = 400
"""Blocks looked ahead when matching a link's text to the block it sits in (bounds the work on
pages with thousands of links)."""


@dataclass(frozen=True, slots=True)
class PageLink:
    href: str
    text: str
    kept: bool
    """Whether the link's text is in a kept block (else it was in a dropped or removed one)."""


def page_links(data: str | bytes, content_type: str | None, exp: Explanation, base: str | None):
    """The page's ``<a href>`` links in document order, each marked by whether its block was kept.

    Blocks hold text only, so a link is placed in the first block, at or after the previous
    link's block, whose text contains the link's text; a link found in no block sat in markup
    that cleaning removed (navigation, footers) and counts as dropped.
    """
    from selectolax.lexbor import LexborHTMLParser

    from blockdex.parse import decode_html

    text = data if isinstance(data, str) else decode_html(data, content_type)[0]
    tree = LexborHTMLParser(text)
    blocks = exp.page.blocks
    kept = set(exp.selection.indices)
    block_texts = [" ".join(b.text.split()).lower() for b in blocks]
    pos = 0
    links: list[PageLink] = []
    for anchor in tree.css("a[href]"):
        href = (anchor.attributes.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        absolute = urljoin(base, href) if base else href
        if urlsplit(absolute).scheme.lower() not in _LINK_SCHEMES:
            continue
        label = " ".join((anchor.text() or "").split())
        owner = None
        if label:
            key = label.lower()
            for j in range(pos, min(len(blocks), pos + LINK_SEARCH_WINDOW)):
                if key in block_texts[j]:
                    owner, pos = j, j
                    break
        in_kept = owner is not None and blocks[owner].index in kept
        title = anchor.attributes.get("title") or anchor.attributes.get("aria-label") or ""
        links.append(PageLink(absolute, label or title.strip() or absolute, in_kept))
    return links


def relink(body: str, links: list[PageLink]) -> str:
    """Put kept links back around their text in assembled HTML (blocks carry no ``<a>``).

    Works on text between tags only, in document order, each link at its first occurrence
    after the previous one's.
    """
    wanted = [link for link in links if link.kept and len(link.text) > 1]
    if not wanted:
        return body
    parts = _TAG_SPLIT_RE.split(body)
    i, part_pos = 0, 0
    for link in wanted:
        needle = html_lib.escape(link.text, quote=False)
        for k in range(i, len(parts)):
            if k % 2 == 1:  # a tag
                continue
            start = parts[k].find(needle, part_pos if k == i else 0)
            if start < 0:
                continue
            anchor = f'<a href="{html_lib.escape(link.href, quote=True)}">{needle}</a>'
            # split the text part so later links are searched after this one
            before, after = parts[k][:start], parts[k][start + len(needle) :]
            parts[k : k + 1] = [before, anchor, after]
            i, part_pos = k + 2, 0
            break
    return "".join(parts)


PROXY_STYLE = (
    "body{max-width:46em;margin:2em auto;padding:0 1em;font:16px/1.6 system-ui,sans-serif}"
    "pre{overflow:auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
    ".blockdex-links{margin-top:3em;border-top:1px solid #ccc;font-size:14px}"
)


def proxy_document(result: PageResult, *, retain_links: bool) -> str:
    """A full HTML document of the kept blocks, browsable: ``<base href>`` to the original page,
    kept links restored, and with ``retain_links`` the links of dropped blocks listed at the end."""
    from blockdex.assemble import assemble_body

    exp = result.explanation
    base = result.url or ""
    links = page_links(result.data, result.content_type, exp, base or None)
    body = relink(assemble_body(exp.page, exp.selection), links)
    esc = html_lib.escape
    title = esc(exp.page.title or base, quote=False)
    lang = exp.page.meta.get("language", "") if exp.page.meta else ""
    lang_attr = f' lang="{esc(lang, quote=True)}"' if lang else ""
    head = (
        f'<meta charset="utf-8"><base href="{esc(base, quote=True)}">'
        f'<meta name="generator" content="blockdex"><title>{title}</title>'
        f"<style>{PROXY_STYLE}</style>"
    )
    tail = ""
    if retain_links:
        seen: set[str] = set()
        items = []
        for link in links:
            if link.kept or link.href in seen:
                continue
            seen.add(link.href)
            items.append(
                f'<li><a href="{esc(link.href, quote=True)}">{esc(link.text, quote=False)}</a></li>'
            )
        if items:
            tail = (
                '<nav class="blockdex-links"><h2>Links from removed blocks</h2>'
                f"<ul>{''.join(items)}</ul></nav>"
            )
    source = (
        f'<p class="blockdex-source"><small>Extracted by blockdex from '
        f'<a href="{esc(base, quote=True)}">{esc(base, quote=False)}</a></small></p>'
        if base
        else ""
    )
    return (
        f"<!DOCTYPE html><html{lang_attr}><head>{head}</head><body>{source}"
        f'<article class="blockdex-content">{body}</article>{tail}</body></html>'
    )


# -- the app -----------------------------------------------------------------------------------


def openapi_schema(config: ServerConfig) -> dict[str, Any]:
    """The OpenAPI 3.1 description of the API: ``templates/openapi.json`` (written by hand)
    with this server's version and batch limit filled in."""
    from blockdex import __version__
    from blockdex.explain import template

    schema = json.loads(template("openapi.json"))
    schema["info"]["version"] = __version__
    batch = schema["paths"]["/v1/extract/batch"]["post"]
    batch["summary"] = f"Extract up to {config.max_batch} pages"
    pages = batch["requestBody"]["content"]["application/json"]["schema"]["properties"]["pages"]
    pages["maxItems"] = config.max_batch
    return schema


def _require_starlette() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise MissingExtra(exc.name or "starlette", "server", "blockdex serve") from None


class BlockdexServer:
    """The app's state (config, slots, thread pool, metrics) and its endpoints."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.fetch_config = config.fetch_config()
        self.limiter = ConcurrencyLimiter(config.max_concurrency)
        self.metrics = Metrics()
        self.extractors = ThreadExtractors()
        self.executor: concurrent.futures.ThreadPoolExecutor | None = None
        self.schema = openapi_schema(config)

    # -- plumbing

    def start(self) -> None:
        self.executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.config.max_concurrency, thread_name_prefix="blockdex-extract"
        )

    def stop(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = None

    def error_response(self, request: Request, exc: BlockdexError) -> Response:
        from starlette.responses import JSONResponse

        self.metrics.error(Metrics.route_label(request.url.path), exc.kind)
        headers = {}
        if exc.http_status == 503:
            headers["Retry-After"] = str(self.config.retry_after)
        return JSONResponse(error_body(exc), status_code=exc.http_status, headers=headers)

    async def run_limited(self, job: Callable[[], Any]) -> Any:
        """Run ``job`` in the pool if a slot is free (else 503), within the time limit (504)."""
        if self.executor is None:
            raise RequestError(503, "starting", "the server is not ready yet")
        if not self.limiter.try_acquire():
            raise RequestError(
                503,
                "overloaded",
                f"all {self.limiter.capacity} extraction slots are busy; "
                f"retry in {self.config.retry_after} s",
            )
        try:
            future = self.executor.submit(job)
        except BaseException:
            self.limiter.release()
            raise
        # the slot is freed when the thread is done, even if the client was answered 504 before
        future.add_done_callback(lambda _f: self.limiter.release())
        try:
            return await asyncio.wait_for(
                asyncio.wrap_future(future), timeout=self.config.time_limit
            )
        except TimeoutError:
            raise RequestError(
                504,
                "timeout",
                f"the request took longer than the {self.config.time_limit:g} s time limit",
            ) from None

    async def read_body(self, request: Request) -> bytes:
        """The request body, refused with 413 past ``max_body_bytes`` (without reading it all)."""
        limit = self.config.max_body_bytes
        declared = request.headers.get("content-length")
        too_large = RequestError(
            413, "request_too_large", f"the request body is over the {limit:,}-byte limit"
        )
        if declared and declared.isdigit() and int(declared) > limit:
            raise too_large
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise too_large
            chunks.append(chunk)
        return b"".join(chunks)

    async def read_json(self, request: Request) -> Any:
        body = await self.read_body(request)
        try:
            return json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise RequestError(
                400, "invalid_json", f"the request body is not valid JSON: {exc}"
            ) from None

    def guarded(
        self, endpoint: Callable[[Request], Awaitable[Response]]
    ) -> Callable[[Request], Awaitable[Response]]:
        """Wrap an endpoint so that errors become ``{error, detail}`` JSON responses."""

        async def wrapper(request: Request) -> Response:
            try:
                return await endpoint(request)
            except BlockdexError as exc:
                return self.error_response(request, exc)
            except Exception:
                log.exception("unexpected error on %s", request.url.path)
                return self.error_response(
                    request, RequestError(500, "internal_error", "unexpected server error")
                )

        return wrapper

    # -- endpoints

    async def extract(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype in ("text/html", "application/xhtml+xml", "application/octet-stream"):
            # the raw page as the body; options in the query string
            body = await self.read_body(request)
            params: dict[str, Any] = dict(request.query_params.items())
            for name in ("blocks", "comments", "links"):
                if name in params:
                    params[name] = query_flag(params[name], name)
            req = parse_extract_request({**params, "html": ""})
            req = dataclasses.replace(
                req, html=body, content_type=request.headers.get("content-type")
            )
        else:
            req = parse_extract_request(await self.read_json(request))
        result = await self.run_limited(
            lambda: extract_result(req, self.fetch_config, self.extractors)
        )
        return JSONResponse(result)

    async def extract_batch(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        payload = await self.read_json(request)
        if not isinstance(payload, dict) or not isinstance(payload.get("pages"), list):
            raise RequestError(
                400, "invalid_request", "the body must be a JSON object with a 'pages' list"
            )
        pages = payload["pages"]
        if len(pages) > self.config.max_batch:
            raise RequestError(
                413,
                "batch_too_large",
                f"{len(pages)} pages is over the batch limit of {self.config.max_batch}",
            )
        defaults = {
            k: payload[k]
            for k in ("query", "format", "method", "comments", "favor", "links")
            if k in payload
        }
        items: list[ExtractRequest | BlockdexError] = []
        for page in pages:
            try:
                items.append(parse_extract_request(page, defaults))
            except BlockdexError as exc:
                items.append(exc)
        t0 = time.perf_counter()
        # a little before the request's own limit, so finished pages are returned, not a 504
        deadline = time.monotonic() + 0.9 * self.config.time_limit
        results = await self.run_limited(
            lambda: extract_batch(items, self.fetch_config, self.extractors, deadline)
        )
        return JSONResponse(
            {"results": results, "timings": {"total": round((time.perf_counter() - t0) * 1000, 3)}}
        )

    async def proxy(self, request: Request) -> Response:
        from starlette.responses import HTMLResponse, PlainTextResponse

        params = request.query_params
        url = params.get("url")
        if not url:
            raise RequestError(400, "invalid_request", "give the page to fetch as ?url=…")
        fmt = params.get("format") or "html"
        if fmt not in PROXY_FORMATS:
            raise UnsupportedFormat(
                f"the proxy returns html or markdown, not {fmt!r} (use /v1/extract for others)"
            )
        req = parse_extract_request(
            {
                "url": url,
                "query": params.get("query"),
                "method": params.get("method"),
                "comments": query_flag(params.get("comments", "1"), "comments"),
                "favor": params.get("favor"),
            }
        )
        retain = params.get("links", "0").lower() in ("1", "true", "yes")

        def job() -> str:
            result = explain_request(req, self.fetch_config, self.extractors)
            if fmt == "markdown":
                return result.explanation.markdown
            return proxy_document(result, retain_links=retain)

        out = await self.run_limited(job)
        if fmt == "markdown":
            return PlainTextResponse(out, media_type="text/markdown; charset=utf-8")
        return HTMLResponse(out)

    async def explain_fragment(self, request: Request) -> Response:
        from starlette.responses import HTMLResponse

        from blockdex.explain import render_fragment

        req = parse_extract_request(await self.read_json(request))

        def job() -> str:
            result = explain_request(req, self.fetch_config, self.extractors)
            return render_fragment(result.explanation, source=req.url or req.base_url)

        return HTMLResponse(await self.run_limited(job))

    def explorer_page(self, fields: dict[str, str], result: str = "") -> str:
        from blockdex.explain import known_methods, template

        predictors, baselines = known_methods()
        chosen = fields.get("method", "")
        options = ['<option value="">default (content; all with a query)</option>']
        for name in [*predictors, *baselines]:
            if name == "oracle":  # needs indices given in advance; nothing to explore
                continue
            selected = " selected" if name == chosen else ""
            label = name if name in predictors else f"{name} (classic)"
            options.append(f'<option value="{_attr(name)}"{selected}>{_attr(label)}</option>')
        return Template(template("explorer.html")).substitute(
            css=template("explorer.css"),
            html=html_lib.escape(fields.get("html", ""), quote=False),
            url=_attr(fields.get("url", "")),
            query=_attr(fields.get("query", "")),
            methods="".join(options),
            no_comments=" checked" if fields.get("no_comments") else "",
            links=" checked" if fields.get("links") else "",
            favors="".join(
                f'<option value="{f}"{" selected" if f == fields.get("favor", "balanced") else ""}>'
                f"{f}{' (default method, no query)' if f != 'balanced' else ''}</option>"
                for f in FAVOR_CHOICES
            ),
            result=result,
        )

    async def explorer(self, request: Request) -> Response:
        from starlette.responses import HTMLResponse

        from blockdex.explain import render_fragment

        if request.method == "GET":
            return HTMLResponse(self.explorer_page({}))
        fields: dict[str, str] = {}
        try:
            fields = await self.read_form(request)
            payload = {k: v for k, v in fields.items() if v.strip()}
            payload.pop("submit", None)
            if payload.pop("no_comments", None):
                payload["comments"] = False
            if payload.pop("links", None):
                payload["links"] = True
            req = parse_extract_request(payload)

            def job() -> str:
                result = explain_request(req, self.fetch_config, self.extractors)
                return render_fragment(
                    result.explanation, source=req.url or req.base_url or "pasted HTML"
                )

            fragment = await self.run_limited(job)
            return HTMLResponse(self.explorer_page(fields, fragment))
        except BlockdexError as exc:
            self.metrics.error("/", exc.kind)
            box = (
                f'<div class="error"><strong>{_attr(exc.kind)}</strong>: '
                f"{html_lib.escape(exc.message, quote=False)}</div>"
            )
            headers = (
                {"Retry-After": str(self.config.retry_after)} if exc.http_status == 503 else {}
            )
            return HTMLResponse(
                self.explorer_page(fields, box), status_code=exc.http_status, headers=headers
            )

    async def read_form(self, request: Request) -> dict[str, str]:
        """The explorer form's fields (url-encoded or multipart), under the body cap."""
        from starlette.requests import Request as StarletteRequest

        body = await self.read_body(request)
        ctype = request.headers.get("content-type", "")
        if ctype.startswith("application/x-www-form-urlencoded") or not ctype:
            parsed = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            return {k: v[-1] for k, v in parsed.items()}
        if ctype.startswith("multipart/form-data"):

            async def replay() -> dict[str, Any]:
                return {"type": "http.request", "body": body, "more_body": False}

            form = await StarletteRequest(request.scope, replay).form()
            out: dict[str, str] = {}
            for key, value in form.multi_items():
                if isinstance(value, str):
                    out[key] = value
                else:  # an uploaded file: its bytes are the page
                    out[key] = (await value.read()).decode("utf-8", "replace")
            return out
        raise RequestError(415, "unsupported_media_type", f"cannot read a form sent as {ctype}")

    async def healthz(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        from blockdex import __version__

        return JSONResponse(
            {
                "status": "ok",
                "version": __version__,
                "busy": self.limiter.busy,
                "capacity": self.limiter.capacity,
            }
        )

    async def metrics_text(self, request: Request) -> Response:
        from starlette.responses import PlainTextResponse

        text = self.metrics.render(
            {
                "blockdex_inflight_requests": (
                    "Extraction slots in use.",
                    float(self.limiter.busy),
                ),
                "blockdex_capacity": ("Extraction slots in all.", float(self.limiter.capacity)),
                "blockdex_uptime_seconds": (
                    "Seconds since the server started.",
                    time.time() - self.metrics.started,
                ),
            }
        )
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    async def openapi(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        return JSONResponse(self.schema)

    async def not_found(self, request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        kind = "not_found" if status == 404 else "method_not_allowed" if status == 405 else "http"
        detail = getattr(exc, "detail", "") or "no such endpoint"
        return self.error_response(request, RequestError(status, kind, str(detail)))

    def warm_up(self) -> None:
        """Load the default predictor in every worker thread so first requests are not slow."""
        from blockdex.explain import explain_page

        page = "<html><body><article><h1>Warm-up</h1><p>A sentence of text.</p></article></body></html>"
        if self.executor is None:
            return
        jobs = [
            self.executor.submit(explain_page, page, extractor_for=self.extractors.get)
            for _ in range(self.config.max_concurrency)
        ]
        concurrent.futures.wait(jobs, timeout=60)

    def app(self) -> Starlette:
        from starlette.applications import Starlette
        from starlette.exceptions import HTTPException
        from starlette.middleware import Middleware
        from starlette.routing import Route

        @asynccontextmanager
        async def lifespan(_app: Starlette):
            self.start()
            await asyncio.get_running_loop().run_in_executor(None, self.warm_up)
            try:
                yield
            finally:
                self.stop()

        g = self.guarded
        routes = [
            Route("/", self.explorer, methods=["GET", "POST"]),
            Route("/v1/extract", g(self.extract), methods=["POST"]),
            Route("/v1/extract/batch", g(self.extract_batch), methods=["POST"]),
            Route("/v1/proxy", g(self.proxy), methods=["GET"]),
            Route("/v1/explain", g(self.explain_fragment), methods=["POST"]),
            Route("/healthz", self.healthz, methods=["GET"]),
            Route("/metrics", self.metrics_text, methods=["GET"]),
            Route("/openapi.json", self.openapi, methods=["GET"]),
        ]
        app = Starlette(
            routes=routes,
            lifespan=lifespan,
            exception_handlers={HTTPException: self.not_found},
            middleware=[Middleware(MetricsMiddleware, metrics=self.metrics)],
        )
        app.state.blockdex = self
        return app


def _attr(value: str) -> str:
    return html_lib.escape(value, quote=True)


def create_app(config: ServerConfig | None = None) -> Starlette:
    """The ASGI app for ``config`` (defaults when None)."""
    _require_starlette()
    return BlockdexServer(config or ServerConfig()).app()


def app_from_env() -> Starlette:
    """App factory for uvicorn worker processes: the config comes from :data:`CONFIG_ENV`."""
    raw = os.environ.get(CONFIG_ENV)
    return create_app(ServerConfig.from_json(raw) if raw else None)


def serve(config: ServerConfig, log_level: str = "info") -> None:
    """Run the server in the foreground until interrupted."""
    _require_starlette()
    import uvicorn

    common = {
        "host": config.host,
        "port": config.port,
        "log_level": log_level,
        "limit_max_requests": None,
        "timeout_graceful_shutdown": 5,
    }
    if config.workers > 1:
        os.environ[CONFIG_ENV] = config.to_json()
        uvicorn.run("blockdex.server:app_from_env", factory=True, workers=config.workers, **common)
    else:
        uvicorn.run(create_app(config), **common)


@contextmanager
def serve_in_thread(config: ServerConfig | None = None, *, port: int = 0) -> Iterator[str]:
    """Run a server on loopback in a background thread; yields its base URL (tests, notebooks).

    ``port=0`` picks a free port.
    """
    _require_starlette()
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
        )
    )
    thread = threading.Thread(target=server.run, name="blockdex-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the blockdex server did not start")
        time.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# -- CLI ---------------------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace) -> int:
    defaults = ServerConfig()
    config = ServerConfig(
        host=args.host,
        port=args.port,
        workers=args.workers,
        allow_private=args.allow_private,
        allowed_networks=tuple(args.allow_network or ()),
        max_body_bytes=args.max_body_bytes or defaults.max_body_bytes,
        max_page_bytes=args.max_page_bytes or defaults.max_page_bytes,
        time_limit=args.time_limit or defaults.time_limit,
        max_concurrency=args.max_concurrency or defaults.max_concurrency,
        max_batch=args.max_batch or defaults.max_batch,
    )
    serve(config, log_level=args.log_level)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``blockdex serve`` to the CLI."""
    p = subparsers.add_parser(
        "serve",
        help="run the HTTP API, the proxy and the block explorer (needs blockdex[server])",
        description=(
            "Serve POST /v1/extract, POST /v1/extract/batch, GET /v1/proxy, the block explorer "
            "at /, /healthz, /metrics and /openapi.json. Fetching refuses loopback, private "
            "and cloud-metadata addresses unless --allow-private / --allow-network say so."
        ),
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default loopback)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    p.add_argument("--workers", type=int, default=1, help="uvicorn worker processes (default 1)")
    p.add_argument(
        "--allow-private",
        action="store_true",
        help="let fetches reach loopback/private addresses (never cloud metadata)",
    )
    p.add_argument(
        "--allow-network",
        action="append",
        metavar="CIDR",
        help="a network fetches may reach although the policy blocks it (repeatable)",
    )
    p.add_argument(
        "--max-concurrency",
        type=int,
        default=None,
        metavar="N",
        help="requests extracting at once per worker; more get 503 (default 2 x CPUs, min 4)",
    )
    p.add_argument(
        "--time-limit", type=float, default=None, metavar="S", help="seconds per request (20)"
    )
    p.add_argument(
        "--max-body-bytes", type=int, default=None, metavar="N", help="request body cap (32 MiB)"
    )
    p.add_argument(
        "--max-page-bytes", type=int, default=None, metavar="N", help="fetched page cap (16 MiB)"
    )
    p.add_argument("--max-batch", type=int, default=None, metavar="N", help="pages per batch (32)")
    p.add_argument(
        "--log-level",
        default="info",
        choices=("critical", "error", "warning", "info", "debug"),
        help="uvicorn log level",
    )
    p.set_defaults(func=cmd_serve)
