"""blockdex as a LlamaIndex reader (``pip install 'blockdex[llamaindex]'``).

::

    from llama_index.core import VectorStoreIndex
    from blockdex.integrations.llamaindex import BlockdexReader

    reader = BlockdexReader(on_error="record")
    docs = reader.load_data(urls=["https://example.org/post"], files=["saved/page.html"])
    index = VectorStoreIndex.from_documents(docs)

Each input gives a ``Document`` whose text is the extracted page (``output``: ``markdown`` by
default, ``text``, ``html`` or ``json``) and whose metadata is flat: ``source`` (the input as
given), ``url`` (after redirects), ``title``, what the page states about itself (``author``,
``date``, ``site_name``, ``description``, ``language``, ``canonical``…), and how blockdex read it
(``n_blocks``, ``selection``, ``predictor``, ``query``, ``fallback``, ``warnings``). Only
``title``, ``author``, ``date``, ``site_name``, ``description`` and ``keywords`` go into the text
that is embedded; the bookkeeping keys are also kept from the LLM.

``query`` keeps the blocks relevant to it instead of the main content (set on the reader, or per
call: ``load_data(urls=..., query="...")``). URLs are fetched by blockdex's own fetcher, which
refuses loopback, private, link-local and cloud-metadata addresses, bodies over 16 MiB and slow
servers; ``fetch_config=FetchConfig(allow_private=True)`` (:class:`blockdex.fetch.FetchConfig`)
opens intranet and local pages. A page that fails is handled by ``on_error``: ``"raise"``
(default: a :class:`~blockdex.errors.BlockdexError` saying what went wrong), ``"skip"`` (a
logged warning) or ``"record"`` (a Document with empty text and ``error``/``error_kind`` in its
metadata, so every input gives exactly one Document).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from blockdex.errors import MissingExtra

try:
    from llama_index.core.readers.base import BaseReader
    from llama_index.core.schema import Document
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("llama-index-core", "llamaindex", "The LlamaIndex integration") from exc

from blockdex.integrations._pages import (
    BOOKKEEPING_KEYS,
    ExtractedPage,
    PageExtractor,
    Source,
    as_sources,
)

__all__ = ["BlockdexReader"]

EMBEDDED_KEYS = frozenset({"title", "author", "date", "site_name", "description", "keywords"})
"""Metadata that says what a page is about, so it is worth embedding with the text."""


def _document(page: ExtractedPage) -> Document:
    keys = list(page.metadata)
    return Document(
        text=page.text,
        metadata=page.metadata,
        excluded_embed_metadata_keys=[k for k in keys if k not in EMBEDDED_KEYS],
        excluded_llm_metadata_keys=[k for k in keys if k in BOOKKEEPING_KEYS],
    )


class BlockdexReader(BaseReader):
    """Reads URLs and local HTML files into Documents, one per input, in order.

    The options are those of :func:`blockdex.extract` (``query``, ``output``, ``predictor`` and
    the extraction options: ``links``, ``comments=False``, ``max_tokens`` …), or a configured
    ``extractor``; plus ``fetch_config`` and ``on_error`` (see the module docs): the keywords
    of :class:`~blockdex.integrations._pages.PageExtractor`.
    """

    def __init__(self, **settings: Any) -> None:
        self.pages = PageExtractor(**settings)

    def lazy_load_data(
        self,
        urls: Source | Iterable[Source] | None = None,
        files: Source | Iterable[Source] | None = None,
        *,
        query: str | None = None,
    ) -> Iterator[Document]:
        """Documents for ``urls`` (each fetched) then ``files`` (each read from disk), one at a
        time; ``query`` overrides the reader's."""
        fetched = self.pages.pages(as_sources(urls), query=query, kind="url")
        read = self.pages.pages(as_sources(files), query=query, kind="file")
        for page in itertools.chain(fetched, read):
            yield _document(page)

    def load_data(self, *args: Any, **kwargs: Any) -> list[Document]:
        """All Documents of :meth:`lazy_load_data` (same arguments) in a list."""
        return list(self.lazy_load_data(*args, **kwargs))
