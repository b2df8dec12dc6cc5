"""``blockdex batch``: many pages to JSONL/Parquet parts (the runner itself: :mod:`blockdex.batch`)."""

from __future__ import annotations

import argparse

from blockdex.batch import WRITE_FORMATS, BatchConfig, run_batch
from blockdex.cli.common import Setting, add_run_arguments, add_settings, report
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
    ("-j --jobs", "N", "worker processes (the machine's cores)"),
    ("--timeout", "S", "seconds allowed per page"),
    ("--memory-mb", "MB", "address-space limit per worker"),
    ("--part-size", "N", "pages per output part"),
)
FIELDS = {"--timeout": "page_timeout", "--memory-mb": "memory_limit_mb"}
"""The BatchConfig fields of the options whose flags name them otherwise."""


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
    add_settings(p, defaults, WORKERS, FIELDS)
    p.add_argument("--blocks", action="store_true", help="store the kept blocks in each record")


def run_command(args: argparse.Namespace) -> int:
    cfg = BatchConfig(
        options=ExtractOptions.from_args(args),
        jobs=args.jobs,
        page_timeout=args.timeout,
        memory_limit_mb=args.memory_mb,
        part_size=args.part_size,
        write=args.write,
        include_blocks=args.blocks,
    )
    summary = run_batch(args.inputs, args.out, cfg, resume=args.resume, progress=not args.quiet)
    return report("batch", summary, args.out)
