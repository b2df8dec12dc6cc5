"""Politeness: what a site allows a crawler, and how often it may be asked.

* :class:`RobotsRules` — a site's ``robots.txt`` read as RFC 9309 says: the group of the
  crawler's product token (else ``*``), ``Allow``/``Disallow`` with ``*`` and ``$`` patterns where
  the longest matching rule wins (``Allow`` on a tie), ``Crawl-delay`` (fractions too) and the
  ``Sitemap:`` lines. (The standard library's parser has neither wildcards nor longest match.)
* :class:`Host` — one host's queue, its requests in flight and its request clock (``--delay``,
  or a longer ``Crawl-delay``; a 429/503 answer pauses it).
* :func:`retry_after_seconds` — how long a ``Retry-After`` header asks to wait.
"""

from __future__ import annotations

import asyncio
import email.utils
import re
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC
from urllib.parse import urlsplit

from blockdex.crawl.frontier import QueuedUrl
from blockdex.urls import PATH_SAFE, dedupe, normalize_url, percent_encode

ROBOTS_PATH = "/robots.txt"


@dataclass(frozen=True, slots=True)
class RobotsRule:
    allow: bool
    pattern: str
    regex: re.Pattern[str]


def _rule_regex(pattern: str) -> re.Pattern[str]:
    """``*`` matches any characters, a final ``$`` anchors the end; the rest is literal."""
    anchored = pattern.endswith("$")
    body = pattern[:-1] if anchored else pattern
    regex = ".*".join(re.escape(part) for part in body.split("*"))
    return re.compile(regex + ("$" if anchored else ""))


def _encode_pattern(pattern: str) -> str:
    """A rule's path written the way normalised URLs write paths (percent-encoded)."""
    return percent_encode(pattern, PATH_SAFE + "?*$")


def agent_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against: ``blockdex/0.1 (…)`` → ``blockdex``."""
    return user_agent.strip().split("/", 1)[0].split()[0].lower() if user_agent.strip() else "*"


@dataclass(slots=True)
class _Group:
    agents: list[str] = field(default_factory=list)
    rules: list[tuple[bool, str]] = field(default_factory=list)
    delay: float | None = None


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """The rules of one origin's robots.txt for one user agent."""

    rules: tuple[RobotsRule, ...] = ()
    delay: float | None = None
    """``Crawl-delay`` of the matching group, in seconds."""
    sitemaps: tuple[str, ...] = ()
    refusal: str | None = None
    """When set, nothing may be fetched, for this reason (robots.txt unreachable)."""
    refusal_kind: str = "robots_unreachable"
    """The error kind of URLs refused by ``refusal``."""
    status: str = "ok"
    """``ok`` (rules read), ``none`` (no robots.txt: everything allowed) or ``unreachable``."""

    @classmethod
    def allow_all(cls) -> RobotsRules:
        return cls(status="none")

    @classmethod
    def disallow_all(cls, reason: str, kind: str = "robots_unreachable") -> RobotsRules:
        return cls(refusal=reason, refusal_kind=kind, status="unreachable")

    @classmethod
    def parse(cls, text: str, user_agent: str, base_url: str | None = None) -> RobotsRules:
        groups: list[_Group] = []
        sitemaps: list[str] = []
        current: _Group | None = None
        in_agents = False
        for raw in text.splitlines():
            line = raw.split("#", 1)[0].strip()
            if ":" not in line:
                continue
            key, value = (s.strip() for s in line.split(":", 1))
            key = key.lower()
            if key == "user-agent":
                if current is None or not in_agents:
                    current = _Group()
                    groups.append(current)
                current.agents.append(value.split("/", 1)[0].strip().lower())
                in_agents = True
                continue
            if key == "sitemap":
                url = normalize_url(value, base_url)
                if url:
                    sitemaps.append(url)
                continue
            in_agents = False
            if current is None:
                continue
            if key in ("allow", "disallow") and value:
                current.rules.append((key == "allow", value))
            elif key == "crawl-delay":
                try:
                    delay = float(value)
                except ValueError:
                    continue
                if delay >= 0 and delay == delay:  # not NaN
                    current.delay = delay
        token = agent_token(user_agent)
        chosen = [g for g in groups if token in g.agents] or [g for g in groups if "*" in g.agents]
        rules = tuple(
            RobotsRule(allow, pattern, _rule_regex(_encode_pattern(pattern)))
            for g in chosen
            for allow, pattern in g.rules
        )
        delays = [g.delay for g in chosen if g.delay is not None]
        return cls(rules, max(delays) if delays else None, tuple(dedupe(sitemaps)))

    def allows(self, url: str) -> bool:
        if self.refusal is not None:
            return False
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        if parts.path == ROBOTS_PATH:
            return True
        best: tuple[int, bool] | None = None
        for rule in self.rules:
            if rule.regex.match(target):
                key = (len(rule.pattern), rule.allow)
                if best is None or key > best:
                    best = key
        return best is None or best[1]

    def why_refused(self, url: str) -> tuple[str, str]:
        """``(error kind, message)`` for a URL :meth:`allows` refuses."""
        if self.refusal is not None:
            return self.refusal_kind, self.refusal
        return "robots_disallowed", f"{url} is disallowed by its site's robots.txt"


class Host:
    """One host's queue and politeness: its lanes, its in-flight limit, its request clock."""

    def __init__(self, netloc: str, per_host: int, delay: float) -> None:
        self.netloc = netloc
        self.queue: deque[QueuedUrl] = deque()
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
