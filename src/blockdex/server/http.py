"""The HTTP transport (``blockdex serve``): one Starlette app, served by uvicorn.

- ``POST /v1/extract`` and ``POST /v1/extract/batch``: JSON in, extracted page(s) out;
- ``GET /v1/proxy``: fetch a URL (under :mod:`blockdex.fetch`'s SSRF policy) and return the
  extracted page as a browsable HTML document or as Markdown;
- ``GET /`` and ``POST /``: the block explorer (kept blocks green, dropped red), and
  ``POST /v1/explain``, the same view as an HTML fragment;
- ``GET /healthz``, ``GET /metrics`` (Prometheus text) and ``GET /openapi.json``.

The endpoints are thin: requests are checked, run and shaped by :mod:`.service` (slots, thread
pool, time limit), which the MCP transport uses too. Every error is a JSON body
``{"error": kind, "detail": message}`` with the status of the
:class:`~blockdex.errors.BlockdexError` that caused it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from blockdex import __version__
from blockdex.errors import BlockdexError, MissingExtra, UnsupportedFormat
from blockdex.explain import render_fragment, template
from blockdex.options import json_schema_properties, option_fields
from blockdex.server.explorer import error_box, explorer_page, form_payload
from blockdex.server.metrics import Metrics, MetricsMiddleware
from blockdex.server.proxy import PROXY_FORMATS, proxy_document
from blockdex.server.service import (
    CONFIG_ENV,
    ExtractRequest,
    RequestError,
    ServerConfig,
    Service,
    error_body,
    parse_extract_request,
)

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

log = logging.getLogger("blockdex.server")


JSON_BODY = "a JSON object with Content-Type: application/json"
"""What to send an endpoint that reads JSON (the 415 answer to a body of another kind)."""
EXTRACT_BODY = (
    "the page itself with Content-Type: text/html (options in the query string, e.g."
    " ?format=markdown&query=...), or a JSON object such as"
    ' {"html": "<html>...</html>", "format": "markdown"} or {"url": "https://..."} with'
    " Content-Type: application/json"
)
"""What to send /v1/extract."""
BATCH_BODY = (
    'a JSON object with a "pages" list, {"pages": [{"html": "..."}, {"url": "https://..."}]},'
    " with Content-Type: application/json"
)
"""What to send /v1/extract/batch."""
_FORM_TYPES = frozenset({"application/x-www-form-urlencoded"})
"""Content types a client sends JSON as without meaning to (curl -d's default): read as JSON."""


def _meant_as_json(ctype: str) -> bool:
    """Whether a body of content type ``ctype`` may be JSON (and a parse error is a 400)."""
    return ctype == "application/json" or ctype.endswith("+json") or ctype in _FORM_TYPES


def openapi_schema(config: ServerConfig) -> dict[str, Any]:
    """The OpenAPI 3.1 description of the API: ``templates/openapi.json`` (written by hand)
    with this server's version and batch limit and the options' properties filled in."""
    schema = json.loads(template("openapi.json"))
    schema["info"]["version"] = __version__
    options = json_schema_properties()  # each option as ExtractOptions declares it
    schema["components"]["schemas"]["ExtractRequest"]["properties"].update(options)
    batch = schema["paths"]["/v1/extract/batch"]["post"]
    batch["summary"] = f"Extract up to {config.max_batch} pages"
    body = batch["requestBody"]["content"]["application/json"]["schema"]["properties"]
    body["pages"]["maxItems"] = config.max_batch
    body.update(options)  # the defaults of every page
    proxy = schema["paths"]["/v1/proxy"]["get"]["parameters"]
    proxy += [  # the extraction options in the query string; format and links are the proxy's own
        {
            "name": name,
            "in": "query",
            "description": prop["description"],
            "schema": {k: v for k, v in prop.items() if k != "description"},
        }
        for name, prop in options.items()
        if name not in ("format", "links")
    ]
    return schema


def _require_starlette() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise MissingExtra(exc.name or "starlette", "server", "blockdex serve") from None


class BlockdexServer:
    """The app's state (config, slots, thread pool, metrics) and its endpoints."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.service = Service(config)
        self.metrics = Metrics()
        self.schema = openapi_schema(config)

    # -- plumbing

    def error_response(self, request: Request, exc: BlockdexError) -> Response:
        from starlette.responses import JSONResponse

        self.metrics.error(Metrics.route_label(request.url.path), exc.kind)
        headers = {}
        if exc.http_status == 503:
            headers["Retry-After"] = str(self.config.retry_after)
        return JSONResponse(error_body(exc), status_code=exc.http_status, headers=headers)

    async def read_body(self, request: Request) -> bytes:
        """The request body, refused with 413 past ``max_body_bytes`` (without reading it all)."""
        limit = self.config.max_body_bytes
        declared = request.headers.get("content-length")
        too_large = RequestError(
            413, "request_too_large", f"the request body is over the {limit:,}-byte limit"
        )
        if declared and declared.isdigit() and int(declared) > limit:
            raise too_large
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise too_large
            chunks.append(chunk)
        return b"".join(chunks)

    async def read_json(self, request: Request, expected: str = JSON_BODY) -> Any:
        """The request body read as JSON. A body that is not JSON is a 400 ``invalid_json``,
        or a 415 ``unsupported_media_type`` saying what to send (``expected``) when its
        content type says it was never meant as JSON (``text/plain``)."""
        body = await self.read_body(request)
        try:
            return json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if ctype and not _meant_as_json(ctype):
                raise RequestError(
                    415,
                    "unsupported_media_type",
                    f"cannot read a body sent as {ctype}; send {expected}",
                ) from None
            raise RequestError(
                400, "invalid_json", f"the request body is not valid JSON: {exc}"
            ) from None

    def guarded(
        self, endpoint: Callable[[Request], Awaitable[Response]]
    ) -> Callable[[Request], Awaitable[Response]]:
        """Wrap an endpoint so that errors become ``{error, detail}`` JSON responses."""

        async def wrapper(request: Request) -> Response:
            try:
                return await endpoint(request)
            except BlockdexError as exc:
                return self.error_response(request, exc)
            except Exception:
                log.exception("unexpected error on %s", request.url.path)
                return self.error_response(
                    request, RequestError(500, "internal_error", "unexpected server error")
                )

        return wrapper

    # -- endpoints

    async def extract(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype in ("text/html", "application/xhtml+xml", "application/octet-stream"):
            # the raw page as the body; options in the query string
            body = await self.read_body(request)
            params: dict[str, Any] = dict(request.query_params.items())
            req = parse_extract_request({**params, "html": ""}, strings=True)
            req = dataclasses.replace(
                req, html=body, content_type=request.headers.get("content-type")
            )
        else:
            req = parse_extract_request(await self.read_json(request, EXTRACT_BODY))
        result = await self.service.run(lambda: self.service.extract(req))
        return JSONResponse(result)

    async def extract_batch(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        payload = await self.read_json(request, BATCH_BODY)
        if not isinstance(payload, dict) or not isinstance(payload.get("pages"), list):
            raise RequestError(
                400, "invalid_request", "the body must be a JSON object with a 'pages' list"
            )
        pages = payload["pages"]
        if len(pages) > self.config.max_batch:
            raise RequestError(
                413,
                "batch_too_large",
                f"{len(pages)} pages is over the batch limit of {self.config.max_batch}",
            )
        defaults = {f.name: payload[f.name] for f in option_fields() if f.name in payload}
        items: list[ExtractRequest | BlockdexError] = []
        for page in pages:
            try:
                items.append(parse_extract_request(page, defaults))
            except BlockdexError as exc:
                items.append(exc)
        t0 = time.perf_counter()
        # a little before the request's own limit, so finished pages are returned, not a 504
        deadline = time.monotonic() + 0.9 * self.config.time_limit
        results = await self.service.run(lambda: self.service.extract_many(items, deadline))
        return JSONResponse(
            {"results": results, "timings": {"total": round((time.perf_counter() - t0) * 1000, 3)}}
        )

    async def proxy(self, request: Request) -> Response:
        from starlette.responses import HTMLResponse, PlainTextResponse

        params = request.query_params
        url = params.get("url")
        if not url:
            raise RequestError(400, "invalid_request", "give the page to fetch as ?url=…")
        fmt = params.get("format") or "html"
        if fmt not in PROXY_FORMATS:
            raise UnsupportedFormat(
                f"the proxy returns html or markdown, not {fmt!r} (use /v1/extract for others)"
            )
        # the page's options from the query string; links are the proxy's own (kept as links
        # to browse on, whatever the page's text keeps)
        options = {f.name: params[f.name] for f in option_fields() if f.name in params}
        options.pop("links", None)
        options.pop("format", None)
        req = parse_extract_request({**options, "url": url}, strings=True)
        retain = params.get("links", "0").lower() in ("1", "true", "yes")

        def job() -> str:
            result = self.service.page(req)
            if fmt == "markdown":
                return result.result.markdown
            return proxy_document(result, retain_links=retain)

        out = await self.service.run(job)
        if fmt == "markdown":
            return PlainTextResponse(out, media_type="text/markdown; charset=utf-8")
        return HTMLResponse(out)

    async def explain_fragment(self, request: Request) -> Response:
        from starlette.responses import HTMLResponse

        req = parse_extract_request(await self.read_json(request))

        def job() -> str:
            result = self.service.page(req)
            return render_fragment(result.result, source=req.url or req.base_url)

        return HTMLResponse(await self.service.run(job))

    async def explorer(self, request: Request) -> Response:
        from starlette.responses import HTMLResponse

        if request.method == "GET":
            return HTMLResponse(explorer_page({}))
        fields: dict[str, str] = {}
        try:
            fields = await self.read_form(request)
            req = parse_extract_request(form_payload(fields))

            def job() -> str:
                result = self.service.page(req)
                return render_fragment(
                    result.result, source=req.url or req.base_url or "pasted HTML"
                )

            fragment = await self.service.run(job)
            return HTMLResponse(explorer_page(fields, fragment))
        except BlockdexError as exc:
            self.metrics.error("/", exc.kind)
            box = error_box(exc)
            headers = (
                {"Retry-After": str(self.config.retry_after)} if exc.http_status == 503 else {}
            )
            return HTMLResponse(
                explorer_page(fields, box), status_code=exc.http_status, headers=headers
            )

    async def read_form(self, request: Request) -> dict[str, str]:
        """The explorer form's fields (url-encoded or multipart), under the body cap."""
        from starlette.requests import Request as StarletteRequest

        body = await self.read_body(request)
        ctype = request.headers.get("content-type", "")
        if ctype.startswith("application/x-www-form-urlencoded") or not ctype:
            parsed = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            return {k: v[-1] for k, v in parsed.items()}
        if ctype.startswith("multipart/form-data"):

            async def replay() -> dict[str, Any]:
                return {"type": "http.request", "body": body, "more_body": False}

            form = await StarletteRequest(request.scope, replay).form()
            out: dict[str, str] = {}
            for key, value in form.multi_items():
                if isinstance(value, str):
                    out[key] = value
                else:  # an uploaded file: its bytes are the page
                    out[key] = (await value.read()).decode("utf-8", "replace")
            return out
        raise RequestError(415, "unsupported_media_type", f"cannot read a form sent as {ctype}")

    async def healthz(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        return JSONResponse(
            {
                "status": "ok",
                "version": __version__,
                "busy": self.service.limiter.busy,
                "capacity": self.service.limiter.capacity,
            }
        )

    async def metrics_text(self, request: Request) -> Response:
        from starlette.responses import PlainTextResponse

        text = self.metrics.render(
            {
                "blockdex_inflight_requests": (
                    "Extraction slots in use.",
                    float(self.service.limiter.busy),
                ),
                "blockdex_capacity": (
                    "Extraction slots in all.",
                    float(self.service.limiter.capacity),
                ),
                "blockdex_uptime_seconds": (
                    "Seconds since the server started.",
                    time.time() - self.metrics.started,
                ),
            }
        )
        return PlainTextResponse(text, media_type="text/plain; version=0.0.4; charset=utf-8")

    async def openapi(self, request: Request) -> Response:
        from starlette.responses import JSONResponse

        return JSONResponse(self.schema)

    async def not_found(self, request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 404)
        kind = "not_found" if status == 404 else "method_not_allowed" if status == 405 else "http"
        detail = getattr(exc, "detail", "") or "no such endpoint"
        return self.error_response(request, RequestError(status, kind, str(detail)))

    def app(self) -> Starlette:
        from starlette.applications import Starlette
        from starlette.exceptions import HTTPException
        from starlette.middleware import Middleware
        from starlette.routing import Route

        @asynccontextmanager
        async def lifespan(_app: Starlette):
            self.service.start()
            await asyncio.get_running_loop().run_in_executor(None, self.service.warm_up)
            try:
                yield
            finally:
                self.service.stop()

        g = self.guarded
        routes = [
            Route("/", self.explorer, methods=["GET", "POST"]),
            Route("/v1/extract", g(self.extract), methods=["POST"]),
            Route("/v1/extract/batch", g(self.extract_batch), methods=["POST"]),
            Route("/v1/proxy", g(self.proxy), methods=["GET"]),
            Route("/v1/explain", g(self.explain_fragment), methods=["POST"]),
            Route("/healthz", self.healthz, methods=["GET"]),
            Route("/metrics", self.metrics_text, methods=["GET"]),
            Route("/openapi.json", self.openapi, methods=["GET"]),
        ]
        app = Starlette(
            routes=routes,
            lifespan=lifespan,
            exception_handlers={HTTPException: self.not_found},
            middleware=[Middleware(MetricsMiddleware, metrics=self.metrics)],
        )
        app.state.blockdex = self
        return app


def create_app(config: ServerConfig | None = None) -> Starlette:
    """The ASGI app for ``config`` (defaults when None)."""
    _require_starlette()
    return BlockdexServer(config or ServerConfig()).app()


def app_from_env() -> Starlette:
    """App factory for uvicorn worker processes: the config comes from :data:`CONFIG_ENV`."""
    raw = os.environ.get(CONFIG_ENV)
    return create_app(ServerConfig.from_json(raw) if raw else None)


def serve(config: ServerConfig, log_level: str = "info") -> None:
    """Run the server in the foreground until interrupted."""
    _require_starlette()
    import uvicorn

    common = {
        "host": config.host,
        "port": config.port,
        "log_level": log_level,
        "limit_max_requests": None,
        "timeout_graceful_shutdown": 5,
    }
    if config.workers > 1:
        os.environ[CONFIG_ENV] = config.to_json()
        uvicorn.run("blockdex.server:app_from_env", factory=True, workers=config.workers, **common)
    else:
        uvicorn.run(create_app(config), **common)


@contextmanager
def serve_in_thread(config: ServerConfig | None = None, *, port: int = 0) -> Iterator[str]:
    """Run a server on loopback in a background thread; yields its base URL (tests, notebooks).

    ``port=0`` picks a free port.
    """
    _require_starlette()
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
        )
    )
    thread = threading.Thread(target=server.run, name="blockdex-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the blockdex server did not start")
        time.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
