"""``blockdex explain``: a page's blocks, kept and dropped, as a standalone HTML report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from blockdex.explain import explain_page, render_report
from blockdex.inputs import read_input
from blockdex.options import ExtractOptions, add_option_arguments

NAME = "explain"
HELP = "write an HTML report showing which blocks were kept or dropped, and why"
DESCRIPTION = (
    "Run a method on a page and write the block-explorer view as a standalone HTML file: "
    "the page's blocks in order, kept ones green and dropped ones red, each with index, "
    "tag and score, next to the Markdown result."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "source", metavar="FILE|URL|-", help="an HTML file, an http(s) URL, or - for standard input"
    )
    add_option_arguments(
        p,
        only=("query", "method"),
        help={
            "query": "explain query-relevant extraction for this question",
            "method": "predictor or classic method to explain ('blockdex methods' lists them)",
        },
    )
    p.add_argument("--url", help="the page's URL, when reading a file")
    p.add_argument(
        "-o", "--out", metavar="FILE", help="write the report here (default: standard output)"
    )


def run_command(args: argparse.Namespace) -> int:
    data, url, ctype = read_input(args.source)
    options = ExtractOptions.from_args(args)
    explanation = explain_page(data, options, url=args.url or url, content_type=ctype)
    report = render_report(explanation, source=args.source)
    if args.out:
        Path(args.out).write_text(report, encoding="utf-8")
    else:
        sys.stdout.write(report)
    return 0
