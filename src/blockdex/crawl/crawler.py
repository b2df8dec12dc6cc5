"""The crawl engine: :class:`Crawler` runs one crawl as five phases, each a method of it.

1. **Discover** (:meth:`Crawler._discover`) — a URL found in a page, a sitemap or a feed is
   normalised (:func:`blockdex.urls.normalize_url`), kept when it is in the crawl's scope
   (:mod:`blockdex.crawl.frontier`), passes the ``--include``/``--exclude`` globs and is within
   ``--depth`` link hops of a seed, and queued once on its host's queue.
2. **Be polite** (:meth:`Crawler._visit`, :mod:`blockdex.crawl.politeness`) — robots.txt is read
   once per site and obeyed; each host gets at most ``--per-host`` requests in flight and
   ``--delay`` (or its ``Crawl-delay``) between request starts.
3. **Fetch safely** (:class:`blockdex.crawl.fetching.Fetcher`) — every hop, each redirect
   included, goes through :mod:`blockdex.fetch`'s rules; 429 and 503 answers are retried.
4. **Extract** (:meth:`Crawler._extract`, :mod:`blockdex.crawl.worker`) — worker processes
   extract each page and take its links and canonical URL from that one parse, and a SimHash
   of its text; the fetcher never waits for them.
5. **Record** (:meth:`Crawler._finish_page`) — a page whose canonical URL, redirect target or
   near-identical text (:class:`blockdex.crawl.simhash.SimhashIndex`) is already written is
   recorded as a duplicate; any other is written (:class:`blockdex.crawl.store.CrawlStore`),
   and its record — with its links — appended to ``pages.jsonl`` in one write, which is what
   makes ``--resume`` exact.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from blockdex.batch import PageInput
from blockdex.crawl.config import CrawlConfig, CrawlSummary, manifest_defaults
from blockdex.crawl.discovery import parse_feed, parse_sitemap
from blockdex.crawl.fetching import Fetched, Fetcher, Refused, internal_error, now_iso
from blockdex.crawl.frontier import QueuedUrl, Scope, UrlFilter, is_skipped_resource
from blockdex.crawl.politeness import Host, RobotsRules
from blockdex.crawl.simhash import SimhashIndex
from blockdex.crawl.store import CrawlStore
from blockdex.crawl.worker import ExtractionPool, crawl_page_task
from blockdex.errors import BlockdexError
from blockdex.urls import dedupe, netloc_of, normalize_url, origin_of


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
        self.fetcher = Fetcher(cfg, self.summary)
        self._seen: set[str] = set()
        self._claims: dict[str, tuple[str, str]] = {}
        self._fingerprints: dict[str, int] = {}
        self._simhashes = SimhashIndex(cfg.near_duplicate_bits)
        self._hosts: dict[str, Host] = {}
        self._robots: dict[str, asyncio.Future[RobotsRules]] = {}
        self._sitemap_origins: set[str] = set()
        self._documents: set[str] = set()
        self._queued = 0
        self._budget: int | None = None
        self._active: set[asyncio.Task[Any]] = set()
        self._fatal: BaseException | None = None
        self._pool: ExtractionPool | None = None
        self._extract_slots: asyncio.Semaphore | None = None
        self._idle: asyncio.Event | None = None
        self._bar: Any = None

    # -- running

    async def run(self) -> CrawlSummary:
        self._idle = asyncio.Event()
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
            await self.fetcher.aclose()
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
                self.store.write_summary(
                    {"user_agent": self.cfg.fetch.user_agent, **self.summary.to_json()}
                )
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
            self._follow(QueuedUrl(rec["url"], rec.get("depth", 0), rec.get("via", "")), rec)
        for event in events:
            self._apply_document(event)

    def _discover_seed(self, url: str) -> None:
        if url not in self._seen:
            self._seen.add(url)
            self._enqueue(QueuedUrl(url, 0, "seed"))

    def _discover(self, url: str, depth: int, via: str) -> None:
        if url in self._seen or depth > self.cfg.depth:
            return
        if not self.scope.contains(url) or not self.filter.accepts(url):
            return
        if is_skipped_resource(url):
            return
        self._seen.add(url)
        self._enqueue(QueuedUrl(url, depth, via))

    def _follow(self, item: QueuedUrl, rec: dict[str, Any]) -> None:
        """Queue what a page links to, and the feeds it announces when asked to."""
        if item.depth >= self.cfg.depth:
            return
        for link in rec.get("links") or ():
            self._discover(link, item.depth + 1, item.url)
        if self.cfg.discover_feeds:
            for feed in rec.get("feeds") or ():
                if self.scope.contains(feed):
                    self._schedule_document("feed", feed, depth=item.depth + 1, level=0)

    def _enqueue(self, item: QueuedUrl) -> None:
        host = self._host(netloc_of(item.url))
        host.queue.append(item)
        self._queued += 1
        self._wake(host)

    def _host(self, netloc: str) -> Host:
        host = self._hosts.get(netloc)
        if host is None:
            host = self._hosts[netloc] = Host(netloc, self.cfg.per_host, self.cfg.delay)
        return host

    def _wake(self, host: Host) -> None:
        while host.lanes < min(self.cfg.per_host, len(host.queue)) and self._has_budget():
            host.lanes += 1
            self._spawn(self._lane(host))

    def _has_budget(self) -> bool:
        return self._budget is None or self._budget > 0

    async def _lane(self, host: Host) -> None:
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
            fetched = await self.fetcher.fetch(
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
            refused = exc if isinstance(exc, Refused) else internal_error(exc)
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
            rules = RobotsRules.parse(text, self.cfg.fetch.user_agent, base_url=fetched.url)
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

    async def _visit(self, item: QueuedUrl, host: Host) -> bool:
        """Fetch one queued URL and hand its page to extraction, or record why not.
        False when the page budget is spent (the URL goes back to the queue)."""
        claim = self._claims.get(item.url)
        if claim is not None:
            self._record_refusal(
                item, Refused(claim[1], f"{item.url} is {claim[0]}", duplicate_of=claim[0])
            )
            return True
        origin = origin_of(item.url)
        rules = await self._rules(origin)
        if self.scope.contains(item.url):
            self._start_sitemaps(origin, rules)
        if not rules.allows(item.url):
            self._record_refusal(item, Refused(*rules.why_refused(item.url)))
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
            fetched = await self.fetcher.fetch(item.url, host, html_only=True, hop_check=hop_check)
        except Refused as refused:
            self._record_refusal(item, refused, fetched=True)
            return True
        except Exception as exc:  # a bug or a failure nobody foresaw: this page only
            self._record_refusal(item, internal_error(exc), fetched=True)
            return True
        if item.via == "seed":
            final = normalize_url(fetched.url)
            if final:
                self.scope.add_root(final)
        assert self._extract_slots is not None
        await self._extract_slots.acquire()
        self._spawn(self._extract(item, fetched))
        return True

    async def _page_hop(self, item: QueuedUrl, url: str) -> None:
        """A page's redirect may go where a link may: in scope (seeds excepted: where a seed
        redirects becomes part of the scope), allowed by robots.txt, not to a page written."""
        target = normalize_url(url) or url
        if item.via != "seed" and not self.scope.contains(target):
            raise Refused("out_of_scope", f"{item.url} redirects out of the crawl's scope to {url}")
        claim = self._claims.get(target)
        if claim is not None:
            raise Refused("redirect", f"{item.url} redirects to {claim[0]}", duplicate_of=claim[0])
        rules = await self._rules(origin_of(target))
        if not rules.allows(target):
            raise Refused(*rules.why_refused(url), url=url)

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
                raise Refused(*rules.why_refused(url))

            async def hop_check(target: str) -> None:
                target_rules = await self._rules(origin_of(target))
                if not target_rules.allows(target):
                    raise Refused(*target_rules.why_refused(target))

            fetched = await self.fetcher.fetch(
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
        except Refused as refused:
            event.update(status=refused.status, error=refused.message, error_kind=refused.kind)
        except ValueError as exc:
            event.update(error=f"{url}: {exc}", error_kind="bad_document")
        except Exception as exc:  # as for a page: this document only
            event.update(error=internal_error(exc).message, error_kind="internal")
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

    async def _extract(self, item: QueuedUrl, fetched: Fetched) -> None:
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

    def _finish_page(self, item: QueuedUrl, fetched: Fetched, worker: dict[str, Any]) -> None:
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

    def _record(self, item: QueuedUrl, fetched: Fetched | None = None) -> dict[str, Any]:
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

    def _record_refusal(self, item: QueuedUrl, refused: Refused, fetched: bool = False) -> None:
        rec = self._record(item)
        rec.update(final_url=refused.url, status=refused.status, redirects=refused.redirects)
        if fetched:
            rec["fetched_at"] = now_iso()
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
        out_dir,
        cfg.manifest(seeds),
        resume=resume,
        output=cfg.options.format,
        warc=cfg.warc,
        defaults=manifest_defaults(),
    )
    crawler = Crawler(seeds, store, cfg, progress=progress)
    return asyncio.run(crawler.run())
