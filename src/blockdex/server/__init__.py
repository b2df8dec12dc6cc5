"""blockdex as a service: the HTTP API, proxy and block explorer (``blockdex serve``) and the
Model Context Protocol server for agents (``blockdex mcp``).

- :mod:`.service` — what both transports call: request checks, safe fetching, extraction slots,
  the thread pool and time limit, result and error shapes;
- :mod:`.http` — the Starlette app and its endpoints; :mod:`.proxy` and :mod:`.explorer` — the
  proxy's HTML output and the explorer page; :mod:`.metrics` — Prometheus metrics;
- :mod:`.mcp` — the MCP tools (``extract``, ``blocks``, ``select``) over stdio or HTTP.
"""

from __future__ import annotations

from blockdex.server.http import (
    BlockdexServer,
    app_from_env,
    create_app,
    openapi_schema,
    serve,
    serve_in_thread,
)
from blockdex.server.metrics import Metrics
from blockdex.server.service import (
    ConcurrencyLimiter,
    ExtractRequest,
    RequestError,
    ServerConfig,
    Service,
    parse_extract_request,
)

__all__ = [
    "BlockdexServer",
    "ConcurrencyLimiter",
    "ExtractRequest",
    "Metrics",
    "RequestError",
    "ServerConfig",
    "Service",
    "app_from_env",
    "create_app",
    "openapi_schema",
    "parse_extract_request",
    "serve",
    "serve_in_thread",
]
