"""The RAG-framework adapters: LangChain's loader and transformer, LlamaIndex's reader.

They run on tests/data/article.html, read from disk or served by a local HTTP server (which the
fetcher reaches only when the test's FetchConfig allows loopback).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from blockdex.errors import BlockdexError, NotHTML, UnknownPredictor, UnsafeURL
from blockdex.fetch import FetchConfig

DATA = Path(__file__).parent / "data"
ARTICLE = DATA / "article.html"
LOOPBACK = FetchConfig(allow_private=True, timeout=5.0, max_seconds=10.0)

FIRST_SENTENCE = "Twice a day the sea rises against the concrete wall of the lagoon"
BIRDS_SENTENCE = "Critics point out that the lagoon changes the habitat of wading birds"
ARTICLE_META = {
    "title": "How Tidal Power Plants Store Energy",
    "author": "Mara Lindqvist",
    "date": "2026-03-14T08:00:00Z",
    "site_name": "The Harbour Gazette",
    "language": "en",
    "description": "A visit to a tidal lagoon that turns the moon's pull into electricity.",
    "canonical": "https://gazette.example/science/tidal-storage",
}
BOILERPLATE = ("We use cookies", "Share on Facebook", "Privacy policy")
PDF = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog >> endobj\n" * 4


@pytest.fixture(scope="module")
def langchain() -> Any:
    pytest.importorskip("langchain_core", reason="needs the 'langchain' extra (langchain-core)")
    from blockdex.integrations import langchain

    return langchain


@pytest.fixture(scope="module")
def llamaindex() -> Any:
    pytest.importorskip(
        "llama_index.core", reason="needs the 'llamaindex' extra (llama-index-core)"
    )
    from blockdex.integrations import llamaindex

    return llamaindex


# --- a local site ------------------------------------------------------------------------------


def _respond(status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None):
    def handle(req: BaseHTTPRequestHandler) -> None:
        req.send_response(status)
        req.send_header("Content-Type", ctype)
        req.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            req.send_header(key, value)
        req.end_headers()
        req.wfile.write(body)

    return handle


ROUTES: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {
    "/science/tidal": _respond(200, ARTICLE.read_bytes(), "text/html; charset=utf-8"),
    "/old-link": _respond(301, b"", "text/html", {"Location": "/science/tidal"}),
    "/report.pdf": _respond(200, PDF, "application/pdf"),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        route = ROUTES.get(self.path, _respond(404, b"<p>Not found</p>", "text/html"))
        route(self)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _bad_files(tmp_path: Path) -> tuple[Path, Path]:
    pdf = tmp_path / "report.html"  # the name says HTML, the bytes do not
    pdf.write_bytes(PDF)
    return pdf, tmp_path / "missing.html"


# --- LangChain: the loader ---------------------------------------------------------------------


def test_loader_reads_a_file_into_main_content_and_page_metadata(langchain: Any) -> None:
    docs = langchain.BlockdexLoader(str(ARTICLE)).load()
    assert len(docs) == 1
    doc = docs[0]
    assert doc.page_content.startswith("# How Tidal Power Plants Store Energy\n")
    assert FIRST_SENTENCE in doc.page_content
    assert "| Ebb generation | 4.2 | 240 |" in doc.page_content  # the table, as Markdown
    for noise in BOILERPLATE:
        assert noise not in doc.page_content
    assert doc.metadata["source"] == str(ARTICLE)
    for key, value in ARTICLE_META.items():
        assert doc.metadata[key] == value, key
    # a file has no address of its own: the page's canonical link gives it (issue 43)
    assert doc.metadata["url"] == "https://gazette.example/science/tidal-storage"
    assert doc.metadata["predictor"] == "content"
    assert doc.metadata["n_blocks"] > 20
    assert doc.metadata["selection"].startswith("[[")
    assert doc.metadata["page_type"] == "article"
    assert isinstance(doc.metadata["page_type_confidence"], float)
    # flat, non-null values: what vector stores accept
    assert all(isinstance(v, str | int | float) for v in doc.metadata.values())


def test_loader_fetches_urls_and_reports_the_address_after_redirects(
    langchain: Any, site: str
) -> None:
    loader = langchain.BlockdexLoader(
        [f"{site}/old-link", ARTICLE], fetch_config=LOOPBACK, links=True
    )
    fetched, read = loader.load()
    assert fetched.metadata["source"] == f"{site}/old-link"
    assert fetched.metadata["url"] == f"{site}/science/tidal"
    assert fetched.metadata["author"] == "Mara Lindqvist"
    assert FIRST_SENTENCE in fetched.page_content
    # links resolve against the address the page came from
    assert f"[Mara Lindqvist]({site}/authors/mara)" in fetched.page_content
    assert read.metadata["source"] == str(ARTICLE)  # a Path works as a source too
    # no address given: the canonical link's (issue 43), not relative links
    assert "[Mara Lindqvist](https://gazette.example/authors/mara)" in read.page_content


def test_loader_refuses_loopback_by_default_after_yielding_earlier_pages(
    langchain: Any, site: str
) -> None:
    docs = langchain.BlockdexLoader([ARTICLE, f"{site}/science/tidal"]).lazy_load()
    assert FIRST_SENTENCE in next(docs).page_content
    with pytest.raises(UnsafeURL, match=r"loopback.*FetchConfig\(allow_private=True\)"):
        next(docs)


def test_loader_records_every_failure_as_a_document(
    langchain: Any, site: str, tmp_path: Path
) -> None:
    pdf, missing = _bad_files(tmp_path)
    sources = [
        pdf,
        f"{site}/report.pdf",
        ARTICLE,
        missing,
        f"{site}/nowhere",
        "ftp://example.org/page.html",
    ]
    docs = langchain.BlockdexLoader(sources, fetch_config=LOOPBACK, on_error="record").load()
    assert [d.metadata["source"] for d in docs] == [str(s) for s in sources]
    kinds = [d.metadata.get("error_kind") for d in docs]
    assert kinds == ["not_html", "not_html", None, "error", "fetch_error", "unsafe_url"]
    assert "PDF" in docs[0].metadata["error"]
    assert "no such file" in docs[3].metadata["error"]
    assert "HTTP 404" in docs[4].metadata["error"]
    assert all(d.page_content == "" for i, d in enumerate(docs) if i != 2)
    assert FIRST_SENTENCE in docs[2].page_content
    assert "error" not in docs[2].metadata


def test_loader_skips_failures_with_a_warning(
    langchain: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pdf, missing = _bad_files(tmp_path)
    with caplog.at_level(logging.WARNING, logger="blockdex.integrations"):
        docs = langchain.BlockdexLoader([pdf, ARTICLE, missing], on_error="skip").load()
    assert [d.metadata["source"] for d in docs] == [str(ARTICLE)]
    assert f"skipped {pdf}" in caplog.text
    assert f"skipped {missing}: cannot read" in caplog.text


def test_loader_raises_a_clear_error_by_default(langchain: Any, tmp_path: Path) -> None:
    pdf, missing = _bad_files(tmp_path)
    with pytest.raises(NotHTML, match="PDF"):
        langchain.BlockdexLoader(pdf).load()
    with pytest.raises(BlockdexError, match="no such file"):
        langchain.BlockdexLoader(missing).load()


def test_loader_query_keeps_the_relevant_blocks(langchain: Any) -> None:
    doc = langchain.BlockdexLoader(ARTICLE, query="wading birds on the mudflats").load()[0]
    assert BIRDS_SENTENCE in doc.page_content
    assert FIRST_SENTENCE not in doc.page_content
    assert doc.metadata["query"] == "wading birds on the mudflats"
    assert doc.metadata["title"] == ARTICLE_META["title"]


def test_loader_output_formats(langchain: Any) -> None:
    text = langchain.BlockdexLoader(ARTICLE, output="text").load()[0].page_content
    assert FIRST_SENTENCE in text and "*hold back*" not in text and "hold back" in text
    record = json.loads(langchain.BlockdexLoader(ARTICLE, output="json").load()[0].page_content)
    assert record["metadata"]["author"] == "Mara Lindqvist"
    assert FIRST_SENTENCE in record["markdown"]


def test_settings_errors_are_raised_whatever_on_error_says(langchain: Any) -> None:
    with pytest.raises(UnknownPredictor):
        langchain.BlockdexLoader(ARTICLE, predictor="no-such-model", on_error="record")
    with pytest.raises(BlockdexError, match="output format"):
        langchain.BlockdexLoader(ARTICLE, output="pdf")
    with pytest.raises(BlockdexError, match="on_error must be one of raise, skip, record"):
        langchain.BlockdexLoader(ARTICLE, on_error="ignore")
    with pytest.raises(BlockdexError, match="only to the main-content model"):
        langchain.BlockdexLoader(ARTICLE, favor="precision", query="birds")
    with pytest.raises(BlockdexError, match="favor must be one of"):
        langchain.BlockdexLoader(ARTICLE, favor="everything")


def test_loader_favor_and_comments(langchain: Any) -> None:
    recall = langchain.BlockdexLoader(ARTICLE, favor="recall").load()[0].page_content
    precise = langchain.BlockdexLoader(ARTICLE, favor="precision").load()[0].page_content
    assert FIRST_SENTENCE in precise and FIRST_SENTENCE in recall
    assert len(recall) >= len(precise)


def test_loader_takes_a_shared_extractor(langchain: Any) -> None:
    from blockdex.extract import Extractor, output_config

    shared = Extractor(config=output_config(links=True))
    doc = langchain.BlockdexLoader(ARTICLE, extractor=shared).load()[0]
    # resolved against the page's canonical link (it has no other address: issue 43)
    assert "[Mara Lindqvist](https://gazette.example/authors/mara)" in doc.page_content
    with pytest.raises(BlockdexError, match="either an extractor or"):
        langchain.BlockdexLoader(ARTICLE, extractor=shared, links=True)


# --- LangChain: the transformer ----------------------------------------------------------------


def test_transformer_turns_html_documents_into_markdown_keeping_their_metadata(
    langchain: Any,
) -> None:
    from langchain_core.documents import Document

    html = ARTICLE.read_text(encoding="utf-8")
    url = "https://gazette.example/science/tidal-storage"
    given = Document(
        page_content=html,
        metadata={"source": url, "title": "Tidal (from the crawler)", "crawl_id": 7},
        id="doc-1",
    )
    (doc,) = langchain.BlockdexTransformer(links=True).transform_documents([given])
    assert doc.id == "doc-1"
    assert doc.page_content.startswith("# How Tidal Power Plants Store Energy")
    assert FIRST_SENTENCE in doc.page_content
    assert "<p>" not in doc.page_content
    assert "[Mara Lindqvist](https://gazette.example/authors/mara)" in doc.page_content
    # the Document's own values stay; the page's fill in what it lacked
    assert doc.metadata["title"] == "Tidal (from the crawler)"
    assert doc.metadata["crawl_id"] == 7
    assert doc.metadata["source"] == url
    assert doc.metadata["url"] == url
    assert doc.metadata["author"] == "Mara Lindqvist"
    assert doc.metadata["date"] == "2026-03-14T08:00:00Z"
    assert given.page_content == html  # the input is not changed


def test_images_on_request_in_every_adapter(langchain: Any, llamaindex: Any) -> None:
    page = DATA / "fidelity" / "images.html"
    shown = "![A lazy image](/img/lazy.jpg)"
    (with_images,) = langchain.BlockdexLoader(page, predictor="all", images=True).load()
    (without,) = langchain.BlockdexLoader(page, predictor="all").load()
    assert shown in with_images.page_content
    assert "](" not in without.page_content and "Sales by year" in without.page_content
    (read,) = llamaindex.BlockdexReader(predictor="all", images=True).load_data(files=[page])
    assert shown in read.text
    html = page.read_text(encoding="utf-8")
    given = langchain_document(html, "https://site.example/post/1")
    (doc,) = langchain.BlockdexTransformer(predictor="all", images=True).transform_documents(
        [given]
    )
    assert "![A lazy image](https://site.example/img/lazy.jpg)" in doc.page_content
    with pytest.raises(BlockdexError, match="not both"):
        langchain.BlockdexLoader(page, extractor=object(), images=True)  # type: ignore[arg-type]


def langchain_document(html: str, source: str) -> Any:
    from langchain_core.documents import Document

    return Document(page_content=html, metadata={"source": source})


def test_transformer_query_set_once_or_per_call(langchain: Any) -> None:
    from langchain_core.documents import Document

    given = [Document(page_content=ARTICLE.read_text(encoding="utf-8"))]
    by_setting = langchain.BlockdexTransformer(query="wading birds").transform_documents(given)
    per_call = langchain.BlockdexTransformer().transform_documents(given, query="wading birds")
    for (doc,) in (by_setting, per_call):
        assert BIRDS_SENTENCE in doc.page_content
        assert FIRST_SENTENCE not in doc.page_content
        assert doc.metadata["query"] == "wading birds"
        # no http(s) source: the page's canonical link is its address (issue 43)
        assert doc.metadata["url"] == "https://gazette.example/science/tidal-storage"


def test_transformer_on_a_document_that_is_not_html(langchain: Any) -> None:
    from langchain_core.documents import Document

    good = Document(page_content=ARTICLE.read_text(encoding="utf-8"), metadata={"source": "a"})
    plain = Document(page_content="just a sentence of plain text", metadata={"source": "notes"})
    with pytest.raises(NotHTML, match="no HTML tags"):
        langchain.BlockdexTransformer().transform_documents([good, plain])
    recorded = langchain.BlockdexTransformer(on_error="record").transform_documents([good, plain])
    assert [d.metadata.get("error_kind") for d in recorded] == [None, "not_html"]
    assert recorded[1].page_content == "" and recorded[1].metadata["source"] == "notes"
    skipped = langchain.BlockdexTransformer(on_error="skip").transform_documents([plain, good])
    assert [d.metadata["source"] for d in skipped] == ["a"]


# --- LlamaIndex: the reader --------------------------------------------------------------------


def test_reader_loads_files_and_urls_with_metadata(llamaindex: Any, site: str) -> None:
    from llama_index.core.schema import Document, MetadataMode

    reader = llamaindex.BlockdexReader(fetch_config=LOOPBACK)
    docs = reader.load_data(urls=[f"{site}/old-link"], files=str(ARTICLE))
    assert all(isinstance(d, Document) for d in docs)
    fetched, read = docs
    assert fetched.metadata["url"] == f"{site}/science/tidal"
    assert read.metadata["source"] == str(ARTICLE)
    for doc in docs:
        assert FIRST_SENTENCE in doc.text
        for key, value in ARTICLE_META.items():
            assert doc.metadata[key] == value, key
    # what gets embedded: the text with what the page is about, not the bookkeeping
    embedded = read.get_content(MetadataMode.EMBED)
    assert "author: Mara Lindqvist" in embedded and FIRST_SENTENCE in embedded
    assert "selection:" not in embedded and "source:" not in embedded
    shown = read.get_content(MetadataMode.LLM)
    assert "source: " in shown and "n_blocks" not in shown


def test_reader_is_lazy_and_takes_a_query_per_call(llamaindex: Any) -> None:
    reader = llamaindex.BlockdexReader()
    docs = reader.lazy_load_data(files=[ARTICLE], query="wading birds")
    assert not isinstance(docs, list)
    (doc,) = list(docs)
    assert BIRDS_SENTENCE in doc.text and FIRST_SENTENCE not in doc.text
    assert doc.metadata["query"] == "wading birds"


def test_reader_fetches_what_is_given_as_urls_and_records_failures(
    llamaindex: Any, tmp_path: Path
) -> None:
    pdf, _ = _bad_files(tmp_path)
    reader = llamaindex.BlockdexReader(on_error="record")
    not_url, not_html, good = reader.load_data(urls=[str(ARTICLE)], files=[pdf, ARTICLE])
    assert not_url.metadata["error_kind"] == "unsafe_url"  # a path among urls is not read
    assert not_html.metadata["error_kind"] == "not_html"
    assert not_html.text == ""
    assert good.metadata["title"] == ARTICLE_META["title"]
    with pytest.raises(UnsafeURL, match="only http:// and https://"):
        llamaindex.BlockdexReader().load_data(urls="example.org/page")


@pytest.mark.parametrize(
    ("module", "framework", "extra"),
    [
        ("langchain", "langchain_core.document_loaders", "langchain"),
        ("llamaindex", "llama_index.core.readers.base", "llamaindex"),
    ],
)
def test_a_missing_framework_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, module: str, framework: str, extra: str
) -> None:
    import importlib
    import sys

    from blockdex.errors import MissingExtra

    monkeypatch.setitem(sys.modules, framework, None)  # what an absent package looks like
    monkeypatch.delitem(sys.modules, f"blockdex.integrations.{module}", raising=False)
    with pytest.raises(MissingExtra, match=rf"pip install 'blockdex\[{extra}\]'"):
        importlib.import_module(f"blockdex.integrations.{module}")
