"""The service layer under every transport (HTTP in :mod:`.http`, MCP in :mod:`.mcp`).

It validates a request (:func:`parse_extract_request`); :class:`Service` fetches pages under
:mod:`blockdex.fetch`'s SSRF policy, runs an extractor (one per option set per thread, so models
load once per thread) and shapes the result (:meth:`Service.extract`, :meth:`Service.blocks`,
:meth:`Service.select`) or the error (:func:`error_body`), with what the transports share: the
limits (:class:`ServerConfig`), the extraction slots and the thread pool that runs the work.

Extraction is CPU-bound, so it never runs on an event loop: each request takes a *slot* (checked
without waiting; none free → 503 ``overloaded``) and runs, fetch included, in a bounded thread
pool with one thread per slot, under a per-request time limit (→ 504 ``timeout``). A slot is
given back when its thread really finishes, not when the client gives up, so a page that overruns
its time limit still counts against capacity until it is done.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from blockdex import fetch as fetching  # its fetch_url read at each call: swappable in tests
from blockdex.errors import BlockdexError
from blockdex.extract import check_method, run
from blockdex.fetch import FetchConfig, FetchedPage
from blockdex.intervals import parse_interval_text
from blockdex.options import DEFAULT_OPTIONS, ExtractOptions
from blockdex.page import Page, Selection, merge_intervals
from blockdex.render import result_notes
from blockdex.result import Result

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


# -- requests ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExtractRequest:
    """One page to extract, validated."""

    html: str | bytes | None = None
    url: str | None = None
    base_url: str | None = None
    """The page's address when ``html`` is given (metadata, links)."""
    blocks: bool = False
    content_type: str | None = None
    options: ExtractOptions = DEFAULT_OPTIONS
    """What to extract and how (:class:`blockdex.options.ExtractOptions`)."""

    @property
    def query(self) -> str | None:
        return self.options.query

    @property
    def format(self) -> str:
        return self.options.format


def _optional_str(payload: dict[str, Any], name: str) -> str | None:
    value = payload.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise RequestError(400, "invalid_request", f"'{name}' must be a string")
    return value


def query_flag(value: str, name: str) -> bool:
    """A true/false option given in a query string (``?blocks=0``)."""
    low = value.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise RequestError(400, "invalid_request", f"'{name}' must be true or false, not {value!r}")


def parse_extract_request(
    payload: Any, defaults: dict[str, Any] | None = None, *, strings: bool = False
) -> ExtractRequest:
    """Validate one JSON object of /v1/extract (or one item of a batch); ``strings``: the
    options come from a query string (``?comments=0``)."""
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
    blocks = merged.get("blocks", False)
    if strings and isinstance(blocks, str):
        blocks = query_flag(blocks, "blocks")
    if not isinstance(blocks, bool):
        raise RequestError(400, "invalid_request", "'blocks' must be true or false")
    options = ExtractOptions.from_payload(merged, strings=strings)
    check_method(options.method)
    return ExtractRequest(
        html=html,
        url=url,
        base_url=_optional_str(merged, "base_url"),
        blocks=blocks,
        options=options,
    )


# -- the work (runs in worker threads) ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PageResult:
    """A page's result, with where it came from and how long each step took."""

    result: Result
    data: str | bytes
    url: str | None
    content_type: str | None
    timings: dict[str, float]


Fetcher = Callable[[str, "FetchConfig"], "FetchedPage"]
"""Fetches a URL under a policy: :func:`blockdex.fetch.fetch_url` or a :class:`PageCache`."""


def error_body(exc: BlockdexError) -> dict[str, str]:
    return {"error": exc.kind, "detail": exc.message}


# -- choosing blocks by index (the index method, exposed) --------------------------------------


def check_intervals(intervals: Any, page: Page) -> tuple[tuple[int, int], ...]:
    """``intervals`` (a list of ``[first, last]`` pairs, or the same written as text such as
    ``"[[3,7],[12,12]]"``) checked against ``page``'s block indices; a 400 ``invalid_request``
    that says what is wrong otherwise."""

    def bad(why: str) -> RequestError:
        return RequestError(400, "invalid_request", f"bad interval list: {why}")

    if isinstance(intervals, str):
        pairs, warnings = parse_interval_text(intervals)
        if warnings or not pairs:
            raise bad(f"could not read [first, last] pairs from {intervals[:80]!r}")
        intervals = [list(p) for p in pairs]
    if not isinstance(intervals, list) or not intervals:
        raise bad("give a non-empty list of [first, last] block index pairs, e.g. [[3,7],[12,12]]")
    indices = page.indices()
    if not indices:
        raise bad("the page has no blocks to select")
    lo, hi = indices[0], indices[-1]
    out: list[tuple[int, int]] = []
    for item in intervals:
        if (
            not isinstance(item, list | tuple)
            or len(item) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in item)
        ):
            raise bad(f"{item!r} is not a [first, last] pair of block indices")
        a, b = item
        if a > b:
            raise bad(f"[{a},{b}] runs backwards; write it as [{b},{a}]")
        if a < lo or b > hi:
            raise bad(f"[{a},{b}] is outside the page's blocks {lo}..{hi}")
        out.append((a, b))
    return merge_intervals(out)


# -- shared state -------------------------------------------------------------------------------


class PageCache:
    """Fetched pages kept for a while, so that several calls about one URL (its blocks, then a
    selection of them; the next part of a long result) read the same page, fetched once.

    Bounded by entries, bytes and age; thread-safe. Fetch errors are not cached."""

    def __init__(
        self, max_pages: int = 16, max_bytes: int = 64 * 1024 * 1024, ttl: float = 600.0
    ) -> None:
        self.max_pages = max_pages
        self.max_bytes = max_bytes
        self.ttl = ttl
        self._pages: OrderedDict[str, tuple[float, FetchedPage]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._pages)

    def __call__(self, url: str, config: FetchConfig) -> FetchedPage:
        now = time.monotonic()
        with self._lock:
            hit = self._pages.get(url)
            if hit is not None and now - hit[0] <= self.ttl:
                self._pages.move_to_end(url)
                return hit[1]
        page = fetching.fetch_url(url, config)
        with self._lock:
            self._drop(url)
            self._pages[url] = (now, page)
            self._bytes += len(page.body)
            while self._pages and (
                len(self._pages) > self.max_pages or self._bytes > self.max_bytes
            ):
                self._drop(next(iter(self._pages)))
        return page

    def _drop(self, url: str) -> None:
        old = self._pages.pop(url, None)
        if old is not None:
            self._bytes -= len(old[1].body)


class Service:
    """What every transport shares: the limits, the fetching, the extraction slots, the thread
    pool that runs the work, the per-thread extractors, and the work itself (:meth:`page`,
    :meth:`extract`, :meth:`extract_many`, :meth:`blocks`, :meth:`select`: blocking, for
    :meth:`run`).

    ``fetch`` fetches a request's URL under the policy: :func:`blockdex.fetch.fetch_url` unless
    given (the MCP server gives a :class:`PageCache`). Call :meth:`start` before :meth:`run` and
    :meth:`stop` at the end (the HTTP app does both in its lifespan)."""

    def __init__(self, config: ServerConfig, fetch: Fetcher | None = None) -> None:
        self.config = config
        self.fetch_config = config.fetch_config()
        self.fetch: Fetcher = fetch if fetch is not None else fetching.fetch_url
        self.limiter = ConcurrencyLimiter(config.max_concurrency)
        self.executor: concurrent.futures.ThreadPoolExecutor | None = None

    def start(self) -> None:
        self.executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=self.config.max_concurrency, thread_name_prefix="blockdex-extract"
        )

    def stop(self) -> None:
        if self.executor is not None:
            self.executor.shutdown(wait=False, cancel_futures=True)
            self.executor = None

    async def run(self, job: Callable[[], Any]) -> Any:
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

    def warm_up(self) -> None:
        """Load the default predictor in every worker thread so first requests are not slow."""
        page = "<html><body><article><h1>Warm-up</h1><p>A sentence of text.</p></article></body></html>"
        if self.executor is None:
            return
        jobs = [self.executor.submit(run, page) for _ in range(self.config.max_concurrency)]
        concurrent.futures.wait(jobs, timeout=60)

    # -- the work (blocking: each runs in a worker thread through run())

    def page(self, req: ExtractRequest, *, markup: bool = True) -> PageResult:
        """Fetch (when ``req.url``) and run the request's method (:func:`blockdex.extract.run`).
        ``markup=False``: the blocks are built as the request's format needs them (none of
        their HTML for text); else always with it (the block list, the explorer, the proxy)."""
        timings: dict[str, float] = {}
        data: str | bytes
        if req.url is not None:
            t0 = time.perf_counter()
            fetched = self.fetch(req.url, self.fetch_config)
            timings["fetch"] = time.perf_counter() - t0
            data, url, ctype = fetched.body, fetched.url, fetched.content_type
        else:
            data, url, ctype = req.html or "", req.base_url, req.content_type
        options = req.options if not markup else req.options.replace(format="markdown")
        result = run(data, options, url=url, content_type=ctype)
        timings.update(result.timings)
        return PageResult(result, data, url, ctype, timings)

    def extract(self, req: ExtractRequest) -> dict[str, Any]:
        """The /v1/extract response body for one page: its ``warnings`` and ``notes`` as the CLI
        prints them."""
        result = self.page(req, markup=False)
        exp = result.result
        t0 = time.perf_counter()
        content: str | dict[str, Any] = (
            exp.to_json(extra={"method": exp.method, "query": exp.query})
            if req.format == "json"
            else exp.render(req.format)
        )
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
            **exp.page.page_type.to_json(),
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
        notes = result_notes(exp.page, exp.selection, exp.query)
        if notes:
            body["notes"] = notes
        body["timings"] = {k: round(v * 1000, 3) for k, v in result.timings.items()}
        return body

    def extract_many(
        self, items: list[ExtractRequest | BlockdexError], deadline: float
    ) -> list[dict[str, Any]]:
        """Each item's result or ``{error, detail}``; items not started by ``deadline`` (a
        :func:`time.monotonic` value) time out."""
        out: list[dict[str, Any]] = []
        for item in items:
            if isinstance(item, BlockdexError):
                out.append(error_body(item))
            elif time.monotonic() > deadline:
                out.append({"error": "timeout", "detail": "the batch's time limit ran out first"})
            else:
                try:
                    out.append(self.extract(item))
                except BlockdexError as exc:
                    out.append(error_body(exc))
        return out

    def blocks(self, req: ExtractRequest) -> dict[str, Any]:
        """A page's numbered blocks as a model reads them (``[i] <tag>text</tag>`` lines), with
        the intervals the request's method keeps, so a caller can choose its own and
        :meth:`select` them. The same request options give the same numbering."""
        result = self.page(req)
        exp = result.result
        return {
            "title": exp.page.title,
            "url": result.url,
            "method": exp.method,
            "query": exp.query,
            "n_blocks": len(exp.page.blocks),
            **exp.page.page_type.to_json(),
            "indices": [list(iv) for iv in exp.selection.intervals],
            "blocks": exp.page.tagged_text(),
        }

    def select(self, req: ExtractRequest, intervals: Any) -> dict[str, Any]:
        """The blocks ``intervals`` name (:func:`check_intervals`), reassembled into
        ``req.format``; numbered as :meth:`blocks` numbers them for the same page and options."""
        result = self.page(req)
        page = result.result.page
        chosen = check_intervals(intervals, page)
        extraction = Result(page=page, selection=Selection(chosen), predictor="select")
        return {
            "title": page.title,
            "url": result.url,
            "format": req.format,
            "content": extraction.render(req.format),
            "indices": [list(iv) for iv in chosen],
            "n_blocks": len(page.blocks),
        }
