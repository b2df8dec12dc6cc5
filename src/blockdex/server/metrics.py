"""Prometheus metrics of the HTTP service: request counts, latency histograms, error counts
(``GET /metrics``), and the ASGI middleware that times every request."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

# Labels of /metrics: the known routes; anything else is counted as "other" so that scanning
# clients cannot blow up the number of series.
ROUTES = (
    "/",
    "/v1/extract",
    "/v1/extract/batch",
    "/v1/proxy",
    "/v1/explain",
    "/healthz",
    "/metrics",
    "/openapi.json",
)
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 60.0)


class Metrics:
    """Request counts, latency histograms and error counts, written in Prometheus text format."""

    def __init__(self, buckets: tuple[float, ...] = LATENCY_BUCKETS) -> None:
        self.buckets = buckets
        self._lock = threading.Lock()
        self._requests: dict[tuple[str, str, int], int] = {}
        self._errors: dict[tuple[str, str], int] = {}
        self._hist: dict[str, list[int]] = {}
        self._sum: dict[str, float] = {}
        self._count: dict[str, int] = {}
        self.started = time.time()

    @staticmethod
    def route_label(path: str) -> str:
        return path if path in ROUTES else "other"

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        with self._lock:
            key = (route, method, status)
            self._requests[key] = self._requests.get(key, 0) + 1
            counts = self._hist.setdefault(route, [0] * len(self.buckets))
            for i, bound in enumerate(self.buckets):
                if seconds <= bound:
                    counts[i] += 1
            self._sum[route] = self._sum.get(route, 0.0) + seconds
            self._count[route] = self._count.get(route, 0) + 1

    def error(self, route: str, kind: str) -> None:
        with self._lock:
            self._errors[(route, kind)] = self._errors.get((route, kind), 0) + 1

    def render(self, gauges: dict[str, tuple[str, float]] | None = None) -> str:
        """The exposition text; ``gauges`` maps a metric name to ``(help, value)``."""
        out: list[str] = []
        with self._lock:
            out.append("# HELP blockdex_http_requests_total HTTP requests by route and status.")
            out.append("# TYPE blockdex_http_requests_total counter")
            for (route, method, status), n in sorted(self._requests.items()):
                out.append(
                    f'blockdex_http_requests_total{{route="{route}",method="{method}",'
                    f'status="{status}"}} {n}'
                )
            out.append("# HELP blockdex_http_request_duration_seconds Request latency.")
            out.append("# TYPE blockdex_http_request_duration_seconds histogram")
            for route in sorted(self._hist):
                for bound, n in zip(self.buckets, self._hist[route], strict=True):
                    out.append(
                        f'blockdex_http_request_duration_seconds_bucket{{route="{route}",'
                        f'le="{bound:g}"}} {n}'
                    )
                out.append(
                    f'blockdex_http_request_duration_seconds_bucket{{route="{route}",le="+Inf"}} '
                    f"{self._count[route]}"
                )
                out.append(
                    f'blockdex_http_request_duration_seconds_sum{{route="{route}"}} '
                    f"{self._sum[route]:.6f}"
                )
                out.append(
                    f'blockdex_http_request_duration_seconds_count{{route="{route}"}} '
                    f"{self._count[route]}"
                )
            out.append("# HELP blockdex_errors_total Error responses by route and error kind.")
            out.append("# TYPE blockdex_errors_total counter")
            for (route, kind), n in sorted(self._errors.items()):
                out.append(f'blockdex_errors_total{{route="{route}",kind="{kind}"}} {n}')
        for name, (help_text, value) in (gauges or {}).items():
            out.append(f"# HELP {name} {help_text}")
            out.append(f"# TYPE {name} gauge")
            out.append(f"{name} {value:g}")
        return "\n".join(out) + "\n"


class MetricsMiddleware:
    """Pure ASGI middleware timing every HTTP request and counting it by route and status."""

    def __init__(self, app: Any, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_wrapper(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            self.metrics.observe(
                Metrics.route_label(scope["path"]),
                scope["method"],
                status,
                time.perf_counter() - start,
            )
