"""Crunch: switchable DOM filters (Gupta, Kaiser, Neistadt & Grimm, WWW 2003).

"DOM-based content extraction of HTML documents" does not look for *the* article: it parses the
page into a DOM tree and runs a chain of filters, each of which removes one kind of clutter, and
returns whatever is left. The filters, in the order this module applies them:

1. **Advertisement remover** — an element whose ``src``/``href`` points at a known ad-server host
   (or a sub-domain of one) is removed. The hosts come from a hosts-format list shipped as
   package data (``adhosts.txt``) and/or a user file (``ad_hosts_file``).
2. **First-level filters** — tags ignored outright (scripts, styles, images, embedded objects,
   form controls …), tags unwrapped (e.g. ``a`` to "ignore links" but keep their words) and
   presentational attributes dropped.
3. **Link-list remover** — a container (table cell, div, list …) whose ratio of linked words to
   non-linked words exceeds ``link_ratio`` is removed; innermost containers are judged first, so
   a parent is judged on what is left of it.
4. **Empty-table remover** — a table with no "substance" tag and fewer than ``min_table_chars``
   characters of text is removed (innermost first).
5. **Removed-link retainer** — the links removed with link lists are appended at the end of the
   page as one list, so nothing navigable is lost.

Every filter is switchable and every threshold is a field of :class:`CrunchConfig`, loadable
from a TOML file (:func:`load_crunch_config`; defaults shipped as ``crunch.toml``).
"""

from __future__ import annotations

import html as html_lib
import tomllib
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from selectolax.lexbor import LexborHTMLParser, LexborNode

from blockdex.baselines import BaselineResult, html_document, parse_page
from blockdex.errors import BlockdexError
from blockdex.segment import BLOCK_TAGS, HEADINGS

# Elements whose content a browser never shows as text: skipped by visible_text in any case.
NON_TEXT_TAGS = frozenset(
    {"script", "style", "noscript", "template", "head", "title", "meta", "link", "svg", "math"}
)
# Elements whose line breaks are shown as they are.
PRE_TAGS = frozenset({"pre", "textarea", "listing", "plaintext", "xmp"})


@dataclass(frozen=True, slots=True)
class CrunchConfig:
    """Crunch settings. Field names are the keys of ``crunch.toml`` (sections only group them)."""

    # -- before the filters -----------------------------------------------------------------
    keep_content_noscripts: bool = True
    """Unwrap a <noscript> holding the page's no-JS content (Discourse …) before filtering."""

    # -- first-level filters ----------------------------------------------------------------
    first_level: bool = True
    """Apply the first-level filters (ignore tags, unwrap tags, strip attributes)."""
    ignore_tags: tuple[str, ...] = (
        "script",
        "style",
        "noscript",
        "template",
        "link",
        "meta",
        "img",
        "picture",
        "svg",
        "canvas",
        "video",
        "audio",
        "map",
        "iframe",
        "frame",
        "embed",
        "object",
        "applet",
        "input",
        "button",
        "select",
        "textarea",
    )
    """Removed with their content. ``form`` is not here: ASP.NET pages wrap the whole page in one."""
    unwrap_tags: tuple[str, ...] = ()
    """Tags dropped but their content kept; add ``a`` for the paper's "ignore links"."""
    strip_attributes: tuple[str, ...] = (
        "style",
        "bgcolor",
        "background",
        "onclick",
        "onload",
        "onmouseover",
        "onmouseout",
    )
    """Presentational/script attributes removed from the output HTML."""
    ignore_comments: bool = True
    """Drop HTML comments from the output."""

    # -- advertisement remover --------------------------------------------------------------
    ad_remover: bool = True
    """Remove elements that load from or link to an ad-server host."""
    ad_hosts_builtin: bool = True
    """Use the short ad-server list shipped with blockdex (adhosts.txt)."""
    ad_hosts_file: str = ""
    """A hosts-format file of more ad servers (e.g. StevenBlack/hosts); relative to the TOML."""
    ad_attributes: tuple[str, ...] = ("src", "href", "data-src")
    """Attributes whose URL host is checked against the ad-server list."""

    # -- link-list remover ------------------------------------------------------------------
    link_list_remover: bool = True
    """Remove containers that are mostly links (navigation, "related stories" …)."""
    link_ratio: float = 0.35
    """Linked/non-linked ratio above which a container is a link list (the paper's default)."""
    link_measure: str = "words"
    """Numerator of the ratio: ``words`` (words inside links) or ``links`` (number of links)."""
    chars_per_word: float = 5.0
    """Non-linked words are estimated as non-linked characters ÷ this (the paper's estimate)."""
    link_list_containers: tuple[str, ...] = (
        "td",
        "th",
        "div",
        "ul",
        "ol",
        "dl",
        "table",
        "nav",
        "aside",
        "section",
        "header",
        "footer",
        "menu",
    )
    """Elements judged as possible link lists (the paper used table cells; pages now use divs)."""

    # -- empty-table remover ----------------------------------------------------------------
    empty_table_remover: bool = True
    """Remove tables left without substance after the other filters."""
    empty_table_tags: tuple[str, ...] = ("table",)
    """Elements checked for substance (add ``div`` to treat layout divs like tables)."""
    substance_tags: tuple[str, ...] = (
        "p",
        "img",
        *HEADINGS,
        "pre",
        "blockquote",
    )
    """A table holding any of these has substance."""
    min_table_chars: int = 50
    """…and so has one with at least this many characters of text."""

    # -- removed-link retainer --------------------------------------------------------------
    retain_removed_links: bool = False
    """Append the links of removed link lists at the end (off: they are noise for scoring)."""
    removed_links_heading: str = "Removed links"
    """Heading above the retained links."""


DEFAULT_CRUNCH = CrunchConfig()
LINK_MEASURES = ("words", "links")
_FIELD_TYPES = {f.name: type(f.default) for f in fields(CrunchConfig)}


def _coerce(key: str, value: Any, where: str) -> Any:
    """A TOML/keyword value converted to the field's type, or a BlockdexError saying what's wrong."""
    want = _FIELD_TYPES[key]
    if want is tuple:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise BlockdexError(f"{where}: '{key}' must be a list of strings")
        return tuple(v.strip().lower() if key != "ad_attributes" else v.strip() for v in value)
    if want is bool:
        if not isinstance(value, bool):
            raise BlockdexError(f"{where}: '{key}' must be true or false")
        return value
    if want is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise BlockdexError(f"{where}: '{key}' must be a number")
        return float(value)
    if want is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise BlockdexError(f"{where}: '{key}' must be an integer")
        return value
    if not isinstance(value, str):
        raise BlockdexError(f"{where}: '{key}' must be a string")
    return value


def _check(cfg: CrunchConfig, where: str) -> CrunchConfig:
    if cfg.link_measure not in LINK_MEASURES:
        raise BlockdexError(
            f"{where}: link_measure must be one of {', '.join(LINK_MEASURES)}, "
            f"not {cfg.link_measure!r}"
        )
    if cfg.link_ratio <= 0 or cfg.chars_per_word <= 0:
        raise BlockdexError(f"{where}: link_ratio and chars_per_word must be positive")
    if cfg.min_table_chars < 0:
        raise BlockdexError(f"{where}: min_table_chars must be 0 or more")
    return cfg


def _flatten(data: dict[str, Any], where: str) -> dict[str, Any]:
    """TOML keys, with one level of ``[section]`` tables merged in (sections only group)."""
    flat: dict[str, Any] = {}
    for key, value in data.items():
        items = value.items() if isinstance(value, dict) else [(key, value)]
        for k, v in items:
            if k not in _FIELD_TYPES:
                known = ", ".join(sorted(_FIELD_TYPES))
                raise BlockdexError(f"{where}: unknown Crunch setting {k!r}; known: {known}")
            flat[k] = v
    return flat


def load_crunch_config(path: str | Path | None = None, **overrides: Any) -> CrunchConfig:
    """Crunch settings: the defaults, then the TOML file at ``path``, then keyword overrides.

    A relative ``ad_hosts_file`` in the TOML is read relative to the TOML file's folder.
    Raises :class:`BlockdexError` for an unreadable file, unknown keys or wrong value types.
    """
    values: dict[str, Any] = {}
    if path is not None:
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise BlockdexError(
                f"cannot read Crunch config {path}: {exc.strerror or exc}"
            ) from None
        except tomllib.TOMLDecodeError as exc:
            raise BlockdexError(f"Crunch config {path} is not valid TOML: {exc}") from None
        for key, value in _flatten(data, str(path)).items():
            values[key] = _coerce(key, value, str(path))
        hosts = values.get("ad_hosts_file")
        if hosts and not Path(hosts).is_absolute():
            values["ad_hosts_file"] = str(path.parent / hosts)
    for key, value in overrides.items():
        if key not in _FIELD_TYPES:
            known = ", ".join(sorted(_FIELD_TYPES))
            raise BlockdexError(f"unknown Crunch setting {key!r}; known: {known}")
        values[key] = _coerce(key, value, "Crunch option")
    return _check(replace(DEFAULT_CRUNCH, **values), str(path or "Crunch options"))


def default_config_text() -> str:
    """The shipped ``crunch.toml`` (the defaults, commented): a starting point for a user file."""
    return resources.files("blockdex.baselines").joinpath("crunch.toml").read_text("utf-8")


# -- ad-server hosts ------------------------------------------------------------------------


def parse_hosts(text: str) -> frozenset[str]:
    """Host names of a hosts-format list (``0.0.0.0 host`` or a bare ``host`` per line)."""
    hosts: set[str] = set()
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip().lower()
        if not line:
            continue
        parts = line.split()
        for host in parts[1:] if len(parts) > 1 else parts:
            if "." in host and host not in ("0.0.0.0", "127.0.0.1", "localhost.localdomain"):
                hosts.add(host.rstrip("."))
    return frozenset(hosts)


@lru_cache(maxsize=8)
def load_ad_hosts(builtin: bool = True, hosts_file: str = "") -> frozenset[str]:
    """The ad-server hosts: the shipped list and/or a user's hosts file."""
    hosts: frozenset[str] = frozenset()
    if builtin:
        text = resources.files("blockdex.baselines").joinpath("adhosts.txt").read_text("utf-8")
        hosts |= parse_hosts(text)
    if hosts_file:
        try:
            text = Path(hosts_file).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise BlockdexError(
                f"cannot read ad hosts file {hosts_file}: {exc.strerror or exc}"
            ) from None
        hosts |= parse_hosts(text)
    return hosts


def is_ad_url(url: str, hosts: frozenset[str]) -> bool:
    """Whether ``url``'s host, or a parent domain of it, is on the ad-server list."""
    try:
        host = urlsplit(url.strip()).hostname
    except ValueError:
        return False
    while host:
        if host in hosts:
            return True
        _, _, host = host.partition(".")
    return False


# -- text -----------------------------------------------------------------------------------


def visible_text(root: LexborNode | None) -> str:
    """The text a reader sees under ``root``: one line per block element, spaces collapsed.

    Line breaks inside text are spaces, as a browser shows them, except inside ``<pre>``.
    """
    if root is None:
        return ""
    parts: list[str] = []
    # (node, inside <pre>); None marks the end of a block element
    stack: list[tuple[LexborNode, bool] | None] = [(root, False)]
    while stack:
        item = stack.pop()
        if item is None:
            parts.append("\n")
            continue
        node, in_pre = item
        tag = node.tag
        if tag == "-text":
            text = node.text_content or ""
            parts.append(text if in_pre else text.replace("\n", " "))
            continue
        if tag is None or tag.startswith("-") or tag in NON_TEXT_TAGS:
            continue
        if tag == "br":
            parts.append("\n")
            continue
        if tag in BLOCK_TAGS:
            parts.append("\n")
            stack.append(None)
        in_pre = in_pre or tag in PRE_TAGS
        stack.extend((child, in_pre) for child in reversed(list(node.iter(include_text=True))))
    lines = (" ".join(line.split()) for line in "".join(parts).split("\n"))
    return "\n".join(line for line in lines if line)


def _squeezed_len(text: str) -> int:
    return len(" ".join(text.split()))


# -- the filters ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Report:
    ads: int = 0
    ignored: int = 0
    link_lists: int = 0
    empty_tables: int = 0
    removed_links: list[tuple[str, str]] | None = None


def remove_ads(root: LexborNode, cfg: CrunchConfig) -> int:
    """Advertisement remover: elements whose URL attribute points at an ad-server host."""
    hosts = load_ad_hosts(cfg.ad_hosts_builtin, cfg.ad_hosts_file)
    if not hosts or not cfg.ad_attributes:
        return 0
    selector = ",".join(f"[{a}]" for a in cfg.ad_attributes)
    ads = [
        node
        for node in root.css(selector)
        if any(is_ad_url(node.attributes.get(a) or "", hosts) for a in cfg.ad_attributes)
    ]
    for node in ads:
        node.decompose()
    return len(ads)


def apply_first_level(root: LexborNode, cfg: CrunchConfig) -> int:
    """First-level filters: ignored tags (with content), unwrapped tags, stripped attributes."""
    removed = 0
    if cfg.ignore_tags:
        nodes = root.css(",".join(cfg.ignore_tags))
        removed = len(nodes)
        for node in nodes:
            node.decompose()
    if cfg.unwrap_tags:
        root.unwrap_tags(list(cfg.unwrap_tags))
    if cfg.strip_attributes:
        for node in root.css(",".join(f"[{a}]" for a in cfg.strip_attributes)):
            attrs = node.attrs
            for name in cfg.strip_attributes:
                if name in attrs:
                    del attrs[name]
    if cfg.ignore_comments:
        comments = [n for n in root.traverse(include_text=True) if n.tag == "-comment"]
        for node in comments:
            node.decompose()
    return removed


def link_ratio(node: LexborNode, cfg: CrunchConfig) -> float:
    """Linked words (or links) per non-linked word; non-linked words = chars ÷ chars_per_word."""
    links = node.css("a[href]")
    if not links:
        return 0.0
    link_texts = [a.text(deep=True) for a in links]
    linked_chars = sum(_squeezed_len(t) for t in link_texts)
    if cfg.link_measure == "links":
        linked = float(len(links))
    else:  # an image link without text still counts as one word
        linked = float(sum(max(len(t.split()), 1) for t in link_texts))
    plain_chars = max(_squeezed_len(node.text(deep=True)) - linked_chars, 0)
    plain_words = plain_chars / cfg.chars_per_word
    return linked / plain_words if plain_words else float("inf")


def remove_link_lists(root: LexborNode, cfg: CrunchConfig) -> tuple[int, list[tuple[str, str]]]:
    """Link-list remover; returns how many containers it removed and their ``(href, text)``."""
    removed: list[tuple[str, str]] = []
    count = 0
    if not cfg.link_list_containers:
        return count, removed
    # Reversed document order visits descendants before ancestors: inner lists go first and an
    # outer container is then judged on what is left of it.
    for node in reversed(root.css(",".join(cfg.link_list_containers))):
        if node.parent is None or link_ratio(node, cfg) <= cfg.link_ratio:
            continue
        removed.extend(
            ((a.attributes.get("href") or "").strip(), " ".join(a.text(deep=True).split()))
            for a in node.css("a[href]")
        )
        node.decompose()
        count += 1
    return count, removed


def remove_empty_tables(root: LexborNode, cfg: CrunchConfig) -> int:
    """Empty-table remover: tables without a substance tag and with little text."""
    if not cfg.empty_table_tags:
        return 0
    substance = ",".join(cfg.substance_tags)
    count = 0
    for node in reversed(root.css(",".join(cfg.empty_table_tags))):
        if substance and node.css_first(substance) is not None:
            continue
        if _squeezed_len(node.text(deep=True)) >= cfg.min_table_chars:
            continue
        node.decompose()
        count += 1
    return count


def _retained_links_html(links: list[tuple[str, str]], heading: str) -> tuple[str, list[str]]:
    """The retained links as an HTML list, and their lines of text."""
    seen: set[tuple[str, str]] = set()
    items: list[str] = []
    texts: list[str] = []
    for href, text in links:
        if (href, text) in seen or not (href or text):
            continue
        seen.add((href, text))
        label = text or href
        items.append(
            f'<li><a href="{html_lib.escape(href, quote=True)}">{html_lib.escape(label)}</a></li>'
        )
        texts.append(label)
    if not items:
        return "", []
    block = (
        f'<section class="crunch-removed-links"><h2>{html_lib.escape(heading)}</h2>'
        f"<ul>{''.join(items)}</ul></section>"
    )
    return block, [heading, *texts]


def crunch_tree(tree: LexborHTMLParser, cfg: CrunchConfig = DEFAULT_CRUNCH) -> dict[str, Any]:
    """Run the enabled filters on ``tree`` in place; returns what each filter removed."""
    root = tree.body or tree.root
    report: dict[str, Any] = {"ads": 0, "ignored": 0, "link_lists": 0, "empty_tables": 0}
    removed_links: list[tuple[str, str]] = []
    if root is None:
        return {**report, "removed_links": removed_links}
    if cfg.ad_remover:
        report["ads"] = remove_ads(root, cfg)
    if cfg.first_level:
        report["ignored"] = apply_first_level(root, cfg)
    if cfg.link_list_remover:
        report["link_lists"], removed_links = remove_link_lists(root, cfg)
    if cfg.empty_table_remover:
        report["empty_tables"] = remove_empty_tables(root, cfg)
    return {**report, "removed_links": removed_links}


class CrunchBaseline:
    """Crunch as a blockdex method: ``blockdex extract page.html --method crunch``."""

    name = "crunch"

    def __init__(self, config_path: str | Path | None = None, **overrides: Any) -> None:
        self.config = load_crunch_config(config_path, **overrides)

    def run(
        self, html: str | bytes, *, url: str | None = None, query: str | None = None
    ) -> BaselineResult:
        """The page with the enabled filters applied (``query`` is ignored: Crunch has none)."""
        cfg = self.config
        doc = parse_page(html, url, cfg.keep_content_noscripts)
        report = crunch_tree(doc.tree, cfg)
        removed_links = report.pop("removed_links")
        body = doc.tree.body
        body_html = body.inner_html if body is not None else ""
        text = visible_text(body)
        if cfg.retain_removed_links and removed_links:
            block, lines = _retained_links_html(removed_links, cfg.removed_links_heading)
            body_html += block
            text = "\n".join(filter(None, [text, *lines]))
        out = html_document(doc.title, body_html)
        extra = {
            "crunch": {
                "removed": report,
                "removed_links": [{"href": h, "text": t} for h, t in removed_links],
            }
        }
        return BaselineResult(html=out, text=text, title=doc.title, extra=extra)
