"""``blockdex blocks``: a page's numbered blocks, as a model reads them."""

from __future__ import annotations

import argparse
import json
import sys

from blockdex.cli.common import add_input_arguments, extract_config, write_output
from blockdex.extract import Extractor
from blockdex.inputs import read_input

NAME = "blocks"
HELP = "print the numbered blocks of a page, as a model reads them"
DESCRIPTION = None


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_arguments(p)
    p.add_argument("--json", action="store_true", help="print blocks as JSON with tag paths")


def run_command(args: argparse.Namespace) -> int:
    data, url, ctype = read_input(args.source, max_bytes=args.max_bytes)
    page = Extractor(config=extract_config(args)).segment(data, url=url, content_type=ctype)
    if args.json:
        rows = [
            {
                "index": b.index,
                "tag": b.tag,
                "text": b.text,
                "path": b.path,
                "split": b.split,
                "source": b.source,
            }
            for b in page.blocks
        ]
        record = {"title": page.title, "warnings": list(page.warnings), "blocks": rows}
        out = json.dumps(record, ensure_ascii=False, indent=1) + "\n"
    else:
        out = page.tagged_text() + "\n"
        for warning in page.warnings:
            print(f"blockdex: warning: {warning}", file=sys.stderr)
    write_output(out, args.out)
    return 0
