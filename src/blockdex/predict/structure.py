"""A query's answer held by a table, a code block, a figure or a list: the element is the unit.

The hybrid predictor scores blocks one by one; a table row, a line of code or an image means
little alone, and the words a query names are often spread over a row and its table's header,
or hidden in an identifier (``handleStatusChange``). After the blocks are chosen, each such
element is looked at as a whole (:func:`answer_units`):

* **table** — a body row *matches* when it holds one of the query's words and, with the table's
  header rows and caption, enough of them (:attr:`StructureConfig.match_share`). A matching row is
  kept with every header row and the caption; the whole table when it is small or the query
  *names* it (its caption, header and introducing sentence hold enough of the query's words, or
  the predictor kept its header or caption). A header row or caption is never kept alone.
* **code** — a code block matches when the query names a function, class or command it defines
  (:data:`DEFINITION_RE`, identifiers split into words) or when it holds enough of the query's
  words; it is kept whole (every part of a long block), with the sentence that introduces it.
* **figure** — a kept image brings its caption; with nothing else kept, a figure whose caption
  and alt text hold the query's words answers.
* **list** — a kept item brings the lead-in that introduces the list (a sentence ending in
  ``:``), and a short list or one the query names is then kept whole; with nothing else kept, an
  item holding every word of the query answers, with the sentence before the list.

A query whose words an element holds is never answered with nothing (``NA``): the element is kept
even when no block reached the predictor's threshold.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from blockdex.page import Block, Page
from blockdex.segment import HEADER_ROW

DEFINITION_RE = re.compile(
    r"^[ \t]*(?:(?:export|pub|public|private|protected|static|async|default)[ \t]+)*"
    r"(def|function|class|fn|func)[ \t]+([A-Za-z_$][\w$]*)"
    r"(?=[ \t]*(?:[(<:{\[]|extends\b|implements\b|$))",
    re.M,
)
"""A definition line of a code block: its keyword and the name it defines (``def ratio(``,
``export function parseLine(``, ``pub fn main(``, ``class Foo extends Bar``)."""
_COMMAND_RE = re.compile(r"^[ \t]*(?:\$[ \t]+)?([a-z][\w.-]*)[ \t]+([a-z][\w.-]*)", re.M)
"""A shell line's command and its first word (``$ pip install``, ``git commit``)."""
_INTRO_TAGS = frozenset({"p"})

IDENTIFIER_HINT = re.compile(r"[a-z][A-Z]|[A-Z][A-Z][a-z]|[A-Za-z]_[A-Za-z]")
_IDENTIFIER_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@functools.lru_cache(maxsize=1 << 14)
def identifier_words(word: str) -> tuple[str, ...]:
    """The words of an identifier, lower-cased (``handleStatusChange`` → handle, status,
    change; ``snake_case`` → snake, case; ``HTTPServer`` → http, server); () for a plain word."""
    if not IDENTIFIER_HINT.search(word):
        return ()
    parts = [p.lower() for p in _IDENTIFIER_PART.findall(word)]
    return tuple(p for p in parts if len(p) > 1) if len(parts) > 1 else ()


@dataclass(frozen=True, slots=True)
class StructureConfig:
    match_share: float = 0.66
    """A row, code block, caption or list item matches when it (with its table's header and
    caption) holds at least this share of the query's words, and at least two of them (all of a
    one-word query)."""
    name_share: float = 0.66
    """A table or list is named when its caption, header and introducing sentence hold this share
    of the query's words (and at least two)."""
    small_table_rows: int = 15
    """A table of at most this many rows is kept whole when one of its rows matches."""
    small_list_items: int = 8
    """A list of at most this many items is kept whole when one of its items matches."""
    intro_words: int = 60
    """The block before a table, code block or list introduces it when it is a paragraph of at
    most this many words."""
    list_lead_in: str = ":"
    """…and, for a list whose items the predictor kept, when it ends with this (a lead-in such as
    "Three follow-ups seem worth it:"); a sentence before a list it did not keep is its lead-in
    whatever its end."""


DEFAULT_STRUCTURE = StructureConfig()


@dataclass(slots=True)
class _Unit:
    kind: str  # table | code | figure | list
    members: list[int] = field(default_factory=list)
    """Positions of the unit's blocks (rows, code parts, image and caption, items)."""
    heads: list[int] = field(default_factory=list)
    """Header rows and caption of a table (they never answer alone)."""
    intro: int | None = None


def _nearest(block: Block, tags: frozenset[str]) -> tuple[str, int] | None:
    for tag, node in reversed(block.chain[:-1]):
        if tag in tags:
            return tag, node
    return None


_TABLE = frozenset({"table"})
_FIGURE = frozenset({"figure"})
_LIST = frozenset({"ul", "ol"})


def _is_header_row(block: Block) -> bool:
    """A row of ``<th>`` cells only (:data:`blockdex.segment.HEADER_ROW`, set in both walks and
    also when the blocks' HTML is not built)."""
    return block.tag == "tr" and HEADER_ROW[0] in block.attributes


def page_units(page: Page, cfg: StructureConfig = DEFAULT_STRUCTURE) -> list[_Unit]:
    """The page's tables, code blocks, figures and lists, each as the positions of its blocks."""
    units: dict[tuple[str, int], _Unit] = {}
    order: list[_Unit] = []
    blocks = page.blocks
    for pos, block in enumerate(blocks):
        tag = block.tag
        key: tuple[str, int] | None = None
        kind = ""
        if tag in ("tr", "caption"):
            found = _nearest(block, _TABLE)
            if found is not None:
                key, kind = ("table", found[1]), "table"
        elif tag == "pre":
            key, kind = ("code", block.element_id), "code"
        elif tag in ("img", "figcaption"):
            found = _nearest(block, _FIGURE)
            key = ("figure", found[1]) if found is not None else ("image", block.element_id)
            kind = "figure"
        elif tag == "li":
            found = _nearest(block, _LIST)
            if found is not None:
                key, kind = ("list", found[1]), "list"
        if key is None:
            continue
        unit = units.get(key)
        if unit is None:
            unit = units[key] = _Unit(kind)
            order.append(unit)
            if pos > 0 and kind != "figure":
                prev = blocks[pos - 1]
                if prev.tag in _INTRO_TAGS and len(prev.text.split()) <= cfg.intro_words:
                    unit.intro = pos - 1
        if kind == "table" and (tag == "caption" or (_is_header_row(block) and not unit.members)):
            unit.heads.append(pos)
        else:
            unit.members.append(pos)
    return order


def _share(query: set[str], words: Iterable[str]) -> tuple[int, float]:
    hit = len(query.intersection(words))
    return hit, hit / len(query)


def _enough(hit: int, share: float, n_query: int, least: float) -> bool:
    return share >= least and hit >= min(2, n_query)


def defined_names(text: str) -> list[str]:
    """The names a code block defines (:data:`DEFINITION_RE`) and the commands it runs."""
    names = [m.group(2) for m in DEFINITION_RE.finditer(text)]
    names += [f"{a} {b}" for a, b in _COMMAND_RE.findall(text) if "\n" not in a]
    return names


def answer_units(
    page: Page,
    keep: list[int],
    query_terms: set[str],
    terms: Callable[[str], list[str]],
    cfg: StructureConfig = DEFAULT_STRUCTURE,
) -> list[int]:
    """``keep`` (positions) with the tables, code blocks, figures and lists that answer the
    query as units (see the module's docstring). ``terms``: the predictor's word terms."""
    if not query_terms or not page.blocks:
        return keep
    blocks = page.blocks
    kept = set(keep)
    n_q = len(query_terms)
    own: dict[int, list[str]] = {}

    def words(pos: int) -> list[str]:
        got = own.get(pos)
        if got is None:
            got = own[pos] = terms(blocks[pos].text)
        return got

    add: set[int] = set()
    drop: set[int] = set()
    for unit in page_units(page, cfg):
        intro = [unit.intro] if unit.intro is not None else []
        if unit.kind == "table":
            head_words = [w for p in unit.heads for w in words(p)]
            named_hit, named_share = _share(
                query_terms, [*head_words, *(w for p in intro for w in words(p))]
            )
            named = _enough(named_hit, named_share, n_q, cfg.name_share) or any(
                p in kept for p in unit.heads
            )
            matched = [p for p in unit.members if p in kept]
            for p in unit.members:
                if p in kept or not query_terms.intersection(words(p)):
                    continue
                hit, share = _share(query_terms, [*words(p), *head_words])
                if _enough(hit, share, n_q, cfg.match_share):
                    matched.append(p)
            if matched and (named or len(unit.members) <= cfg.small_table_rows):
                add.update(unit.members, unit.heads, intro)
            elif matched:
                add.update(matched, unit.heads)
            elif named and named_hit:
                # the query asks for the table itself (its caption, header or introduction)
                if len(unit.members) <= cfg.small_table_rows or _enough(
                    named_hit, named_share, n_q, cfg.name_share
                ):
                    add.update(unit.members, unit.heads, intro)
                else:
                    drop.update(unit.heads)
            else:
                drop.update(p for p in unit.heads if p in kept)  # never a header alone
        elif unit.kind == "code":
            text = "\n".join(blocks[p].text for p in unit.members)
            hit_code = any(p in kept for p in unit.members)
            if not hit_code:
                for name in defined_names(text):
                    # the name, or all of its words (parseLine: "parse line")
                    whole = set(terms(name.lower()))
                    parts = set(terms(" ".join(identifier_words(name))))
                    if (whole and whole <= query_terms) or (parts and parts <= query_terms):
                        hit_code = True
                        break
            if not hit_code:
                hit, share = _share(query_terms, [w for p in unit.members for w in words(p)])
                hit_code = _enough(hit, share, n_q, cfg.match_share) and share >= 1.0
            if hit_code:
                add.update(unit.members, intro)
        elif unit.kind == "figure":
            # the caption answers (an image is its alt text, or nothing when images are off)
            captions = [p for p in unit.members if blocks[p].tag == "figcaption"]
            matched_fig = any(p in kept for p in unit.members)
            if not matched_fig and not kept:
                hit, share = _share(query_terms, [w for p in unit.members for w in words(p)])
                matched_fig = _enough(hit, share, n_q, cfg.match_share)
                if matched_fig and not captions:
                    add.update(unit.members)
            if matched_fig:
                add.update(captions)
        else:  # list
            kept_items = [p for p in unit.members if p in kept]
            named_hit, named_share = _share(query_terms, [w for p in intro for w in words(p)])
            named = _enough(named_hit, named_share, n_q, cfg.name_share)
            matched = list(kept_items)
            if not kept:
                for p in unit.members:
                    hit, share = _share(query_terms, words(p))
                    if _enough(hit, share, n_q, cfg.match_share) and share >= 1.0:
                        matched.append(p)
            if not (matched or (named and kept_items)):
                continue
            add.update(matched)
            lead_in = [p for p in intro if blocks[p].text.rstrip().endswith(cfg.list_lead_in)]
            add.update(lead_in if kept_items else intro)
            if named or (len(unit.members) <= cfg.small_list_items and (lead_in or not kept_items)):
                add.update(unit.members)
    if not add and not drop:
        return keep
    return sorted((kept | add) - (drop - add))
