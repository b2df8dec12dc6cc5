"""Fetching a page over HTTP(S) with a timeout, a size cap and a bounded number of redirects."""

from __future__ import annotations

from dataclasses import dataclass

from blockdex.errors import FetchError, NotHTML, PageTooLarge, UnsafeURL


@dataclass(frozen=True, slots=True)
class FetchConfig:
    """Limits for fetching pages."""

    timeout: float = 15.0
    """Seconds for connect and for each read; slow servers beyond this are given up on."""
    max_bytes: int = 16 * 1024 * 1024
    """Bodies larger than this are refused (streamed, so memory stays bounded)."""
    max_redirects: int = 5
    """Redirect hops followed before giving up."""
    user_agent: str = "blockdex/0.1 (+https://pypi.org/project/blockdex/)"


DEFAULT_FETCH = FetchConfig()
HTML_TYPES = ("text/html", "application/xhtml+xml", "application/xml", "text/xml", "text/plain")


@dataclass(frozen=True, slots=True)
class FetchedPage:
    url: str
    """The final URL after redirects."""
    body: bytes
    content_type: str | None
    status: int


def fetch_url(url: str, config: FetchConfig = DEFAULT_FETCH) -> FetchedPage:
    """GET ``url`` and return its body; raises :class:`FetchError` subclasses on failure."""
    import httpx

    if not url.lower().startswith(("http://", "https://")):
        raise UnsafeURL(f"only http:// and https:// URLs can be fetched, not {url!r}")
    headers = {"User-Agent": config.user_agent, "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"}
    try:
        with httpx.Client(
            follow_redirects=True,
            max_redirects=config.max_redirects,
            timeout=config.timeout,
            headers=headers,
        ) as client, client.stream("GET", url) as resp:
            if resp.status_code >= 400:
                raise FetchError(f"{url} answered HTTP {resp.status_code}")
            ctype = resp.headers.get("content-type")
            if ctype and not ctype.split(";")[0].strip().lower().startswith(HTML_TYPES):
                raise NotHTML(f"{url} is {ctype.split(';')[0]}, not HTML")
            declared = resp.headers.get("content-length")
            if declared and declared.isdigit() and int(declared) > config.max_bytes:
                raise PageTooLarge(f"{url} is {int(declared):,} bytes, over the {config.max_bytes:,} limit")
            chunks: list[bytes] = []
            size = 0
            for chunk in resp.iter_bytes():
                size += len(chunk)
                if size > config.max_bytes:
                    raise PageTooLarge(f"{url} is over the {config.max_bytes:,}-byte limit")
                chunks.append(chunk)
            return FetchedPage(str(resp.url), b"".join(chunks), ctype, resp.status_code)
    except httpx.TooManyRedirects:
        raise FetchError(f"{url} redirected more than {config.max_redirects} times") from None
    except httpx.TimeoutException:
        raise FetchError(f"{url} did not answer within {config.timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise FetchError(f"could not fetch {url}: {exc}") from None
