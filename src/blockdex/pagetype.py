"""Page type: what kind of page this is — an article, a forum thread, a product, a collection of
products, a listing of results, documentation, a service page — or ``other``.

A reader of the output wants to know what it holds (one story, or a grid of products?), and the
pipeline's later steps may decide differently per kind of page. The type is learned from pages
labelled with the seven types (wcxb's), from signals that hold on any site:

1. **What the page declares.** Its Open Graph type (``og_type``) and the schema.org types of its
   JSON-LD (``schema_types``), grouped by meaning (:data:`SCHEMA_GROUPS`): a ``Product`` with an
   ``Offer``, a ``DiscussionForumPosting``, an ``ItemList``, a ``TechArticle``.
2. **Its address.** Depth, a query string, the last path segment's length, words and digits (an
   article's slug is a sentence, a product's often a code), and generic path words
   (:data:`URL_WORDS`: ``/products/``, ``/forum/``, ``/docs/``, ``/search``) — never a site's name.
3. **Its blocks.** The share of words by tag (paragraphs, list items, table cells, code),
   headings and linked headlines, currency signs and dates in the text, link text, long
   paragraphs, the primary article's share of the page, its author and date metadata, who
   speaks (:data:`PRONOUNS`: we and you, I and my) and the short labels it shows
   (:data:`LABELS`: Add to cart, Reply, Sort by, See also, Contact sales).
4. **Its item lists** (:attr:`blockdex.page.Page.item_lists`): the share of the text in sibling
   records of one template (product cards, results, posts), how many there are, how long.
5. **Its class words** (:data:`CLASS_WORDS`): how often the elements around its blocks say
   comment, price, cart, filter, pagination, answer, toc, pricing… in their class, id, role or
   itemprop.

Every signal is generic vocabulary or page structure: no list of sites or domains, no threshold
fitted to one site.

A gradient-boosted tree model (LightGBM, one forest per type, softmax over their sums) trained
offline by ``blockdex train --page-type`` is shipped as plain JSON (``data/page_type_model.json``)
and evaluated with numpy. When the best type's probability is below
:attr:`PageTypeConfig.min_confidence` the page is ``other``.

:func:`classify_page` is the one public step; :attr:`blockdex.page.Page.page_type` calls it
once per page, on first use, so only the outputs that show the type pay for it.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import parse_qsl, urlsplit

import numpy as np

from blockdex import _pagetype_c as compiled
from blockdex.errors import BlockdexError
from blockdex.forest import Forest, Forests
from blockdex.ids import BlockIds, page_ids
from blockdex.items import cut_lists
from blockdex.page import Page, PageType

PAGE_TYPES = ("article", "forum", "product", "collection", "listing", "documentation", "service")
"""The types the model tells apart (wcxb's seven), in the model's class order."""
OTHER = "other"
"""The type of a page the model is not sure about (see :attr:`PageTypeConfig.min_confidence`)."""
MODEL_RESOURCE = "page_type_model.json"

# -- tables the signals read (one place each) --------------------------------------------------

OG_TYPES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(rx))
    for name, rx in (
        # og:type values are a short fixed vocabulary (ogp.me) plus a few common extensions
        ("article", r"(?:article|blog|news)"),
        ("product", r"(?:product|og:product|product\.\w+)$"),
        ("website", r"website$"),
        ("profile", r"profile$"),
        ("media", r"(?:video|music)"),
        ("book", r"book$"),
    )
)
"""Open Graph types, matched at the start of the lower-cased ``og_type``; anything else is
``og_other``, none at all ``og_none``."""

SCHEMA_GROUPS: dict[str, frozenset[str]] = {
    # the page is one story
    "article": frozenset({
        "article", "newsarticle", "blogposting", "report", "scholarlyarticle", "posting",
        "reportagenewsarticle", "analysisnewsarticle", "opinionnewsarticle", "liveblogposting",
        "backgroundnewsarticle", "reviewnewsarticle", "socialmediaposting",
    }),
    # technical writing: documentation as often as blog posts; the other columns tell them apart
    "tech": frozenset({"techarticle", "apireference", "softwaresourcecode", "howto", "course"}),
    # one thing for sale
    "product": frozenset({
        "product", "offer", "aggregateoffer", "productgroup", "individualproduct", "productmodel",
        "car", "vehicle", "book", "softwareapplication", "mobileapplication", "webapplication",
        "videogame",
    }),
    "rating": frozenset({"aggregaterating", "review", "rating"}),
    # people talking
    "forum": frozenset({"discussionforumposting", "qapage", "question", "answer", "comment"}),
    # many things
    "list": frozenset({
        "itemlist", "collectionpage", "searchresultspage", "offercatalog", "listitem",
        "searchaction",
    }),
    "faq": frozenset({"faqpage"}),
    "event": frozenset({"event", "jobposting", "recipe", "place", "localbusiness", "restaurant"}),
    "organization": frozenset({
        "organization", "corporation", "service", "professionalservice", "financialservice",
        "medicalorganization", "educationalorganization", "ngo", "brand",
    }),
    "webpage": frozenset({"webpage", "aboutpage", "contactpage", "itempage", "profilepage"}),
    "website": frozenset({"website"}),
    "breadcrumb": frozenset({"breadcrumblist"}),
    "person": frozenset({"person"}),
    "media": frozenset({"imageobject", "videoobject", "mediaobject"}),
}  # fmt: skip
"""schema.org types (lower-cased) grouped by what they say about the page; each group's count
among the page's declared types is a column."""
_SCHEMA_GROUP = {t: k for k, group in enumerate(SCHEMA_GROUPS.values()) for t in group}
"""A schema.org type's group (its place in :data:`SCHEMA_GROUPS`; no type is in two)."""

URL_WORDS: dict[str, frozenset[str]] = {
    "product": frozenset({
        "product", "products", "p", "dp", "item", "items", "itm", "sku", "pd", "buy", "gp",
        "app", "apps", "model", "models",
    }),
    "collection": frozenset({
        "collection", "collections", "category", "categories", "c", "cat", "shop", "store",
        "browse", "catalog", "catalogue", "department", "departments", "plp", "range", "b",
        "brands", "brand", "sale", "deals", "men", "women", "kids",
    }),
    "listing": frozenset({
        "search", "tag", "tags", "topic", "topics", "archive", "archives", "directory", "jobs",
        "results", "list", "lists", "all", "index", "explore", "events", "courses", "page",
        "author", "authors", "people", "find", "listings", "releases", "genre", "s",
    }),
    "forum": frozenset({
        "forum", "forums", "thread", "threads", "t", "topic", "question", "questions",
        "discussion", "discussions", "community", "communities", "viewtopic", "showthread",
        "board", "boards", "answers", "r", "comments", "discuss", "posts", "qa",
    }),
    "docs": frozenset({
        "doc", "docs", "documentation", "api", "apis", "reference", "ref", "guide", "guides",
        "manual", "learn", "tutorial", "tutorials", "library", "man", "wiki", "help", "kb",
        "developer", "developers", "sdk", "latest", "stable", "howto", "handbook", "spec",
        "specs", "cli", "glossary", "faq", "support",
    }),
    "article": frozenset({
        "blog", "blogs", "news", "article", "articles", "story", "stories", "post", "press",
        "insights", "opinion", "magazine", "features", "editorial", "column", "columns",
    }),
    "service": frozenset({
        "pricing", "price", "prices", "plans", "plan", "services", "service", "solutions",
        "solution", "enterprise", "platform", "business", "about", "about-us", "contact",
        "careers", "features", "product-tour", "why", "customers", "partners", "company",
        "industries", "use-cases", "demo", "trial", "signup", "teams", "overview",
    }),
}  # fmt: skip
"""Generic path words, by the page type they hint at. A path segment counts whole; each of its
``-``/``_``/``.`` parts counts half (``/pricing-plans``, ``/product-123``)."""
URL_PAGING_KEYS = frozenset({"page", "p", "pg", "offset", "start", "from", "sort", "order"})
"""Query keys of a page of a longer list (results, a category, a thread's later posts)."""
URL_SEARCH_KEYS = frozenset({"q", "query", "search", "s", "k", "keyword", "keywords", "term"})
"""Query keys of a search."""
_URL_SPLIT_RE = re.compile(r"[-_.+~]+")
_URL_EXT_RE = re.compile(r"\.(?:html?|php\d?|aspx?|jsp|cfm)$")
_URL_YEAR_RE = re.compile(r"(?:19|20)\d\d$")
_URL_DIGITS_RE = re.compile(r"\d")

TAG_SHARES: dict[str, tuple[str, ...]] = {
    "p": ("p",),
    "li": ("li",),
    "td": ("td", "th"),
    "tr": ("tr",),
    "pre": ("pre",),
    "h1": ("h1",),
    "h2": ("h2",),
    "h3": ("h3", "h4", "h5", "h6"),
    "div": ("div", "section", "article", "main", "body", "center"),
    "quote": ("blockquote",),
    "dl": ("dt", "dd"),
    "img": ("img",),
    "caption": ("figcaption", "caption"),
    "a": ("a",),
    "inline": ("span", "font", "b", "strong", "em", "i"),
    "control": ("form", "button", "label", "option", "select", "input", "summary"),
    "chrome": ("nav", "header", "footer", "aside", "menu", "address"),
}
"""Groups of block tags whose share of the page's words is a column: an article is paragraphs,
a collection cards of divs and links, documentation code and tables, a service page headings."""
_TAG_GROUP = {tag: k for k, tags in enumerate(TAG_SHARES.values()) for tag in tags}
_TAG_KIND = {"h1": 1, "h2": 2, "h3": 3, "h4": 3, "h5": 3, "h6": 3, "pre": 4}
"""The tags counted on their own: h1, h2, the smaller headings together, and pre."""
_TAG_CODES = {
    tag: 8 * (_TAG_GROUP[tag] + 1 if tag in _TAG_GROUP else 0) + _TAG_KIND.get(tag, 0)
    for tag in {*_TAG_GROUP, *_TAG_KIND}
}
"""Per tag, ``8 * (its TAG_SHARES group + 1) + its kind`` (:data:`_TAG_KIND`; 0: none): what
:func:`_block_sums` reads of a block's tag, one lookup."""

CLASS_WORDS: dict[str, tuple[str, ...]] = {
    "discussion": ("comment", "reply", "replies", "respond", "disqus", "post", "message",
                   "thread", "topic", "forum", "author", "user", "avatar", "member", "profile",
                   "username", "poster", "answer", "question", "vote", "accepted", "solution"),
    "shop": ("price", "cost", "amount", "currency", "product", "sku", "variant", "swatch",
             "gallery", "offer", "cart", "basket", "checkout", "buy", "purchase", "quantity",
             "qty", "stock", "rating", "review", "stars"),
    "list": ("card", "tile", "grid", "teaser", "thumb", "item", "listitem", "entry", "row",
             "result", "search", "listing", "hits", "filter", "facet", "refine", "sort",
             "pagination", "pager", "paging", "next", "prev"),
    "docs": ("doc", "toc", "api", "reference", "manual", "sidebar", "admonition", "code",
             "highlight", "syntax", "hljs", "language", "prism", "snippet"),
    "marketing": ("hero", "feature", "pricing", "plan", "cta", "testimonial", "benefit",
                  "banner", "faq", "accordion", "collapse", "tabs", "form", "contact",
                  "newsletter", "signup", "subscribe"),
    "article": ("article", "story", "byline", "headline", "content", "date", "time",
                "published", "timestamp", "share", "social", "related", "breadcrumb", "tag",
                "category", "label"),
}  # fmt: skip
"""Words of class, id, role and itemprop values (``Block.scope_attrs``), grouped here by the
kind of page they are common on. Each word is a column: how often it is named, inside a token
too (``product-card`` names product and card), over every block's ancestry — so a class on the
body or the main column (``single-product``, ``thread-view``) weighs with the blocks inside
it."""
CLASS_WORD_LIST = tuple(dict.fromkeys(w for ws in CLASS_WORDS.values() for w in ws))

LABELS: dict[str, frozenset[str]] = {
    "article": frozenset({
        "related articles", "related posts", "related stories", "min read", "minute read",
        "share this", "share this article", "share this post", "share this story", "written by",
        "about the author", "leave a reply", "leave a comment", "key takeaways", "conclusion",
        "final thoughts", "recent posts", "you might also like", "read more", "back to blog",
        "comments", "posted by", "by",
    }),
    "forum": frozenset({
        "reply", "replies", "quote", "like", "likes", "members", "member", "posts", "new posts",
        "joined", "click to expand", "answers", "answer", "report", "permalink", "views",
        "upvote", "solved", "thread starter", "original poster", "moderator", "add a comment",
        "accepted answer", "similar threads",
    }),
    "product": frozenset({
        "add to cart", "add to bag", "add to basket", "add to wishlist", "add to wish list",
        "buy now", "buy it now", "in stock", "out of stock", "write a review", "quantity", "qty",
        "specifications", "specs", "product details", "product description", "free shipping",
        "free delivery", "delivery", "returns", "size guide", "select size", "color", "colour",
        "about this item", "customer reviews", "reviews", "sku", "availability", "notify me",
    }),
    "collection": frozenset({
        "filter", "filters", "sort by", "sort", "shop now", "new arrivals", "shop all",
        "brands", "all brands", "top brands", "price", "clear all", "apply", "sale",
        "best sellers", "bestsellers", "featured", "shop by category", "quick view",
        "compare", "load more", "show more", "view all", "results", "products", "items",
    }),
    "listing": frozenset({
        "next", "previous", "next page", "previous page", "older posts", "newer posts",
        "page", "latest", "most recent", "more", "see all", "all", "archives", "categories",
        "tags", "search", "search results", "days ago", "hours ago", "read",
    }),
    "documentation": frozenset({
        "note", "warning", "tip", "important", "caution", "see also", "example", "examples",
        "parameters", "returns", "return value", "arguments", "syntax", "installation",
        "usage", "reference", "description", "on this page", "edit this page",
        "table of contents", "contents", "next steps", "prerequisites", "overview",
        "was this page helpful", "deprecated", "exceptions", "attributes", "methods",
    }),
    "service": frozenset({
        "contact sales", "contact us", "get started", "learn more", "find out more",
        "request a demo", "book a demo", "get a demo", "schedule a demo", "get a quote",
        "request a quote", "free quote", "free consultation", "book a consultation",
        "schedule a consultation", "our services", "services", "what we do", "use cases",
        "testimonials", "how it works", "why choose us", "pricing", "plans", "solutions",
        "industries", "case studies", "talk to an expert", "try for free", "start free trial",
        "apply now", "enroll now", "call now", "book now", "contact",
    }),
}  # fmt: skip
"""Short lines a kind of page shows as buttons and labels (English): a block whose whole text
is one of them (lower case, words only) counts for its group; a label two groups list
(``returns``, of a shop or of a function) counts for the first."""
LABEL_MAX_CHARS = 40
"""Longer blocks are never such a label (and are not looked up)."""
_LETTERS_RE = re.compile(r"[^\W\d_]+")

PRONOUNS: dict[str, tuple[str, ...]] = {
    "we": ("we", "our", "us"),
    "you": ("you", "your"),
    "i": ("i", "my", "me"),
}
"""Who speaks (English): a business to its customers (we, you), a person in a thread (I, my),
a reporter (neither). Each column is the group's share of the page's words."""
PRICE_SIGNS = "$€£¥₹₩₽"
PRICE_RE = re.compile(f"[{re.escape(PRICE_SIGNS)}]")
"""A currency sign: a price, or a plan's cost. (Patterns that begin with a digit cost Python's
regular expressions ten times more time on a page's text; the sign alone says as much here.)"""
YEAR_RE = re.compile(r"20[0-3]\d(?!\d)")
"""A year of this century: in dates however they are written (``2025-03-14``, ``14/03/2025``,
``March 14, 2025``), on bylines, post headers and listing entries."""
RELATIVE_DATE_RE = re.compile(r" ago(?!\w)")
"""A relative time (``3 days ago``): forum posts, comments, feeds."""


@dataclass(frozen=True, slots=True)
class PageTypeConfig:
    """Tunables of the page type."""

    min_confidence: float | None = None
    """Below this probability of the best type the page is ``other``; None: the model's own,
    chosen by cross-validation when it was trained (``blockdex train --page-type``: the largest
    confidence where the pages just below it have their best type wrong more often than
    right)."""
    long_block_words: int = 40
    """A block with this many words is a paragraph of prose (an article's body, a post)."""
    short_block_words: int = 3
    """A block with at most this many words is a label, a button or a link of a menu."""
    min_list_share: float = 0.05
    """An item list holding this share of the page's text counts among its lists."""


DEFAULT_PAGE_TYPE = PageTypeConfig()


# -- the columns -------------------------------------------------------------------------------


def _column_names() -> tuple[str, ...]:
    names = [f"og_{name}" for name, _ in OG_TYPES] + ["og_other", "og_none"]
    names += [f"schema_{g}" for g in SCHEMA_GROUPS] + ["schema_n"]
    names += [
        "url_depth", "url_query", "url_paging", "url_search", "url_last_chars",
        "url_last_words", "url_last_digits", "url_ext", "url_year",
    ]  # fmt: skip
    names += [f"url_{g}" for g in URL_WORDS]
    names += [f"url_last_{g}" for g in URL_WORDS]
    names += [
        "blocks", "words", "words_per_block", "link_share", "long_blocks", "long_share",
        "short_share", "headings", "h1", "h2", "h3", "heading_share", "pre_blocks",
        "prices", "price_blocks", "dates", "date_blocks", "linked_headings", "headline_links",
    ]  # fmt: skip
    names += [f"pronoun_{g}" for g in PRONOUNS]
    names += [f"tag_{g}" for g in TAG_SHARES]
    names += [
        "items_best_share", "items_best_n", "items_best_words", "items_best_prices",
        "items_lists", "items_share", "cards_share", "cards_n",
    ]  # fmt: skip
    names += [f"class_{w}" for w in CLASS_WORD_LIST]
    names += [f"label_{g}" for g in LABELS]
    names += [
        "primary_share", "primary_found", "articles", "sections", "meta_author", "meta_date",
        "meta_description", "title_words", "title_question", "question_blocks",
    ]  # fmt: skip
    return tuple(names)


FEATURE_NAMES = _column_names()
"""The model's columns, in order (the shipped model names them; a mismatch refuses to load)."""
URL_COLUMNS = slice(
    FEATURE_NAMES.index("url_depth"), FEATURE_NAMES.index(f"url_last_{list(URL_WORDS)[-1]}") + 1
)
"""Where :func:`url_columns` sits among :data:`FEATURE_NAMES` (training blanks them to teach the
model pages read without an address)."""


_log = math.log1p
"""``log(1 + n)``: how counts enter the columns (``math.log1p`` itself, so that a column costs
no Python call)."""


def _declared_columns(meta: Mapping[str, str]) -> list[float]:
    og = (meta.get("og_type") or "").strip().lower()
    if og:
        cols = [float(rx.match(og) is not None) for _, rx in OG_TYPES]
        cols += [float(not any(cols)), 0.0]
    else:
        cols = [0.0] * len(OG_TYPES) + [0.0, 1.0]
    declared = [t.strip().lower() for t in (meta.get("schema_types") or "").split(",")]
    declared = [t.rpartition("/")[2] for t in declared if t]  # "https://schema.org/Product"
    groups = [0.0] * len(SCHEMA_GROUPS)
    for t in declared:
        k = _SCHEMA_GROUP.get(t)
        if k is not None:
            groups[k] += 1.0
    cols += groups
    cols.append(float(len(declared)))
    return cols


@lru_cache(maxsize=4096)
def url_columns(url: str | None) -> tuple[float, ...]:
    """The address's shape and its generic path words (:data:`URL_WORDS`); an address that
    does not parse (a page's own canonical link can be anything: ``https://a]b/``) has the
    columns of none."""
    try:
        parts = urlsplit(url or "")
    except ValueError:
        parts = urlsplit("")
    segments = [s for s in parts.path.lower().split("/") if s]
    query = {k.lower() for k, _ in parse_qsl(parts.query, keep_blank_values=True)}
    last = _URL_EXT_RE.sub("", segments[-1]) if segments else ""
    cols = [
        float(len(segments)),
        float(bool(parts.query)),
        float(bool(query & URL_PAGING_KEYS)),
        float(bool(query & URL_SEARCH_KEYS)),
        float(len(last)),
        float(len([w for w in _URL_SPLIT_RE.split(last) if w])),
        float(len(_URL_DIGITS_RE.findall(last))),
        float(bool(segments) and bool(_URL_EXT_RE.search(segments[-1]))),
        float(any(_URL_YEAR_RE.match(s) for s in segments)),
    ]
    pieces = [p for s in segments for p in _URL_SPLIT_RE.split(s) if p and p != s]
    for words in URL_WORDS.values():
        cols.append(sum(s in words for s in segments) + 0.5 * sum(p in words for p in pieces))
    # the last segment alone: /news or /recipes is the section's index, /news/a-story a story
    cols += [float(last in words) for words in URL_WORDS.values()]
    return tuple(cols)


def _compiled(found: Any, what: str) -> Any:
    """What a compiled count found: None means it was not written for its input (blocks not of
    one class with :class:`~blockdex.page.Block`'s slots, or a table of this module changed
    without ``_pagetype_c.pyx``)."""
    if found is None:
        raise TypeError(
            f"the page type's {what} read Block objects of one class and the tables "
            "_pagetype_c.pyx was written for"
        )
    return found


def _class_counts(table: BlockIds) -> list[int]:
    """How often each word of :data:`CLASS_WORD_LIST` is named in the class/id tokens of the
    elements around the blocks (``Block.scope_attrs``, of the blocks' table), each element counted
    once per block inside it. The tokens are scanned left to right for words of the list, the
    longest where two start at one place, a match not overlapping the one before (in C:
    ``_pagetype_c.class_counts``, each distinct tokens string of the page scanned once)."""
    found = compiled.class_counts(table, CLASS_WORD_LIST)
    return _compiled(found, "class counts")  # type: ignore[no-any-return]


def _class_columns(table: BlockIds) -> list[float]:
    """How often each word of :data:`CLASS_WORD_LIST` is named by the elements around the
    blocks (:func:`_class_counts`), log-scaled."""
    return list(map(_log, _class_counts(table)))


_LABEL_GROUP: dict[str, int] = {}
for _k, _labels in enumerate(LABELS.values()):
    for _label in _labels:
        _LABEL_GROUP.setdefault(_label, _k)


_LABEL_LONGEST = max(map(len, _LABEL_GROUP))
"""The longest key of :data:`LABELS` (a block's longer key is not looked up)."""


def _label_key(text: str) -> str:
    """What a block's text is looked up by among :data:`LABELS`: its words lower-cased, letters
    only, one space between them."""
    return " ".join(_LETTERS_RE.findall(text.lower()))


class _BlockSums(NamedTuple):
    """The page type's per-block counts over a page's blocks (:func:`_block_sums`)."""

    char_ends: list[int]
    """The characters before each block, and in all."""
    words: int
    """Words as ``str.split`` counts them."""
    link_chars: int
    long_blocks: int
    """Blocks of at least ``long_block_words`` words …"""
    long_words: int
    """… and their words."""
    short_blocks: int
    """Blocks of at most ``short_block_words`` words."""
    h1: int
    h2: int
    h3: int
    """h3 to h6."""
    pre: int
    tag_words: list[int]
    """Words per :data:`TAG_SHARES` group."""
    linked_headings: int
    """Headings at least half of whose characters are link text."""
    headline_links: int
    """Blocks of 4 words or more at least 4/5 link text."""
    questions: int
    """Blocks holding a ``?``."""
    labels: list[int]
    """Blocks per :data:`LABELS` group."""
    prices: int
    """Currency signs (:data:`PRICE_RE`) …"""
    priced: list[int]
    """… and the positions of the blocks holding one."""
    dates: int
    """Years and relative dates (:data:`YEAR_RE`, :data:`RELATIVE_DATE_RE`) …"""
    dated_blocks: int
    """… and the blocks holding one."""
    pronouns: list[int]
    """Per :data:`PRONOUNS` group, its words in the texts (see :func:`_block_sums`)."""


_PRONOUN_WORDS = tuple(w for words in PRONOUNS.values() for w in words)
_PRONOUN_GROUPS = tuple(k for k, words in enumerate(PRONOUNS.values()) for _ in words)


def _compiled_tables(cfg: PageTypeConfig) -> tuple[Any, ...]:
    """What the compiled :func:`_block_sums` reads besides the blocks (it refuses a pattern,
    signs or pronouns other than the ones it was written for)."""
    return (
        _TAG_CODES, len(TAG_SHARES), cfg.long_block_words, cfg.short_block_words,
        LABEL_MAX_CHARS, _LABEL_GROUP, len(LABELS), _LABEL_LONGEST, _label_key, PRICE_SIGNS,
        YEAR_RE.pattern, RELATIVE_DATE_RE.pattern, _PRONOUN_WORDS, _PRONOUN_GROUPS, len(PRONOUNS),
    )  # fmt: skip


def _block_sums(table: BlockIds, cfg: PageTypeConfig) -> _BlockSums:
    """One compiled pass over the blocks' text, tag and link characters
    (``_pagetype_c.block_sums``).

    The texts are read as if joined by newlines: a pattern's matches are mapped back to the
    blocks, and a pronoun counts where it stands between two spaces in the joined text
    (lower-cased, a space added at each end; ``str.count``, so of ``we we`` only the first)."""
    found = compiled.block_sums(table, *_compiled_tables(cfg))
    return _BlockSums(*_compiled(found, "block sums"))


def _item_columns(
    page: Page, char_ends: Sequence[int], priced: Sequence[int], cfg: PageTypeConfig
) -> list[float]:
    """The page's item lists: the biggest one's share of the text, its size, words per item and
    share of items with a price (``priced``: the positions of the blocks with one, ascending);
    how many lists hold a real share; the share of all items; the biggest list of cards (items
    of several blocks each: a title, a text, a price)."""
    total = char_ends[-1] or 1
    best = (0.0, 0, 0.0, 0.0)
    cards = (0.0, 0)
    n_lists = 0
    spans: list[tuple[int, int]] = []
    for lst, items in cut_lists(page):
        chars = sum(char_ends[e + 1] - char_ends[s] for s, e in items)
        share = chars / total
        n_lists += share >= cfg.min_list_share
        spans += items
        if share > best[0]:
            # an item holds a price when the first priced block at or after its start is in it
            priced_items = 0
            for s, e in items:
                k = bisect_left(priced, s)
                priced_items += k < len(priced) and priced[k] <= e
            with_price = priced_items / len(items)
            best = (share, len(items), lst.words / len(lst.items), with_price)
        if share > cards[0] and 2 * sum(s < e for s, e in items) >= len(items):
            cards = (share, len(items))
    return [
        best[0], _log(best[1]), _log(best[2]), best[3], float(n_lists),
        _covered_chars(spans, char_ends) / total, cards[0], _log(cards[1]),
    ]  # fmt: skip


def _covered_chars(spans: list[tuple[int, int]], char_ends: Sequence[int]) -> int:
    """The characters of the blocks inside any of ``spans`` (first and last block positions),
    each block counted once: the spans merged where they meet or overlap."""
    out = 0
    end = -1  # the last block of the merged span being read
    start = 0
    for s, e in sorted(spans):
        if s > end + 1:
            if end >= 0:
                out += char_ends[end + 1] - char_ends[start]
            start, end = s, e
        elif e > end:
            end = e
    if end >= 0:
        out += char_ends[end + 1] - char_ends[start]
    return out


_UNIT_KIND = attrgetter("kind")


def page_type_features(page: Page, cfg: PageTypeConfig = DEFAULT_PAGE_TYPE) -> np.ndarray:
    """The model's columns (:data:`FEATURE_NAMES`) for ``page``, as one float32 row.

    Only what every segmentation keeps is read (blocks' text, tag, attrs, links; never their
    HTML), so text output and JSON output give a page the same type."""
    blocks = page.blocks
    meta = page.meta
    cols = _declared_columns(meta)
    cols += url_columns(page.url or meta.get("canonical"))

    n = len(blocks)
    table = page_ids(page)
    sums = _block_sums(table, cfg)
    char_ends = sums.char_ends
    total_words = sums.words or 1
    total_chars = char_ends[-1] or 1
    n_headings = sums.h1 + sums.h2 + sums.h3
    per_block = 1 / (n or 1)
    cols += [
        _log(n),
        _log(total_words),
        total_words * per_block,
        sums.link_chars / total_chars,
        _log(sums.long_blocks),
        sums.long_words / total_words,
        sums.short_blocks * per_block,
        _log(n_headings),
        _log(sums.h1),
        _log(sums.h2),
        _log(sums.h3),
        n_headings * per_block,
        _log(sums.pre),
        _log(sums.prices),
        len(sums.priced) * per_block,
        _log(sums.dates),
        sums.dated_blocks * per_block,
        # a listing's entries are headlines that link to the story; an article's headings do not
        sums.linked_headings / (n_headings or 1),
        _log(sums.headline_links),
    ]
    cols += [c / total_words for c in sums.pronouns]
    cols += [w / total_words for w in sums.tag_words]
    cols += _item_columns(page, char_ends, sums.priced, cfg)
    cols += _class_columns(table)
    cols += map(_log, sums.labels)
    unit = page.primary_unit if n else None
    primary_chars = 0
    if unit is not None:
        first = page.first_index
        lo, hi = max(unit.start - first, 0), min(unit.end - first + 1, n)
        primary_chars = char_ends[hi] - char_ends[lo] if hi > lo else 0
    kinds = list(map(_UNIT_KIND, page.units))
    cols += [
        primary_chars / total_chars,
        float(unit is not None),
        float(kinds.count("article")),
        _log(kinds.count("section")),
        float(bool(meta.get("author"))),
        float(bool(meta.get("date"))),
        float(bool(meta.get("description"))),
        _log(len(page.title.split())),
        float(page.title.rstrip().endswith("?")),
        sums.questions * per_block,
    ]
    return np.asarray(cols, dtype=np.float32)


# -- the model ---------------------------------------------------------------------------------


class PageTypeModel:
    """One forest per type (:data:`PAGE_TYPES`), loaded from its JSON description."""

    FORMAT = "blockdex-page-type-model"

    def __init__(self, spec: dict[str, Any]) -> None:
        if spec.get("format") != self.FORMAT:
            raise BlockdexError("not a blockdex page-type model (missing format marker)")
        if tuple(spec.get("features", ())) != FEATURE_NAMES:
            raise BlockdexError(
                "the page-type model was trained with other columns than this blockdex computes; "
                "retrain it with 'blockdex train --page-type'"
            )
        self.classes = tuple(spec["classes"])
        if set(self.classes) - set(PAGE_TYPES):
            raise BlockdexError(f"unknown page types in the model: {self.classes}")
        self.forests = [Forest(f) for f in spec["forests"]]
        if len(self.forests) != len(self.classes):
            raise BlockdexError("the page-type model needs one forest per type")
        self._trees = Forests(self.forests)
        self.min_confidence = float(spec.get("min_confidence", 0.0))
        """Below this probability of the best type a page is ``other``."""
        self.report = spec.get("report", {})

    @classmethod
    def load(cls, path: str | Path | None = None) -> PageTypeModel:
        """Load ``path``, or the model shipped in the package when ``path`` is None."""
        if path is None:
            return _shipped_model()
        try:
            spec = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BlockdexError(f"cannot load page-type model {path}: {exc}") from None
        return cls(spec)

    def probabilities(self, X: np.ndarray) -> np.ndarray:
        """Softmax over the forests' sums: one row of type probabilities per row of ``X``."""
        raw = self._trees.raw(X)
        raw -= raw.max(axis=1, keepdims=True)
        np.exp(raw, out=raw)
        raw /= raw.sum(axis=1, keepdims=True)
        return raw


@lru_cache(maxsize=1)
def _shipped_model() -> PageTypeModel:
    ref = resources.files("blockdex.data").joinpath(MODEL_RESOURCE)
    if not ref.is_file():
        raise BlockdexError(
            "the package has no page-type model file; reinstall blockdex or train one with "
            "'blockdex train --page-type --out page_type_model.json'"
        )
    return PageTypeModel(json.loads(ref.read_text(encoding="utf-8")))


def classify_page(
    page: Page, model: PageTypeModel | None = None, cfg: PageTypeConfig = DEFAULT_PAGE_TYPE
) -> PageType:
    """The page's type: the most likely of :data:`PAGE_TYPES`, or ``other`` when its probability
    is below ``cfg.min_confidence`` (by default the model's); a page without blocks is
    ``other`` with confidence 0."""
    if not page.blocks:
        return PageType(OTHER, 0.0, {})
    model = model or _shipped_model()
    probs = model.probabilities(page_type_features(page, cfg)[None, :])[0]
    scores = dict(zip(model.classes, probs.tolist(), strict=True))
    floor = model.min_confidence if cfg.min_confidence is None else cfg.min_confidence
    return page_type_of(scores, floor)


def page_type_of(scores: Mapping[str, float], min_confidence: float) -> PageType:
    """The :class:`PageType` of a page whose type probabilities are ``scores``: the most likely
    type, or ``other`` below ``min_confidence``."""
    label = max(scores, key=scores.__getitem__)
    confidence = scores[label]
    return PageType(label if confidence >= min_confidence else OTHER, confidence, scores)


PAGE_TYPE_COLUMN_NAMES: tuple[str, ...] = tuple(f"page_type_{t}" for t in PAGE_TYPES)
"""The content model's page-type columns (``TrainConfig.page_type_columns``): the page's
probability of each type, the same on every block of the page."""


def page_type_columns(page: Page) -> np.ndarray:
    """The ``(n_blocks, len(PAGE_TYPES))`` float32 matrix of :data:`PAGE_TYPE_COLUMN_NAMES`:
    :attr:`blockdex.page.Page.page_type`'s probabilities, repeated on every block (zeros for a
    page the model could not type)."""
    scores = page.page_type.scores
    row = np.asarray([scores.get(t, 0.0) for t in PAGE_TYPES], dtype=np.float32)
    return np.broadcast_to(row, (len(page.blocks), len(PAGE_TYPES)))
