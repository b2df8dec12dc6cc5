"""``blockdex mcp``: the MCP SDK's own client drives the server over stdio (initialize, list
tools, call each tool, bad inputs), plus the pieces it is built from (pagination, interval
checks, the page cache)."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

mcp = pytest.importorskip(
    "mcp", reason="the MCP SDK is the 'mcp' extra: pip install 'blockdex[mcp]'"
)

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from blockdex import segment  # noqa: E402
from blockdex.server.service import PageCache, check_intervals  # noqa: E402

DATA = Path(__file__).parent / "data"
ARTICLE = (DATA / "article.html").read_text(encoding="utf-8")
IMAGES = (DATA / "fidelity" / "images.html").read_text(encoding="utf-8")
# the article's own first paragraph, and a line of its navigation that main content leaves out
ARTICLE_TEXT = "Twice a day the sea rises against the concrete wall of the lagoon"
NAV_TEXT = "We use cookies to improve your experience"


class Site(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[dict[str, int]] = {}

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        Site.hits[self.path] = Site.hits.get(self.path, 0) + 1
        body, ctype = ARTICLE.encode(), "text/html; charset=utf-8"
        if self.path == "/pdf":
            body, ctype = b"%PDF-1.4\n" + bytes(range(256)) * 8, "application/pdf"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Site)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def stdio(*args: str) -> StdioServerParameters:
    """``blockdex mcp`` as an agent launches it: a subprocess speaking MCP on stdin/stdout. It
    gets this process's environment (the SDK passes only a few variables by default), so it runs
    the blockdex under test also when that is found through ``PYTHONPATH``."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "blockdex", "mcp", *args], env=dict(os.environ)
    )


def text_of(result: Any) -> str:
    assert len(result.content) == 1
    return result.content[0].text


def run(scenario: Any) -> Any:
    return asyncio.run(asyncio.wait_for(scenario, timeout=120))


def test_stdio_session_lists_and_calls_every_tool() -> None:
    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(stdio()) as client:
            out["server"] = client.server_info
            out["instructions"] = client.instructions
            out["tools"] = {t.name: t for t in (await client.list_tools()).tools}
            out["extract"] = await client.call_tool("extract", {"html": ARTICLE})
            out["query"] = await client.call_tool(
                "extract", {"html": ARTICLE, "query": "how much energy does the lagoon store"}
            )
            out["json"] = await client.call_tool("extract", {"html": ARTICLE, "format": "json"})
            out["blocks"] = await client.call_tool("blocks", {"html": ARTICLE})
            out["select"] = await client.call_tool(
                "select", {"html": ARTICLE, "intervals": [[8, 8], [12, 12]]}
            )
            every = [[0, len(segment(IMAGES).blocks) - 1]]
            page = {"html": IMAGES, "base_url": "https://site.example/post/1", "intervals": every}
            out["images"] = await client.call_tool("select", {**page, "images": True})
            out["no_images"] = await client.call_tool("select", page)
            out["select_text"] = await client.call_tool(
                "select", {"html": ARTICLE, "intervals": "[[8,8]]", "format": "text"}
            )
        return out

    out = run(scenario())
    assert out["server"].name == "blockdex"
    assert "extract" in out["instructions"]
    assert set(out["tools"]) == {"extract", "blocks", "select"}
    for tool in out["tools"].values():
        assert len(tool.description) > 80  # written for a model to read
        props = tool.input_schema["properties"]
        assert {"url", "html", "links", "start_index", "max_length"} <= set(props)
        assert all(p.get("description") for p in props.values())
    assert out["tools"]["select"].input_schema["required"] == ["intervals"]

    main = out["extract"]
    assert not main.is_error
    assert text_of(main).startswith("# How Tidal Power Plants Store Energy")
    assert ARTICLE_TEXT in text_of(main) and NAV_TEXT not in text_of(main)
    assert not out["query"].is_error and text_of(out["query"]).strip()
    body = json.loads(text_of(out["json"]))
    assert body["title"] == "How Tidal Power Plants Store Energy"
    assert body["page_type"] == "article" and body["page_type_confidence"] > 0.5

    listing = text_of(out["blocks"])
    assert "title: How Tidal Power Plants Store Energy" in listing
    assert "\npage type: article (confidence " in listing
    assert "[8] <h1>How Tidal Power Plants Store Energy</h1>" in listing
    assert f"[0] <div>{NAV_TEXT}" in listing
    kept = json.loads(listing.split("blockdex keeps (main content): ")[1].split("\n")[0])
    assert [8, 8] not in kept and any(a <= 12 <= b for a, b in kept)

    chosen = text_of(out["select"])
    assert chosen.startswith("# How Tidal Power Plants Store Energy\n")
    assert len(chosen.strip().split("\n\n")) == 2  # the heading and one paragraph
    assert text_of(out["select_text"]).strip() == "How Tidal Power Plants Store Energy"
    assert "![A lazy image](https://site.example/img/lazy.jpg)" in text_of(out["images"])
    assert "](" not in text_of(out["no_images"]) and "Sales by year" in text_of(out["no_images"])


def test_long_results_come_in_parts_that_add_up() -> None:
    async def scenario() -> tuple[str, list[str]]:
        parts: list[str] = []
        async with Client(stdio()) as client:
            whole = text_of(await client.call_tool("extract", {"html": ARTICLE}))
            start: int | None = 0
            while start is not None and len(parts) < 50:
                part = text_of(
                    await client.call_tool(
                        "extract", {"html": ARTICLE, "start_index": start, "max_length": 400}
                    )
                )
                body, sep, note = part.partition("\n\n[blockdex: this is characters ")
                parts.append(body)
                start = int(note.split("start_index=")[1].rstrip(".]")) if sep else None
        return whole, parts

    whole, parts = run(scenario())
    assert len(parts) > 2
    assert all(len(p) <= 400 for p in parts)
    assert "".join(parts) == whole


def test_bad_inputs_are_tool_errors_and_the_server_lives_on(site: str) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("extract", {"html": "just a line of plain text, no tags"}),
        ("extract", {"url": f"{site}/article.html"}),  # loopback: refused by default
        ("extract", {"url": "http://169.254.169.254/latest/meta-data/"}),
        ("extract", {"url": "ftp://example.org/a"}),
        ("extract", {}),
        ("extract", {"html": ARTICLE, "url": f"{site}/article.html"}),
        ("extract", {"html": ARTICLE, "format": "pdf"}),
        ("extract", {"html": ARTICLE, "start_index": 10**6}),
        ("extract", {"html": ARTICLE, "query": "tides", "favor": "recall"}),
        ("select", {"html": ARTICLE, "intervals": [[7, 3]]}),
        ("select", {"html": ARTICLE, "intervals": [[0, 10_000]]}),
        ("select", {"html": ARTICLE, "intervals": [[1, 2, 3]]}),
        ("select", {"html": ARTICLE, "intervals": []}),
        ("select", {"html": ARTICLE, "intervals": "the good ones"}),
        ("select", {"html": ARTICLE}),
        ("blocks", {"html": ""}),
        ("nonexistent", {}),
    ]

    async def scenario() -> tuple[list[Any], Any]:
        results = []
        async with Client(stdio()) as client:
            for name, args in calls:
                results.append(await client.call_tool(name, args))
            after = await client.call_tool("extract", {"html": ARTICLE})
        return results, after

    results, after = run(scenario())
    messages = [text_of(r) for r in results]
    assert all(r.is_error for r in results), messages
    expected = [
        "not_html",
        "loopback",
        "unsafe_url",
        "unsafe_url",
        "give the page as 'html'",
        "not both",
        "format",
        "past the end",
        "favor",
        "runs backwards",
        "outside the page's blocks 0..",
        "is not a [first, last] pair",
        "non-empty list",
        "could not read",
        "intervals",
        "empty_input",
        "nonexistent",
    ]
    for message, wanted in zip(messages, expected, strict=True):
        assert wanted in message, message
    assert "Traceback" not in "".join(messages)
    assert not after.is_error and ARTICLE_TEXT in text_of(after)


def test_urls_are_fetched_once_for_blocks_then_select(site: str) -> None:
    url = f"{site}/article.html?mcp-cache"

    async def scenario() -> tuple[Any, Any, Any]:
        async with Client(stdio("--allow-private")) as client:
            blocks = await client.call_tool("blocks", {"url": url})
            chosen = await client.call_tool("select", {"url": url, "intervals": [[8, 8]]})
            pdf = await client.call_tool("extract", {"url": f"{site}/pdf"})
        return blocks, chosen, pdf

    Site.hits.pop("/article.html?mcp-cache", None)
    blocks, chosen, pdf = run(scenario())
    assert f"url: {url}" in text_of(blocks)
    assert text_of(chosen).strip() == "# How Tidal Power Plants Store Energy"
    assert Site.hits["/article.html?mcp-cache"] == 1
    assert pdf.is_error and "application/pdf" in text_of(pdf)


def test_the_help_shows_an_agent_configuration() -> None:
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "blockdex", "mcp", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0
    assert '"command": "blockdex", "args": ["mcp"]' in out.stdout
    assert "--allow-private" in out.stdout and "--http" in out.stdout


# -- the pieces --------------------------------------------------------------------------------


def test_paginate_cuts_at_line_breaks_and_says_what_is_left() -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    from blockdex.server.mcp import paginate

    text = "".join(f"line {i:03d}\n" for i in range(100))  # 9 characters a line
    first = paginate(text, 0, 100, "extract")
    body, _, note = first.partition("\n\n[blockdex: ")
    assert body == text[:99]  # 11 whole lines, not 100 characters
    assert "characters 0-99 of 900; 801 more" in note and "start_index=99" in note
    assert paginate(text, 0, 10_000, "extract") == text
    last = paginate(text, 891, 100, "extract")
    assert last == "line 099\n"
    with pytest.raises(ToolError, match="past the end"):
        paginate(text, 900, 100, "extract")
    # one long line: cut where the limit falls
    assert paginate("x" * 50, 0, 20, "select").startswith("x" * 20 + "\n\n[blockdex: ")


def test_check_intervals_merges_and_names_the_problem() -> None:
    from blockdex.server.service import RequestError

    page = segment(ARTICLE)
    n = len(page.blocks)
    assert check_intervals([[3, 5], [6, 7], [9, 9]], page) == ((3, 7), (9, 9))
    assert check_intervals("[[2,4], [10,10]]", page) == ((2, 4), (10, 10))
    for bad, why in (
        ([[5, 3]], "runs backwards"),
        ([[0, n]], f"outside the page's blocks 0..{n - 1}"),
        ([[-1, 2]], "outside"),
        ([[True, 2]], "is not a [first, last] pair"),
        ([3, 5], "is not a [first, last] pair"),
        ("", "could not read"),
        (None, "non-empty list"),
    ):
        with pytest.raises(RequestError, match="bad interval list") as info:
            check_intervals(bad, page)
        assert why in info.value.message


def test_page_cache_is_bounded_and_does_not_keep_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    import blockdex.fetch
    from blockdex.errors import FetchError
    from blockdex.fetch import DEFAULT_FETCH, FetchedPage

    fetched: list[str] = []

    def fake_fetch(url: str, config: Any) -> FetchedPage:
        fetched.append(url)
        if "bad" in url:
            raise FetchError(f"{url}: 404")
        return FetchedPage(url=url, body=b"x" * 100, content_type="text/html", status=200)

    monkeypatch.setattr(blockdex.fetch, "fetch_url", fake_fetch)
    cache = PageCache(max_pages=3, max_bytes=250)
    for url in ("a", "b", "a", "c"):
        cache(url, DEFAULT_FETCH)
    assert fetched == ["a", "b", "c"]  # the second "a" came from the cache
    assert len(cache) == 2  # 300 bytes is over the 250-byte bound: "b" (least recent) went
    for _ in range(2):
        with pytest.raises(FetchError):
            cache("bad", DEFAULT_FETCH)
    assert fetched.count("bad") == 2
    expired = PageCache(ttl=0.0)
    expired("a", DEFAULT_FETCH)
    expired("a", DEFAULT_FETCH)
    assert fetched.count("a") == 3


def test_streamable_http_transport_serves_the_same_tools() -> None:
    import socket
    import subprocess
    import time

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "blockdex", "mcp", "--http", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "blockdex mcp --http did not start"
            time.sleep(0.1)

        async def scenario() -> tuple[set[str], Any]:
            async with Client(f"http://127.0.0.1:{port}/mcp") as client:
                names = {t.name for t in (await client.list_tools()).tools}
                return names, await client.call_tool("extract", {"html": ARTICLE})

        names, result = run(scenario())
        assert names == {"extract", "blocks", "select"}
        assert not result.is_error and ARTICLE_TEXT in text_of(result)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
