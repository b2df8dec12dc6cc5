"""Command-line options shared by several subcommands (extract, explain, batch)."""

from __future__ import annotations

import argparse

from blockdex.errors import BlockdexError


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


def comments_option(comments: bool) -> dict[str, bool]:
    """Predictor options for ``comments``: ``{"comments": False}`` when reader comments are to
    be dropped, else none (only the main-content model takes the option)."""
    return {} if comments else {"comments": False}


def check_no_comments(
    predictor: str | None,
    query: str | None,
    *,
    option: str = "--no-comments",
    query_name: str = "--query",
    method_name: str = "--predictor",
) -> None:
    """``--no-comments`` is an option of the main-content model: refuse it with any other.

    The names are those the caller's users see (the HTTP service says ``'comments': false``)."""
    if predictor not in (None, "content") or (query and query.strip()):
        raise BlockdexError(
            f"{option} applies only to the main-content model (no {query_name}, no other"
            f" {method_name})"
        )
