"""``blockdex crawl``: a site — seeds, a list of URLs, its sitemaps and feeds — to one clean
Markdown file per page.

The crawl is told as five phases, each a method of :class:`Crawler`:

1. **Discover** (:meth:`Crawler._discover`) — a URL found in a page, a sitemap or a feed is
   normalised (:func:`blockdex.crawl_urls.normalize_url`), kept when it is in the crawl's scope,
   passes the ``--include``/``--exclude`` globs and is within ``--depth`` link hops of a seed,
   and queued once on its host's queue.
2. **Be polite** (:meth:`Crawler._visit`, :class:`_Host`) — robots.txt is read once per site
   (:class:`blockdex.crawl_discovery.RobotsRules`) and obeyed; each host gets at most
   ``--per-host`` requests in flight and ``--delay`` (or its ``Crawl-delay``) between request
   starts; 429 and 503 answers are retried after their ``Retry-After`` with exponential backoff,
   up to ``--retries`` times and never waiting longer than ``--retry-cap``.
3. **Fetch safely** (:meth:`Crawler._fetch_once`) — every hop, each redirect included, goes
   through :mod:`blockdex.fetch`'s rules: the address check (private, loopback, link-local and
   metadata addresses refused unless ``--allow-private``), the pinned connection, the size cap
   and the time limits; a response that is not HTML is dropped on its headers, before its body.
4. **Extract** (:meth:`Crawler._extract`) — the batch runner's worker processes
   (:mod:`blockdex.batch`) extract each page and read its links, its canonical URL and a SimHash
   of its text, under a time and memory limit; the fetcher never waits for them.
5. **Record** (:meth:`Crawler._finish_page`) — a page whose canonical URL, redirect target or
   near-identical text (:class:`blockdex.crawl_discovery.SimhashIndex`) is already written is
   recorded as a duplicate; any other is written (:class:`blockdex.crawl_store.CrawlStore`),
   and its record — with its links — appended to ``pages.jsonl`` in one write, which is what
   makes ``--resume`` exact.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import email.utils
import ipaddress
import multiprocessing as mp
import os
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from blockdex.batch import BatchConfig, PageInput, RecordTask, check_predictor
from blockdex.crawl_discovery import (
    DEFAULT_DISCOVERY,
    DiscoveryConfig,
    RobotsRules,
    SimhashIndex,
    parse_feed,
    parse_sitemap,
)
from blockdex.crawl_store import CrawlStore
from blockdex.crawl_urls import (
    SCOPES,
    Scope,
    UrlFilter,
    dedupe,
    is_skipped_resource,
    netloc_of,
    normalize_url,
    origin_of,
)
from blockdex.errors import BlockdexError
from blockdex.fetch import FetchConfig
from blockdex.options import DEFAULT_OPTIONS, ExtractOptions, add_option_arguments, option_fields

RETRY_STATUSES = frozenset({429, 503})
CRAWL_FETCH = FetchConfig(max_seconds=60.0)
"""The fetch rules of blockdex.fetch, with a minute per request: a crawl may wait for a page."""


@dataclass(frozen=True, slots=True)
class CrawlConfig:
    """Settings of a crawl. The politeness defaults suit a public site; a local one can go faster."""

    depth: int = 5
    """Link hops followed from a seed (0: only the seeds). Sitemap entries count as one hop."""
    max_pages: int = 1000
    """Pages fetched at most, over all resumed runs (0: no limit): a crawl must end somewhere."""
    scope: str = "host"
    """Which links are followed: ``host`` (a seed's host), ``domain`` or ``prefix``."""
    include: tuple[str, ...] = ()
    """URL globs a followed link must match one of (none: every link in scope)."""
    exclude: tuple[str, ...] = ()
    """URL globs of links never followed."""
    sitemaps: bool = True
    """Read each site's sitemaps (robots.txt ``Sitemap:`` lines and ``/sitemap.xml``)."""
    feeds: tuple[str, ...] = ()
    """RSS/Atom feeds whose entries are crawled like seeds."""
    discover_feeds: bool = False
    """Also read the feeds pages announce with ``<link rel=alternate>``."""
    per_host: int = 2
    """Requests in flight to one host at most: a crawler must not load a site like a crowd."""
    delay: float = 0.5
    """Seconds between the starts of two requests to one host (a longer Crawl-delay wins)."""
    concurrency: int = 16
    """Requests in flight over all hosts."""
    retries: int = 3
    """Retries of a page answered with 429 or 503 before it is recorded as an error."""
    backoff: float = 1.0
    """Seconds before the first retry, doubled for each next one (a longer Retry-After wins)."""
    retry_cap: float = 120.0
    """Longest wait a retry may ask for; a server asking for more gets the page given up."""
    robots_max_bytes: int = 512 * 1024
    """robots.txt bytes read (RFC 9309 asks for at least 500 KiB); the rest is ignored."""
    max_documents: int = 1000
    """Sitemaps and feeds read per crawl (a sitemap index may list thousands)."""
    max_sitemap_nesting: int = 3
    """Levels of sitemap indexes followed (an index listing indexes listing sitemaps …)."""
    near_duplicate_bits: int = 3
    """SimHash bits two pages may differ in and still be duplicates (Manku et al., 2007)."""
    canonical_max_bits: int = 16
    """SimHash bits a page may differ from the page its canonical link names and still be its
    duplicate. Unrelated texts differ in ~32: beyond 16 the link is taken for a site's mistake
    (every page naming the home page) and the page is kept."""
    options: ExtractOptions = DEFAULT_OPTIONS
    """What each page's file holds (as ``blockdex extract`` would write it)."""
    jobs: int = max(1, min(4, os.cpu_count() or 1))
    """Extraction worker processes (extraction is CPU-bound; fetching is not)."""
    page_timeout: float = 10.0
    """Seconds one page's extraction may take before its worker is replaced."""
    memory_limit_mb: int = 4096
    """Address-space limit of each extraction worker."""
    warc: bool = False
    """Also write the fetched HTML responses to ``pages.warc.gz``."""
    fetch: FetchConfig = CRAWL_FETCH
    """Address policy, user agent, time and size limits of every request (see blockdex.fetch)."""
    discovery: DiscoveryConfig = DEFAULT_DISCOVERY

    def batch_config(self) -> BatchConfig:
        return BatchConfig(
            jobs=self.jobs,
            page_timeout=self.page_timeout,
            memory_limit_mb=self.memory_limit_mb,
            options=self.options,
        )

    def manifest(self, seeds: Sequence[str]) -> dict[str, Any]:
        """The settings a resumed crawl must share with the crawl it continues."""
        settings = {
            "seeds": list(seeds),
            "feeds": list(self.feeds),
            "scope": self.scope,
            "include": list(self.include),
            "exclude": list(self.exclude),
            "depth": self.depth,
            "sitemaps": self.sitemaps,
            "discover_feeds": self.discover_feeds,
            "format": self.options.format,
            "query": self.options.query,
            "predictor": self.options.method,
            "comments": self.options.comments,
            "favor": self.options.favor,
            "links": self.options.links,
            "warc": self.warc,
        }
        for f in option_fields():  # the newer options only when set, so that crawls begun
            value = getattr(self.options, f.name)  # before an option existed still resume
            if f.name not in settings and f.name != "method" and value != f.default:
                settings[f.name] = value
        return settings

    def check(self) -> None:
        """Refuse settings that cannot work, with the option's name."""
        if self.scope not in SCOPES:
            raise BlockdexError(
                f"unknown --scope {self.scope!r}; choose one of {', '.join(SCOPES)}"
            )
        self.options.validate("cli")
        minimums = (
            ("--depth", self.depth, 0),
            ("--max-pages", self.max_pages, 0),
            ("--per-host", self.per_host, 1),
            ("--concurrency", self.concurrency, 1),
            ("--retries", self.retries, 0),
            ("--jobs", self.jobs, 1),
            ("--max-bytes", self.fetch.max_bytes, 1),
        )
        for flag, value, least in minimums:
            if value < least:
                raise BlockdexError(f"{flag} must be at least {least}, not {value}")
        for flag, seconds in (
            ("--delay", self.delay),
            ("--retry-cap", self.retry_cap),
            ("--backoff", self.backoff),
        ):
            if not seconds >= 0:
                raise BlockdexError(f"{flag} must be 0 or more seconds, not {seconds}")
        for flag, seconds in (
            ("--timeout", self.fetch.timeout),
            ("--page-timeout", self.page_timeout),
        ):
            if not seconds > 0:
                raise BlockdexError(f"{flag} must be more than 0 seconds, not {seconds}")
        check_predictor(self.options.method)
        for network in self.fetch.allowed_networks:
            try:
                ipaddress.ip_network(network, strict=False)
            except ValueError:
                raise BlockdexError(
                    f"--allow-network {network!r} is not an address or a network (10.1.2.0/24)"
                ) from None


@dataclass(slots=True)
class CrawlSummary:
    """Counts of a crawl's output (over resumed runs) and of this run's work."""

    pages: int = 0
    written: int = 0
    duplicates: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    resumed_pages: int = 0
    fetched: int = 0
    requests: int = 0
    retries: int = 0
    bytes: int = 0
    queue_left: int = 0
    documents_read: int = 0
    documents_failed: int = 0
    seconds: float = 0.0
    fetch_seconds: float = 0.0
    extract_seconds: float = 0.0
    workers_replaced: int = 0
    hosts: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def pages_per_second(self) -> float:
        new = self.pages - self.resumed_pages
        return new / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "pages": self.pages,
            "written": self.written,
            "duplicates": self.duplicates,
            "errors": sum(self.errors.values()),
            "errors_by_kind": dict(self.errors),
            "resumed_pages": self.resumed_pages,
            "fetched": self.fetched,
            "requests": self.requests,
            "retries": self.retries,
            "bytes": self.bytes,
            "queue_left": self.queue_left,
            "sitemaps_and_feeds": {"read": self.documents_read, "failed": self.documents_failed},
            "seconds": round(self.seconds, 3),
            "pages_per_second": round(self.pages_per_second, 2),
            "fetch_seconds": round(self.fetch_seconds, 3),
            "extract_seconds": round(self.extract_seconds, 3),
            "workers_replaced": self.workers_replaced,
            "hosts": self.hosts,
        }

    def describe(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in self.errors.most_common()) or "none"
        text = (
            f"{self.pages} pages: {self.written} written, {self.duplicates} duplicates, "
            f"{sum(self.errors.values())} errors ({kinds}); {self.seconds:.1f} s, "
            f"{self.pages_per_second:.1f} pages/s"
        )
        if self.queue_left:
            text += f"; {self.queue_left} URLs left in the queue (--max-pages)"
        return text


# --------------------------------------------------------------------------------------------
# Extraction in the batch runner's worker processes


def crawl_page_task(page: PageInput, cfg: BatchConfig) -> dict[str, Any]:
    """The worker's job for one fetched page: the batch record, plus the page's metadata, links,
    canonical URL, feeds and a SimHash of its extracted text (never raises for bad input)."""
    from blockdex.batch import extract_page
    from blockdex.crawl_discovery import page_links, text_simhash

    t0 = time.perf_counter()
    record, result = extract_page(page, cfg)  # with the page's metadata, as batch has it
    record.setdefault("metadata", {})
    record.update(links=[], canonical=None, feeds=[], simhash=None)
    try:
        found = page_links(page.html, page.url or page.source, page.content_type)
        record.update(links=list(found.links), canonical=found.canonical, feeds=list(found.feeds))
    except Exception:  # an unreadable page has no links; its record says why already
        pass
    if result is not None and not record.get("error"):
        fingerprint = text_simhash(result.text)
        record["simhash"] = f"{fingerprint:016x}" if fingerprint is not None else None
    record["time_ms"] = round((time.perf_counter() - t0) * 1000, 3)  # all of the page's work
    return record


class ExtractionPool:
    """The batch runner's worker processes (:class:`blockdex.batch._Worker`: spawned, memory
    limited, models loaded once), driven from asyncio: each exchange runs in a thread of its own,
    so a slow page holds one worker and one thread, never the event loop or the other pages."""

    start_timeout: float = 300.0
    """Seconds a new worker may take to import blockdex and load its models."""

    def __init__(self, cfg: BatchConfig, task: RecordTask) -> None:
        from blockdex.batch import _Worker

        self.cfg = cfg
        self.task = task
        self._ctx = mp.get_context("spawn")
        self._make = lambda: _Worker(self._ctx, cfg, task)
        self._lock = threading.Lock()
        self._workers = [self._make() for _ in range(max(1, cfg.jobs))]
        self._idle: asyncio.Queue[Any] = asyncio.Queue()
        for worker in self._workers:
            self._idle.put_nowait(worker)
        self._threads = ThreadPoolExecutor(max(1, cfg.jobs), thread_name_prefix="blockdex-extract")
        self.replaced = 0

    async def run(self, page: PageInput) -> dict[str, Any]:
        """The worker record of ``page`` (an error record when its worker died or timed out)."""
        worker = await self._idle.get()
        try:
            loop = asyncio.get_running_loop()
            record, worker = await loop.run_in_executor(self._threads, self._exchange, worker, page)
        finally:
            self._idle.put_nowait(worker)
        return record

    def _replace(self, worker: Any, kill: bool) -> Any:
        worker.stop(kill=kill)
        new = self._make()
        with self._lock:
            self._workers[self._workers.index(worker)] = new
            self.replaced += 1
        return new

    def _exchange(self, worker: Any, page: PageInput) -> tuple[dict[str, Any], Any]:
        from multiprocessing.connection import wait

        from blockdex.batch import _error_record

        if not worker.ready:
            ready = wait([worker.conn, worker.proc.sentinel], self.start_timeout)
            message = None
            if worker.conn in ready:
                with contextlib.suppress(EOFError, OSError):
                    message = worker.conn.recv()
            if not message or message[0] != "ready":
                raise BlockdexError("an extraction worker could not start: see the messages above")
            worker.ready = True
        worker.send(page)
        ready = wait([worker.conn, worker.proc.sentinel], self.cfg.page_timeout)
        if worker.conn in ready:
            try:
                kind, payload = worker.conn.recv()
            except (EOFError, OSError):
                kind, payload = "died", None
            if kind == "done":
                worker.page = None
                if worker.tasks >= self.cfg.max_tasks_per_worker:
                    worker = self._replace(worker, kill=False)
                return payload, worker
        ms = round((time.monotonic() - worker.started) * 1000, 3)
        if worker.proc.is_alive() and not ready:
            error = f"the page took longer than the {self.cfg.page_timeout:g} s limit"
            kind = "timeout"
        else:
            worker.proc.join(1)
            error = f"the worker process died on this page (exit code {worker.proc.exitcode})"
            kind = "worker_crashed"
        return _error_record(page, error, kind, ms), self._replace(worker, kill=True)

    def close(self) -> None:
        with self._lock:
            workers = list(self._workers)
        for worker in workers:
            worker.stop(kill=worker.page is not None)
        self._threads.shutdown(wait=False, cancel_futures=True)


# --------------------------------------------------------------------------------------------
# Fetching


class _Refused(Exception):
    """A URL that ends without a page: why (``kind``, ``message``), and what was seen of it."""

    def __init__(
        self,
        kind: str,
        message: str,
        status: int | None = None,
        url: str | None = None,
        duplicate_of: str | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.url = url
        self.duplicate_of = duplicate_of
        self.redirects: list[str] = []


def _internal(exc: Exception) -> _Refused:
    return _Refused("internal", f"internal error: {type(exc).__name__}: {exc}")


@dataclass(slots=True)
class Fetched:
    """A response whose body was read."""

    url: str
    """The final URL, after redirects."""
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    fetched_at: str
    redirects: list[str] = field(default_factory=list)
    retries: int = 0
    seconds: float = 0.0

    @property
    def content_type(self) -> str | None:
        for key, value in self.headers:
            if key.lower() == "content-type":
                return value
        return None


@dataclass(slots=True)
class _Busy:
    """A 429/503 answer: retry later."""

    status: int
    retry_after: float | None
    url: str


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True)
class _Item:
    url: str
    depth: int
    via: str
    """How the URL was found: ``seed``, the page linking to it, ``sitemap:URL``, ``feed:URL``."""


class _Host:
    """One host's queue and politeness: its lanes, its in-flight limit, its request clock."""

    def __init__(self, netloc: str, per_host: int, delay: float) -> None:
        self.netloc = netloc
        self.queue: deque[_Item] = deque()
        self.lanes = 0
        self.inflight = asyncio.Semaphore(per_host)
        self.lock = asyncio.Lock()
        self.delay = delay
        self.crawl_delay: float | None = None
        self.next_start = 0.0
        self.requests = 0
        self.robots: dict[str, str] = {}

    async def turn(self) -> None:
        """Wait until this host may be sent the next request, then book the one after it."""
        loop = asyncio.get_running_loop()
        async with self.lock:
            while (wait := self.next_start - loop.time()) > 0:
                await asyncio.sleep(wait)
            self.next_start = loop.time() + self.delay
            self.requests += 1

    def pause(self, seconds: float) -> None:
        """Send this host nothing for ``seconds`` (it answered 429 or 503)."""
        loop = asyncio.get_running_loop()
        self.next_start = max(self.next_start, loop.time() + seconds)


HopCheck = Callable[[str], Awaitable[None]]


# --------------------------------------------------------------------------------------------
# The crawler


class Crawler:
    """One crawl: seeds and feeds in, ``store`` out (see the module's description)."""

    def __init__(
        self,
        seeds: Sequence[str],
        store: CrawlStore,
        cfg: CrawlConfig,
        *,
        progress: bool = True,
    ) -> None:
        self.seeds = list(seeds)
        self.store = store
        self.cfg = cfg
        self.progress = progress
        self.scope = Scope(cfg.scope, [*self.seeds, *cfg.feeds])
        self.filter = UrlFilter(cfg.include, cfg.exclude)
        self.summary = CrawlSummary()
        self._user_agent = cfg.fetch.user_agent
        self._headers = {
            "User-Agent": self._user_agent,
            "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
        }
        self._seen: set[str] = set()
        self._claims: dict[str, tuple[str, str]] = {}
        self._fingerprints: dict[str, int] = {}
        self._simhashes = SimhashIndex(cfg.near_duplicate_bits)
        self._hosts: dict[str, _Host] = {}
        self._robots: dict[str, asyncio.Future[RobotsRules]] = {}
        self._sitemap_origins: set[str] = set()
        self._documents: set[str] = set()
        self._clients: dict[str, Any] = {}
        self._queued = 0
        self._budget: int | None = None
        self._active: set[asyncio.Task[Any]] = set()
        self._fatal: BaseException | None = None
        self._pool: ExtractionPool | None = None
        self._extract_slots: asyncio.Semaphore | None = None
        self._slots: asyncio.Semaphore | None = None
        self._idle: asyncio.Event | None = None
        self._bar: Any = None

    # -- running

    async def run(self) -> CrawlSummary:
        from tqdm import tqdm

        self._idle = asyncio.Event()
        self._slots = asyncio.Semaphore(self.cfg.concurrency)
        # pages fetched and waiting for a worker: enough to keep every worker busy, few enough
        # that bodies (up to --max-bytes each) do not pile up when extraction is the slower side
        self._extract_slots = asyncio.Semaphore(2 * self.cfg.jobs + self.cfg.per_host)
        t0 = time.perf_counter()
        finished = False
        records, events = self.store.load()  # before the try: a failure here writes nothing
        try:
            self._replay(records, events)
            self._bar = tqdm(
                unit="page",
                initial=self.summary.pages,
                disable=not self.progress,
                file=sys.stderr,
                dynamic_ncols=True,
                desc="blockdex crawl",
            )
            for url in self.seeds:
                self._discover_seed(url)
            for url in self.cfg.feeds:
                self._schedule_document("feed", url, depth=0, level=0)
            if self._active:
                await self._idle.wait()
            if self._fatal is not None:
                raise self._fatal
            finished = True
        finally:
            for task in list(self._active):
                task.cancel()
            if self._active:
                await asyncio.gather(*self._active, return_exceptions=True)
            for client in self._clients.values():
                await client.aclose()
            if self._pool is not None:
                self.summary.workers_replaced = self._pool.replaced
                await asyncio.to_thread(self._pool.close)
            if self._bar is not None:
                self._bar.close()
            self.summary.seconds = time.perf_counter() - t0
            self.summary.queue_left = self._queued
            self.summary.hosts = {
                host.netloc: {
                    "requests": host.requests,
                    "delay": host.delay,
                    "crawl_delay": host.crawl_delay,
                    "per_host": self.cfg.per_host,
                    "robots": host.robots,
                }
                for host in self._hosts.values()
            }
            try:
                self.store.write_summary({"user_agent": self._user_agent, **self.summary.to_json()})
                self.store.close()
            except BlockdexError:
                if finished:  # else the error that stopped the crawl is the one to report
                    raise
        return self.summary

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._active.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._active.discard(task)
        if not task.cancelled() and task.exception() is not None and self._fatal is None:
            self._fatal = task.exception()
            assert self._idle is not None
            self._idle.set()
        if not self._active and self._idle is not None:
            self._idle.set()

    # -- phase 1: discover

    def _replay(self, records: list[dict[str, Any]], events: list[dict[str, Any]]) -> None:
        """Rebuild the state of earlier runs: done URLs, written pages, the frontier."""
        self.summary.resumed_pages = len(records)
        budget_used = 0
        for rec in records:
            url = rec["url"]
            self._seen.add(url)
            self._count(rec)
            if rec.get("fetched_at"):
                budget_used += 1
            if rec.get("via") == "seed" and rec.get("final_url"):
                final = normalize_url(rec["final_url"])
                if final:
                    self.scope.add_root(final)
            if rec.get("file"):
                self._claim(rec, rec.get("canonical"), normalize_url(rec.get("final_url") or ""))
        if self.cfg.max_pages:
            self._budget = max(0, self.cfg.max_pages - budget_used)
        for event in events:
            self._documents.add(event["url"])
        for rec in records:
            self._follow(_Item(rec["url"], rec.get("depth", 0), rec.get("via", "")), rec)
        for event in events:
            self._apply_document(event)

    def _discover_seed(self, url: str) -> None:
        if url not in self._seen:
            self._seen.add(url)
            self._enqueue(_Item(url, 0, "seed"))

    def _discover(self, url: str, depth: int, via: str) -> None:
        if url in self._seen or depth > self.cfg.depth:
            return
        if not self.scope.contains(url) or not self.filter.accepts(url):
            return
        if is_skipped_resource(url):
            return
        self._seen.add(url)
        self._enqueue(_Item(url, depth, via))

    def _follow(self, item: _Item, rec: dict[str, Any]) -> None:
        """Queue what a page links to, and the feeds it announces when asked to."""
        if item.depth >= self.cfg.depth:
            return
        for link in rec.get("links") or ():
            self._discover(link, item.depth + 1, item.url)
        if self.cfg.discover_feeds:
            for feed in rec.get("feeds") or ():
                if self.scope.contains(feed):
                    self._schedule_document("feed", feed, depth=item.depth + 1, level=0)

    def _enqueue(self, item: _Item) -> None:
        host = self._host(netloc_of(item.url))
        host.queue.append(item)
        self._queued += 1
        self._wake(host)

    def _host(self, netloc: str) -> _Host:
        host = self._hosts.get(netloc)
        if host is None:
            host = self._hosts[netloc] = _Host(netloc, self.cfg.per_host, self.cfg.delay)
        return host

    def _wake(self, host: _Host) -> None:
        while host.lanes < min(self.cfg.per_host, len(host.queue)) and self._has_budget():
            host.lanes += 1
            self._spawn(self._lane(host))

    def _has_budget(self) -> bool:
        return self._budget is None or self._budget > 0

    async def _lane(self, host: _Host) -> None:
        """Visit the host's queued URLs one after another (a host has ``per_host`` lanes)."""
        try:
            while host.queue and self._has_budget():
                item = host.queue.popleft()
                self._queued -= 1
                if not await self._visit(item, host):
                    break
        finally:
            host.lanes -= 1

    # -- phase 2: be polite

    async def _rules(self, origin: str) -> RobotsRules:
        future = self._robots.get(origin)
        if future is None:
            future = self._robots[origin] = asyncio.ensure_future(self._load_robots(origin))
        return await asyncio.shield(future)

    async def _load_robots(self, origin: str) -> RobotsRules:
        """The site's robots.txt rules for our user agent (RFC 9309: none found → everything
        allowed; unreachable → nothing allowed)."""
        url = origin + "/robots.txt"
        host = self._host(netloc_of(url))
        try:
            fetched = await self._fetch(
                url,
                host,
                html_only=False,
                hop_check=None,
                max_bytes=self.cfg.robots_max_bytes,
                truncate=True,
                polite=False,
                retries=0,
            )
        except Exception as exc:
            refused = exc if isinstance(exc, _Refused) else _internal(exc)
            if refused.status is not None and 400 <= refused.status < 500 and refused.status != 429:
                rules = RobotsRules.allow_all()
            elif refused.kind == "unsafe_url":  # the site's pages are refused alike
                rules = RobotsRules.disallow_all(refused.message, "unsafe_url")
            else:
                rules = RobotsRules.disallow_all(
                    f"the robots.txt of {origin} could not be read ({refused.message}); a crawler"
                    " must then fetch nothing from the site (RFC 9309)"
                )
        else:
            text = fetched.body.decode("utf-8", "replace")
            rules = RobotsRules.parse(text, self._user_agent, base_url=fetched.url)
        host.robots[origin] = rules.status
        if rules.delay is not None:
            host.crawl_delay = max(host.crawl_delay or 0.0, rules.delay)
            host.delay = max(host.delay, rules.delay)
        return rules

    def _start_sitemaps(self, origin: str, rules: RobotsRules) -> None:
        if not self.cfg.sitemaps or self.cfg.depth < 1 or origin in self._sitemap_origins:
            return
        self._sitemap_origins.add(origin)
        for url in dedupe([*rules.sitemaps, normalize_url(origin + "/sitemap.xml")]):
            self._schedule_document("sitemap", url, depth=1, level=0)

    # -- phase 3: fetch safely

    async def _visit(self, item: _Item, host: _Host) -> bool:
        """Fetch one queued URL and hand its page to extraction, or record why not.
        False when the page budget is spent (the URL goes back to the queue)."""
        claim = self._claims.get(item.url)
        if claim is not None:
            self._record_refusal(
                item, _Refused(claim[1], f"{item.url} is {claim[0]}", duplicate_of=claim[0])
            )
            return True
        origin = origin_of(item.url)
        rules = await self._rules(origin)
        if self.scope.contains(item.url):
            self._start_sitemaps(origin, rules)
        if not rules.allows(item.url):
            self._record_refusal(item, _Refused(*rules.why_refused(item.url)))
            return True
        if not self._has_budget():
            host.queue.appendleft(item)
            self._queued += 1
            return False
        if self._budget is not None:
            self._budget -= 1

        async def hop_check(url: str) -> None:
            await self._page_hop(item, url)

        try:
            fetched = await self._fetch(item.url, host, html_only=True, hop_check=hop_check)
        except _Refused as refused:
            self._record_refusal(item, refused, fetched=True)
            return True
        except Exception as exc:  # a bug or a failure nobody foresaw: this page only
            self._record_refusal(item, _internal(exc), fetched=True)
            return True
        if item.via == "seed":
            final = normalize_url(fetched.url)
            if final:
                self.scope.add_root(final)
        assert self._extract_slots is not None
        await self._extract_slots.acquire()
        self._spawn(self._extract(item, fetched))
        return True

    async def _page_hop(self, item: _Item, url: str) -> None:
        """A page's redirect may go where a link may: in scope (seeds excepted: where a seed
        redirects becomes part of the scope), allowed by robots.txt, not to a page written."""
        target = normalize_url(url) or url
        if item.via != "seed" and not self.scope.contains(target):
            raise _Refused(
                "out_of_scope", f"{item.url} redirects out of the crawl's scope to {url}"
            )
        claim = self._claims.get(target)
        if claim is not None:
            raise _Refused("redirect", f"{item.url} redirects to {claim[0]}", duplicate_of=claim[0])
        rules = await self._rules(origin_of(target))
        if not rules.allows(target):
            raise _Refused(*rules.why_refused(url), url=url)

    async def _fetch(
        self,
        url: str,
        host: _Host,
        *,
        html_only: bool,
        hop_check: HopCheck | None,
        max_bytes: int | None = None,
        truncate: bool = False,
        polite: bool = True,
        retries: int | None = None,
    ) -> Fetched:
        """GET ``url`` politely, retrying 429/503 answers (see :class:`CrawlConfig`)."""
        cfg = self.cfg
        limit = cfg.retries if retries is None else retries
        attempt = 0
        while True:
            if polite:
                assert self._slots is not None
                async with host.inflight:
                    await host.turn()
                    async with self._slots:
                        result = await self._timed_fetch(
                            url, html_only, hop_check, max_bytes, truncate
                        )
            else:
                result = await self._timed_fetch(url, html_only, hop_check, max_bytes, truncate)
            if isinstance(result, Fetched):
                result.retries = attempt
                return result
            wait = max(result.retry_after or 0.0, cfg.backoff * 2**attempt)
            if attempt >= limit:
                raise _Refused(
                    "http_error",
                    f"{result.url} answered HTTP {result.status} {attempt + 1} times; gave up"
                    " (--retries)",
                    result.status,
                    result.url,
                )
            if wait > cfg.retry_cap:
                raise _Refused(
                    "http_error",
                    f"{result.url} answered HTTP {result.status} and asked to wait {wait:g} s,"
                    f" longer than the {cfg.retry_cap:g} s cap (--retry-cap)",
                    result.status,
                    result.url,
                )
            attempt += 1
            self.summary.retries += 1
            host.pause(wait)
            if not polite:
                await asyncio.sleep(wait)

    async def _timed_fetch(
        self,
        url: str,
        html_only: bool,
        hop_check: HopCheck | None,
        max_bytes: int | None,
        truncate: bool,
    ) -> Fetched | _Busy:
        t0 = time.perf_counter()
        try:
            result = await self._fetch_once(url, html_only, hop_check, max_bytes, truncate)
        finally:
            self.summary.fetch_seconds += time.perf_counter() - t0
        if isinstance(result, Fetched):
            result.seconds = time.perf_counter() - t0
        return result

    def _client(self, netloc: str) -> Any:
        """One HTTP client per host: a pooled connection then always serves the host whose
        name its TLS handshake checked (connections go to a pinned address, not a name)."""
        import httpx

        client = self._clients.get(netloc)
        if client is None:
            fetch = self.cfg.fetch
            client = self._clients[netloc] = httpx.AsyncClient(
                follow_redirects=False,
                timeout=fetch.timeout,
                trust_env=False,
                verify=fetch.verify_tls,
                limits=httpx.Limits(
                    max_connections=self.cfg.per_host + 1,
                    max_keepalive_connections=self.cfg.per_host + 1,
                ),
            )
        return client

    async def _fetch_once(
        self,
        url: str,
        html_only: bool,
        hop_check: HopCheck | None,
        max_bytes: int | None,
        truncate: bool,
    ) -> Fetched | _Busy:
        """One request with its redirects; every hop passes :func:`blockdex.fetch.check_url`
        (address policy, resolved once and pinned), then ``hop_check``; the body is refused
        on its headers when it is not HTML (``html_only``) or declares too many bytes, and
        while streaming when it grows over the cap (cut there instead when ``truncate``)."""
        limit = max_bytes or self.cfg.fetch.max_bytes
        redirects: list[str] = []
        fetched_at = _now_iso()
        try:
            return await self._hops(
                url, html_only, hop_check, limit, truncate, redirects, fetched_at
            )
        except _Refused as refused:
            refused.redirects = redirects
            raise

    async def _hops(
        self,
        url: str,
        html_only: bool,
        hop_check: HopCheck | None,
        limit: int,
        truncate: bool,
        redirects: list[str],
        fetched_at: str,
    ) -> Fetched | _Busy:
        """The hops of :meth:`_fetch_once`; ``redirects`` collects where they went."""
        import httpx

        from blockdex.fetch import (
            check_body_size,
            check_response,
            check_url,
            pinned_request,
            redirect_target,
        )

        fetch = self.cfg.fetch
        header_rules = dataclasses.replace(fetch, max_bytes=sys.maxsize if truncate else limit)
        body_rules = dataclasses.replace(fetch, max_bytes=limit)
        current = url
        try:
            async with asyncio.timeout(fetch.max_seconds):
                for hop in range(fetch.max_redirects + 1):
                    try:
                        checked, ip = await asyncio.to_thread(check_url, current, fetch)
                    except BlockdexError as exc:
                        raise _Refused(exc.kind, str(exc), url=current) from None
                    if hop and hop_check is not None:
                        await hop_check(checked)
                    request = pinned_request(checked, ip, self._headers)
                    self.summary.requests += 1
                    resp = await self._client(netloc_of(normalize_url(checked) or checked)).send(
                        request, stream=True
                    )
                    try:
                        status = resp.status_code
                        try:
                            target = redirect_target(checked, status, resp.headers)
                        except (httpx.InvalidURL, ValueError) as exc:
                            raise _Refused(
                                "fetch_error",
                                f"{checked} redirects to a malformed URL ({exc})",
                                status,
                                checked,
                            ) from None
                        if target is not None:
                            redirects.append(target)
                            current = target
                            continue
                        if status in RETRY_STATUSES:
                            wait = retry_after_seconds(resp.headers.get("retry-after"))
                            return _Busy(status, wait, checked)
                        try:
                            check_response(
                                checked, status, resp.headers, header_rules, html_only=html_only
                            )
                        except BlockdexError as exc:
                            kind = "http_error" if status >= 400 else exc.kind
                            raise _Refused(kind, str(exc), status, checked) from None
                        chunks: list[bytes] = []
                        size = 0
                        async for chunk in resp.aiter_bytes():
                            size += len(chunk)
                            if size > limit and truncate:
                                chunks.append(chunk[: len(chunk) - (size - limit)])
                                break
                            try:
                                check_body_size(checked, size, body_rules)
                            except BlockdexError as exc:
                                raise _Refused(exc.kind, str(exc), status, checked) from None
                            chunks.append(chunk)
                        body = b"".join(chunks)
                        self.summary.bytes += len(body)
                        return Fetched(
                            checked,
                            status,
                            resp.reason_phrase,
                            list(resp.headers.multi_items()),
                            body,
                            fetched_at,
                            redirects,
                        )
                    finally:
                        await resp.aclose()
                raise _Refused(
                    "fetch_error",
                    f"{url} redirected more than {fetch.max_redirects} times",
                    url=current,
                )
        except TimeoutError:
            raise _Refused(
                "fetch_error", f"{url} did not finish within {fetch.max_seconds:g} s", url=current
            ) from None
        except httpx.TimeoutException:
            raise _Refused(
                "fetch_error", f"{current} did not answer within {fetch.timeout:g} s", url=current
            ) from None
        except httpx.HTTPError as exc:
            raise _Refused(
                "fetch_error", f"could not fetch {current}: {exc}", url=current
            ) from None

    # -- sitemaps and feeds

    def _schedule_document(self, kind: str, url: str | None, *, depth: int, level: int) -> None:
        if not url or url in self._documents:
            return
        if len(self._documents) >= self.cfg.max_documents:
            return
        self._documents.add(url)
        self._spawn(self._read_document(kind, url, depth, level))

    async def _read_document(self, kind: str, url: str, depth: int, level: int) -> None:
        """Fetch and read a sitemap or feed; its URLs are recorded, then discovered."""
        event: dict[str, Any] = {"kind": kind, "url": url, "depth": depth, "level": level}
        try:
            rules = await self._rules(origin_of(url))
            if not rules.allows(url):
                raise _Refused(*rules.why_refused(url))

            async def hop_check(target: str) -> None:
                target_rules = await self._rules(origin_of(target))
                if not target_rules.allows(target):
                    raise _Refused(*target_rules.why_refused(target))

            fetched = await self._fetch(
                url, self._host(netloc_of(url)), html_only=False, hop_check=hop_check
            )
            event["status"] = fetched.status
            if kind == "sitemap":
                found = await asyncio.to_thread(
                    parse_sitemap, fetched.body, fetched.url, self.cfg.discovery
                )
                event.update(pages=list(found.pages), sitemaps=list(found.sitemaps))
            else:
                entries = await asyncio.to_thread(
                    parse_feed, fetched.body, fetched.url, self.cfg.discovery
                )
                event.update(pages=list(entries), sitemaps=[])
        except _Refused as refused:
            event.update(status=refused.status, error=refused.message, error_kind=refused.kind)
        except ValueError as exc:
            event.update(error=f"{url}: {exc}", error_kind="bad_document")
        except Exception as exc:  # as for a page: this document only
            event.update(error=_internal(exc).message, error_kind="internal")
        self.store.append_event(event)
        self._apply_document(event)

    def _apply_document(self, event: dict[str, Any]) -> None:
        if event.get("error"):
            self.summary.documents_failed += 1
            return
        self.summary.documents_read += 1
        via = f"{event['kind']}:{event['url']}"
        for url in event.get("pages") or ():
            self._discover(url, event["depth"], via)
        if event["level"] < self.cfg.max_sitemap_nesting:
            for url in event.get("sitemaps") or ():
                self._schedule_document(
                    "sitemap", url, depth=event["depth"], level=event["level"] + 1
                )

    # -- phase 4: extract

    async def _extract(self, item: _Item, fetched: Fetched) -> None:
        assert self._extract_slots is not None
        try:
            if self._pool is None:
                self._pool = ExtractionPool(self.cfg.batch_config(), crawl_page_task)
            page = PageInput(
                item.url,
                item.url,
                html=fetched.body,
                url=fetched.url,
                content_type=fetched.content_type,
            )
            record = await self._pool.run(page)
        finally:
            self._extract_slots.release()
        self._finish_page(item, fetched, record)

    # -- phase 5: record

    def _claim(self, rec: dict[str, Any], canonical: str | None, final: str | None) -> None:
        """Mark a written page's URLs — its own, its final and its canonical one — as taken."""
        url = rec["url"]
        moved = "redirect" if final != url else "same-url"
        for key, reason in ((canonical, "canonical"), (final, moved), (url, "same-url")):
            if key and key not in self._claims:
                self._claims[key] = (url, reason)
                self._seen.add(key)
        fingerprint = rec.get("simhash")
        if fingerprint:
            self._fingerprints[url] = int(fingerprint, 16)
            self._simhashes.add(int(fingerprint, 16), url)

    def _same_text(self, owner: str, fingerprint: int | None) -> bool:
        """Whether a page is plausibly the page ``owner`` by its text (unknown: trusted)."""
        known = self._fingerprints.get(owner)
        if known is None or fingerprint is None:
            return True
        return (known ^ fingerprint).bit_count() <= self.cfg.canonical_max_bits

    def _duplicate_of(
        self, url: str, canonical: str | None, final: str, fingerprint: int | None
    ) -> tuple[str, str] | None:
        """The written page this one duplicates, and how: it names the same canonical URL,
        or its URL is that page's canonical or final URL, or its text is nearly that page's."""
        claim = self._claims.get(canonical) if canonical else None
        if claim is not None and claim[0] != url:
            return claim[0], "canonical"
        claim = self._claims.get(final)
        if (
            claim is not None
            and claim[0] != url
            and (claim[1] != "canonical" or self._same_text(claim[0], fingerprint))
        ):
            return claim
        if fingerprint is not None:
            original = self._simhashes.find(fingerprint)
            if original is not None and original != url:
                return original, "near-duplicate"
        return None

    def _finish_page(self, item: _Item, fetched: Fetched, worker: dict[str, Any]) -> None:
        rec = self._record(item, fetched)
        rec.update(
            title=worker.get("title"),
            metadata=worker.get("metadata") or {},
            links=worker.get("links") or [],
            feeds=worker.get("feeds") or [],
            warnings=worker.get("warnings") or [],
            fallback=worker.get("fallback"),
            page_type=worker.get("page_type"),
            page_type_confidence=worker.get("page_type_confidence"),
            extract_ms=worker.get("time_ms"),
        )
        self.summary.extract_seconds += (worker.get("time_ms") or 0.0) / 1000
        if worker.get("error"):
            rec.update(error=worker["error"], error_kind=worker.get("error_kind") or "error")
        else:
            final = normalize_url(fetched.url) or item.url
            canonical = worker.get("canonical")
            if canonical and not self.scope.contains(canonical):
                canonical = None  # a page cannot make a page outside the crawl its original
            fingerprint = int(worker["simhash"], 16) if worker.get("simhash") else None
            claim = self._claims.get(canonical) if canonical else None
            if claim is not None and not self._same_text(claim[0], fingerprint):
                rec["warnings"].append(
                    f"the canonical link names {canonical}, whose text differs: kept as a page"
                )
                canonical = None
            original = self._duplicate_of(item.url, canonical, final, fingerprint)
            rec["canonical"] = canonical
            if original is not None:
                rec.update(duplicate_of=original[0], duplicate=original[1])
            else:
                rec.update(simhash=worker.get("simhash"), content=worker.get("content"))
                rec["file"] = self.store.write_page(canonical or final, worker.get("content") or "")
                self._claim(rec, canonical, final)
        if self.cfg.warc and 200 <= fetched.status < 300:
            rec["warc"] = self.store.write_warc(
                fetched.url,
                f"{fetched.status} {fetched.reason}".strip(),
                fetched.headers,
                fetched.body,
                fetched.fetched_at,
            )
        self._append(rec)
        self._follow(item, rec)

    def _record(self, item: _Item, fetched: Fetched | None = None) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "url": item.url,
            "final_url": None,
            "status": None,
            "depth": item.depth,
            "via": item.via,
            "title": None,
            "file": None,
            "duplicate_of": None,
            "duplicate": None,
            "canonical": None,
            "error": None,
            "error_kind": None,
            "content_type": None,
            "bytes": None,
            "retries": 0,
            "redirects": [],
            "fetched_at": None,
            "fetch_ms": None,
            "extract_ms": None,
            "metadata": {},
            "links": [],
            "feeds": [],
            "warnings": [],
            "fallback": None,
            "page_type": None,
            "page_type_confidence": None,
            "simhash": None,
        }
        if fetched is not None:
            rec.update(
                final_url=fetched.url,
                status=fetched.status,
                content_type=fetched.content_type,
                bytes=len(fetched.body),
                retries=fetched.retries,
                redirects=fetched.redirects,
                fetched_at=fetched.fetched_at,
                fetch_ms=round(fetched.seconds * 1000, 3),
            )
            self.summary.fetched += 1
        rec["content"] = None
        return rec

    def _record_refusal(self, item: _Item, refused: _Refused, fetched: bool = False) -> None:
        rec = self._record(item)
        rec.update(final_url=refused.url, status=refused.status, redirects=refused.redirects)
        if fetched:
            rec["fetched_at"] = _now_iso()
            self.summary.fetched += 1
        if refused.duplicate_of is not None:
            rec.update(duplicate_of=refused.duplicate_of, duplicate=refused.kind)
        else:
            rec.update(error=refused.message, error_kind=refused.kind)
        self._append(rec)

    def _append(self, rec: dict[str, Any]) -> None:
        self.store.append_record(rec)
        self._count(rec)
        if self._bar is not None:
            self._bar.update(1)
            self._bar.set_postfix(
                errors=sum(self.summary.errors.values()),
                duplicates=self.summary.duplicates,
                queue=self._queued,
                refresh=False,
            )

    def _count(self, rec: dict[str, Any]) -> None:
        self.summary.pages += 1
        if rec.get("error"):
            self.summary.errors[rec.get("error_kind") or "error"] += 1
        elif rec.get("duplicate_of"):
            self.summary.duplicates += 1
        elif rec.get("file"):
            self.summary.written += 1


# --------------------------------------------------------------------------------------------
# Entry points


def read_url_list(path: str) -> list[str]:
    """The URLs of a ``-i`` file: one a line; blank lines and ``#`` comments skipped."""
    try:
        with open(path, encoding="utf-8-sig") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        raise BlockdexError(f"cannot read {path}: no such file") from None
    except IsADirectoryError:
        raise BlockdexError(f"cannot read {path}: it is a directory") from None
    except PermissionError:
        raise BlockdexError(f"cannot read {path}: permission denied") from None
    except UnicodeDecodeError:
        raise BlockdexError(f"cannot read {path}: not UTF-8 text (one URL a line)") from None
    except OSError as exc:
        raise BlockdexError(f"cannot read {path}: {exc.strerror or exc}") from None
    return [s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#")]


def normalize_seeds(urls: Sequence[str], what: str = "seed") -> list[str]:
    """Seeds in their normalised spelling; an unusable one is refused by name."""
    out = []
    for raw in urls:
        url = normalize_url(raw)
        if url is None:
            raise BlockdexError(
                f"{what} {raw!r} is not an http:// or https:// URL"
                " (without a user name or password)"
            )
        out.append(url)
    return dedupe(out)


def run_crawl(
    seeds: Sequence[str],
    out_dir: str | Path,
    cfg: CrawlConfig | None = None,
    *,
    resume: bool = False,
    progress: bool = True,
) -> CrawlSummary:
    """Crawl from ``seeds`` (and ``cfg.feeds``) into ``out_dir``; return the summary."""
    cfg = cfg or CrawlConfig()
    seeds = normalize_seeds(seeds)
    cfg = dataclasses.replace(cfg, feeds=tuple(normalize_seeds(cfg.feeds, "feed")))
    if not seeds and not cfg.feeds:
        raise BlockdexError("nothing to crawl: give seed URLs, -i FILE or --feed URL")
    cfg.check()
    store = CrawlStore(
        out_dir, cfg.manifest(seeds), resume=resume, output=cfg.options.format, warc=cfg.warc
    )
    crawler = Crawler(seeds, store, cfg, progress=progress)
    return asyncio.run(crawler.run())


def cmd_crawl(args: argparse.Namespace) -> int:
    seeds = list(args.seeds)
    if args.input:
        seeds += read_url_list(args.input)
    fetch = FetchConfig(
        timeout=args.timeout,
        max_seconds=max(args.timeout, CrawlConfig().fetch.max_seconds),
        max_bytes=args.max_bytes,
        user_agent=args.user_agent,
        allow_private=args.allow_private,
        allowed_networks=tuple(args.allow_network or ()),
    )
    cfg = CrawlConfig(
        depth=args.depth,
        max_pages=args.max_pages,
        scope=args.scope,
        include=tuple(args.include or ()),
        exclude=tuple(args.exclude or ()),
        sitemaps=not args.no_sitemaps,
        feeds=tuple(args.feed or ()),
        discover_feeds=args.feeds,
        per_host=args.per_host,
        delay=args.delay,
        concurrency=args.concurrency,
        retries=args.retries,
        retry_cap=args.retry_cap,
        options=ExtractOptions.from_args(args),
        jobs=args.jobs,
        page_timeout=args.page_timeout,
        warc=args.warc,
        fetch=fetch,
    )
    summary = run_crawl(seeds, args.out, cfg, resume=args.resume, progress=not args.quiet)
    print(f"blockdex crawl: {summary.describe()} -> {args.out}", file=sys.stderr)
    return 0


EPILOG = """\
output (in --out DIR):
  <host>/<path>.md   one file per page, mirroring its URL (index.md for a path ending in /)
  pages.jsonl        one record per URL: url, final_url, status, title, metadata, content,
                     links, fetched_at, file, duplicate_of, error, error_kind …
  _SUMMARY.json      counts, times, and each host's politeness settings
  pages.warc.gz      with --warc: the fetched HTML, for 'blockdex batch pages.warc.gz'

politeness: robots.txt is obeyed for the user agent's product token ('blockdex'), with its
Crawl-delay; at most --per-host requests in flight per host, --delay seconds between their
starts; 429/503 answers are retried after Retry-After with backoff (--retries, --retry-cap);
responses that are not HTML are dropped on their headers.

safety: every request and every redirect hop is refused when it goes to a private, loopback,
link-local or cloud-metadata address (--allow-private lifts all but metadata), over
--max-bytes or over the time limits. Refused URLs are recorded with the reason.

examples:
  blockdex crawl https://docs.example.org/ --out docs-md/
  blockdex crawl https://example.org/blog/ --scope prefix --depth 2 --out blog/ --warc
  blockdex crawl -i urls.txt --depth 0 --out pages/ --format json
  blockdex crawl --feed https://example.org/feed.xml --out news/ --no-comments
  blockdex crawl https://docs.example.org/ --out docs-md/ --resume    after a crash or kill
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    defaults = CrawlConfig()
    p = subparsers.add_parser(
        "crawl",
        help="crawl a site (seeds, sitemaps, feeds) into one Markdown file per page",
        description=(
            "Crawl from seed URLs: fetch each page politely and safely, extract its main\n"
            "content (or what answers --query) to one file per page, follow its links within\n"
            "the scope, read the site's sitemaps and feeds. Every URL dealt with ends as one\n"
            "record in pages.jsonl: the page, a duplicate of another, or an error and why."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("seeds", nargs="*", metavar="SEED", help="http(s) URLs to start from")
    p.add_argument(
        "-i", "--input", metavar="FILE", help="read more seed URLs from FILE, one a line"
    )
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="output directory")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted crawl in DIR (same seeds and settings): pages recorded"
        " are not fetched again",
    )
    g = p.add_argument_group("what to crawl")
    g.add_argument(
        "--depth",
        type=int,
        default=defaults.depth,
        metavar="N",
        help=f"link hops followed from a seed; 0 = only the seeds; sitemap entries are one hop"
        f" (default {defaults.depth})",
    )
    g.add_argument(
        "--max-pages",
        type=int,
        default=defaults.max_pages,
        metavar="N",
        help=f"fetch at most N pages, over resumed runs too; 0 = no limit"
        f" (default {defaults.max_pages})",
    )
    g.add_argument(
        "--scope",
        choices=SCOPES,
        default=defaults.scope,
        help="links followed: 'host' = a seed's host and port, 'domain' = any host of a seed's"
        " domain, 'prefix' = a seed's host below its directory (default: host)",
    )
    g.add_argument(
        "--include",
        action="append",
        metavar="GLOB",
        help="follow only URLs matching this glob, e.g. '*/docs/*' (repeatable)",
    )
    g.add_argument(
        "--exclude",
        action="append",
        metavar="GLOB",
        help="never follow URLs matching this glob, e.g. '*/tag/*' (repeatable)",
    )
    g.add_argument(
        "--no-sitemaps",
        action="store_true",
        help="do not read robots.txt Sitemap: lines and /sitemap.xml",
    )
    g.add_argument(
        "--feed",
        action="append",
        metavar="URL",
        help="an RSS/Atom feed whose entries are crawled like seeds (repeatable)",
    )
    g.add_argument(
        "--feeds",
        action="store_true",
        help="also read the feeds pages announce with <link rel=alternate>",
    )
    g = p.add_argument_group("what to keep (as in 'blockdex extract')")
    add_option_arguments(
        g,
        help={
            "format": "format of each page's file: markdown (.md), text, html or json"
            " (default markdown)"
        },
    )
    g.add_argument(
        "--warc",
        action="store_true",
        help="also write the fetched HTML responses to DIR/pages.warc.gz (needs blockdex[batch])",
    )
    g = p.add_argument_group("politeness")
    g.add_argument(
        "--per-host",
        type=int,
        default=defaults.per_host,
        metavar="N",
        help=f"requests in flight to one host at most (default {defaults.per_host})",
    )
    g.add_argument(
        "--delay",
        type=float,
        default=defaults.delay,
        metavar="S",
        help=f"seconds between the starts of two requests to one host; a longer robots.txt"
        f" Crawl-delay wins (default {defaults.delay:g})",
    )
    g.add_argument(
        "--concurrency",
        type=int,
        default=defaults.concurrency,
        metavar="N",
        help=f"requests in flight over all hosts (default {defaults.concurrency})",
    )
    g.add_argument(
        "--retries",
        type=int,
        default=defaults.retries,
        metavar="N",
        help=f"retries of a page answered 429 or 503, after its Retry-After or with doubling"
        f" waits from {defaults.backoff:g} s (default {defaults.retries})",
    )
    g.add_argument(
        "--retry-cap",
        type=float,
        default=defaults.retry_cap,
        metavar="S",
        help=f"give a page up when its server asks to wait longer than this"
        f" (default {defaults.retry_cap:g})",
    )
    g.add_argument(
        "--user-agent",
        default=defaults.fetch.user_agent,
        metavar="UA",
        help="User-Agent header; its first word is the robots.txt token"
        f" (default '{defaults.fetch.user_agent}')",
    )
    g = p.add_argument_group("safety and limits")
    g.add_argument(
        "--allow-private",
        action="store_true",
        help="let requests reach loopback, private and link-local addresses (a local or"
        " intranet site); cloud-metadata addresses stay refused",
    )
    g.add_argument(
        "--allow-network",
        action="append",
        metavar="CIDR",
        help="a network requests may reach although the address rule refuses it, e.g."
        " 10.1.2.0/24 (repeatable)",
    )
    g.add_argument(
        "--max-bytes",
        type=int,
        default=defaults.fetch.max_bytes,
        metavar="N",
        help=f"refuse pages larger than N bytes (default {defaults.fetch.max_bytes})",
    )
    g.add_argument(
        "--timeout",
        type=float,
        default=defaults.fetch.timeout,
        metavar="S",
        help=f"seconds to connect and for each read (default {defaults.fetch.timeout:g}); a whole"
        f" request, redirects included, gets at most {defaults.fetch.max_seconds:g} s",
    )
    g = p.add_argument_group("extraction workers")
    g.add_argument(
        "-j",
        "--jobs",
        type=int,
        default=defaults.jobs,
        metavar="N",
        help=f"extraction worker processes (default {defaults.jobs})",
    )
    g.add_argument(
        "--page-timeout",
        type=float,
        default=defaults.page_timeout,
        metavar="S",
        help=f"seconds one page's extraction may take (default {defaults.page_timeout:g})",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_crawl)
