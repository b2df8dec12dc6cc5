"""What tells a crawler where pages are, beside the pages' own links (which the extraction
reads from its parse: :func:`blockdex.urls.read_page_links`).

* :func:`parse_sitemap` — sitemaps and sitemap indexes (XML, gzipped, or one URL a line).
* :func:`parse_feed` — the entries of an RSS or Atom feed.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass
from typing import Any

from blockdex.urls import dedupe, normalize_url


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
