"""Exceptions raised by blockdex.

Every error a user can cause derives from :class:`BlockdexError` and carries a message that says
what to do. The CLI prints ``str(error)`` on one line and exits non-zero; the server maps
``http_status`` onto the response.
"""

from __future__ import annotations


class BlockdexError(Exception):
    """Base class of all blockdex errors."""

    http_status = 400
    kind = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class EmptyInput(BlockdexError):
    """The input holds no bytes, or only whitespace."""

    kind = "empty_input"


class NotHTML(BlockdexError):
    """The input is binary data or clearly not an HTML/XML document."""

    kind = "not_html"
    http_status = 415


class PageTooLarge(BlockdexError):
    """The input exceeds a configured size limit."""

    kind = "page_too_large"
    http_status = 413


class FetchError(BlockdexError):
    """A URL could not be fetched (network error, bad status, refused address)."""

    kind = "fetch_error"
    http_status = 502


class UnsafeURL(FetchError):
    """A URL points to a scheme or address that fetching is not allowed to reach."""

    kind = "unsafe_url"
    http_status = 400


class UnknownPredictor(BlockdexError):
    """A predictor name that is not registered."""

    kind = "unknown_predictor"


class UnsupportedFormat(BlockdexError):
    """An output format that blockdex cannot render."""

    kind = "unsupported_format"


class PredictorError(BlockdexError):
    """A predictor failed in a way the user can fix (missing model, unreachable server)."""

    kind = "predictor_error"
    http_status = 502


class MissingExtra(BlockdexError):
    """An optional dependency is not installed."""

    kind = "missing_extra"
    http_status = 501

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        super().__init__(
            f"{purpose} needs the optional package '{package}': pip install 'blockdex[{extra}]'"
        )
        self.package = package
        self.extra = extra
