"""The crawl's frontier: which URLs belong to the crawl, and the URLs waiting to be fetched.

* :class:`Scope` says which URLs the crawl follows (same host, same domain, or below the seed's
  path), :class:`UrlFilter` applies the user's ``--include``/``--exclude`` globs and
  :func:`is_skipped_resource` passes over links that are never pages.
* :class:`QueuedUrl` is a URL waiting on its host's queue (:class:`blockdex.crawl.politeness.Host`).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from urllib.parse import urlsplit

SCOPES = ("host", "domain", "prefix")

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

# Second-level labels under which country-code domains register names (``example.co.uk``):
# ``--scope domain`` keeps three labels for them. A short list instead of the public-suffix list.
SECOND_LEVEL_LABELS = frozenset({"co", "com", "org", "net", "ac", "gov", "edu", "ne", "or", "go"})


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


@dataclass(slots=True)
class QueuedUrl:
    """A URL the crawl will visit: how many link hops from a seed, and how it was found."""

    url: str
    depth: int
    via: str
    """How the URL was found: ``seed``, the page linking to it, ``sitemap:URL``, ``feed:URL``."""
