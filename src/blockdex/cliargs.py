"""Command-line options shared by several subcommands (extract, explain, batch)."""

from __future__ import annotations

import argparse

from blockdex.errors import BlockdexError

SETTING_OPTIONS = {
    "ParseLimits.max_input_bytes": "--max-bytes",
    "ParseLimits.max_dom_nodes": "--max-nodes",
    "ParseLimits.max_depth": "--max-depth",
    "ExtractConfig.time_budget_s": "--time-budget",
}
"""The command-line option that sets each setting (``blockdex extract``, ``blocks``,
``explain``): a warning or an error about a limit names it beside the Python setting."""


def setting_name(setting: str) -> str:
    """How a message names ``setting`` (``ParseLimits.max_dom_nodes``): with its command-line
    option, when it has one (``--max-nodes or ParseLimits.max_dom_nodes``)."""
    flag = SETTING_OPTIONS.get(setting)
    return f"{flag} or {setting}" if flag else setting


def add_predictor_option(p: argparse.ArgumentParser, help: str) -> None:
    """``-p/--predictor/--method NAME``: which predictor or classic method chooses the blocks."""
    p.add_argument(
        "-p",
        "--predictor",
        "--method",
        dest="predictor",
        default=None,
        metavar="NAME",
        help=help,
    )


def add_no_comments_option(p: argparse.ArgumentParser) -> None:
    """``--no-comments``: drop reader comments the main-content model keeps."""
    p.add_argument(
        "--no-comments",
        action="store_true",
        help="drop reader comments even where the model keeps them (a thread longer than its"
        " post); a page that is all discussion (forum, Q&A) keeps it, with a warning",
    )


FAVOR_CHOICES = ("balanced", "precision", "recall")
"""The main-content model's trade-offs (:data:`blockdex.predict.content.FAVOR_SHIFTS`)."""


def add_favor_option(p: argparse.ArgumentParser) -> None:
    """``--favor precision|balanced|recall``: move the main-content model's decision."""
    p.add_argument(
        "--favor",
        choices=FAVOR_CHOICES,
        default="balanced",
        help="precision: keep only the blocks the model is surest of (less boilerplate, some"
        " content lost); recall: keep more (less content lost, more boilerplate); default:"
        " balanced (the best F1)",
    )


def add_links_option(p: argparse.ArgumentParser) -> None:
    """``--links``: keep links as Markdown links with absolute addresses."""
    p.add_argument(
        "--links",
        action="store_true",
        help="keep links: [text](absolute URL), resolved against <base href> and the page's"
        " URL (--url, or the address it was fetched from); javascript:, #fragment and empty"
        " links stay plain text",
    )


def add_images_option(p: argparse.ArgumentParser) -> None:
    """``--images``: write kept images as Markdown images with absolute addresses."""
    p.add_argument(
        "--images",
        action="store_true",
        help="write kept images: ![caption](absolute URL), the address lazy-loading attributes"
        " and srcset name when src is a placeholder; without it Markdown leaves images out and"
        " keeps figure captions",
    )


def comments_option(comments: bool, favor: str = "balanced") -> dict[str, bool | str]:
    """Predictor options for ``comments`` and ``favor``: ``{"comments": False}`` when reader
    comments are to be dropped, ``{"favor": …}`` when not balanced, else none (only the
    main-content model takes them)."""
    options: dict[str, bool | str] = {} if comments else {"comments": False}
    if favor != "balanced":
        options["favor"] = favor
    return options


def check_no_comments(
    predictor: str | None,
    query: str | None,
    *,
    option: str = "--no-comments",
    query_name: str = "--query",
    method_name: str = "--predictor",
) -> None:
    """``--no-comments`` (or ``--favor``, named by ``option``) is an option of the main-content
    model: refuse it with any other.

    The names are those the caller's users see (the HTTP service says ``'comments': false``)."""
    if predictor not in (None, "content") or (query and query.strip()):
        raise BlockdexError(
            f"{option} applies only to the main-content model (no {query_name}, no other"
            f" {method_name})"
        )
