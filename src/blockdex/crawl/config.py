"""What a crawl is asked to do (:class:`CrawlConfig`) and what it did (:class:`CrawlSummary`)."""

from __future__ import annotations

import ipaddress
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from blockdex.batch import BatchConfig, check_predictor
from blockdex.crawl.discovery import DEFAULT_DISCOVERY, DiscoveryConfig
from blockdex.crawl.frontier import SCOPES
from blockdex.errors import BlockdexError
from blockdex.fetch import FetchConfig
from blockdex.options import DEFAULT_OPTIONS, ExtractOptions, option_fields, spell

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
        """The settings a resumed crawl must share with the crawl it continues (an option a
        manifest lacks had its default: :func:`manifest_defaults`)."""
        settings = {
            "seeds": list(seeds),
            "feeds": list(self.feeds),
            "scope": self.scope,
            "include": list(self.include),
            "exclude": list(self.exclude),
            "depth": self.depth,
            "sitemaps": self.sitemaps,
            "discover_feeds": self.discover_feeds,
            "warc": self.warc,
        }
        for f in option_fields():  # by Python keyword ("predictor", as crawls always wrote it)
            settings[spell(f.name, "kwargs")] = getattr(self.options, f.name)
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


def manifest_defaults() -> dict[str, Any]:
    """The value of each option a crawl's manifest does not name: its default (a crawl begun
    before the option existed, or whose manifest names only the options it set)."""
    return {spell(f.name, "kwargs"): f.default for f in option_fields()}
