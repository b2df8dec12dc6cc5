"""One page from where a user names it: a local file, an http(s) URL or standard input, with
errors a user can act on."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from blockdex.errors import BlockdexError, EmptyInput, PageTooLarge
from blockdex.fetch import DEFAULT_FETCH, FetchConfig, fetch_url


def read_file(
    path: str | os.PathLike[str], max_bytes: int | None = None, expected: str = "an HTML file"
) -> bytes:
    """The bytes of a local file, or an error a user can act on: why it cannot be read, what
    to give instead of a directory (``expected``), that it is over ``max_bytes``."""
    path = Path(path)
    try:
        if path.is_dir():
            raise BlockdexError(f"cannot read {path}: it is a directory; give {expected}")
        if max_bytes is not None and (size := path.stat().st_size) > max_bytes:
            raise PageTooLarge(f"{path} is {size:,} bytes, over the {max_bytes:,}-byte limit")
        return path.read_bytes()
    except FileNotFoundError:
        raise BlockdexError(f"cannot read {path}: no such file") from None
    except PermissionError:
        raise BlockdexError(f"cannot read {path}: permission denied") from None
    except OSError as exc:
        raise BlockdexError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_input(
    source: str, *, max_bytes: int | None = None
) -> tuple[bytes, str | None, str | None]:
    """Bytes of a file, URL or ``-`` (stdin); returns ``(data, url, content_type)``."""
    if source == "-":
        data = sys.stdin.buffer.read()
        if not data:
            raise EmptyInput("standard input is empty: pipe an HTML page into blockdex")
        return data, None, None
    if source.lower().startswith(("http://", "https://")):
        # A user fetches a page they name on their own behalf, so local and intranet hosts are
        # reachable; only the server keeps the SSRF policy that refuses them.
        cfg = FetchConfig(
            max_bytes=DEFAULT_FETCH.max_bytes if max_bytes is None else max_bytes,
            allow_private=True,
        )
        page = fetch_url(source, cfg)
        return page.body, page.url, page.content_type
    return read_file(source, expected="an HTML file (use 'blockdex batch' for many)"), None, None
