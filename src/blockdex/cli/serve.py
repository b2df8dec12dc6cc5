"""``blockdex serve``: the HTTP API, the proxy and the block explorer. Its fetch policy and
limits are ``blockdex mcp``'s too (:func:`add_policy_options`)."""

from __future__ import annotations

import argparse

from blockdex.server.service import ServerConfig

NAME = "serve"
HELP = "run the HTTP API, the proxy and the block explorer (needs blockdex[server])"
DESCRIPTION = (
    "Serve POST /v1/extract, POST /v1/extract/batch, GET /v1/proxy, the block explorer "
    "at /, /healthz, /metrics and /openapi.json. Fetching refuses loopback, private "
    "and cloud-metadata addresses unless --allow-private / --allow-network say so."
)
LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


def add_policy_options(p: argparse.ArgumentParser, *, log_level: str) -> None:
    """The fetch policy, per-request limits and log level both transports share."""
    p.add_argument(
        "--allow-private",
        action="store_true",
        help="let fetches reach loopback/private addresses (never cloud metadata)",
    )
    p.add_argument(
        "--allow-network",
        action="append",
        metavar="CIDR",
        help="a network fetches may reach although the policy blocks it (repeatable)",
    )
    p.add_argument(
        "--max-concurrency",
        type=int,
        default=None,
        metavar="N",
        help="requests extracting at once per worker; more are refused (default 2 x CPUs, min 4)",
    )
    limits = (
        ("--time-limit", float, "S", "seconds per request (20)"),
        ("--max-body-bytes", int, "N", "request body (or given HTML) cap (32 MiB)"),
        ("--max-page-bytes", int, "N", "fetched page cap (16 MiB)"),
    )
    for flag, kind, metavar, text in limits:
        p.add_argument(flag, type=kind, default=None, metavar=metavar, help=text)
    p.add_argument(
        "--log-level",
        default=log_level,
        choices=LOG_LEVELS,
        help=f"log level (default {log_level})",
    )


def config_from_args(args: argparse.Namespace, **fields: object) -> ServerConfig:
    """The :class:`ServerConfig` the policy options ask for (unset ones keep their defaults)."""
    defaults = ServerConfig()
    return ServerConfig(
        allow_private=args.allow_private,
        allowed_networks=tuple(args.allow_network or ()),
        max_body_bytes=args.max_body_bytes or defaults.max_body_bytes,
        max_page_bytes=args.max_page_bytes or defaults.max_page_bytes,
        time_limit=args.time_limit or defaults.time_limit,
        max_concurrency=args.max_concurrency or defaults.max_concurrency,
        **fields,  # type: ignore[arg-type]
    )


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default loopback)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    p.add_argument("--workers", type=int, default=1, help="uvicorn worker processes (default 1)")
    add_policy_options(p, log_level="info")
    p.add_argument("--max-batch", type=int, default=None, metavar="N", help="pages per batch (32)")


def run_command(args: argparse.Namespace) -> int:
    # optional extra (blockdex[server]): only this command needs starlette and uvicorn
    from blockdex.server.http import serve

    config = config_from_args(
        args,
        host=args.host,
        port=args.port,
        workers=args.workers,
        max_batch=args.max_batch or ServerConfig().max_batch,
    )
    serve(config, log_level=args.log_level)
    return 0
