"""``blockdex serve`` (the HTTP service) and ``blockdex mcp`` (the MCP server) on the command
line. Both take the same fetch policy and limits."""

from __future__ import annotations

import argparse

from blockdex.server.service import ServerConfig


def add_policy_options(p: argparse.ArgumentParser) -> None:
    """The fetch policy and per-request limits both transports share."""
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
    p.add_argument(
        "--time-limit", type=float, default=None, metavar="S", help="seconds per request (20)"
    )
    p.add_argument(
        "--max-body-bytes",
        type=int,
        default=None,
        metavar="N",
        help="request body (or given HTML) cap (32 MiB)",
    )
    p.add_argument(
        "--max-page-bytes", type=int, default=None, metavar="N", help="fetched page cap (16 MiB)"
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


def cmd_serve(args: argparse.Namespace) -> int:
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


def cmd_mcp(args: argparse.Namespace) -> int:
    from blockdex.server.mcp import run_mcp

    config = config_from_args(args, host=args.host, port=args.port)
    run_mcp(config, http=args.http, log_level=args.log_level)
    return 0


def _log_level_option(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument(
        "--log-level",
        default=default,
        choices=("critical", "error", "warning", "info", "debug"),
        help=f"log level (default {default})",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``blockdex serve`` and ``blockdex mcp`` to the CLI."""
    p = subparsers.add_parser(
        "serve",
        help="run the HTTP API, the proxy and the block explorer (needs blockdex[server])",
        description=(
            "Serve POST /v1/extract, POST /v1/extract/batch, GET /v1/proxy, the block explorer "
            "at /, /healthz, /metrics and /openapi.json. Fetching refuses loopback, private "
            "and cloud-metadata addresses unless --allow-private / --allow-network say so."
        ),
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default loopback)")
    p.add_argument("--port", type=int, default=8080, help="port (default 8080)")
    p.add_argument("--workers", type=int, default=1, help="uvicorn worker processes (default 1)")
    add_policy_options(p)
    p.add_argument("--max-batch", type=int, default=None, metavar="N", help="pages per batch (32)")
    _log_level_option(p, "info")
    p.set_defaults(func=cmd_serve)

    m = subparsers.add_parser(
        "mcp",
        help="serve blockdex's tools to agents over the Model Context Protocol (needs blockdex[mcp])",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "A Model Context Protocol server with three tools: extract (a page's main content,\n"
            "or the parts relevant to a query, as Markdown), blocks (a page's numbered blocks)\n"
            "and select (the blocks of chosen index intervals, reassembled). It speaks stdio,\n"
            "as agents launch it; --http serves streamable HTTP at http://HOST:PORT/mcp.\n"
            "Fetching refuses loopback, private and cloud-metadata addresses unless\n"
            "--allow-private / --allow-network say so."
        ),
        epilog=(
            "an agent's MCP configuration (Claude Desktop, Cursor, VS Code and others):\n"
            '  {"mcpServers": {"blockdex": {"command": "blockdex", "args": ["mcp"]}}}'
        ),
    )
    m.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    m.add_argument(
        "--host", default="127.0.0.1", help="with --http: address to listen on (default loopback)"
    )
    m.add_argument("--port", type=int, default=8000, help="with --http: port (default 8000)")
    add_policy_options(m)
    _log_level_option(m, "warning")
    m.set_defaults(func=cmd_mcp)
