"""Fetching a page over HTTP(S) safely: checked addresses, pinned connections, bounded everything.

A server that fetches URLs on behalf of callers can be turned against its own network (SSRF):
``http://169.254.169.254/`` reads cloud credentials, ``http://127.0.0.1:6379/`` talks to a local
database, and a public host can redirect, or re-resolve its DNS name, to either. So every hop:

1. accepts only ``http``/``https`` URLs without credentials;
2. resolves the host once and refuses it when *any* of its addresses is loopback, private,
   link-local, multicast, reserved or a cloud-metadata endpoint (see :data:`BLOCKED_NETWORKS`
   and :data:`METADATA_NETWORKS`), unless the operator allow-listed it;
3. connects to the address that was checked (the URL's host is replaced by the IP, the ``Host``
   header and TLS SNI/certificate name stay the original host), so a second DNS answer cannot
   swap in another address (DNS rebinding);
4. follows redirects by hand, at most ``max_redirects``, re-checking each new URL;
5. sends no cookies or credentials, ignores proxy environment variables, and streams the body
   under a size cap and an overall deadline.
"""

from __future__ import annotations

import ipaddress
import socket
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from blockdex.errors import FetchError, NotHTML, PageTooLarge, UnsafeURL

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True, slots=True)
class FetchConfig:
    """Limits and address policy for fetching pages."""

    timeout: float = 15.0
    """Seconds for connect and for each read; slow servers beyond this are given up on."""
    max_seconds: float = 30.0
    """Deadline for the whole fetch (all hops, whole body): a server dribbling bytes cannot hold it."""
    max_bytes: int = 16 * 1024 * 1024
    """Bodies larger than this are refused (streamed, so memory stays bounded)."""
    max_redirects: int = 5
    """Redirect hops followed before giving up; each hop's address is checked again."""
    user_agent: str = "blockdex/0.1 (+https://pypi.org/project/blockdex/)"
    allow_private: bool = False
    """Reach loopback/private/link-local/reserved addresses (local testing, intranet use).
    Cloud-metadata addresses stay refused unless listed in ``allowed_networks``."""
    allowed_networks: tuple[str, ...] = ()
    """CIDRs or addresses (``10.1.2.0/24``, ``::1``) reachable even though the policy blocks them."""
    verify_tls: bool = True
    """Check HTTPS certificates against the URL's host name."""


DEFAULT_FETCH = FetchConfig()
HTML_TYPES = ("text/html", "application/xhtml+xml", "application/xml", "text/xml", "text/plain")
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})

# Special-purpose ranges (IANA registries) that a public web page never lives at, with the
# reason shown to the user. Python's ipaddress flags disagree between versions on some of these
# (224/4 or 192.0.0.0/24 count as "global" in 3.11), so the table is explicit.
BLOCKED_NETWORKS: tuple[tuple[str, str], ...] = (
    ("0.0.0.0/8", "unspecified"),
    ("10.0.0.0/8", "private"),
    ("100.64.0.0/10", "shared (carrier-grade NAT)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link-local"),
    ("172.16.0.0/12", "private"),
    ("192.0.0.0/24", "reserved (IETF protocol assignments)"),
    ("192.0.2.0/24", "reserved (documentation)"),
    ("192.88.99.0/24", "reserved (6to4 relay)"),
    ("192.168.0.0/16", "private"),
    ("198.18.0.0/15", "reserved (benchmarking)"),
    ("198.51.100.0/24", "reserved (documentation)"),
    ("203.0.113.0/24", "reserved (documentation)"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),
    ("::/128", "unspecified"),
    ("::1/128", "loopback"),
    ("::/96", "reserved (IPv4-compatible)"),
    ("64:ff9b:1::/48", "reserved (local NAT64)"),
    ("100::/64", "reserved (discard)"),
    ("2001::/23", "reserved (IETF protocol assignments)"),
    ("2001:db8::/32", "reserved (documentation)"),
    ("fc00::/7", "private (unique local)"),
    ("fe80::/10", "link-local"),
    ("fec0::/10", "reserved (site-local)"),
    ("ff00::/8", "multicast"),
)

# Instance-metadata endpoints of cloud providers: credentials live there, so these stay refused
# even with ``allow_private`` (only an explicit ``allowed_networks`` entry opens them).
METADATA_NETWORKS: tuple[tuple[str, str], ...] = (
    ("169.254.169.254/32", "cloud metadata (AWS, GCP, Azure, OpenStack)"),
    ("169.254.170.2/32", "cloud metadata (AWS ECS task credentials)"),
    ("169.254.169.253/32", "cloud metadata (AWS DNS)"),
    ("100.100.100.200/32", "cloud metadata (Alibaba Cloud)"),
    ("192.0.0.192/32", "cloud metadata (Oracle Cloud)"),
    ("fd00:ec2::254/128", "cloud metadata (AWS IPv6)"),
)
METADATA_HOSTNAMES = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.azure.com",
    }
)


def _networks(table: Iterable[tuple[str, str]]) -> tuple[tuple[IPNetwork, str], ...]:
    return tuple((ipaddress.ip_network(cidr), why) for cidr, why in table)


_BLOCKED = _networks(BLOCKED_NETWORKS)
_METADATA = _networks(METADATA_NETWORKS)


@dataclass(frozen=True, slots=True)
class FetchedPage:
    url: str
    """The final URL after redirects."""
    body: bytes
    content_type: str | None
    status: int


def _embedded_ipv4(ip: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address tunnels to (mapped, NAT64, 6to4, Teredo), if any."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return None
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in ipaddress.ip_network("64:ff9b::/96"):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _allow_list(config: FetchConfig) -> tuple[IPNetwork, ...]:
    try:
        return tuple(ipaddress.ip_network(n, strict=False) for n in config.allowed_networks)
    except ValueError as exc:
        raise UnsafeURL(f"bad allowed network in the fetch configuration: {exc}") from None


def address_refusal(ip: IPAddress, config: FetchConfig = DEFAULT_FETCH) -> str | None:
    """Why fetching from ``ip`` is refused under ``config``, or None when it is allowed."""
    if any(ip in net for net in _allow_list(config) if net.version == ip.version):
        return None
    inner = _embedded_ipv4(ip)
    if inner is not None:
        why = address_refusal(inner, config)
        return f"{why} (tunnelled in IPv6)" if why else None
    for net, why in _METADATA:
        if ip.version == net.version and ip in net:
            return why
    if config.allow_private:
        return None
    for net, why in _BLOCKED:
        if ip.version == net.version and ip in net:
            return why
    if not ip.is_global:
        return "not a public address"
    return None


def check_url(url: str, config: FetchConfig = DEFAULT_FETCH) -> tuple[str, IPAddress]:
    """Validate ``url`` and resolve its host; return ``(url, address to connect to)``.

    Raises :class:`UnsafeURL` when the scheme, credentials or any resolved address is refused,
    and :class:`FetchError` when the host does not resolve.
    """
    import httpx

    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError) as exc:
        raise UnsafeURL(f"not a valid URL: {url!r} ({exc})") from None
    if parsed.scheme not in ("http", "https"):
        raise UnsafeURL(f"only http:// and https:// URLs can be fetched, not {url!r}")
    if parsed.userinfo:
        raise UnsafeURL(
            "URLs with a user name or password are not fetched; remove the 'user@' part"
        )
    host = parsed.raw_host.decode("ascii").strip("[]").rstrip(".").lower()
    if not host:
        raise UnsafeURL(f"the URL {url!r} has no host")
    allowed = _allow_list(config)
    if host in METADATA_HOSTNAMES and not allowed:
        raise UnsafeURL(f"{host} is a cloud-metadata host name; fetching it is not allowed")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchError(f"cannot resolve the host {host!r}: {exc}") from None
    addresses: list[IPAddress] = []
    for info in infos:
        ip = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if ip not in addresses:
            addresses.append(ip)
    if not addresses:
        raise FetchError(f"the host {host!r} has no address")
    for ip in addresses:
        why = address_refusal(ip, config)
        if why:
            shown = host if host == str(ip) else f"{host} ({ip})"
            hint = (
                "only an explicitly allow-listed network (--allow-network) opens it"
                if why.startswith("cloud metadata")
                else "a server started with --allow-private (or --allow-network) may reach it"
            )
            raise UnsafeURL(f"refusing to fetch {shown}: {why} address; {hint}")
    return str(parsed), addresses[0]


def pinned_request(url: str, ip: IPAddress, headers: dict[str, str]):
    """A GET for ``url`` that connects to ``ip`` while naming the original host (Host, SNI)."""
    import httpx

    parsed = httpx.URL(url)
    host_header = parsed.raw_host.decode("ascii")
    if ":" in host_header:
        host_header = f"[{host_header}]"
    if parsed.port is not None:
        host_header = f"{host_header}:{parsed.port}"
    pinned = parsed.copy_with(host=str(ip))
    return httpx.Request(
        "GET",
        pinned,
        headers={**headers, "Host": host_header},
        extensions={"sni_hostname": parsed.raw_host.decode("ascii").strip("[]")},
    )


def fetch_url(url: str, config: FetchConfig = DEFAULT_FETCH) -> FetchedPage:
    """GET ``url`` under ``config``'s address policy and limits; return the body.

    Raises :class:`UnsafeURL` for refused URLs/addresses (also on redirect hops),
    :class:`PageTooLarge`, :class:`NotHTML`, or :class:`FetchError` for other failures.
    """
    import httpx

    headers = {
        "User-Agent": config.user_agent,
        "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
    }
    deadline = time.monotonic() + config.max_seconds
    current = url
    try:
        with httpx.Client(
            follow_redirects=False,
            timeout=config.timeout,
            trust_env=False,
            verify=config.verify_tls,
        ) as client:
            for _hop in range(config.max_redirects + 1):
                checked, ip = check_url(current, config)
                request = pinned_request(checked, ip, headers)
                resp = client.send(request, stream=True)
                try:
                    target = redirect_target(checked, resp.status_code, resp.headers)
                    if target is not None:
                        current = target
                        if time.monotonic() > deadline:
                            raise FetchError(
                                f"{url} did not finish within {config.max_seconds:g} s"
                            )
                        continue
                    return _read_body(resp, checked, config, deadline)
                finally:
                    resp.close()
            raise FetchError(f"{url} redirected more than {config.max_redirects} times")
    except httpx.TimeoutException:
        raise FetchError(f"{url} did not answer within {config.timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise FetchError(f"could not fetch {url}: {exc}") from None


def redirect_target(url: str, status: int, headers: Mapping[str, str]) -> str | None:
    """The absolute URL a response redirects to (``None`` when it is not a redirect)."""
    import httpx

    location = headers.get("location")
    if status in REDIRECT_STATUSES and location:
        return str(httpx.URL(url).join(location))
    return None


def check_response(
    url: str,
    status: int,
    headers: Mapping[str, str],
    config: FetchConfig = DEFAULT_FETCH,
    *,
    html_only: bool = True,
) -> None:
    """Refuse a response from its headers alone, before its body is read: an error status,
    a type that is not HTML (when ``html_only``), a declared length over ``max_bytes``."""
    if status >= 400:
        raise FetchError(f"{url} answered HTTP {status}")
    ctype = headers.get("content-type")
    if html_only and ctype and not ctype.split(";")[0].strip().lower().startswith(HTML_TYPES):
        raise NotHTML(f"{url} is {ctype.split(';')[0]}, not HTML")
    declared = headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > config.max_bytes:
        raise PageTooLarge(
            f"{url} is {int(declared):,} bytes, over the {config.max_bytes:,}-byte limit"
        )


def check_body_size(url: str, size: int, config: FetchConfig = DEFAULT_FETCH) -> None:
    """Refuse a body once ``size`` bytes of it have arrived and that is over ``max_bytes``."""
    if size > config.max_bytes:
        raise PageTooLarge(f"{url} is over the {config.max_bytes:,}-byte limit")


def _read_body(resp, url: str, config: FetchConfig, deadline: float) -> FetchedPage:
    """Check status and type, then stream the body under the size cap and the deadline."""
    check_response(url, resp.status_code, resp.headers, config)
    ctype = resp.headers.get("content-type")
    chunks: list[bytes] = []
    size = 0
    for chunk in resp.iter_bytes():
        size += len(chunk)
        check_body_size(url, size, config)
        if time.monotonic() > deadline:
            raise FetchError(f"{url} did not finish within {config.max_seconds:g} s")
        chunks.append(chunk)
    return FetchedPage(url, b"".join(chunks), ctype, resp.status_code)
