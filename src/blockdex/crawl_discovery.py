"""What tells a crawler where pages are, and where it may not go.

* :class:`RobotsRules` — a site's ``robots.txt`` read as RFC 9309 says: the group of the
  crawler's product token (else ``*``), ``Allow``/``Disallow`` with ``*`` and ``$`` patterns where
  the longest matching rule wins (``Allow`` on a tie), ``Crawl-delay`` (fractions too) and the
  ``Sitemap:`` lines. (The standard library's parser has neither wildcards nor longest match.)
* :func:`page_links` — the links of a whole page (not only the kept blocks), its
  ``<link rel=canonical>`` and its ``<link rel=alternate>`` feeds.
* :func:`parse_sitemap` — sitemaps and sitemap indexes (XML, gzipped, or one URL a line).
* :func:`parse_feed` — the entries of an RSS or Atom feed.
* :func:`text_simhash` — a fingerprint of extracted text for near-duplicate pages (VSSE's
  SimHash over word shingles).
"""

from __future__ import annotations

import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from blockdex.crawl_urls import PATH_SAFE, dedupe, normalize_url, percent_encode

FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/rdf+xml"})
ROBOTS_PATH = "/robots.txt"


@dataclass(frozen=True, slots=True)
class DiscoveryConfig:
    """Bounds on what one page, sitemap or feed may add to a crawl."""

    max_links: int = 5000
    """Links kept per page; a page with more is a link farm or a giant index."""
    max_sitemap_urls: int = 50_000
    """Entries read per sitemap or feed (the sitemap protocol's own limit)."""
    max_xml_bytes: int = 64 * 1024 * 1024
    """Decompressed size of a gzipped sitemap or feed (guards against gzip bombs)."""
    simhash_min_words: int = 5
    """Pages with fewer words of text are not fingerprinted (too little to call them alike)."""
    simhash_max_shingles: int = 4000
    """Word 3-grams fingerprinted per page: the start of a long page says enough, and costs less."""


DEFAULT_DISCOVERY = DiscoveryConfig()


# --------------------------------------------------------------------------------------------
# robots.txt (RFC 9309)


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


# --------------------------------------------------------------------------------------------
# Pages


@dataclass(frozen=True, slots=True)
class PageLinks:
    links: tuple[str, ...] = ()
    """Every link of the page (``<a>``, ``<area>``, a meta refresh), absolute and normalised."""
    canonical: str | None = None
    feeds: tuple[str, ...] = ()
    """RSS/Atom feeds the page announces (``<link rel=alternate type=application/rss+xml>``)."""


def _refresh_target(content: str) -> str | None:
    """The URL of a ``<meta http-equiv=refresh content="0; url=…">``."""
    m = re.search(r"url\s*=\s*['\"]?([^'\"\s]+)", content, re.I)
    return m.group(1) if m else None


def page_links(
    html: bytes | str,
    url: str,
    content_type: str | None = None,
    config: DiscoveryConfig = DEFAULT_DISCOVERY,
) -> PageLinks:
    """The links, canonical URL and feeds of a whole page, resolved against its ``<base>``."""
    from blockdex.parse import decode_html, parse_bounded

    text = decode_html(html, content_type)[0] if isinstance(html, bytes) else html
    tree, _, _ = parse_bounded(text)
    base = url
    node = tree.css_first("base[href]")
    if node is not None:
        base = normalize_url(node.attributes.get("href") or "", url) or url
    hrefs: list[str | None] = [n.attributes.get("href") for n in tree.css("a[href], area[href]")]
    for meta in tree.css('meta[http-equiv="refresh" i][content]'):
        hrefs.append(_refresh_target(meta.attributes.get("content") or ""))
    links = dedupe(normalize_url(h, base) for h in hrefs if h)[: config.max_links]
    canonical = None
    node = tree.css_first('link[rel~="canonical" i][href]')
    if node is not None:
        canonical = normalize_url(node.attributes.get("href") or "", base)
    feeds = dedupe(
        normalize_url(n.attributes.get("href") or "", base)
        for n in tree.css('link[rel~="alternate" i][href][type]')
        if (n.attributes.get("type") or "").split(";")[0].strip().lower() in FEED_TYPES
    )
    return PageLinks(tuple(links), canonical, tuple(feeds))


# --------------------------------------------------------------------------------------------
# Sitemaps and feeds


@dataclass(frozen=True, slots=True)
class UrlList:
    """What a sitemap lists: pages, and (in a sitemap index) more sitemaps."""

    pages: tuple[str, ...] = ()
    sitemaps: tuple[str, ...] = ()


def gunzip_capped(data: bytes, max_bytes: int) -> bytes:
    """``data`` decompressed when it is gzip (else as it is), refusing more than ``max_bytes``."""
    if not data.startswith(b"\x1f\x8b"):
        return data
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, max_bytes + 1)
    except zlib.error as exc:
        raise ValueError(f"broken gzip data: {exc}") from None
    if len(out) > max_bytes:
        raise ValueError(f"more than {max_bytes:,} bytes once decompressed")
    return out


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1].lower() if isinstance(tag, str) else ""


def _xml_root(data: bytes) -> Any:
    """The root element of an XML document; entity declarations (the means of "billion laughs"
    attacks) are refused, as neither sitemaps nor feeds need them."""
    import xml.etree.ElementTree as ET

    if b"<!ENTITY" in data[:65536].upper():
        raise ValueError("the document declares XML entities; refused")
    try:
        return ET.fromstring(data)
    except ET.ParseError as exc:
        raise ValueError(f"not well-formed XML ({exc})") from None


def _looks_like_xml(data: bytes) -> bool:
    return data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<")


def parse_sitemap(
    data: bytes, base_url: str, config: DiscoveryConfig = DEFAULT_DISCOVERY
) -> UrlList:
    """The pages and child sitemaps of a sitemap (``<urlset>``), a sitemap index
    (``<sitemapindex>``), gzipped or not, or a text sitemap (one URL a line).

    Raises ValueError when ``data`` is none of these."""
    data = gunzip_capped(data, config.max_xml_bytes)
    limit = config.max_sitemap_urls
    if not _looks_like_xml(data):
        lines = data.decode("utf-8", "replace").splitlines()
        urls = dedupe(normalize_url(s, base_url) for s in lines if s.strip().startswith("http"))
        if not urls:
            raise ValueError("neither an XML sitemap nor a list of URLs")
        return UrlList(pages=tuple(urls[:limit]))
    root = _xml_root(data)
    kind = _local(root.tag)
    if kind not in ("urlset", "sitemapindex"):
        raise ValueError(f"not a sitemap (its root element is <{kind}>)")
    child = "url" if kind == "urlset" else "sitemap"
    found = dedupe(
        normalize_url((loc.text or "").strip(), base_url)
        for entry in root
        if _local(entry.tag) == child
        for loc in entry
        if _local(loc.tag) == "loc"
    )[:limit]
    return UrlList(pages=tuple(found)) if kind == "urlset" else UrlList(sitemaps=tuple(found))


def parse_feed(
    data: bytes, base_url: str, config: DiscoveryConfig = DEFAULT_DISCOVERY
) -> tuple[str, ...]:
    """The entry URLs of an RSS 2.0, RSS 1.0 (RDF) or Atom feed.

    Raises ValueError when ``data`` is not a feed."""
    data = gunzip_capped(data, config.max_xml_bytes)
    root = _xml_root(data)
    kind = _local(root.tag)
    links: list[str | None] = []
    if kind in ("rss", "rdf"):
        for item in root.iter():
            if _local(item.tag) == "item":
                for el in item:
                    if _local(el.tag) == "link" and el.text:
                        links.append(normalize_url(el.text.strip(), base_url))
    elif kind == "feed":
        for entry in root:
            if _local(entry.tag) != "entry":
                continue
            for el in entry:
                rel = el.get("rel", "alternate")
                if _local(el.tag) == "link" and rel == "alternate" and el.get("href"):
                    links.append(normalize_url(el.get("href"), base_url))
    else:
        raise ValueError(f"not an RSS or Atom feed (its root element is <{kind}>)")
    return tuple(dedupe(links)[: config.max_sitemap_urls])


# --------------------------------------------------------------------------------------------
# Near-duplicate text


_WORD = re.compile(r"\w+")


def text_simhash(text: str, config: DiscoveryConfig = DEFAULT_DISCOVERY) -> int | None:
    """VSSE's 64-bit SimHash of the text's word 3-grams (None for too short a text): pages
    whose fingerprints differ in a few bits say the same thing."""
    from blockdex.baselines.vsse import simhash

    words = _WORD.findall(text.lower())
    if len(words) < config.simhash_min_words:
        return None
    n = min(len(words) - 2, config.simhash_max_shingles)
    shingles = Counter(" ".join(words[i : i + 3]) for i in range(n))
    return simhash(dict(shingles))


class SimhashIndex:
    """Fingerprints seen so far, found again within ``max_bits`` differing bits.

    The 64 bits are cut into ``max_bits + 1`` bands; two fingerprints that differ in at most
    ``max_bits`` bits agree exactly on at least one band (pigeonhole), so a lookup compares only
    the fingerprints that share a band instead of all of them."""

    def __init__(self, max_bits: int = 3) -> None:
        self.max_bits = max_bits
        n = max_bits + 1
        width = 64 // n
        self._bands = [(i * width, 64 - i * width if i == n - 1 else width) for i in range(n)]
        self._tables: list[dict[int, list[tuple[int, str]]]] = [{} for _ in self._bands]

    def _keys(self, fingerprint: int) -> list[int]:
        return [(fingerprint >> start) & ((1 << width) - 1) for start, width in self._bands]

    def find(self, fingerprint: int) -> str | None:
        """The first page added whose fingerprint is within ``max_bits`` of this one."""
        for table, key in zip(self._tables, self._keys(fingerprint), strict=True):
            for other, page in table.get(key, ()):
                if (other ^ fingerprint).bit_count() <= self.max_bits:
                    return page
        return None

    def add(self, fingerprint: int, page: str) -> None:
        for table, key in zip(self._tables, self._keys(fingerprint), strict=True):
            table.setdefault(key, []).append((fingerprint, page))
