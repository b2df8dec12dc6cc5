"""The ``blockdex`` command line.

Sub-commands live with the code they drive: each module named in :data:`SUBCOMMAND_MODULES`
has a ``register(subparsers)`` function. Errors a user can fix print one line on stderr and
exit with status 1 (status 2 for wrong usage).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from blockdex.cliargs import SETTING_OPTIONS
from blockdex.errors import BlockdexError, EmptyInput
from blockdex.options import ExtractOptions, add_option_arguments

# Modules that add sub-commands (each defines register(subparsers)).
SUBCOMMAND_MODULES: tuple[str, ...] = (
    "blockdex.batch",
    "blockdex.crawl",
    "blockdex.train",
    "blockdex.evaluate.bench",
    "blockdex.evaluate.qe",
    "blockdex.predict.relevance_fit",
    "blockdex.sft",
    "blockdex.explain",
    "blockdex.server",
    "blockdex.baselines.danag",
)

EPILOG = """\
examples:
  blockdex extract page.html                      main content as Markdown
  blockdex extract https://example.org/a --format text
  blockdex extract page.html --query "battery life" --format json
  cat page.html | blockdex extract -              read from standard input
  blockdex blocks page.html                       the numbered blocks a model reads
"""


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
    path = Path(source)
    try:
        if path.is_dir():
            raise BlockdexError(
                f"{source} is a directory; give an HTML file (use 'blockdex batch' for many)"
            )
        data = path.read_bytes()
    except FileNotFoundError:
        raise BlockdexError(f"cannot read {source}: no such file") from None
    except PermissionError:
        raise BlockdexError(f"cannot read {source}: permission denied") from None
    except OSError as exc:
        raise BlockdexError(f"cannot read {source}: {exc.strerror or exc}") from None
    return data, None, None


def _config(args: argparse.Namespace):
    """The ExtractConfig the command-line limits ask for (defaults where none is given)."""
    import dataclasses

    from blockdex.extract import ExtractConfig
    from blockdex.parse import DEFAULT_LIMITS

    limits = {
        field: value
        for field, value in (
            ("max_input_bytes", args.max_bytes),
            ("max_dom_nodes", args.max_nodes),
            ("max_depth", args.max_depth),
        )
        if value is not None
    }
    for field, value in limits.items():
        if value < 1:
            flag = SETTING_OPTIONS[f"ParseLimits.{field}"]  # every limit here has one
            raise BlockdexError(f"{flag} must be at least 1, not {value}")
    config = ExtractConfig(parse=dataclasses.replace(DEFAULT_LIMITS, **limits))
    budget = args.time_budget
    if budget is not None:
        if budget < 0:
            raise BlockdexError(f"--time-budget must be 0 (no budget) or more, not {budget}")
        config = dataclasses.replace(config, time_budget_s=budget or None)
    return config


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
    """Run a classic method (``--method crunch`` …) and render its HTML in the asked format."""
    import json

    from blockdex.baselines import get_baseline
    from blockdex.parse import decode_html
    from blockdex.render import html_to_markdown

    html, _ = decode_html(data)
    settings = {}
    if getattr(args, "crunch_config", None):
        if options.method != "crunch":
            raise BlockdexError("--crunch-config applies only to --method crunch")
        settings["config_path"] = args.crunch_config
    result = get_baseline(options.method, **settings).run(
        html, url=args.url or url, query=options.query
    )
    if options.format == "html":
        return result.html
    if options.format == "text":
        return result.text
    if options.format == "json":
        record = {
            "title": result.title,
            "url": args.url or url,
            "method": options.method,
            "text": result.text,
            "markdown": html_to_markdown(result.html),
            **result.extra,
        }
        return json.dumps(record, ensure_ascii=False, indent=2) + "\n"
    return html_to_markdown(result.html)


def cmd_extract(args: argparse.Namespace) -> int:
    data, url, ctype = read_input(args.source, max_bytes=args.max_bytes)
    from blockdex.baselines import BASELINES
    from blockdex.extract import run

    if args.records:
        if args.method not in (None, "vsse", "vsse-records"):
            raise BlockdexError("--records applies only to --method vsse")
        args.method = "vsse-records"
    method_options = _method_options(args, args.method)
    options = ExtractOptions.from_args(args)
    if options.method in BASELINES:
        _write(_run_baseline(args, options, data, url), args.out)
        return 0
    result = run(
        data,
        options,
        url=args.url or url,
        content_type=ctype,
        config=_config(args),
        method_options=method_options,
    )
    out = result.render(options.format)
    if options.format != "json":  # JSON carries the warnings in its "warnings" field
        for warning in (*result.page.warnings, *result.selection.warnings):
            print(f"blockdex: warning: {warning}", file=sys.stderr)
    if options.format != "json":  # JSON carries the notes in its "notes" field
        from blockdex.render import result_notes

        for note in result_notes(result.page, result.selection, result.query):
            print(f"blockdex: note: {note}", file=sys.stderr)
    _write(out, args.out)
    return 0


def cmd_blocks(args: argparse.Namespace) -> int:
    data, url, ctype = read_input(args.source, max_bytes=args.max_bytes)
    from blockdex.extract import Extractor

    page = Extractor(config=_config(args)).segment(data, url=url, content_type=ctype)
    if args.json:
        import json

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
    _write(out, args.out)
    return 0


def cmd_methods(args: argparse.Namespace) -> int:
    from blockdex.baselines import DESCRIPTIONS as BASELINE_DESCRIPTIONS
    from blockdex.baselines import available_baselines
    from blockdex.predict import (
        DEFAULT_PREDICTOR,
        DEFAULT_QUERY_PREDICTOR,
        DESCRIPTIONS,
        available_predictors,
    )

    for name in available_baselines():
        print(f"{name:14s} {BASELINE_DESCRIPTIONS.get(name, '')}  [classic method]")
    for name in available_predictors():
        mark = []
        if name == DEFAULT_PREDICTOR:
            mark.append("default")
        if name == DEFAULT_QUERY_PREDICTOR:
            mark.append("default with --query")
        suffix = f"  [{', '.join(mark)}]" if mark else ""
        print(f"{name:14s} {DESCRIPTIONS.get(name, '')}{suffix}")
    return 0


def _write(text: str, out: str | None) -> None:
    if out:
        Path(out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def _add_input_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "source", metavar="FILE|URL|-", help="an HTML file, an http(s) URL, or - for standard input"
    )
    p.add_argument(
        "-o", "--out", metavar="FILE", help="write the result here instead of standard output"
    )
    from blockdex.extract import ExtractConfig
    from blockdex.parse import DEFAULT_LIMITS

    p.add_argument(
        "--max-bytes",
        type=int,
        default=None,
        metavar="N",
        help="refuse inputs larger than N bytes"
        f" (default {DEFAULT_LIMITS.max_input_bytes:,}: {DEFAULT_LIMITS.max_input_bytes >> 20} MiB)",
    )
    p.add_argument(
        "--max-nodes",
        type=int,
        default=None,
        metavar="N",
        help="parse at most N elements; the rest of the page is cut, with a warning"
        f" (default {DEFAULT_LIMITS.max_dom_nodes:,})",
    )
    p.add_argument(
        "--max-depth",
        type=int,
        default=None,
        metavar="N",
        help="flatten elements nested deeper than N, with a warning"
        f" (default {DEFAULT_LIMITS.max_depth:,})",
    )
    p.add_argument(
        "--time-budget",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop segmenting a page after this long and use the blocks found so far,"
        f" with a warning (default {ExtractConfig().time_budget_s:g}; 0 = no budget)",
    )


def build_parser() -> argparse.ArgumentParser:
    from blockdex import __version__

    parser = argparse.ArgumentParser(
        prog="blockdex",
        description=(
            "Extract what an LLM should read from web pages: blockdex cuts HTML into numbered "
            "blocks, chooses which to keep (the main content, or the blocks relevant to a "
            "query) and reassembles them as Markdown, text, HTML or JSON."
        ),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from blockdex.speedups import status

    parser.add_argument(
        "--version", action="version", version=f"blockdex {__version__} ({status()})"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "extract",
        help="extract a page's main content (or what answers --query)",
        description="Extract a page's main content, or with --query the blocks relevant to it.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_input_args(p)
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
    p.set_defaults(func=cmd_extract)

    p = sub.add_parser("blocks", help="print the numbered blocks of a page, as a model reads them")
    _add_input_args(p)
    p.add_argument("--json", action="store_true", help="print blocks as JSON with tag paths")
    p.set_defaults(func=cmd_blocks)

    p = sub.add_parser("methods", help="list the available predictors/methods")
    p.set_defaults(func=cmd_methods)

    for module_name in SUBCOMMAND_MODULES:
        importlib.import_module(module_name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except BlockdexError as exc:
        print(f"blockdex: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("blockdex: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
