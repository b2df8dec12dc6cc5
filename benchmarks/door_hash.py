"""The per-entry-point hashes of ``output_hash.py --doors``: one page through every door.

Each door's answer for a page is hashed with its timings left out; a row is ``door set id hash``.
The doors that run many pages at once (batch, crawl) are run once per format (and batch once
more per option set) on all the chosen pages, with a page time limit long enough that a loaded
machine does not turn a page into a timeout record; the crawl's local address is written BASE.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import io
import json
import re
import tempfile
import threading
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from blockdex.evaluate.datasets import EvalPage, load_dataset

FORMATS = ("markdown", "text", "html", "json")
TIMINGS = re.compile(r'"(?:timings_ms|timings)": \{[^{}]*\},?\s*')
TIME_KEYS = ("time_ms", "timings", "fetched_at", "seconds", "elapsed_ms", "fetch_ms")


def variant(i: int, page: EvalPage) -> dict[str, Any]:
    """The options page ``i`` is asked with (one set in turn; API keyword names)."""
    kind = i % 5
    if kind == 1:
        return {"favor": "precision"}
    if kind == 2:
        return {"favor": "recall", "comments": False}
    if kind == 3:
        return {"links": True, "images": True}
    if kind == 4 and page.ground_truth:
        words = page.ground_truth.split()[:4]
        if words:
            return {"query": " ".join(words)}
    return {}


def cli_flags(options: dict[str, Any]) -> list[str]:
    flags: list[str] = []
    if "favor" in options:
        flags += ["--favor", options["favor"]]
    if options.get("comments") is False:
        flags.append("--no-comments")
    if options.get("links"):
        flags.append("--links")
    if options.get("images"):
        flags.append("--images")
    if "query" in options:
        flags += ["--query", options["query"]]
    return flags


def digest(*parts: Any) -> str:
    text = "\n\x00".join(p if isinstance(p, str) else json.dumps(p, sort_keys=True) for p in parts)
    return hashlib.sha256(TIMINGS.sub("", text).encode("utf-8", "surrogatepass")).hexdigest()


def scrub(record: dict[str, Any]) -> dict[str, Any]:
    """A record without the fields that vary from run to run (times, temporary paths)."""
    out = {k: v for k, v in record.items() if k not in TIME_KEYS and not k.endswith("_ms")}
    content = out.get("content")
    if isinstance(content, str) and content.startswith("{"):  # a JSON record: its timings
        with contextlib.suppress(ValueError):
            doc = json.loads(content)
            doc.pop("timings_ms", None)
            out["content"] = json.dumps(doc, sort_keys=True, ensure_ascii=False)
    for key in ("source", "file"):
        if isinstance(out.get(key), str):
            out[key] = Path(out[key]).name
    return out


def with_options(cls: type, settings: dict[str, Any], **kwargs: Any) -> Any:
    """``cls`` (BatchConfig, CrawlConfig) with the extraction ``settings`` (API keywords), as
    fields of their own or, since issue 44, as one ``options`` value."""
    if "options" in cls.__dataclass_fields__:
        from blockdex.options import ExtractOptions

        return cls(options=ExtractOptions.from_kwargs(**settings), **kwargs)
    return cls(**settings, **kwargs)


def chosen_pages(sets: Sequence[str], every: int) -> list[tuple[str, EvalPage]]:
    pages = []
    for name in sets:
        for n, page in enumerate(load_dataset(name)):
            if n % every == 0:
                pages.append((name, page))
    return pages


def door_rows(sets: Sequence[str], every: int) -> list[str]:
    pages = chosen_pages(sets, every)
    keys = [f"{name} {page.id}" for name, page in pages]
    options = [variant(i, page) for i, (_, page) in enumerate(pages)]
    rows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="blockdex-doors-") as tmp:
        root = Path(tmp)
        files = []
        for i, (_, page) in enumerate(pages):
            path = root / "pages" / f"p{i:05d}.html"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(page.html.encode("utf-8", "surrogatepass"))
            files.append(path)
        for door, hashes in (
            ("api", api_door(pages, options)),
            ("cli", cli_door(pages, files, options, root)),
            ("http", http_door(pages, options)),
            ("mcp", mcp_door(pages, options)),
            ("batch", batch_door(pages, options, root)),
            ("crawl", crawl_door(files, root)),
        ):
            rows += [f"{door} {key} {h}" for key, h in zip(keys, hashes, strict=True)]
            print(f"  {door}: {len(hashes)} pages", flush=True)
    return rows


def api_door(pages: list[tuple[str, EvalPage]], options: list[dict[str, Any]]) -> list[str]:
    import blockdex

    hashes = []
    for (_, page), opts in zip(pages, options, strict=True):
        kwargs = {k: v for k, v in opts.items() if k != "comments"}  # not a keyword before 44
        hashes.append(
            digest(
                *(blockdex.extract(page.html, url=page.url, output=f, **kwargs) for f in FORMATS)
            )
        )
    return hashes


def cli_door(
    pages: list[tuple[str, EvalPage]],
    files: list[Path],
    options: list[dict[str, Any]],
    root: Path,
) -> list[str]:
    from blockdex.cli import main

    out = root / "cli.out"
    hashes = []
    for (_, page), path, opts in zip(pages, files, options, strict=True):
        parts: list[Any] = []
        for fmt in FORMATS:
            url = ["--url", page.url] if page.url else []
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                code = main(
                    ["extract", str(path), "-f", fmt, "-o", str(out), *url, *cli_flags(opts)]
                )
            parts += [
                str(code),
                out.read_text(encoding="utf-8") if code == 0 else "",
                err.getvalue(),
            ]
        hashes.append(digest(*parts))
    return hashes


def _payload(page: EvalPage, opts: dict[str, Any]) -> dict[str, Any]:
    payload: dict[str, Any] = {"html": page.html, **opts}
    if page.url:
        payload["base_url"] = page.url
    return payload


def http_door(pages: list[tuple[str, EvalPage]], options: list[dict[str, Any]]) -> list[str]:
    from starlette.testclient import TestClient

    from blockdex.server.http import create_app

    hashes = []
    with TestClient(create_app()) as client:
        for (_, page), opts in zip(pages, options, strict=True):
            parts: list[Any] = []
            for fmt in FORMATS:
                resp = client.post("/v1/extract", json={**_payload(page, opts), "format": fmt})
                body = resp.json()
                body.pop("timings", None)
                parts += [str(resp.status_code), body]
            hashes.append(digest(*parts))
    return hashes


def mcp_door(pages: list[tuple[str, EvalPage]], options: list[dict[str, Any]]) -> list[str]:
    from blockdex.server.mcp import create_mcp_server

    server, service = create_mcp_server()

    async def call_all() -> list[str]:
        hashes = []
        for (_, page), opts in zip(pages, options, strict=True):
            parts: list[Any] = []
            for fmt in FORMATS:
                try:
                    result = await server.call_tool(
                        "extract", {**_payload(page, opts), "format": fmt}
                    )
                    parts.append(
                        "".join(getattr(c, "text", "") for c in getattr(result, "content", []))
                    )
                except Exception as exc:  # a tool error is an answer too
                    parts.append(f"error: {exc}")
            hashes.append(digest(*parts))
        return hashes

    try:
        return asyncio.run(call_all())
    finally:
        service.stop()


def batch_door(
    pages: list[tuple[str, EvalPage]], options: list[dict[str, Any]], root: Path
) -> list[str]:
    """Each format with the default options, then each option set in Markdown (every page is
    hashed in every run: a batch run takes its options for all its pages)."""
    from blockdex.batch import BatchConfig, read_records, run_batch

    jsonl = root / "batch.jsonl"
    with jsonl.open("w", encoding="utf-8") as fh:
        for i, (_, page) in enumerate(pages):
            fh.write(json.dumps({"id": f"p{i:05d}", "url": page.url, "html": page.html}) + "\n")
    runs: list[dict[str, Any]] = [{"output": f} for f in FORMATS]
    seen = []
    for opts in options:
        if opts and "query" not in opts and opts not in seen:
            seen.append(opts)
    runs += [{"output": "markdown", **o} for o in seen]
    runs.append({"output": "markdown", "query": "contact address"})
    per_page: list[list[Any]] = [[] for _ in pages]
    for n, run in enumerate(runs):
        out = root / f"batch-{n}"
        run_batch(
            [str(jsonl)],
            out,
            with_options(BatchConfig, run, jobs=4, page_timeout=120.0),
            progress=False,
        )
        for rec in read_records(out):
            per_page[rec["seq"]].append(scrub(rec))
    return [digest(*parts) for parts in per_page]


@contextlib.contextmanager
def local_site(files: list[Path]) -> Iterator[str]:
    """Serve the pages at ``/pNNNNN.html`` on loopback."""
    by_name = {f.name: f.read_bytes() for f in files}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            body = by_name.get(self.path.lstrip("/"))
            if body is None:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def crawl_door(files: list[Path], root: Path) -> list[str]:
    """A crawl of the pages as seeds (depth 0), once in JSON and once in Markdown with links."""
    from blockdex.crawl import CrawlConfig, run_crawl
    from blockdex.fetch import FetchConfig

    per_page: list[list[Any]] = [[] for _ in files]
    with local_site(files) as base:
        seeds = [f"{base}/{f.name}" for f in files]
        for n, extra in enumerate(({"output": "json"}, {"output": "markdown", "links": True})):
            out = root / f"crawl-{n}"
            cfg = with_options(
                CrawlConfig,
                extra,
                depth=0,
                delay=0.0,
                jobs=4,
                page_timeout=120.0,
                per_host=8,
                sitemaps=False,
                fetch=FetchConfig(allow_private=True),
            )
            run_crawl(seeds, out, cfg, progress=False)
            records = [json.loads(line) for line in (out / "pages.jsonl").open(encoding="utf-8")]
            for rec in records:
                i = int(rec["url"].rsplit("/p", 1)[1].split(".")[0])
                rec = scrub(rec)
                written = rec.get("file")
                content = ""
                if written:
                    hits = list(out.rglob(written))
                    content = hits[0].read_text(encoding="utf-8") if hits else ""
                text = json.dumps(rec, sort_keys=True, ensure_ascii=False)
                per_page[i] += [text.replace(base, "BASE"), content.replace(base, "BASE")]
    return [digest(*parts) for parts in per_page]
