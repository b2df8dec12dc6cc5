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


# -- how a message names a setting, and the check every config's minimums share ----------------

SETTING_OPTIONS = {
    "ParseLimits.max_input_bytes": "--max-bytes",
    "ParseLimits.max_dom_nodes": "--max-nodes",
    "ParseLimits.max_depth": "--max-depth",
    "ExtractConfig.time_budget_s": "--time-budget",
}
"""The command-line option that sets each setting (``blockdex extract``, ``blocks``,
``explain``): a warning or an error about a limit names it beside the Python setting."""


def setting_name(setting: str) -> str:
    """How a message names ``setting`` (``ParseLimits.max_dom_nodes``): with its command-line
    option, when it has one (``--max-nodes or ParseLimits.max_dom_nodes``)."""
    flag = SETTING_OPTIONS.get(setting)
    return f"{flag} or {setting}" if flag else setting


def check_minimums(config: object, minimums: dict[str, float]) -> None:
    """Raise ValueError naming the first field of ``config`` below its minimum (each config
    dataclass checks its own fields with this when it is made)."""
    for name, least in minimums.items():
        value = getattr(config, name)
        if not value >= least:  # (NaN too)
            raise ValueError(
                f"{type(config).__name__}.{name} must be at least {least:g}, not {value}"
            )
