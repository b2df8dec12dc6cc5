"""URLs of a crawl: one spelling per page, which of them belong to the crawl, where each is written.

* :func:`normalize_url` gives every address of a page one spelling, so that a page is fetched
  once however the site links to it: the fragment dropped, scheme and host lower-cased, the
  default port dropped, dot segments resolved, tracking parameters (:data:`TRACKING_PARAMS`)
  removed.
* :class:`Scope` says which URLs the crawl follows (same host, same domain, or below the seed's
  path), :class:`UrlFilter` applies the user's ``--include``/``--exclude`` globs.
* :func:`url_to_path` mirrors a URL as a relative file path with safe names.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from urllib.parse import unquote, unquote_plus, urljoin, urlsplit, urlunsplit

SCOPES = ("host", "domain", "prefix")
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

# Link targets that are never a page (images, media, archives, fonts, code assets): not even
# asked for. Documents such as PDF are asked for and skipped by their content type.
SKIPPED_EXTENSIONS = frozenset(
    {
        *(".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".ico", ".bmp", ".tif", ".tiff"),
        *(".avif", ".mp3", ".wav", ".ogg", ".flac", ".m4a", ".mp4", ".m4v", ".mov", ".avi"),
        *(".mkv", ".webm", ".zip", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".tar"),
        *(".dmg", ".iso", ".exe", ".msi", ".deb", ".rpm", ".apk", ".woff", ".woff2", ".ttf"),
        *(".otf", ".eot", ".css", ".js", ".mjs", ".map"),
    }
)

# Page suffixes dropped from mirrored file names (``guide/intro.html`` → ``guide/intro.md``).
PAGE_SUFFIXES = (".html", ".htm", ".xhtml", ".shtml", ".php", ".asp", ".aspx", ".jsp")

# Second-level labels under which country-code domains register names (``example.co.uk``):
# ``--scope domain`` keeps three labels for them. A short list instead of the public-suffix list.
SECOND_LEVEL_LABELS = frozenset({"co", "com", "org", "net", "ac", "gov", "edu", "ne", "or", "go"})

_UNRESERVED_ESCAPE = re.compile(r"%(2[dDeE]|5[fF]|7[eE]|3\d|[46][1-9a-fA-F]|[57][0-9aA])")
_ANY_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")
_URL_WHITESPACE = re.compile(r"[\t\n\r]")
PATH_SAFE = "/%!$&'()*+,;=:@-._~"
QUERY_SAFE = PATH_SAFE + "?"
_UNSAFE_NAME = re.compile(r"[^\w.\-]+")
MAX_NAME_BYTES = 100
"""Longest file or directory name written (bytes of UTF-8); longer ones are cut and hashed."""


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
    from urllib.parse import quote

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


def site_domain(host: str) -> str:
    """The registered domain of ``host`` as far as a short rule knows it: the last two labels,
    three under a country's second level (``example.co.uk``); an IP address is its own domain."""
    host = host.strip("[]").lower()
    try:
        ipaddress.ip_address(host)
        return host
    except ValueError:
        pass
    labels = host.split(".")
    if len(labels) >= 3 and labels[-2] in SECOND_LEVEL_LABELS and len(labels[-1]) == 2:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def _prefix_of(url: str) -> tuple[str, str]:
    """``(netloc, path prefix)`` of a seed for ``--scope prefix``: its directory
    (``/docs/intro.html`` → ``/docs/``), or the path itself when its last segment has no dot
    (``/docs`` covers ``/docs`` and ``/docs/…``)."""
    parts = urlsplit(url)
    path = parts.path or "/"
    last = path.rsplit("/", 1)[-1]
    if last and "." in last:
        path = path[: len(path) - len(last)]
    return parts.netloc, path


@dataclass(slots=True)
class Scope:
    """Which URLs a crawl follows, decided from its roots (the seeds, and where they redirect).

    ``host``: the same host and port as a root; ``domain``: any host of a root's domain
    (``docs.example.org`` and ``www.example.org`` for a root on ``example.org``); ``prefix``: the
    same host, below a root's directory."""

    mode: str = "host"
    roots: list[str] = field(default_factory=list)
    _netlocs: set[str] = field(default_factory=set, repr=False)
    _domains: set[str] = field(default_factory=set, repr=False)
    _prefixes: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in SCOPES:
            raise ValueError(f"unknown scope {self.mode!r}; choose one of {', '.join(SCOPES)}")
        roots, self.roots = self.roots, []
        for root in roots:
            self.add_root(root)

    def add_root(self, url: str) -> None:
        if url in self.roots:
            return
        self.roots.append(url)
        parts = urlsplit(url)
        self._netlocs.add(parts.netloc)
        self._domains.add(site_domain(parts.hostname or ""))
        self._prefixes.add(_prefix_of(url))

    def contains(self, url: str) -> bool:
        parts = urlsplit(url)
        if self.mode == "host":
            return parts.netloc in self._netlocs
        if self.mode == "domain":
            host = (parts.hostname or "").lower()
            return any(host == d or host.endswith("." + d) for d in self._domains)
        path = parts.path or "/"
        return any(
            parts.netloc == netloc
            and (path.startswith(prefix) or path == prefix.rstrip("/") or prefix in ("", "/"))
            for netloc, prefix in self._prefixes
        )


@dataclass(frozen=True, slots=True)
class UrlFilter:
    """``--include``/``--exclude`` globs matched against the whole normalised URL: a URL is
    followed when it matches an include glob (or none are given) and no exclude glob."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def accepts(self, url: str) -> bool:
        if self.include and not any(fnmatchcase(url, g) for g in self.include):
            return False
        return not any(fnmatchcase(url, g) for g in self.exclude)


def is_skipped_resource(url: str) -> bool:
    """True for links to images, media, archives and code assets (never pages)."""
    path = urlsplit(url).path.lower()
    dot = path.rfind(".")
    return dot > path.rfind("/") and path[dot:] in SKIPPED_EXTENSIONS


def _short_hash(text: str, n: int = 10) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:n]


def safe_name(name: str) -> str:
    """A file or directory name that is safe on common file systems: word characters, ``.``,
    ``-`` and ``_`` only, no leading dot, at most :data:`MAX_NAME_BYTES` bytes."""
    cleaned = _UNSAFE_NAME.sub("_", name).strip()
    if cleaned.startswith("."):
        cleaned = "_" + cleaned[1:]
    if not cleaned:
        return "_"
    if len(cleaned.encode("utf-8")) > MAX_NAME_BYTES:
        cut = cleaned
        while len(cut.encode("utf-8")) > MAX_NAME_BYTES - 11:
            cut = cut[:-1]
        cleaned = f"{cut}-{_short_hash(name)}"
    return cleaned


def url_to_path(url: str, suffix: str = ".md") -> str:
    """The relative file path that mirrors ``url``: ``host[_port]/dir/…/name{suffix}``.

    A path ending in ``/`` is written as ``index``; page suffixes (``.html``, ``.php`` …) are
    dropped; a query string adds a short hash of itself to the name, so that ``list?page=2`` and
    ``list?page=3`` are two files."""
    parts = urlsplit(url)
    segments = [unquote(s) for s in (parts.path or "/").split("/")[1:]]
    *dirs, last = segments or [""]
    lower = last.lower()
    for page_suffix in PAGE_SUFFIXES:
        if lower.endswith(page_suffix) and len(last) > len(page_suffix):
            last = last[: -len(page_suffix)]
            break
    if not last:
        last = "index"
    if parts.query:
        last = f"{last}_{_short_hash(parts.query)}"
    names = [safe_name(parts.netloc.replace(":", "_"))]
    names += [safe_name(d) for d in dirs if d]
    names.append(safe_name(last) + suffix)
    return "/".join(names)


def unique_path(path: str, url: str) -> str:
    """``path`` made distinct for ``url`` when another URL already claimed it."""
    stem, dot, ext = path.rpartition(".")
    return f"{stem}-{_short_hash(url, 8)}{dot}{ext}" if dot else f"{path}-{_short_hash(url, 8)}"


def dedupe(urls: Iterable[str | None]) -> list[str]:
    """The URLs without None and without repeats, in their first order."""
    return list(dict.fromkeys(u for u in urls if u))
