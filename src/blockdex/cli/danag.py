"""``blockdex danag``: DANAg on one page, with its content/code line diagram (the method itself:
:mod:`blockdex.baselines.danag`)."""

from __future__ import annotations

import argparse
import sys

from blockdex.baselines.danag import DEFAULT_DANAG, DanagBaseline, DanagConfig, plot
from blockdex.cli.common import Setting, add_input_arguments, add_settings, write_output
from blockdex.inputs import read_input
from blockdex.options import FORMATS
from blockdex.parse import decode_html

NAME = "danag"
HELP = "DANAg main content, optionally with its content/code line diagram (--plot)"
DESCRIPTION = (
    "Run DANAg (Mohammadzadeh et al. 2011) on one page: per source line, content "
    "minus code characters, smoothed; the strongest positive region is the content."
)
SETTINGS: tuple[Setting, ...] = (
    ("--max-gap", "N", "bridge up to N non-content lines"),
    ("--window", "W", "smoothing neighbours per side"),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_arguments(p)
    p.add_argument("--plot", metavar="PNG", help="draw the raw and smoothed diagrams here")
    p.add_argument(
        "-f", "--format", choices=FORMATS, default="markdown", help="output format (markdown)"
    )
    add_settings(p, DEFAULT_DANAG, SETTINGS)


def run_command(args: argparse.Namespace) -> int:
    data, url, _ = read_input(args.source, max_bytes=args.max_bytes)
    html, _ = decode_html(data)
    cfg = DanagConfig(max_gap=args.max_gap, window=args.window)
    result = DanagBaseline(cfg).run(html, url=url)
    if args.plot:
        path = plot(html, args.plot, cfg)
        print(f"blockdex: diagram written to {path}", file=sys.stderr)
    write_output(result.render(args.format, url=url, method="danag"), args.out)
    return 0
