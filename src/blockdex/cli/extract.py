"""``blockdex extract``: one page's main content, or what answers ``--query``."""

from __future__ import annotations

import argparse
import sys

from blockdex.baselines import BASELINES, get_baseline
from blockdex.cli.common import add_input_arguments, extract_config, write_output
from blockdex.errors import BlockdexError
from blockdex.extract import run
from blockdex.inputs import read_input
from blockdex.options import ExtractOptions, add_option_arguments
from blockdex.parse import decode_html
from blockdex.render import result_notes

NAME = "extract"
HELP = "extract a page's main content (or what answers --query)"
DESCRIPTION = "Extract a page's main content, or with --query the blocks relevant to it."
EPILOG = """\
examples:
  blockdex extract page.html                      main content as Markdown
  blockdex extract https://example.org/a --format text
  blockdex extract page.html --query "battery life" --format json
  cat page.html | blockdex extract -              read from standard input
  blockdex blocks page.html                       the numbered blocks a model reads
"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_arguments(p)
    add_option_arguments(p)
    p.add_argument(
        "--url", help="the page's URL, when reading a file (used for metadata and prompts)"
    )
    p.add_argument(
        "--llm-url",
        help="OpenAI-compatible server for --predictor llm, e.g. http://127.0.0.1:8000/v1",
    )
    p.add_argument("--llm-model", help="model name to ask the --llm-url server for")
    p.add_argument(
        "--crunch-config",
        metavar="FILE",
        help="TOML settings for --method crunch (see blockdex/baselines/crunch.toml)",
    )
    p.add_argument(
        "--records",
        action="store_true",
        help="VSSE record mode: output the page's attribute/value characteristics"
        " (product or book specs: Brand, Price, ISBN …) with -f json",
    )


def run_command(args: argparse.Namespace) -> int:
    data, url, ctype = read_input(args.source, max_bytes=args.max_bytes)
    if args.records:
        if args.method not in (None, "vsse", "vsse-records"):
            raise BlockdexError("--records applies only to --method vsse")
        args.method = "vsse-records"
    method_options = _method_options(args, args.method)
    options = ExtractOptions.from_args(args)
    if options.method in BASELINES:
        write_output(_run_baseline(args, options, data, url), args.out)
        return 0
    result = run(
        data,
        options,
        url=args.url or url,
        content_type=ctype,
        config=extract_config(args),
        method_options=method_options,
    )
    out = result.render(options.format)
    if options.format != "json":  # JSON carries the warnings and notes in fields of its own
        for warning in (*result.page.warnings, *result.selection.warnings):
            print(f"blockdex: warning: {warning}", file=sys.stderr)
        for note in result_notes(result.page, result.selection, result.query):
            print(f"blockdex: note: {note}", file=sys.stderr)
    write_output(out, args.out)
    return 0


def _method_options(args: argparse.Namespace, method: str | None) -> dict[str, str]:
    """The options of ``--predictor llm`` that only the command line sets."""
    options = {}
    for name in ("llm_url", "llm_model"):
        value = getattr(args, name, None)
        if value:
            if method != "llm":
                flag = "--" + name.replace("_", "-")
                raise BlockdexError(f"{flag} applies only to --predictor llm")
            options[name] = value
    return options


def _run_baseline(
    args: argparse.Namespace, options: ExtractOptions, data: bytes, url: str | None
) -> str:
    """Run a classic method (``--method crunch`` …) and render its result in the asked format."""
    html, _ = decode_html(data)
    settings = {}
    if getattr(args, "crunch_config", None):
        if options.method != "crunch":
            raise BlockdexError("--crunch-config applies only to --method crunch")
        settings["config_path"] = args.crunch_config
    result = get_baseline(options.method, **settings).run(
        html, url=args.url or url, query=options.query
    )
    return result.render(options.format, url=args.url or url, method=options.method)
