"""``blockdex batch``: many pages to JSONL/Parquet parts (the runner itself: :mod:`blockdex.batch`)."""

from __future__ import annotations

import argparse
import sys

from blockdex.batch import WRITE_FORMATS, BatchConfig, run_batch
from blockdex.cli.common import Setting, add_run_arguments, add_settings
from blockdex.options import ExtractOptions, add_option_arguments

NAME = "batch"
HELP = "extract many pages (HTML files, JSONL, WARC) into JSONL/Parquet parts"
DESCRIPTION = (
    "Extract every page of the inputs with a pool of worker processes. Each input page "
    "yields exactly one record in OUT: the result, or an error record saying why it "
    "failed. Parts are written atomically; --resume continues an interrupted run."
)
EPILOG = """\
inputs:
  a directory           every *.html/*.htm file below it (recursive)
  a glob ('a/**/*.htm') the matching files
  *.jsonl[.gz]          one JSON object per line with 'html' (and 'id', 'url')
  *.warc[.gz]           the HTML response records

examples:
  blockdex batch crawl/ --out out/ --jobs 2
  blockdex batch CC-MAIN-*.warc.gz --out out/ --write parquet
  blockdex batch pages.jsonl.gz --out out/ --query 'pricing' --resume
"""
WORKERS: tuple[Setting, ...] = (
    ("-j --jobs", "jobs", "N", "worker processes (the machine's cores)"),
    ("--timeout", "page_timeout", "S", "seconds allowed per page"),
    ("--memory-mb", "memory_limit_mb", "MB", "address-space limit per worker"),
    ("--part-size", "part_size", "N", "pages per output part"),
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    defaults = BatchConfig()
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="directories, files or globs")
    add_run_arguments(p, resume="continue an interrupted run in OUT (same inputs and settings)")
    p.add_argument(
        "--write",
        choices=WRITE_FORMATS,
        default=defaults.write,
        help=f"file format of the parts (default {defaults.write})",
    )
    add_option_arguments(p)
    add_settings(p, defaults, WORKERS)
    p.add_argument("--blocks", action="store_true", help="store the kept blocks in each record")


def run_command(args: argparse.Namespace) -> int:
    cfg = BatchConfig(
        jobs=args.jobs,
        page_timeout=args.timeout,
        memory_limit_mb=args.memory_mb,
        part_size=args.part_size,
        write=args.write,
        include_blocks=args.blocks,
        options=ExtractOptions.from_args(args),
    )
    summary = run_batch(args.inputs, args.out, cfg, resume=args.resume, progress=not args.quiet)
    print(f"blockdex batch: {summary.describe()} -> {args.out}", file=sys.stderr)
    return 0
