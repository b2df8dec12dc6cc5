"""URLs: one spelling per address, and what a parsed page links to.

* :func:`normalize_url` gives every address of a page one spelling, so that a page is fetched
  once however the site links to it: the fragment dropped, scheme and host lower-cased, the
  default port dropped, dot segments resolved, tracking parameters (:data:`TRACKING_PARAMS`)
  removed.
* :func:`read_page_links` reads a parsed page's links, its canonical URL (the one rule of
  :func:`blockdex.parse.read_metadata`) and the feeds it announces, in that spelling: what a
  crawler follows (:mod:`blockdex.crawl`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase
from urllib.parse import quote, unquote_plus, urljoin, urlsplit, urlunsplit

from blockdex.parse import Document

DEFAULT_PORTS = {"http": 80, "https": 443}

# Query parameters that only say where a visitor came from (campaign and click identifiers):
# the page is the same without them. Globs, matched case-insensitively against the name.
TRACKING_PARAMS: tuple[str, ...] = (
    "utm_*",  # Google Analytics campaign tags (utm_source, utm_medium, utm_campaign …)
    "fbclid",  # Facebook click id
    "gclid",  # Google Ads click ids
    "gbraid",
    "wbraid",
    "dclid",  # Google Display click id
    "msclkid",  # Microsoft Ads click id
    "yclid",  # Yandex click id
    "twclid",  # X/Twitter click id
    "igshid",  # Instagram share id
    "mc_cid",  # Mailchimp campaign and member ids
    "mc_eid",
    "_ga",  # Google Analytics cross-domain linker
    "_gl",
    "_hsenc",  # HubSpot
    "_hsmi",
    "mkt_tok",  # Marketo
    "vero_id",  # Vero
    "oly_anon_id",  # Omeda
    "oly_enc_id",
)

_UNRESERVED_ESCAPE = re.compile(r"%(2[dDeE]|5[fF]|7[eE]|3\d|[46][1-9a-fA-F]|[57][0-9aA])")
_ANY_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")
_URL_WHITESPACE = re.compile(r"[\t\n\r]")
PATH_SAFE = "/%!$&'()*+,;=:@-._~"
QUERY_SAFE = PATH_SAFE + "?"


def _remove_dot_segments(path: str) -> str:
    """RFC 3986 §5.2.4 for an absolute path: ``/a/./b/../c`` → ``/a/c``, ``/a/b/..`` → ``/a/``."""
    if "." not in path:
        return path
    segments = path.split("/")[1:]
    out: list[str] = []
    for seg in segments:
        if seg == "..":
            if out:
                out.pop()
        elif seg != ".":
            out.append(seg)
    if segments and segments[-1] in (".", ".."):
        out.append("")
    return "/" + "/".join(out)


def percent_encode(part: str, safe: str) -> str:
    """Percent-encode what must be (spaces, non-ASCII), keep existing escapes, upper-case their
    hex digits and decode the escapes of unreserved characters (``%7E`` → ``~``)."""
    part = quote(part, safe=safe)
    part = _ANY_ESCAPE.sub(lambda m: m.group(0).upper(), part)
    return _UNRESERVED_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), part)


def _is_tracking(name: str) -> bool:
    key = unquote_plus(name).lower()
    return any(fnmatchcase(key, pattern) for pattern in TRACKING_PARAMS)


def _strip_tracking(query: str) -> str:
    kept = [p for p in query.split("&") if p and not _is_tracking(p.split("=", 1)[0])]
    return "&".join(kept)


def normalize_url(url: str, base: str | None = None) -> str | None:
    """The one spelling of ``url`` (resolved against ``base``), or None when it is not an
    ``http``/``https`` URL a crawler can fetch (``mailto:``, ``javascript:``, a bad port, a
    user name in the address)."""
    url = _URL_WHITESPACE.sub("", url.strip())
    if not url:
        return None
    try:
        if base:
            url = urljoin(base, url)
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or "@" in parts.netloc:
        return None
    host = (parts.hostname or "").rstrip(".")
    if not host:
        return None
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            return None
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or port == DEFAULT_PORTS[scheme] else f"{host}:{port}"
    path = percent_encode(_remove_dot_segments(parts.path or "/"), PATH_SAFE)
    query = percent_encode(_strip_tracking(parts.query), QUERY_SAFE)
    return urlunsplit((scheme, netloc, path, query, ""))


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of a normalised URL (where its robots.txt lives)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def netloc_of(url: str) -> str:
    """``host[:port]`` of a normalised URL: the unit of politeness (one queue, one delay)."""
    return urlsplit(url).netloc


def dedupe(urls: Iterable[str | None]) -> list[str]:
    """The URLs without None and without repeats, in their first order."""
    return list(dict.fromkeys(u for u in urls if u))


# --------------------------------------------------------------------------------------------
# What a page links to

FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/rdf+xml"})
_REFRESH_URL = re.compile(r"url\s*=\s*['\"]?([^'\"\s]+)", re.I)


@dataclass(frozen=True, slots=True)
class PageLinks:
    """What a page links to, absolute and in :func:`normalize_url`'s spelling."""

    links: tuple[str, ...] = ()
    """Every link of the page (``<a>``, ``<area>``, a meta refresh), in page order, once each."""
    canonical: str | None = None
    """The page's canonical URL: its metadata's ``canonical`` (``<link rel=canonical>``, else
    ``og:url``: :func:`blockdex.parse.read_metadata`)."""
    feeds: tuple[str, ...] = ()
    """RSS/Atom feeds the page announces (``<link rel=alternate type=application/rss+xml>``)."""


def read_page_links(doc: Document, url: str | None) -> PageLinks:
    """The links, canonical URL and feeds of a whole parsed page (before cleaning drops any of
    its elements), resolved against its ``<base href>`` and ``url``."""
    tree = doc.tree
    base = normalize_url(doc.meta.get("base_url") or "", url) or url
    hrefs: list[str | None] = [n.attributes.get("href") for n in tree.css("a[href], area[href]")]
    for meta in tree.css('meta[http-equiv="refresh" i][content]'):
        found = _REFRESH_URL.search(meta.attributes.get("content") or "")
        hrefs.append(found.group(1) if found else None)
    canonical = normalize_url(doc.meta.get("canonical") or "", base)
    feeds = (
        normalize_url(n.attributes.get("href") or "", base)
        for n in tree.css('link[rel~="alternate" i][href][type]')
        if (n.attributes.get("type") or "").split(";")[0].strip().lower() in FEED_TYPES
    )
    links = (normalize_url(h, base) for h in hrefs if h)
    return PageLinks(tuple(dedupe(links)), canonical, tuple(dedupe(feeds)))
