"""blockdex for LangChain (``pip install 'blockdex[langchain]'``): a loader and a transformer.

Load pages (URLs and local files) as Documents holding what an LLM should read::

    from blockdex.integrations.langchain import BlockdexLoader

    loader = BlockdexLoader(["https://example.org/post", "saved/page.html"], on_error="record")
    for doc in loader.lazy_load():
        print(doc.metadata["title"], doc.metadata.get("author"), len(doc.page_content))

Or turn the HTML another loader produced into Markdown, keeping that loader's metadata::

    from langchain_community.document_loaders import AsyncHtmlLoader
    from blockdex.integrations.langchain import BlockdexTransformer

    html_docs = AsyncHtmlLoader(urls).load()
    docs = BlockdexTransformer(query="battery life").transform_documents(html_docs)

``page_content`` is the extracted page (``output``: ``markdown`` by default, ``text``, ``html``
or ``json``). ``metadata`` is flat (strings and integers): ``source`` (the input as given),
``url`` (after redirects), ``title`` and what the page states about itself (``author``,
``date``, ``site_name``, ``description``, ``language``, ``canonical``…), then ``n_blocks``,
``selection`` (the kept block intervals), ``predictor``, ``query``, ``fallback`` and
``warnings`` when there are any.

URLs are fetched by blockdex's own fetcher, which refuses loopback, private, link-local and
cloud-metadata addresses (a loader fed URLs from users or an agent cannot be turned against your
network), bodies over 16 MiB and slow servers; pass ``fetch_config=FetchConfig(allow_private=True)``
(:class:`blockdex.fetch.FetchConfig`) to read intranet or local pages.

A page that fails (fetch error, not HTML, too large, unreadable file) is handled by
``on_error``: ``"raise"`` (default: a :class:`~blockdex.errors.BlockdexError` saying what went
wrong, after the documents before it were yielded), ``"skip"`` (a logged warning) or
``"record"`` (a Document with empty ``page_content`` and ``error``/``error_kind`` in its metadata:
every input gives exactly one Document, for batch work where nothing may go missing).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from blockdex.errors import MissingExtra

try:
    from langchain_core.document_loaders import BaseLoader
    from langchain_core.documents import BaseDocumentTransformer, Document
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("langchain-core", "langchain", "The LangChain integration") from exc

from blockdex.integrations._pages import (
    ExtractedPage,
    PageExtractor,
    Source,
    as_sources,
    http_url,
)

__all__ = ["BlockdexLoader", "BlockdexTransformer"]


def _document(page: ExtractedPage) -> Document:
    return Document(page_content=page.text, metadata=page.metadata)


class BlockdexLoader(BaseLoader):
    """Loads URLs and local HTML files, one Document per input, in order.

    ``query`` keeps the blocks relevant to it instead of the main content; ``predictor`` and the
    extraction options (``links``, ``comments=False``, ``max_tokens`` …) are those of
    :func:`blockdex.extract`; or pass a configured ``extractor`` instead.
    ``fetch_config`` sets the fetcher's address policy and limits; ``on_error`` is ``"raise"``,
    ``"skip"`` or ``"record"`` (see the module docs). These keywords are
    :class:`~blockdex.integrations._pages.PageExtractor`'s.
    """

    def __init__(self, sources: Source | Iterable[Source], **settings: Any) -> None:
        self.sources = as_sources(sources)
        self.pages = PageExtractor(**settings)

    def lazy_load(self) -> Iterator[Document]:
        """Fetch or read, and extract, one input at a time."""
        for page in self.pages.pages(self.sources):
            yield _document(page)


class BlockdexTransformer(BaseDocumentTransformer):
    """Replaces each Document's HTML ``page_content`` by what blockdex extracts from it.

    The Document's own metadata is kept as it is; blockdex adds the keys it lacks: the page's
    fields (``title``, ``author``, ``date``…) and its own (``n_blocks``, ``selection``…). A
    ``metadata["source"]`` (or ``"url"``) that is an http(s) URL resolves relative links and
    is the page's ``url``. Options are the loader's, without fetching; ``query`` may also be
    given per call: ``transform_documents(docs, query="...")``.
    """

    def __init__(self, **settings: Any) -> None:
        if "fetch_config" in settings:
            raise TypeError("BlockdexTransformer fetches nothing: it takes no fetch_config")
        self.pages = PageExtractor(**settings)

    def transform_documents(
        self, documents: Sequence[Document], *, query: str | None = None, **kwargs: Any
    ) -> Sequence[Document]:
        """One Document per input Document (fewer with ``on_error="skip"``), in order."""
        query = self.pages.run_query(query)
        out: list[Document] = []
        for doc in documents:
            url = http_url(doc.metadata.get("source")) or http_url(doc.metadata.get("url"))
            source = doc.metadata.get("source")
            page = self.pages.guarded(
                str(source) if source is not None else url,
                functools.partial(self.pages.extract_html, doc.page_content, url=url, query=query),
            )
            if page is not None:
                metadata = {**page.metadata, **doc.metadata}  # the Document's own values win
                out.append(Document(page_content=page.text, metadata=metadata, id=doc.id))
        return out
