"""Fetching safely: every request of a crawl, each redirect hop included, goes through
:mod:`blockdex.fetch`'s rules — the address check (private, loopback, link-local and metadata
addresses refused unless ``--allow-private``), the pinned connection, the size cap and the time
limits; a response that is not HTML is dropped on its headers, before its body. 429 and 503
answers are retried after their ``Retry-After`` with exponential backoff, up to ``--retries``
times and never waiting longer than ``--retry-cap``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from blockdex.crawl.config import CrawlConfig, CrawlSummary
from blockdex.crawl.politeness import Host, retry_after_seconds
from blockdex.errors import BlockdexError
from blockdex.fetch import (
    check_body_size,
    check_response,
    check_url,
    pinned_request,
    redirect_target,
)
from blockdex.urls import netloc_of, normalize_url

RETRY_STATUSES = frozenset({429, 503})
HopCheck = Callable[[str], Awaitable[None]]
"""A check of each redirect hop's target; raises :class:`Refused` to stop there."""


class Refused(Exception):
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


def internal_error(exc: Exception) -> Refused:
    return Refused("internal", f"internal error: {type(exc).__name__}: {exc}")


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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
class Busy:
    """A 429/503 answer: retry later."""

    status: int
    retry_after: float | None
    url: str


class Fetcher:
    """The crawl's HTTP side: one client per host, ``--concurrency`` requests in flight over all
    hosts, and the counts of what was asked and read (``summary``)."""

    def __init__(self, cfg: CrawlConfig, summary: CrawlSummary) -> None:
        self.cfg = cfg
        self.summary = summary
        self.headers = {
            "User-Agent": cfg.fetch.user_agent,
            "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
        }
        self._clients: dict[str, Any] = {}
        self._slots = asyncio.Semaphore(cfg.concurrency)

    async def aclose(self) -> None:
        for client in self._clients.values():
            await client.aclose()

    async def fetch(
        self,
        url: str,
        host: Host,
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
                async with host.inflight:
                    await host.turn()
                    async with self._slots:
                        result = await self._fetch_once(
                            url, html_only, hop_check, max_bytes, truncate
                        )
            else:
                result = await self._fetch_once(url, html_only, hop_check, max_bytes, truncate)
            if isinstance(result, Fetched):
                result.retries = attempt
                return result
            wait = max(result.retry_after or 0.0, cfg.backoff * 2**attempt)
            if attempt >= limit:
                raise Refused(
                    "http_error",
                    f"{result.url} answered HTTP {result.status} {attempt + 1} times; gave up"
                    " (--retries)",
                    result.status,
                    result.url,
                )
            if wait > cfg.retry_cap:
                raise Refused(
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

    def _client(self, netloc: str) -> Any:
        """One HTTP client per host: a pooled connection then always serves the host whose
        name its TLS handshake checked (connections go to a pinned address, not a name)."""
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
    ) -> Fetched | Busy:
        """One request with its redirects; every hop passes :func:`blockdex.fetch.check_url`
        (address policy, resolved once and pinned), then ``hop_check``; the body is refused
        on its headers when it is not HTML (``html_only``) or declares too many bytes, and
        while streaming when it grows over the cap (cut there instead when ``truncate``)."""
        t0 = time.perf_counter()
        limit = max_bytes or self.cfg.fetch.max_bytes
        redirects: list[str] = []
        fetched_at = now_iso()
        try:
            result = await self._hops(
                url, html_only, hop_check, limit, truncate, redirects, fetched_at
            )
        except Refused as refused:
            refused.redirects = redirects
            raise
        finally:
            self.summary.fetch_seconds += time.perf_counter() - t0
        if isinstance(result, Fetched):
            result.seconds = time.perf_counter() - t0
        return result

    async def _hops(
        self,
        url: str,
        html_only: bool,
        hop_check: HopCheck | None,
        limit: int,
        truncate: bool,
        redirects: list[str],
        fetched_at: str,
    ) -> Fetched | Busy:
        """The hops of :meth:`_fetch_once`; ``redirects`` collects where they went."""
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
                        raise Refused(exc.kind, str(exc), url=current) from None
                    if hop and hop_check is not None:
                        await hop_check(checked)
                    request = pinned_request(checked, ip, self.headers)
                    self.summary.requests += 1
                    resp = await self._client(netloc_of(normalize_url(checked) or checked)).send(
                        request, stream=True
                    )
                    try:
                        status = resp.status_code
                        try:
                            target = redirect_target(checked, status, resp.headers)
                        except (httpx.InvalidURL, ValueError) as exc:
                            raise Refused(
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
                            return Busy(status, wait, checked)
                        try:
                            check_response(
                                checked, status, resp.headers, header_rules, html_only=html_only
                            )
                        except BlockdexError as exc:
                            kind = "http_error" if status >= 400 else exc.kind
                            raise Refused(kind, str(exc), status, checked) from None
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
                                raise Refused(exc.kind, str(exc), status, checked) from None
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
                raise Refused(
                    "fetch_error",
                    f"{url} redirected more than {fetch.max_redirects} times",
                    url=current,
                )
        except TimeoutError:
            raise Refused(
                "fetch_error", f"{url} did not finish within {fetch.max_seconds:g} s", url=current
            ) from None
        except httpx.TimeoutException:
            raise Refused(
                "fetch_error", f"{current} did not answer within {fetch.timeout:g} s", url=current
            ) from None
        except httpx.HTTPError as exc:
            raise Refused("fetch_error", f"could not fetch {current}: {exc}", url=current) from None
