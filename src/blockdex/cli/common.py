"""What several commands share: the page to read and where to write the result, the pipeline
limits (``--max-bytes`` …) a command that reads a page offers, and settings declared as rows.
(Reading the page itself: :mod:`blockdex.inputs`.)"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from blockdex.errors import SETTING_OPTIONS, BlockdexError
from blockdex.extract import ExtractConfig
from blockdex.parse import DEFAULT_LIMITS


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


Setting = tuple[str, str, str]
"""A command's setting as a row: its flags (``"-j --jobs"``), its metavar and its help."""


def add_settings(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    defaults: object,
    rows: tuple[Setting, ...],
    fields: dict[str, str] | None = None,
) -> None:
    """Add each setting as an option with the type and default of its field in ``defaults``
    (the field its long flag names, or ``fields[flag]``); its help ends with the default."""
    for flags, metavar, text in rows:
        flag = flags.split()[-1]
        value = getattr(defaults, (fields or {}).get(flag, flag[2:].replace("-", "_")))
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


def report(command: str, summary: Any, out: str) -> int:
    """Say on stderr what ``blockdex COMMAND`` did (``summary.describe()``) and where it wrote."""
    print(f"blockdex {command}: {summary.describe()} -> {out}", file=sys.stderr)
    return 0
