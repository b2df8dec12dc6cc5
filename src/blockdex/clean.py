"""Noise removal, and rescue of page text that only exists inside scripts.

Phases, in order (each a function below):

1. ``script_candidates`` — *before* scripts are dropped, collect text a browser would show but
   the static HTML does not hold: HTML written by ``document.write``/``innerHTML``, JSON-LD
   ``articleBody``/``text``, and long text fields of framework state (``__NEXT_DATA__``,
   ``__NUXT__``, ``window.__INITIAL_STATE__``…). Text the visible page already contains is not
   rescued twice (``new_fragments`` compares with the page text once the noise is gone).
2. ``drop_noise`` — remove elements that never carry readable content (script, style, svg…),
   elements the author hid, and comments.
3. ``drop_interface`` — remove what the page shows only on demand or as a tool, though its
   class, not an inline style, hides it: hover cards, tooltips and popovers (the name they
   describe stays), and the permalink anchors of headings (``¶``, ``#``, ``🔗``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache, partial
from itertools import islice, repeat
from typing import Any

from blockdex import _clean_c as compiled
from blockdex.errors import check_minimums
from blockdex.mathtex import formulas_to_tex
from blockdex.parse import BAD_JSON, Document, ScriptsToKeep, load_json_once, parse_bounded
from blockdex.segment import BLOCK_TAGS
from blockdex.units import hits_needed

# Scripts the script rescue reads: framework state by element id or by variable name, and
# scripts that write HTML. The walk after parsing keeps the code of those only (SCRIPTS_READ).
STATE_SCRIPT_IDS = frozenset({"__NEXT_DATA__", "__NUXT_DATA__", "__APOLLO_STATE__", "ng-state"})
STATE_NAMES = (
    "__INITIAL_STATE__",
    "__PRELOADED_STATE__",
    "__NUXT__",
    "__APOLLO_STATE__",
    "__DATA__",
)
HTML_WRITES = ("document.write", ".innerHTML")
SCRIPT_NEEDLE_GROUPS = (STATE_NAMES, HTML_WRITES)
"""What makes a script worth reading, in two groups: framework state (the value 1 in a script's
needle mask, :attr:`blockdex.parse.Document.scripts`) and HTML written by the script (the value 2)."""
SCRIPTS_READ = ScriptsToKeep(
    STATE_SCRIPT_IDS, tuple(tuple(n.encode() for n in group) for group in SCRIPT_NEEDLE_GROUPS)
)
"""What :func:`blockdex.parse.parse_html` is asked to keep the code of for this module."""


@dataclass(frozen=True, slots=True)
class CleanConfig:
    """Tunables of the cleaner."""

    rescue_scripts: bool = True
    """Recover text hidden in scripts (the method prescribes it; off saves ~5% time)."""
    min_rescued_chars: int = 200
    """Shorter script strings are labels, ids or UI text, not content."""
    max_script_chars: int = 4_000_000
    """Scripts larger than this are not parsed for text (bounded work per page)."""
    max_js_string_chars: int = 500_000
    """Longer document.write/innerHTML string literals are not rescued (bounded work per page)."""
    max_known_share: float = 0.6
    """Rescued text whose words are this much already on the page is a duplicate: skipped."""
    max_rescued_fragments: int = 50
    """Bound on how many fragments one page can add."""
    probe_chars: int = 4000
    """Only the start of a candidate is probed: enough to recognise a duplicate, bounded cost."""
    match_probes: int = 16
    """Words probed against the visible text to detect an already-shown fragment."""
    probe_word_chars: int = 5
    """Only words this long are probes: short words occur on every page."""
    min_probe_words: int = 15
    """Fragments with fewer long words are UI strings, not content."""
    noscript_content_chars: int = 1000
    """A <noscript> with this much text is the page's no-JS content and is kept (0: drop all)."""
    drop_hidden: bool = True
    """Remove elements the author hid (``hidden``, ``display:none``…). The extractor turns it off
    for a second try when nothing readable is left: some pages hide their whole content until a
    script shows it."""

    formulas: bool = True
    """Write formulas (MathJax, KaTeX, MathML, Wikipedia's math) as TeX text before scripts and
    ``<math>`` are dropped (:mod:`blockdex.mathtex`)."""
    drop_cards: bool = True
    """Remove hover cards, tooltips and popovers (:func:`hover_card`, :func:`more_card`): a
    reader sees them only when pointing at a name, yet their text would run into the sentence."""
    drop_permalinks: bool = True
    """Remove permalink anchors (:func:`permalink`): a glyph or "Permalink" after each heading
    is a tool, not text (``## A Minimal Application¶``)."""
    max_link_text_chars: int = 64
    """A permalink or a card's "MORE" link reads at most this many characters, spaces
    included: longer links are not read for them (speed)."""
    max_glyph_chars: int = 3
    """A permalink's lone glyph has at most this many characters besides spaces, none a letter
    or digit (``¶``, ``§``, ``#``; ``🔗`` with its variation selector is two)."""
    permalink_levels: int = 3
    """How far up from a link to look for the element whose ``id`` it names: its heading, or
    the section around the heading (Sphinx)."""
    card_levels: int = 4
    """How far up from a "MORE" link to look for the card it ends (right after the name)."""

    def __post_init__(self) -> None:
        check_minimums(self, _CLEAN_MINIMUMS)


_CLEAN_MINIMUMS = {
    **dict.fromkeys(
        (
            "min_rescued_chars",
            "max_script_chars",
            "max_js_string_chars",
            "max_rescued_fragments",
            "probe_chars",
            "probe_word_chars",
            "min_probe_words",
            "noscript_content_chars",
            "max_link_text_chars",
            "max_glyph_chars",
            "permalink_levels",
            "card_levels",
        ),
        0,
    ),
    "match_probes": 1,
    "max_known_share": 0.0,
}
DEFAULT_CLEAN = CleanConfig()

# Elements that hold code or an embedded object, never text of the page itself: every cleaner
# drops them (the HtmlRAG baseline too, with its own additions).
CODE_AND_EMBED_TAGS: tuple[str, ...] = (
    "script",
    "style",
    "noscript",
    "template",
    "svg",
    "math",
    "iframe",
    "object",
    "embed",
    "canvas",
)
# Elements removed with everything inside them: they never hold text a reader sees as content.
NOISE_TAGS: tuple[str, ...] = (
    *CODE_AND_EMBED_TAGS,
    "video",
    "audio",
    "map",
    "select",
    "textarea",
    "input",
    "head",
    "link",
    "meta",
    "frameset",
    "frame",
    "applet",
    "param",
    # not "source": a <picture>'s sources name the image's address (inside <video>/<audio>
    # they go with their element); they hold no text
    "track",
    "datalist",
    "dialog",
)

_NOISE_NAMES = frozenset(NOISE_TAGS)

# Elements the author hid: the HTML `hidden` attribute and inline display/visibility styles.
HIDDEN_SELECTOR = ", ".join(
    (
        "[hidden]",
        '[style*="display:none"]',
        '[style*="display: none"]',
        '[style*="visibility:hidden"]',
        '[style*="visibility: hidden"]',
        'input[type="hidden"]',
    )
)

# Keys in JSON-LD whose string value is the article text.
JSONLD_TEXT_KEYS = frozenset({"articleBody", "text", "reviewBody", "answerText"})
# A product's facts, as a shopper reads them, from its JSON-LD Product item: label, then the path
# of keys to the value (in the item, or in its first offer).
PRODUCT_FACTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Price", ("offers", "price")),
    ("Availability", ("offers", "availability")),
    ("Rating", ("aggregateRating", "ratingValue")),
    ("Brand", ("brand", "name")),
    ("SKU", ("sku",)),
)
"""The facts a product page's own structured data gives and its visible HTML often lacks (a
price drawn by a script, a rating widget): each is rescued when its value is not on the page."""
_PRODUCT_TYPES = frozenset({"product", "productgroup", "individualproduct", "productmodel"})
_SCHEMA_WORD_RE = re.compile(r"(?<=[a-z])(?=[A-Z])")
_STATE_ASSIGN_RE = re.compile(
    r"(?:window\.)?(?:__INITIAL_STATE__|__PRELOADED_STATE__|__NUXT__|__APOLLO_STATE__|__DATA__)\s*=\s*"
)
# document.write("…") and el.innerHTML = "…" with a quoted JS string literal.
# Possessive loops over runs of ordinary characters (++ / *+): no backtracking state is kept, so
# matching a string costs O(1) memory instead of ~140 bytes per character (a per-character
# counted group made a 2 MB literal cost 290 MB), and a string that never closes is scanned once.
_JS_HTML_WRITE_RE = re.compile(
    r"""(?:document\.write(?:ln)?\s*\(\s*|\.innerHTML\s*[+]?=\s*)"""
    r"""(?:"(?P<s1>(?:[^"\\]++|\\.)++)"|'(?P<s2>(?:[^'\\]++|\\.)++)'|`(?P<s3>(?:[^`\\]++|\\.)++)`)""",
    re.S,
)


def _html_writes(code: str) -> Iterator[re.Match[str]]:
    """``_JS_HTML_WRITE_RE.finditer(code)``: the regex tried only where one of its two literal
    starts occurs (``str.find``), not at every position (an alternation has no literal prefix
    for the regex engine to search for: 5.5x slower over the evaluation pages' scripts)."""
    pos = 0
    a = code.find("document.write")
    b = code.find(".innerHTML")
    while a >= 0 or b >= 0:
        at = b if a < 0 or 0 <= b < a else a
        m = _JS_HTML_WRITE_RE.match(code, at)
        if m is not None:
            yield m
        pos = at + 1 if m is None else m.end()
        # each literal is searched again only once the scan has passed it (linear overall)
        if 0 <= a < pos:
            a = code.find("document.write", pos)
        if 0 <= b < pos:
            b = code.find(".innerHTML", pos)


# [^<>]: a '<' ends the candidate, so '<a<a<a…' without any '>' is scanned once, not n times.
_HAS_TAG_RE = re.compile(r"<\s*[a-zA-Z][^<>]*>")


_JS_ESCAPE_RE = re.compile(r"\\(u\{[0-9a-fA-F]{1,6}\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)", re.S)
_JS_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "", "f": "", "v": "", "0": ""}


def _js_escape(m: re.Match[str]) -> str:
    e = m.group(1)
    if e[0] == "u" and len(e) > 1:
        return chr(int(e[2:-1] if e[1] == "{" else e[1:], 16) % 0x110000)
    if e[0] == "x" and len(e) == 3:
        return chr(int(e[1:], 16))
    return _JS_SIMPLE_ESCAPES.get(e, e)


def _unescape_js(s: str) -> str:
    """Decode the escapes of a JS string literal (\\n, \\", \\uXXXX, \\/ …)."""
    if "\\" not in s:
        return s
    out = _JS_ESCAPE_RE.sub(_js_escape, s)
    # Re-pair UTF-16 surrogates that \\uD83D\\uDE00-style escapes produce.
    return out.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


_MAX_JSON_NODES = 200_000  # bound on values visited in one script's JSON


def _long_strings(obj: object, keys: frozenset[str] | None, min_chars: int) -> Iterator[str]:
    """Strings in a JSON value (iteratively), optionally only under the given keys."""
    stack: list[tuple[object, str | None]] = [(obj, None)]
    visited = 0
    while stack and visited < _MAX_JSON_NODES:
        visited += 1
        value, key = stack.pop()
        if isinstance(value, dict):  # children pushed last first, pairs made in C
            stack.extend(zip(reversed(value.values()), reversed(value), strict=True))
        elif isinstance(value, list):
            stack.extend(zip(reversed(value), repeat(key), strict=False))
        elif isinstance(value, str) and len(value) >= min_chars and (keys is None or key in keys):
            if keys is None and value[:300].count(" ") < 15:
                continue  # ids, base64, URLs and labels have few spaces; prose has many
            yield value


def _prose_literals(code: str, min_chars: int) -> Iterator[str]:
    """Long JSON string literals in framework state that read like prose.

    A regex over the source finds them without parsing megabytes of state into Python objects
    (a full ``json.loads`` and walk cost more than the rest of the page's cleaning).
    """
    for raw in _long_literals(code, min_chars):
        if raw[:300].count(" ") < 15:
            continue  # ids, base64, URLs and labels have few spaces; prose has many
        try:
            yield json.loads(f'"{raw}"')
        except ValueError:
            continue


def _long_literals(code: str, min_chars: int) -> Iterator[str]:
    """The contents of the closed string literals of ``code`` at least ``min_chars`` long.

    A double-quoted literal is read left to right so that every quote is paired the way JS pairs
    it (``\\\\"`` inside a literal is an escaped backslash, then the closing quote); an unclosed
    one ends at its line's end, so the scan never restarts inside one. Scanned in C
    (``_clean_c.long_string_literals``): state scripts hold ~1,000 literals a page."""
    for i, j in compiled.long_string_literals(code, min_chars):
        yield code[i:j]


_STATE_BIT = 1 << SCRIPT_NEEDLE_GROUPS.index(STATE_NAMES)
"""The bit of a script's needle mask that stands for :data:`STATE_NAMES`."""
_WRITE_BIT = 1 << SCRIPT_NEEDLE_GROUPS.index(HTML_WRITES)
"""The bit that stands for the HTML writes (``document.write``, ``.innerHTML``)."""


def _scripts(doc: Document) -> Iterator[tuple[str, str, Callable[[], str], int]]:
    """Each ``<script>`` with code, in document order: its lower-cased type, its id, its code
    (read on demand) and which groups of :data:`SCRIPT_NEEDLE_GROUPS` the code may hold, as a
    mask (bit ``g``: a needle of group ``g``; a script with none is neither state nor
    HTML-writing, and is not read). The compiled walks set a bit only for a group with a needle
    there, or every bit when a script's text is split over several nodes."""
    if doc.scripts is not None:  # found by parse_html's walk, the code of those worth reading
        for stype, sid, code, holds in doc.scripts:
            yield (stype or "").lower(), sid or "", partial(str, code or ""), holds
        return
    if doc.tree.root is not None:
        # one C walk; the code of a script is decoded only if it is read (most never are)
        needles = SCRIPTS_READ.needles
        for stype, sid, node_id, holds in compiled.script_elements(doc.tree.root.mem_id, needles):
            yield (stype or "").lower(), sid or "", partial(compiled.deep_text, node_id), holds


def _script_candidates(doc: Document, cfg: CleanConfig) -> Iterator[str]:
    for stype, sid, read_code, holds in _scripts(doc):
        is_state = sid in STATE_SCRIPT_IDS or (stype == "application/json" and sid)
        if not holds and not is_state and "ld+json" not in stype:
            continue
        code = read_code()
        if len(code) > cfg.max_script_chars:
            continue
        if "ld+json" in stype:
            data = load_json_once(code, doc.parsed_json)  # the metadata reader's parse, if any
            if data is BAD_JSON:
                continue
            yield from _long_strings(data, JSONLD_TEXT_KEYS, cfg.min_rescued_chars)
        elif is_state:
            yield from _prose_literals(code, cfg.min_rescued_chars)
        else:
            m = None  # no string search of the code for a needle its mask leaves out
            if holds & _STATE_BIT and any(n in code for n in STATE_NAMES):
                m = _STATE_ASSIGN_RE.search(code)
            if m:
                yield from _prose_literals(code[m.end() :], cfg.min_rescued_chars)
            writes = _html_writes(code) if holds & _WRITE_BIT else ()
            for w in writes:  # finds the literals first: nothing to do without
                literal = w.group("s1") or w.group("s2") or w.group("s3")
                if len(literal) > cfg.max_js_string_chars:
                    continue
                s = _unescape_js(literal)
                if len(s) >= cfg.min_rescued_chars or _HAS_TAG_RE.search(s):
                    yield s


_PROBE_STRIP = "\"'“”‘’«»()[]{}<>.,;:!?¡¿…-–—/\\|*#"


def _probe_words(text: str, min_len: int) -> list[str]:
    """Lower-cased words of ``text`` long enough to be evidence that a passage is on the page:
    its whitespace-separated tokens of ``min_len`` characters or more that still have as many
    once :data:`_PROBE_STRIP`'s punctuation is stripped from their ends (in C:
    ``_clean_c.probe_words``; stripping only shortens a word, so short ones are never
    stripped)."""
    return compiled.probe_words(text.lower(), min_len, _PROBE_STRIP)  # type: ignore[no-any-return]


def _mostly_known(words: list[str], visible: str, probes: int, share: float) -> bool:
    """Whether at least ``share`` of evenly spaced probe words (at most ``probes``) occur in
    ``visible`` (lower-cased page text), found in one pass over it (``_clean_c.words_found``;
    searching word by word, each word missing from the page cost a search through all of
    it)."""
    if not words:
        return share <= 1.0  # no words: all known
    n = min(probes, len(words))
    step = len(words) / n
    enough = hits_needed(n, share)
    found: int = compiled.words_found([words[int(k * step)] for k in range(n)], visible, enough)
    return found >= enough


def script_candidates(doc: Document, cfg: CleanConfig = DEFAULT_CLEAN) -> list[str]:
    """HTML/text fragments found in the page's scripts (call before the scripts are dropped)."""
    out: list[str] = []
    seen: set[str] = set()
    for fragment in _script_candidates(doc, cfg):
        if fragment not in seen:
            seen.add(fragment)
            out.append(fragment)
    return out


def new_fragments(
    candidates: list[str], visible: str, cfg: CleanConfig = DEFAULT_CLEAN
) -> list[str]:
    """The candidates whose text is not already in ``visible`` (the cleaned page's text).

    ``visible`` must not contain script code, or every candidate would look already shown.
    """
    found: list[str] = []
    visible = visible.lower()
    for fragment in candidates:
        text = fragment
        if _HAS_TAG_RE.search(fragment):
            text = parse_bounded(fragment)[0].text(separator=" ")
        words = _probe_words(text[: cfg.probe_chars], cfg.probe_word_chars)
        if len(words) < cfg.min_probe_words:
            continue
        if _mostly_known(words, visible, cfg.match_probes, cfg.max_known_share):
            continue
        found.append(fragment)
        visible += " " + text.lower()
        if len(found) >= cfg.max_rescued_fragments:
            break
    return found


def _jsonld_items(data: object) -> Iterator[dict[str, object]]:
    """The top-level items of a JSON-LD script and the members of their ``@graph``."""
    for item in data if isinstance(data, list) else [data]:
        if isinstance(item, dict) and isinstance(item.get("@graph"), list):
            yield from (g for g in item["@graph"] if isinstance(g, dict))
        elif isinstance(item, dict):
            yield item


def _is_product(item: dict[str, object]) -> bool:
    declared = item.get("@type")
    types = declared if isinstance(declared, list) else [declared]
    return any(isinstance(t, str) and t.strip().lower() in _PRODUCT_TYPES for t in types)


def _fact_value(item: dict[str, object], path: tuple[str, ...]) -> str:
    """The text of the value at ``path`` (an offer list's first offer; a price with its currency,
    an AggregateOffer's range; a schema.org URL such as ``…/InStock`` as words)."""
    value: object = item
    for key in path:
        if isinstance(value, list):
            value = value[0] if value else None
        if not isinstance(value, dict):
            return ""
        if key == "price" and "price" not in value and "lowPrice" in value:
            low, high = value.get("lowPrice"), value.get("highPrice")
            value = f"{low} – {high}" if high not in (None, "", low) else low
            break
        value = value.get(key)
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, dict):
        value = value.get("name")
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return ""
    text = " ".join(str(value).split())
    if path[-1] == "availability":
        word = text.rstrip("/").rsplit("/", 1)[-1]
        text = _SCHEMA_WORD_RE.sub(" ", word).capitalize()
    elif path[-1] == "price" and text:
        offer = item.get("offers")
        offer = offer[0] if isinstance(offer, list) and offer else offer
        currency = offer.get("priceCurrency") if isinstance(offer, dict) else None
        if isinstance(currency, str) and currency.strip():
            text = f"{text} {currency.strip()}"
    elif path[-1] == "ratingValue" and text:
        rating = item.get("aggregateRating")
        count = (
            rating.get("reviewCount") or rating.get("ratingCount")
            if isinstance(rating, dict)
            else None
        )
        best = rating.get("bestRating") if isinstance(rating, dict) else None
        text += f" out of {best}" if isinstance(best, str | int | float) else " out of 5"
        if isinstance(count, str | int) and str(count).strip():
            text += f" ({count} reviews)"
    return text[:200]


def single_product(doc: Document) -> dict[str, object] | None:
    """The page's one JSON-LD Product; None when it declares none or several (a collection's
    list of products describes no one product)."""
    products = [
        item
        for data in doc.parsed_json.values()
        if data is not BAD_JSON
        for item in _jsonld_items(data)
        if _is_product(item)
    ]
    return products[0] if len(products) == 1 else None


def product_facts(product: dict[str, object], visible: str) -> list[tuple[str, str]]:
    """``(label, value)`` facts of ``product`` (:func:`single_product`, :data:`PRODUCT_FACTS`)
    whose value the visible text (``visible``, lower-cased) lacks. The page's text is read only
    for a page that declares one product."""
    facts = []
    for label, path in PRODUCT_FACTS:
        value = _fact_value(product, path)
        shown = value.split(" (")[0].split(" out of ")[0].lower()
        if label == "Price":
            shown = value.split(" ")[0]
            number = shown.replace(",", "")
            if number in visible or number.replace(".", ",") in visible:
                continue
        if value and shown not in visible:
            facts.append((label, value))
    return facts


def keep_content_noscripts(doc: Document, cfg: CleanConfig = DEFAULT_CLEAN) -> int:
    """Unwrap ``<noscript>`` elements that hold a page's content; returns how many.

    Usually a noscript holds a tracking pixel or "please enable JavaScript". But server-rendered
    apps (Discourse forums, some SPAs) put the whole readable page there, as the no-JS fallback a
    crawler or screen reader gets; dropping it would leave the page empty.
    """
    kept = 0
    for node in doc.tree.css("noscript"):
        if len(node.text(deep=True, separator=" ").strip()) >= cfg.noscript_content_chars:
            node.unwrap()
            kept += 1
    return kept


def drop_noise(doc: Document, cfg: CleanConfig = DEFAULT_CLEAN) -> None:
    """Remove noise elements and hidden elements from the tree, in place.

    The root and the body stay even when hidden: pages that hide them until a script runs
    show their content to every reader with JavaScript."""
    tree = doc.tree
    root, head, body = tree.root, tree.head, tree.body
    if root is None:
        return
    # One walk removes the outermost noise and hidden elements, unless a noscript may hold
    # content (then the steps below decide). The head goes through selectolax, which then
    # resets its cached pointer to it. The walk also picks what drop_interface reads.
    done = compiled.noise_drop(
        root.mem_id,
        _NOISE_NAMES,
        cfg.noscript_content_chars,
        head.mem_id if head is not None else 0,
        body.mem_id if body is not None else 0,
        cfg.drop_hidden,
        _interface_needles(cfg) if cfg.drop_cards or cfg.drop_permalinks else None,
    )
    if done is not None:
        if done[1] and head is not None:
            head.decompose()
        tree.strip_tags([])  # no tag: only records that the tree changed
        if len(done) > 2:
            doc.interface = done[2]
        return
    if cfg.noscript_content_chars:
        keep_content_noscripts(doc, cfg)
    tree.strip_tags(list(NOISE_TAGS), recursive=True)
    if not cfg.drop_hidden:
        return
    spared = {root.mem_id, body.mem_id if body is not None else 0}
    for node in tree.css(HIDDEN_SELECTOR):
        if node.mem_id not in spared:
            node.decompose()


# -- what the page shows only on demand: hover cards, tooltips, popovers, permalinks -----------

CARD_CLASS_RE = re.compile(
    r"(?:^(?:[a-z0-9]{1,5}[-_]+)?|__)(?:hover-?card|tool-?tip|pop-?over)"
    r"(?:[-_]*(?:text|content|inner|body|card|box|panel|wrapper|container|popup|block))?$",
    re.I | re.A,
)
"""A class token naming a card that shows on hover: the card word, after at most a short
prefix (``s-popover``, ``q-tooltip``) or as a BEM element (``x__tooltiptext``), before at most
a part's name (``tooltiptext``, ``popover-content``). Not the element that opens one
(``has-tooltip``, ``tooltip-trigger``) nor one that merely has one
(``recipe-servings-adjustable-tooltip``)."""
CARD_TRIGGER_RE = re.compile(
    r"(?:hover-?card|tool-?tip|pop-?over)[-_]*"
    r"(?:trigger|toggler?|label|button|btn|icon|link|anchor|target|handle)",
    re.I | re.A,
)
"""A class token naming what opens a card (``ss-tooltip-label``, ``tooltip-trigger``): the
visible name, which stays."""
CARD_NEEDLES = ("hovercard", "hover-card", "tooltip", "tool-tip", "popover", "pop-over")
"""What a class of :data:`CARD_CLASS_RE` or :data:`CARD_TRIGGER_RE` holds (ASCII case ignored):
only such classes are read further."""
CARD_TRIGGER_TAGS = frozenset({"a", "button", "img", "abbr", "label", "summary", "input"})
"""Elements that are what a reader points at, never the card itself."""
NOT_CARD_TAGS = frozenset({"html", "body", "main", "article"})
"""The page and its articles are never a card, whatever a class says (a plugin's
``wvs-tooltip`` on ``<body>`` enables tooltips)."""
CARD_TRIGGER_ATTRIBUTES = (
    "title",
    "data-tooltip",
    "data-toggle",
    "data-bs-toggle",
    "data-original-title",
    "data-tippy-content",
    "data-content",
    "data-title",
)
"""Attributes that hold a tip or open one: their element is the trigger, not the card."""
PERMALINK_CLASSES = frozenset(
    {
        "headerlink",
        "anchor",
        "anchor-link",
        "anchorlink",
        "anchorjs-link",
        "header-anchor",
        "heading-anchor",
        "hash-link",
        "permalink",
    }
)
"""Classes of permalink anchors (Sphinx's ``headerlink``, GitHub's ``anchor``, Docusaurus's
``hash-link``…)."""
PERMALINK_NEEDLES = ("headerlink", "anchor", "hash-link", "permalink")
"""What each of :data:`PERMALINK_CLASSES` holds: only links whose class holds one, or whose
address is a ``#fragment``, are read further."""
PERMALINK_TEXTS = frozenset(
    {
        "permalink",
        "link",
        "anchor",
        "link to this heading",
        "link to this headline",
        "link to this section",
        "permalink to this heading",
        "permalink to this headline",
        "permalink to this section",
        "direct link to heading",
    }
)
"""What a permalink says in words, lower-cased (a glyph being the other way)."""
PERMALINK_TEXT_NEEDLES = ("link", "anchor")
"""What each of :data:`PERMALINK_TEXTS` holds: a link's text is read further only when it
holds one, or is short enough to be a glyph."""
MORE_LINK_RE = re.compile(r"\s*more\s*[»›>….]*\s*", re.I | re.A)
"""The text of the link that ends a hover card ("MORE")."""
_MORE_NEEDLE = "more"

_UI_CARD, _UI_LINK = 1, 2


def _is_element(node: object | None) -> bool:
    tag = getattr(node, "tag", None)
    return bool(tag) and tag[0] not in "-_!#"  # type: ignore[index]


def _classes(node: Any) -> list[str]:
    return (node.attributes.get("class") or "").split()


def hover_card(node: Any) -> bool:
    """Whether ``node`` is a hover card, tooltip or popover: a class names one
    (:data:`CARD_CLASS_RE`), it is not what a reader points at (:data:`CARD_TRIGGER_TAGS`,
    :data:`CARD_TRIGGER_ATTRIBUTES`) nor the page (:data:`NOT_CARD_TAGS`), and it holds no other part of a card (a card inside is
    dropped itself; a :data:`CARD_TRIGGER_RE` inside is the visible name, so ``node`` wraps name
    and card and stays)."""
    tag = node.tag
    if tag in CARD_TRIGGER_TAGS or tag in NOT_CARD_TAGS:
        return False
    if not any(map(CARD_CLASS_RE.search, _classes(node))):
        return False
    attributes = node.attributes
    if any(name in attributes for name in CARD_TRIGGER_ATTRIBUTES):
        return False
    for inner in islice(node.traverse(include_text=False), 1, None):
        for token in _classes(inner) if _is_element(inner) else ():
            if CARD_CLASS_RE.search(token) or CARD_TRIGGER_RE.search(token):
                return False
    return True


def _link_text(link: Any, cfg: CleanConfig) -> str | None:
    text = link.text(deep=True)
    return text if len(text) <= cfg.max_link_text_chars else None


def permalink(link: Any, cfg: CleanConfig = DEFAULT_CLEAN) -> bool:
    """Whether the link ``link`` is a permalink anchor: its text is a lone glyph (at most
    ``max_glyph_chars`` characters besides spaces, no letter or digit) or says so
    (:data:`PERMALINK_TEXTS`), and a class says so (:data:`PERMALINK_CLASSES`) or it links to
    the ``id`` of an element it sits in (its heading, or the section round it)."""
    text = _link_text(link, cfg)
    if text is None:
        return False
    squashed = "".join(text.split())
    if (
        not (0 < len(squashed) <= cfg.max_glyph_chars and not any(c.isalnum() for c in squashed))
        and " ".join(text.split()).lower() not in PERMALINK_TEXTS
    ):
        return False
    if any(t.isascii() and t.lower() in PERMALINK_CLASSES for t in _classes(link)):
        return True
    href = link.attributes.get("href") or ""
    if len(href) < 2 or href[0] != "#":
        return False
    up = link.parent
    for _ in range(cfg.permalink_levels):
        if not _is_element(up):
            break
        if up.attributes.get("id") == href[1:]:
            return True
        up = up.parent
    return False


def _previous_element(node: Any) -> Any | None:
    """The element just before ``node`` (blank text and comments between), or None."""
    sib = node.prev
    while sib is not None:
        tag = sib.tag
        if tag == "-text":
            if (sib.text_content or "").strip():
                return None
        elif tag != "-comment":
            return sib if _is_element(sib) else None
        sib = sib.prev
    return None


def more_card(link: Any, cfg: CleanConfig = DEFAULT_CLEAN) -> Any | None:
    """The hover card that the link ``link`` ends, or None: its text is "MORE"
    (:data:`MORE_LINK_RE`), and the card is an inline element round it (at most
    ``card_levels`` up) that comes right after a link to the same address (the name it
    describes), and holds other links besides (the name again, the stories)."""
    text = _link_text(link, cfg)
    href = link.attributes.get("href")
    if text is None or not href or not MORE_LINK_RE.fullmatch(text):
        return None
    up = link.parent
    for _ in range(cfg.card_levels):
        if not _is_element(up) or up.tag in BLOCK_TAGS:
            return None  # a card sits in the sentence, round the name
        name = _previous_element(up)
        if name is not None and name.tag == "a" and name.attributes.get("href") == href:
            links = sum(1 for inner in up.traverse(include_text=False) if inner.tag == "a")
            return up if links > 1 else None
        up = up.parent
    return None


def _interface_candidates(doc: Document, cfg: CleanConfig) -> list[tuple[int, Any]]:
    """What :func:`drop_interface` reads: ``(kind, node)`` in document order, ``_UI_CARD`` for
    an element whose class may name a card, ``_UI_LINK`` for a link that may be a permalink or
    end a card. The compiled walk (``_clean_c.interface_candidates``) picks them by needles (an
    element whose lower-cased class holds one of :data:`CARD_NEEDLES`; links) without reading
    every element's attributes into Python."""
    root = doc.tree.root
    if root is None:
        return []
    if doc.interface is not None:  # found by drop_noise's compiled walk
        found, doc.interface = doc.interface, None
        return found  # type: ignore[return-value]
    # the nodes detach with lexbor's remove function (blockdex.extensions.require checks it)
    return compiled.interface_candidates(root.mem_id, *_interface_needles(cfg))  # type: ignore[no-any-return]


@lru_cache(maxsize=4)
def _interface_needles(
    cfg: CleanConfig,
) -> tuple[tuple[bytes, ...], tuple[bytes, ...], bytes, tuple[bytes, ...], int, int]:
    """What the compiled walks pick :func:`drop_interface`'s candidates by (necessary
    conditions of its rules: the rules decide)."""
    return (
        tuple(n.encode() for n in CARD_NEEDLES),
        tuple(n.encode() for n in PERMALINK_NEEDLES),
        _MORE_NEEDLE.encode(),
        tuple(n.encode() for n in PERMALINK_TEXT_NEEDLES),
        cfg.max_link_text_chars,
        cfg.max_glyph_chars,
    )


def drop_interface(doc: Document, cfg: CleanConfig = DEFAULT_CLEAN) -> int:
    """Remove hover cards, tooltips and popovers (:func:`hover_card`, :func:`more_card`) and
    permalink anchors (:func:`permalink`) from the tree, in place; returns how many went."""
    if not (cfg.drop_cards or cfg.drop_permalinks):
        return 0
    doomed: dict[int, Any] = {}
    for kind, node in _interface_candidates(doc, cfg):
        if kind == _UI_CARD:
            if cfg.drop_cards and hover_card(node):
                doomed.setdefault(node.mem_id, node)
        elif cfg.drop_permalinks and permalink(node, cfg):
            doomed.setdefault(node.mem_id, node)
        elif cfg.drop_cards:
            card = more_card(node, cfg)
            if card is not None:
                doomed.setdefault(card.mem_id, card)
    removed = 0
    for node in doomed.values():
        up = node.parent
        while _is_element(up) and up.mem_id not in doomed:
            up = up.parent
        if _is_element(up):
            continue  # inside another removed element: goes with it
        node.decompose()
        removed += 1
    if removed:
        doc.tree.strip_tags([])  # no tag: only records that the tree changed
    return removed


def clean_document(doc: Document, cfg: CleanConfig = DEFAULT_CLEAN) -> Document:
    """Rescue script text, then drop noise and what shows only on demand. Edits ``doc`` in
    place and returns it."""
    if doc.cleaned:
        return doc
    candidates = script_candidates(doc, cfg) if cfg.rescue_scripts else []
    if cfg.formulas:
        formulas_to_tex(doc)
    drop_noise(doc, cfg)
    drop_interface(doc, cfg)
    visible: str | None = None
    if candidates:
        body = doc.tree.body
        visible = body.text(separator=" ") if body is not None else ""
        doc.rescued = new_fragments(candidates, visible, cfg)
    if cfg.rescue_scripts and doc.parsed_json:
        product = single_product(doc)
        if product is not None:
            if visible is None:
                body = doc.tree.body
                visible = body.text(separator=" ") if body is not None else ""
            doc.facts = product_facts(product, visible.lower())
    doc.cleaned = True
    return doc
