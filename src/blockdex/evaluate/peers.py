"""Adapters for the well-known extractors blockdex is compared with: ``html → plain text``.

Each adapter is built on demand; a peer whose package is missing raises :class:`MissingExtra`
(install ``blockdex[peers]``) so the harness can skip it with a note instead of crashing.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable

from blockdex.errors import MissingExtra

TextExtractor = Callable[[str], str]

PEER_DESCRIPTIONS: dict[str, str] = {
    "trafilatura": "trafilatura.extract, default settings",
    "trafilatura-precision": "trafilatura.extract(favor_precision=True)",
    "trafilatura-recall": "trafilatura.extract(favor_recall=True)",
    "readability": "readability-lxml Document.summary(), then html-text",
    "resiliparse": "resiliparse extract_plain_text(main_content=True)",
    "justext": "jusText paragraphs not marked boilerplate (English stop list)",
    "boilerpy3": "boilerpy3 ArticleExtractor",
    "goose3": "goose3 Goose().extract(raw_html=…).cleaned_text",
    "html-text": "html-text on the whole page (all-text baseline)",
    "markitdown": "markitdown on the raw page (the paper's 'Markdown (raw)' baseline)",
}


def _need(package: str) -> MissingExtra:
    return MissingExtra(package, "peers", "comparing with other extractors")


def _quiet() -> None:
    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)


def make_peer(name: str) -> TextExtractor:
    """The ``html → text`` function of a peer; raises MissingExtra when it is not installed."""
    _quiet()
    if name.startswith("trafilatura"):
        try:
            import trafilatura
        except ImportError:
            raise _need("trafilatura") from None
        kw = {
            "trafilatura": {},
            "trafilatura-precision": {"favor_precision": True},
            "trafilatura-recall": {"favor_recall": True},
        }[name]
        return lambda html: trafilatura.extract(html, **kw) or ""
    if name == "readability":
        try:
            import html_text
            from readability import Document
        except ImportError:
            raise _need("readability-lxml") from None
        return lambda html: html_text.extract_text(Document(html).summary(html_partial=True))
    if name == "resiliparse":
        try:
            from resiliparse.extract.html2text import extract_plain_text
            from resiliparse.parse.html import HTMLTree
        except ImportError:
            raise _need("resiliparse") from None
        return lambda html: extract_plain_text(HTMLTree.parse(html), main_content=True)
    if name == "justext":
        try:
            import justext
        except ImportError:
            raise _need("justext") from None
        stop = justext.get_stoplist("English")

        def run_justext(html: str) -> str:
            paragraphs = justext.justext(html.encode("utf-8", "replace"), stop)
            return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)

        return run_justext
    if name == "boilerpy3":
        try:
            from boilerpy3 import extractors
        except ImportError:
            raise _need("boilerpy3") from None
        ext = extractors.ArticleExtractor(raise_on_failure=False)
        return lambda html: ext.get_content(html) or ""
    if name == "goose3":
        try:
            from goose3 import Goose
        except ImportError:
            raise _need("goose3") from None
        goose = Goose({"enable_image_fetching": False})
        return lambda html: goose.extract(raw_html=html).cleaned_text or ""
    if name == "html-text":
        try:
            import html_text
        except ImportError:
            raise _need("html-text") from None
        return lambda html: html_text.extract_text(html)
    if name == "markitdown":
        try:
            import io

            from markitdown import MarkItDown, StreamInfo
        except ImportError:
            raise _need("markitdown") from None
        md = MarkItDown()

        def run_markitdown(html: str) -> str:
            stream = io.BytesIO(html.encode("utf-8", "replace"))
            info = StreamInfo(extension=".html", mimetype="text/html", charset="utf-8")
            return md.convert_stream(stream, stream_info=info).text_content or ""

        return run_markitdown
    raise KeyError(name)
