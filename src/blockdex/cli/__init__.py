"""The ``blockdex`` command line: one module per command.

A command's module declares it: ``NAME``, ``HELP`` (its line in ``blockdex --help``),
``DESCRIPTION`` and, when it has one, ``EPILOG``; ``add_arguments(parser)``; and
``run_command(args)``, which turns the arguments into the domain's settings (the extraction
options into :class:`blockdex.options.ExtractOptions`) and calls the domain's function. Errors a
user can fix print one line on stderr and exit with status 1 (status 2 for wrong usage).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

from blockdex import __version__
from blockdex.cli.extract import EPILOG
from blockdex.errors import BlockdexError
from blockdex.extensions import status

COMMANDS: tuple[str, ...] = (
    "blockdex.cli.extract",
    "blockdex.cli.blocks",
    "blockdex.cli.methods",
    "blockdex.cli.batch",
    "blockdex.cli.crawl",
    "blockdex.cli.train",
    "blockdex.cli.bench",
    "blockdex.cli.evaluate",
    "blockdex.cli.train_relevance",
    "blockdex.cli.annotate",
    "blockdex.cli.dataset",
    "blockdex.cli.explain",
    "blockdex.cli.serve",
    "blockdex.cli.mcp",
    "blockdex.cli.danag",
)
"""The commands in the order ``blockdex --help`` lists them, one module each."""


def add_command(subparsers: argparse._SubParsersAction, module: ModuleType) -> None:
    """Add the command a module declares (see the package's description)."""
    description = module.DESCRIPTION
    epilog = getattr(module, "EPILOG", None)
    raw = "\n" in (description or "") + (epilog or "")  # laid out by hand: kept as written
    p = subparsers.add_parser(
        module.NAME,
        help=module.HELP,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter if raw else argparse.HelpFormatter,
    )
    module.add_arguments(p)
    p.set_defaults(func=module.run_command)


def build_parser() -> argparse.ArgumentParser:
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
    parser.add_argument(
        "--version", action="version", version=f"blockdex {__version__} ({status()})"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        add_command(sub, importlib.import_module(name))
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
