"""``blockdex mcp``: blockdex's tools for agents over the Model Context Protocol."""

from __future__ import annotations

import argparse

from blockdex.cli.serve import add_policy_options, config_from_args

NAME = "mcp"
HELP = "serve blockdex's tools to agents over the Model Context Protocol (needs blockdex[mcp])"
DESCRIPTION = (
    "A Model Context Protocol server with three tools: extract (a page's main content,\n"
    "or the parts relevant to a query, as Markdown), blocks (a page's numbered blocks)\n"
    "and select (the blocks of chosen index intervals, reassembled). It speaks stdio,\n"
    "as agents launch it; --http serves streamable HTTP at http://HOST:PORT/mcp.\n"
    "Fetching refuses loopback, private and cloud-metadata addresses unless\n"
    "--allow-private / --allow-network say so."
)
EPILOG = (
    "an agent's MCP configuration (Claude Desktop, Cursor, VS Code and others):\n"
    '  {"mcpServers": {"blockdex": {"command": "blockdex", "args": ["mcp"]}}}'
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    p.add_argument(
        "--host", default="127.0.0.1", help="with --http: address to listen on (default loopback)"
    )
    p.add_argument("--port", type=int, default=8000, help="with --http: port (default 8000)")
    add_policy_options(p, log_level="warning")


def run_command(args: argparse.Namespace) -> int:
    # optional extra (blockdex[mcp]): only this command needs the MCP SDK
    from blockdex.server.mcp import run_mcp

    config = config_from_args(args, host=args.host, port=args.port)
    run_mcp(config, http=args.http, log_level=args.log_level)
    return 0
