"""What several commands share: reading one page (a file, a URL or standard input), writing
the result, and the pipeline limits (``--max-bytes`` …) a command that reads a page offers."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from blockdex.errors import BlockdexError, EmptyInput
from blockdex.extract import ExtractConfig
from blockdex.options import SETTING_OPTIONS
from blockdex.parse import DEFAULT_LIMITS


def read_file(path: str, expected: str = "a file") -> bytes:
    """The bytes of a file named on the command line; an error a user can act on when it
    cannot be read (``expected`` says what to give instead of a directory)."""
    try:
        if Path(path).is_dir():
            raise BlockdexError(f"cannot read {path}: it is a directory; give {expected}")
        return Path(path).read_bytes()
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
        from blockdex.fetch import DEFAULT_FETCH, FetchConfig, fetch_url

        # The CLI fetches on its user's own behalf, so local and intranet hosts are reachable;
        # only the server keeps the SSRF policy that refuses them.
        cfg = FetchConfig(
            max_bytes=DEFAULT_FETCH.max_bytes if max_bytes is None else max_bytes,
            allow_private=True,
        )
        page = fetch_url(source, cfg)
        return page.body, page.url, page.content_type
    return read_file(source, "an HTML file (use 'blockdex batch' for many)"), None, None


def write_output(text: str, out: str | None) -> None:
    """``text`` to the file ``out``, or to standard output."""
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


LIMIT_HELP = {
    "max_input_bytes": "refuse inputs larger than N bytes"
    f" (default {DEFAULT_LIMITS.max_input_bytes:,}: {DEFAULT_LIMITS.max_input_bytes >> 20} MiB)",
    "max_dom_nodes": "parse at most N elements; the rest of the page is cut, with a warning"
    f" (default {DEFAULT_LIMITS.max_dom_nodes:,})",
    "max_depth": "flatten elements nested deeper than N, with a warning"
    f" (default {DEFAULT_LIMITS.max_depth:,})",
}
"""The parse limits a command that reads one page offers (its flag: :data:`SETTING_OPTIONS`)."""
LIMIT_OPTIONS = tuple((SETTING_OPTIONS[f"ParseLimits.{name}"], name) for name in LIMIT_HELP)


def add_input_arguments(p: argparse.ArgumentParser) -> None:
    """The page to read (``FILE|URL|-``), ``--out`` and the pipeline's limits."""
    p.add_argument(
        "source", metavar="FILE|URL|-", help="an HTML file, an http(s) URL, or - for standard input"
    )
    p.add_argument(
        "-o", "--out", metavar="FILE", help="write the result here instead of standard output"
    )
    for flag, name in LIMIT_OPTIONS:
        p.add_argument(flag, type=int, default=None, metavar="N", help=LIMIT_HELP[name])
    p.add_argument(
        SETTING_OPTIONS["ExtractConfig.time_budget_s"],
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop segmenting a page after this long and use the blocks found so far,"
        f" with a warning (default {ExtractConfig().time_budget_s:g}; 0 = no budget)",
    )


def extract_config(args: argparse.Namespace) -> ExtractConfig:
    """The ExtractConfig the command-line limits ask for (defaults where none is given)."""
    limits = {}
    for flag, name in LIMIT_OPTIONS:
        value = getattr(args, flag[2:].replace("-", "_"))
        if value is not None:
            if value < 1:
                raise BlockdexError(f"{flag} must be at least 1, not {value}")
            limits[name] = value
    config = ExtractConfig(parse=dataclasses.replace(DEFAULT_LIMITS, **limits))
    budget = args.time_budget
    if budget is not None:
        if budget < 0:
            raise BlockdexError(f"--time-budget must be 0 (no budget) or more, not {budget}")
        config = dataclasses.replace(config, time_budget_s=budget or None)
    return config


Setting = tuple[str, str, str | None, str]
"""A command's setting as a row: its flags (``"-j --jobs"``), the field of the command's config
that holds its default (``fetch.timeout``: a field of a field), its metavar and its help."""


def add_settings(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    defaults: object,
    rows: tuple[Setting, ...],
) -> None:
    """Add each setting as an option with its config field's type and default; its help ends
    with the default."""
    for flags, path, metavar, text in rows:
        value = defaults
        for name in path.split("."):
            value = getattr(value, name)
        shown = f"{value:g}" if isinstance(value, float) else value
        parser.add_argument(
            *flags.split(),
            type=type(value),
            default=value,
            metavar=metavar,
            help=f"{text} (default {shown})",
        )


def add_run_arguments(p: argparse.ArgumentParser, *, resume: str) -> None:
    """``--out DIR`` (required), ``--resume`` and ``--quiet`` of a command that writes a
    directory of results (``blockdex batch``, ``blockdex crawl``)."""
    p.add_argument("-o", "--out", required=True, metavar="DIR", help="output directory")
    p.add_argument("--resume", action="store_true", help=resume)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
