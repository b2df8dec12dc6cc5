"""blockdex for agents: a Model Context Protocol server (``blockdex mcp``; needs
``pip install 'blockdex[mcp]'``, the official ``mcp`` SDK).

Three tools, written for a model to read:

- ``extract`` — a page's main content (or, with a ``query``, the parts relevant to it) as
  Markdown, text, HTML or JSON;
- ``blocks`` — the page's numbered blocks (``[i] <tag>text</tag>``) and the intervals blockdex
  would keep, for an agent that chooses the blocks itself;
- ``select`` — given the page and an interval list such as ``[[3,7],[12,12]]``, those blocks
  reassembled: the index method with the agent's own model as the chooser.

Every tool runs through :class:`~blockdex.server.service.Service`, as the HTTP API does: the same
SSRF policy for URLs, the same size and time limits, the same extraction slots. Errors come back
as tool errors with a message (``is_error``), never as a crash of the server. Long results are
cut into parts (``start_index`` / ``max_length``) and each part says how much is left. Fetched
pages are kept for ten minutes, so ``blocks`` then ``select`` on one URL number the same page.
"""

import dataclasses
import inspect
import logging
from collections.abc import Callable
from typing import Annotated, Any, Literal

from blockdex import __version__
from blockdex.errors import BlockdexError, MissingExtra
from blockdex.options import json_schema_properties, option_fields
from blockdex.server.service import (
    PageCache,
    ServerConfig,
    Service,
    parse_extract_request,
)

try:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import Field
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("mcp", "mcp", "blockdex mcp") from None

log = logging.getLogger("blockdex.mcp")

DEFAULT_MAX_LENGTH = 20_000
"""Characters one call returns unless it asks for another ``max_length``."""
MAX_LENGTH_LIMIT = 1_000_000

INSTRUCTIONS = """\
blockdex reads web pages for you. Use `extract` to read a page: it returns only the page's own \
content (no menus, ads, footers or unrelated stories) as Markdown, or with `query` only the \
parts that answer it. Use `blocks` and `select` when you want to choose the parts yourself: \
`blocks` lists the page's numbered blocks, `select` returns the ones you name by index. Pages \
are fetched from the public web only; pass `html` to read a page you already have."""

Url = Annotated[
    str | None,
    Field(description="The page's address (http or https). Give `url` or `html`, not both."),
]
Html = Annotated[
    str | None,
    Field(description="The page's HTML, when you already have it instead of a URL."),
]
BaseUrl = Annotated[
    str | None,
    Field(description="With `html`: the address it came from (resolves links; metadata)."),
]
Query = Annotated[
    str | None,
    Field(
        description="What you want from the page (a question, a topic, a section or story "
        "title). Only the blocks relevant to it are returned. Leave out for the main content."
    ),
]
Format = Annotated[
    Literal["markdown", "text", "html", "json"],
    Field(
        description="Output format; `json` adds title, metadata, the page's type and the kept "
        "block indices."
    ),
]
Links = Annotated[
    bool, Field(description="Keep links as [text](absolute url); off by default (fewer tokens).")
]
Images = Annotated[
    bool,
    Field(description="Keep images as ![caption](absolute url); off by default (fewer tokens)."),
]
StartIndex = Annotated[
    int,
    Field(
        ge=0,
        description="Where to continue a long result: the start_index a previous call told you.",
    ),
]
MaxLength = Annotated[
    int,
    Field(gt=0, le=MAX_LENGTH_LIMIT, description="Characters to return at most in this call."),
]


def paginate(text: str, start_index: int, max_length: int, tool: str) -> str:
    """One part of ``text``: at most ``max_length`` characters from ``start_index``, ended (when
    more is left) at a line break if one is in the part's second half, and followed by a note that
    says how much is left and how to ask for it."""
    total = len(text)
    if start_index and start_index >= total:
        raise ToolError(
            f"start_index {start_index} is past the end: the whole result has {total} characters"
        )
    end = min(total, start_index + max_length)
    if end < total:
        cut = text.rfind("\n", start_index + max_length // 2, end)
        if cut > start_index:
            end = cut + 1
    part = text[start_index:end]
    if end < total:
        part += (
            f"\n\n[blockdex: this is characters {start_index}-{end} of {total}; {total - end} "
            f"more. Call {tool} again with the same arguments and start_index={end}.]"
        )
    return part


def _option_annotation(f: dataclasses.Field) -> Any:
    """The type a tool declares for an option (:func:`blockdex.options.json_schema_properties`
    says the same to the HTTP API)."""
    prop = json_schema_properties()[f.name]
    if "enum" in prop:
        kind: Any = Literal[tuple(prop["enum"])]
    else:
        kind = {"boolean": bool, "integer": int, "string": str}[prop["type"]]
    if f.default is None:
        kind = kind | None
    bounds = {"ge": prop["minimum"]} if "minimum" in prop else {}
    return Annotated[kind, Field(description=prop["description"], **bounds)]


def with_option_parameters(tool: Callable[..., Any]) -> Callable[..., Any]:
    """Give a tool that takes ``**options`` one parameter per option of
    :class:`~blockdex.options.ExtractOptions` (before its last two, the paging ones), typed and
    described from the option's declaration, so that the tool's schema lists them."""
    signature = inspect.signature(tool)
    own = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    options = [
        inspect.Parameter(
            f.name,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            default=f.default,
            annotation=_option_annotation(f),
        )
        for f in option_fields()
    ]
    tool.__signature__ = signature.replace(parameters=[*own[:-2], *options, *own[-2:]])  # type: ignore[attr-defined]
    return tool


def _notes(result: dict[str, Any]) -> str:
    lines = []
    if result.get("fallback"):
        lines.append(
            f"[blockdex: the model kept nothing, so a fallback chose these blocks "
            f"({result['fallback']})]"
        )
    lines.extend(f"[blockdex: {w}]" for w in result.get("warnings", ()))
    return "\n".join(lines)


def _payload(**fields: Any) -> dict[str, Any]:
    """The tool's arguments as an extract request (unset ones left out, so defaults apply)."""
    return {k: v for k, v in fields.items() if v is not None}


def create_mcp_server(
    config: ServerConfig | None = None, *, log_level: str = "WARNING"
) -> tuple[MCPServer, Service]:
    """The MCP server and the (started) service its tools run on; stop the service when done.
    The service fetches through a :class:`PageCache` (see the module's docs)."""
    config = config or ServerConfig()
    service = Service(config, fetch=PageCache(max_bytes=4 * config.max_page_bytes))
    service.start()
    server = MCPServer(
        "blockdex",
        title="blockdex",
        description="Reads web pages for an LLM: main content or query-relevant blocks.",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level=log_level.upper(),  # type: ignore[arg-type]
    )

    async def call(job: Callable[[], Any]) -> Any:
        try:
            return await service.run(job)
        except BlockdexError as exc:
            raise ToolError(f"{exc.message} ({exc.kind})") from None

    def request(payload: dict[str, Any]) -> Any:
        limit = service.config.max_body_bytes
        if len(payload.get("html") or "") > limit:
            raise ToolError(f"the html is over the {limit:,}-character limit (request_too_large)")
        try:
            return parse_extract_request(payload)
        except BlockdexError as exc:
            raise ToolError(f"{exc.message} ({exc.kind})") from None

    @server.tool(
        name="extract",
        title="Read a web page",
        description=(
            "Read a web page the way an LLM should: fetch it (or take its HTML) and return only "
            "its own content - the article, documentation, post or product, without menus, "
            "ads, footers, related links or the next story - as Markdown. With `query`, return "
            "only the parts of the page relevant to it (an empty result then means the page "
            "does not answer it). Long results come in parts: the end of a part says how to get "
            "the next one."
        ),
        structured_output=False,
    )
    @with_option_parameters
    async def extract(
        url: Url = None,
        html: Html = None,
        base_url: BaseUrl = None,
        start_index: StartIndex = 0,
        max_length: MaxLength = DEFAULT_MAX_LENGTH,
        **options: Any,
    ) -> str:
        req = request(_payload(url=url, html=html, base_url=base_url, **options))
        result = await call(lambda: service.extract(req))
        content = result["content"]
        if not isinstance(content, str):  # json: the whole body, not only the content
            import json

            content = json.dumps(content, ensure_ascii=False, indent=1)
        notes = _notes(result)
        if not content.strip():
            why = (
                "no block of the page is relevant to the query"
                if req.query
                else "the page has no readable text"
            )
            return f"[blockdex: nothing kept: {why}]" + (f"\n{notes}" if notes else "")
        text = paginate(content, start_index, max_length, "extract")
        return f"{text}\n\n{notes}" if notes and start_index == 0 else text

    @server.tool(
        name="blocks",
        title="List a page's numbered blocks",
        description=(
            "List a web page's content as numbered blocks, one per line: `[i] <tag>text</tag>` "
            "(headings, paragraphs, list items, table rows, captions). The first lines give "
            "the page's title, its type (article, forum, product, collection, listing, "
            "documentation, service or other) and the index intervals blockdex itself would "
            "keep (the main content, or with `query` the relevant blocks). To read some blocks, pass their "
            "intervals to `select` with the same page and the same `links` setting."
        ),
        structured_output=False,
    )
    async def blocks(
        url: Url = None,
        html: Html = None,
        base_url: BaseUrl = None,
        query: Query = None,
        links: Links = False,
        start_index: StartIndex = 0,
        max_length: MaxLength = DEFAULT_MAX_LENGTH,
    ) -> str:
        req = request(_payload(url=url, html=html, base_url=base_url, query=query, links=links))
        result = await call(lambda: service.blocks(req))
        kept = "relevant to the query" if req.query else "main content"
        head = (
            f"title: {result['title'] or '(none)'}\n"
            f"url: {result['url'] or '(given as html)'}\n"
            f"page type: {result['page_type']} "
            f"(confidence {result['page_type_confidence']:.2f})\n"
            f"blocks: {result['n_blocks']} (0..{result['n_blocks'] - 1})\n"
            f"blockdex keeps ({kept}): {result['indices'] or 'nothing'}\n\n"
        )
        return paginate(head + result["blocks"], start_index, max_length, "blocks")

    @server.tool(
        name="select",
        title="Read chosen blocks of a page",
        description=(
            "Return the blocks of a web page that you choose by index, reassembled in page "
            "order as Markdown (lists and tables keep their structure). Number the blocks with "
            "`blocks` first, then pass the same page, the same `links` setting and `intervals`: "
            "closed [first, last] index pairs, e.g. [[3,7],[12,12]] for blocks 3 to 7 and 12."
        ),
        structured_output=False,
    )
    async def select(
        intervals: Annotated[
            list[list[int]] | str,
            Field(
                description="Closed [first, last] block index pairs, e.g. [[3,7],[12,12]] "
                "(the text of such a list is read too)."
            ),
        ],
        url: Url = None,
        html: Html = None,
        base_url: BaseUrl = None,
        format: Format = "markdown",
        links: Links = False,
        images: Images = False,
        start_index: StartIndex = 0,
        max_length: MaxLength = DEFAULT_MAX_LENGTH,
    ) -> str:
        req = request(
            _payload(
                url=url, html=html, base_url=base_url, format=format, links=links, images=images
            )
        )
        result = await call(lambda: service.select(req, intervals))
        content = result["content"]
        if not content.strip():
            return f"[blockdex: blocks {result['indices']} hold no text]"
        return paginate(content, start_index, max_length, "select")

    return server, service


def run_mcp(config: ServerConfig, *, http: bool = False, log_level: str = "warning") -> None:
    """Serve the tools over stdio (as agents launch it) or, with ``http``, streamable HTTP at
    ``http://host:port/mcp``, until stopped."""
    level = log_level.upper()
    logging.basicConfig(level=level, format="blockdex mcp: %(levelname)s %(message)s")
    for handler in logging.getLogger().handlers:  # libraries that set DEBUG on their own logger
        handler.setLevel(level)
    server, service = create_mcp_server(config, log_level=log_level)
    try:
        if http:
            server.run(
                "streamable-http",
                host=config.host,
                port=config.port,
                max_request_body_size=config.max_body_bytes,
            )
        else:
            server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        service.stop()
