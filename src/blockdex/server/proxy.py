"""The proxy's output (``GET /v1/proxy``): the kept blocks as a browsable HTML document with the
page's links put back, and optionally the links of the dropped blocks listed at the end."""

from __future__ import annotations

import html as html_lib
import re
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from blockdex.assemble import assemble_body
from blockdex.parse import decode_html
from blockdex.result import Result
from blockdex.server.service import PageResult

PROXY_FORMATS = ("html", "markdown")
_LINK_SCHEMES = ("http", "https")
_TAG_SPLIT_RE = re.compile(r"(<[^<>]*>)")  # [^<>]: a stray "<" cannot make it quadratic
LINK_SEARCH_WINDOW = 400
"""Blocks looked ahead when matching a link's text to the block it sits in (bounds the work on
pages with thousands of links)."""


@dataclass(frozen=True, slots=True)
class PageLink:
    href: str
    text: str
    kept: bool
    """Whether the link's text is in a kept block (else it was in a dropped or removed one)."""


def page_links(data: str | bytes, content_type: str | None, exp: Result, base: str | None):
    """The page's ``<a href>`` links in document order, each marked by whether its block was kept.

    Blocks hold text only, so a link is placed in the first block, at or after the previous
    link's block, whose text contains the link's text; a link found in no block sat in markup
    that cleaning removed (navigation, footers) and counts as dropped.
    """
    from selectolax.lexbor import LexborHTMLParser

    text = data if isinstance(data, str) else decode_html(data, content_type)[0]
    tree = LexborHTMLParser(text)
    blocks = exp.page.blocks
    kept = set(exp.selection.indices)
    block_texts = [" ".join(b.text.split()).lower() for b in blocks]
    pos = 0
    links: list[PageLink] = []
    for anchor in tree.css("a[href]"):
        href = (anchor.attributes.get("href") or "").strip()
        if not href or href.startswith("#"):
            continue
        absolute = urljoin(base, href) if base else href
        if urlsplit(absolute).scheme.lower() not in _LINK_SCHEMES:
            continue
        label = " ".join((anchor.text() or "").split())
        owner = None
        if label:
            key = label.lower()
            for j in range(pos, min(len(blocks), pos + LINK_SEARCH_WINDOW)):
                if key in block_texts[j]:
                    owner, pos = j, j
                    break
        in_kept = owner is not None and blocks[owner].index in kept
        title = anchor.attributes.get("title") or anchor.attributes.get("aria-label") or ""
        links.append(PageLink(absolute, label or title.strip() or absolute, in_kept))
    return links


def relink(body: str, links: list[PageLink]) -> str:
    """Put kept links back around their text in assembled HTML (blocks carry no ``<a>``).

    Works on text between tags only, in document order, each link at its first occurrence
    after the previous one's.
    """
    wanted = [link for link in links if link.kept and len(link.text) > 1]
    if not wanted:
        return body
    parts = _TAG_SPLIT_RE.split(body)
    i, part_pos = 0, 0
    for link in wanted:
        needle = html_lib.escape(link.text, quote=False)
        for k in range(i, len(parts)):
            if k % 2 == 1:  # a tag
                continue
            start = parts[k].find(needle, part_pos if k == i else 0)
            if start < 0:
                continue
            anchor = f'<a href="{html_lib.escape(link.href, quote=True)}">{needle}</a>'
            # split the text part so later links are searched after this one
            before, after = parts[k][:start], parts[k][start + len(needle) :]
            parts[k : k + 1] = [before, anchor, after]
            i, part_pos = k + 2, 0
            break
    return "".join(parts)


PROXY_STYLE = (
    "body{max-width:46em;margin:2em auto;padding:0 1em;font:16px/1.6 system-ui,sans-serif}"
    "pre{overflow:auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
    ".blockdex-links{margin-top:3em;border-top:1px solid #ccc;font-size:14px}"
)


def proxy_document(result: PageResult, *, retain_links: bool) -> str:
    """A full HTML document of the kept blocks, browsable: ``<base href>`` to the original page,
    kept links restored, and with ``retain_links`` the links of dropped blocks listed at the end."""
    exp = result.result
    base = result.url or ""
    links = page_links(result.data, result.content_type, exp, base or None)
    body = relink(assemble_body(exp.page, exp.selection), links)
    esc = html_lib.escape
    title = esc(exp.page.title or base, quote=False)
    lang = exp.page.meta.get("language", "") if exp.page.meta else ""
    lang_attr = f' lang="{esc(lang, quote=True)}"' if lang else ""
    head = (
        f'<meta charset="utf-8"><base href="{esc(base, quote=True)}">'
        f'<meta name="generator" content="blockdex"><title>{title}</title>'
        f"<style>{PROXY_STYLE}</style>"
    )
    tail = ""
    if retain_links:
        seen: set[str] = set()
        items = []
        for link in links:
            if link.kept or link.href in seen:
                continue
            seen.add(link.href)
            items.append(
                f'<li><a href="{esc(link.href, quote=True)}">{esc(link.text, quote=False)}</a></li>'
            )
        if items:
            tail = (
                '<nav class="blockdex-links"><h2>Links from removed blocks</h2>'
                f"<ul>{''.join(items)}</ul></nav>"
            )
    source = (
        f'<p class="blockdex-source"><small>Extracted by blockdex from '
        f'<a href="{esc(base, quote=True)}">{esc(base, quote=False)}</a></small></p>'
        if base
        else ""
    )
    return (
        f"<!DOCTYPE html><html{lang_attr}><head>{head}</head><body>{source}"
        f'<article class="blockdex-content">{body}</article>{tail}</body></html>'
    )
