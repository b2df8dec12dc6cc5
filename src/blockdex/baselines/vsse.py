"""VSSE: visual, structural and semantic extraction of the main content and of structured records.

VSSE finds the main content from the text nodes that look most like prose. It then widens them
to the page areas that hold them and refines those areas by similarity to the page's own
summary (title and meta description). The phases, as implemented here:

1. **Preprocess** — parse the page and drop what a browser never shows as text (scripts, styles,
   templates, SVG …) and comments.
2. **vvtc** — every leaf text node ``a`` gets ``vvtc_a = (len_a / N_len) · (punc_a / N_punc)``:
   its share of the page's characters times its share of the page's punctuation marks. Prose
   is long *and* punctuated; menus, buttons and link lists are short and bare.
3. **Keep** — the nodes with ``vvtc ≥ T1 = t1_ratio · max vvtc`` (``t1_ratio`` 0.8, the paper).
4. **Aggregate** — each kept node is represented by the tag path of the element that holds its
   paragraph (the parent of its nearest block-level ancestor: a single paragraph is never a whole
   content area). Kept nodes with the same tag path (tags and classes) are one group; a group's
   content area is the longest common prefix of its members' node paths, i.e. their deepest
   common ancestor. Areas nested in other areas are dropped; all text under the areas is kept.
5. **Refine** (switchable) — each text node in the areas gets a 64-bit SimHash of its keywords
   weighted by TF-IDF (IDF over the page's text nodes); nodes whose Hamming distance to the
   SimHash of the title + meta description exceeds ``t2`` are dropped. With the paper's
   ``t2 = 3`` almost no node survives (two unrelated 64-bit hashes differ in ~32 bits, and even a
   paragraph about the title's subject shares few keywords with it), so by default
   (``refine="auto"``) the refinement is applied only when it keeps at least ``refine_min_keep``
   of the areas' characters. ``docs/methods/vsse.md`` has the measurements behind this choice.

**Records mode** (``VsseBaseline(records=True)``, registered as ``vsse-records``) looks for a
structured record (product specification, contact card, book details) instead:

* every element ``i`` gets ``WVC(i) = Σ_k n_k(i) · log((N + 1) / df_k)`` over characteristics
  ``k`` — the delimiters ``:`` ``：`` ``|`` and the attribute names listed in
  ``vsse_attributes.txt`` — where ``n_k(i)`` counts ``k`` in the text under ``i``, ``N`` is the
  number of leaf text nodes and ``df_k`` how many of them contain ``k`` (an IDF: a characteristic
  found everywhere says nothing);
* a Viterbi-style walk goes down from ``<body>``: at each level the state moves to the child
  with the highest accumulated score, where the transition score is
  ``log(WVC(child) / WVC(parent))`` (the share of the record's evidence the child keeps), so the
  accumulated score of a node is ``log(WVC(node) / WVC(body))``. The walk stops when the best
  transition scores below ``log(descend_share)``: the evidence is split among several children
  (the rows of a table, the items of a list), so the current node is the record area;
* attribute–value pairs are read from the area: ``dt``/``dd``, ``th``/``td`` (and two-cell rows),
  label/value element pairs, and "key: value" lines.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import numpy as np
from selectolax.lexbor import LexborNode

from blockdex.baselines import BaselineResult, html_document, parse_page, with_settings
from blockdex.baselines.crunch import visible_text
from blockdex.errors import BlockdexError
from blockdex.predict.relevance import terms
from blockdex.segment import BLOCK_TAGS

# -- tables the rules read ----------------------------------------------------------------------

PUNCTUATION = frozenset(".,;:!?。，；：！？、")
"""Marks counted as ``punc``: sentence and clause punctuation, Latin and CJK (the paper counts
punctuation as the sign of running text)."""
DELIMITERS = (":", "：", "|")
"""Record characteristics that separate an attribute from its value."""
KEY_VALUE_DELIMITERS = (":", "：")
"""Delimiters at which a text line is split into attribute and value."""
LABEL_TAGS = frozenset({"span", "label", "strong", "b", "em", "i", "small", "div", "p", "th"})
"""Elements that may hold the label or the value of a label/value pair."""
_LABEL_CLASS_RE = re.compile(r"label|name|key|title|attr|prop|term|spec", re.I)
_SIMHASH_BITS = 64


@dataclass(frozen=True, slots=True)
class VsseConfig:
    """VSSE settings."""

    t1_ratio: float = 0.8
    """T1 = t1_ratio · max vvtc: nodes at or above it seed the content areas (the paper: 0.8)."""
    t2: int = 3
    """Largest SimHash Hamming distance to the title + description a node may have (the paper)."""
    refine: str = "auto"
    """SimHash refinement: "on", "off", or "auto" (on only when it keeps refine_min_keep)."""
    refine_min_keep: float = 0.5
    """auto: refine only when the surviving nodes hold this share of the areas' characters —
    below it the title is too short to judge the paragraphs and refining would empty the page."""
    drop_tags: tuple[str, ...] = ("script", "style", "noscript", "template", "svg", "math")
    """Removed first: code a browser never shows as text."""
    keep_content_noscripts: bool = True
    """Unwrap a <noscript> holding the page's no-JS content instead of dropping it."""
    records: bool = False
    """Extract a structured record (attribute–value pairs) instead of the main content."""
    descend_share: float = 0.6
    """Records: go down to the best child while it keeps this share of its parent's WVC."""
    max_key_chars: int = 40
    """Records: an attribute name is at most this long (longer text is a sentence, not a key)."""
    max_key_words: int = 5
    """Records: …and has at most this many words."""
    max_value_chars: int = 200
    """Records: a longer "value" is a paragraph of prose (a policy, a description), not a value."""


DEFAULT_VSSE = VsseConfig()
_REFINE_MODES = ("auto", "on", "off")


@lru_cache(maxsize=1)
def attribute_names() -> tuple[str, ...]:
    """The attribute dictionary shipped as ``vsse_attributes.txt``, lower-cased."""
    text = resources.files("blockdex.baselines").joinpath("vsse_attributes.txt").read_text("utf-8")
    names = (line.split("#", 1)[0].strip().lower() for line in text.splitlines())
    return tuple(dict.fromkeys(n for n in names if n))


@lru_cache(maxsize=1)
def _attribute_res() -> tuple[re.Pattern[str] | None, re.Pattern[str] | None]:
    names = attribute_names()
    spaced = [n for n in names if n.isascii()]
    unspaced = [n for n in names if not n.isascii()]
    word_re = (
        re.compile(r"(?<!\w)(" + "|".join(map(re.escape, spaced)) + r")(?!\w)", re.I)
        if spaced
        else None
    )
    cjk_re = re.compile("|".join(map(re.escape, unspaced))) if unspaced else None
    return word_re, cjk_re


# -- leaf text nodes ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextLeaf:
    """One non-blank text node, with the elements above it (outermost first)."""

    node: LexborNode
    text: str
    ancestors: tuple[LexborNode, ...]

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def punct(self) -> int:
        return sum(c in PUNCTUATION for c in self.text)


def leaf_text_nodes(root: LexborNode) -> list[TextLeaf]:
    """The non-blank text nodes under ``root`` in document order, whitespace collapsed."""
    leaves: list[TextLeaf] = []
    stack: list[tuple[LexborNode, tuple[LexborNode, ...]]] = [(root, ())]
    while stack:
        node, above = stack.pop()
        tag = node.tag
        if tag == "-text":
            text = " ".join((node.text_content or "").split())
            if text:
                leaves.append(TextLeaf(node, text, above))
            continue
        if tag is None or tag.startswith("-"):
            continue
        path = (*above, node)
        stack.extend((child, path) for child in reversed(list(node.iter(include_text=True))))
    return leaves


def vvtc_scores(leaves: list[TextLeaf]) -> list[float]:
    """``(len_a / N_len) · (punc_a / N_punc)`` for every leaf (all zero without punctuation)."""
    chars = [leaf.chars for leaf in leaves]
    punct = [leaf.punct for leaf in leaves]
    n_chars, n_punct = sum(chars), sum(punct)
    if not n_chars or not n_punct:
        return [0.0] * len(leaves)
    return [(c / n_chars) * (p / n_punct) for c, p in zip(chars, punct, strict=True)]


def element_label(node: LexborNode) -> str:
    """``tag.class1.class2#id`` — how a tag path names one element."""
    attrs = node.attributes
    classes = ".".join(sorted((attrs.get("class") or "").split()))
    ident = attrs.get("id") or ""
    return node.tag + (f".{classes}" if classes else "") + (f"#{ident}" if ident else "")


def tag_path(nodes: tuple[LexborNode, ...] | list[LexborNode]) -> str:
    return ">".join(element_label(n) for n in nodes)


def container_path(leaf: TextLeaf) -> tuple[LexborNode, ...]:
    """The node path of the element holding the leaf's paragraph (its block's parent)."""
    above = leaf.ancestors
    for k in range(len(above) - 1, -1, -1):
        if above[k].tag in BLOCK_TAGS:
            return above[: max(k, 1)]
    return above


def common_prefix(paths: list[tuple[LexborNode, ...]]) -> tuple[LexborNode, ...]:
    """The longest common prefix of node paths (nodes compared by identity)."""
    if not paths:
        return ()
    first = paths[0]
    n = min(len(p) for p in paths)
    k = 0
    while k < n and all(p[k].mem_id == first[k].mem_id for p in paths):
        k += 1
    return first[:k]


def content_areas(leaves: list[TextLeaf], kept: list[int]) -> list[tuple[LexborNode, ...]]:
    """Node paths of the content areas: kept leaves grouped by tag path, each group's LCP.

    Areas inside other areas are dropped; the rest are returned in document order.
    """
    groups: dict[str, list[tuple[LexborNode, ...]]] = {}
    first_seen: dict[str, int] = {}
    for i in kept:
        path = container_path(leaves[i])
        key = tag_path(path)
        groups.setdefault(key, []).append(path)
        first_seen.setdefault(key, i)
    areas = [common_prefix(paths) for paths in groups.values()]
    order = list(first_seen.values())
    areas = [a for _, a in sorted(zip(order, areas, strict=True), key=lambda x: x[0]) if a]
    ids = [a[-1].mem_id for a in areas]
    outer = []
    for area in areas:
        inside = any(n.mem_id in ids and n.mem_id != area[-1].mem_id for n in area[:-1])
        if not inside and all(area[-1].mem_id != o[-1].mem_id for o in outer):
            outer.append(area)
    return outer


# -- SimHash ------------------------------------------------------------------------------------


@lru_cache(maxsize=65536)
def _term_hash(term: str) -> int:
    return int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest(), "big")


_BIT_SHIFTS = np.arange(_SIMHASH_BITS, dtype=np.uint64)


def simhash(weights: dict[str, float]) -> int:
    """Charikar's SimHash: 64 bits, each the sign of the weighted vote of the terms' hash bits.

    The votes are added term by term (a cumulative sum adds in order), so the result is the
    same, to the bit, as a loop over the terms; numpy does the 64 bits of a term at once."""
    if not weights:
        return 0
    n = len(weights)
    hashes = np.fromiter((_term_hash(t) for t in weights), dtype=np.uint64, count=n)
    w = np.fromiter(weights.values(), dtype=np.float64, count=n)[:, None]
    bits = (hashes[:, None] >> _BIT_SHIFTS) & np.uint64(1)
    votes = np.cumsum(np.where(bits == 1, w, -w), axis=0)[-1]
    return sum(1 << int(bit) for bit in np.flatnonzero(votes > 0))


def hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


def keywords(text: str) -> list[str]:
    """Lower-cased, stop-word-free, lightly stemmed words (the relevance predictors' terms)."""
    return terms(text)


def page_idf(texts: list[str]) -> dict[str, float]:
    """Smoothed IDF of every keyword over the page's text nodes: ``log((1+N)/(1+df)) + 1``."""
    df: Counter[str] = Counter()
    for text in texts:
        df.update(set(keywords(text)))
    n = len(texts)
    return {t: math.log((1 + n) / (1 + d)) + 1.0 for t, d in df.items()}


def tfidf_simhash(text: str, idf: dict[str, float]) -> int:
    """SimHash of ``text`` with TF-IDF keyword weights (unseen keywords get the largest IDF)."""
    default = max(idf.values(), default=1.0)
    tf = Counter(keywords(text))
    return simhash({t: c * idf.get(t, default) for t, c in tf.items()})


def text_distance(a: str, b: str, idf: dict[str, float] | None = None) -> int:
    """Hamming distance between the TF-IDF SimHashes of two texts (IDF over both by default)."""
    idf = idf if idf is not None else page_idf([a, b])
    return hamming(tfidf_simhash(a, idf), tfidf_simhash(b, idf))


# -- records ------------------------------------------------------------------------------------


def characteristics(text: str) -> Counter[str]:
    """Occurrences of each record characteristic (delimiter or attribute name) in ``text``."""
    found: Counter[str] = Counter()
    for d in DELIMITERS:
        n = text.count(d)
        if n:
            found[d] = n
    word_re, cjk_re = _attribute_res()
    if word_re is not None:
        found.update(m.lower() for m in word_re.findall(text))
    if cjk_re is not None:
        found.update(cjk_re.findall(text))
    return found


def wvc_weights(leaves: list[TextLeaf]) -> dict[int, float]:
    """``WVC`` of every element above a leaf, by ``mem_id`` (the sum over the text under it)."""
    counts = [characteristics(leaf.text) for leaf in leaves]
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    n = len(leaves)
    idf = {k: math.log((n + 1) / d) for k, d in df.items()}
    weights: dict[int, float] = {}
    for leaf, c in zip(leaves, counts, strict=True):
        w = sum(v * idf[k] for k, v in c.items())
        if w <= 0:
            continue
        for node in leaf.ancestors:
            weights[node.mem_id] = weights.get(node.mem_id, 0.0) + w
    return weights


def record_walk(
    body: LexborNode, weights: dict[int, float], descend_share: float
) -> list[tuple[LexborNode, float]]:
    """The Viterbi-style path from ``body``: ``[(node, accumulated log score), …]``.

    At each level the best child is the one with the highest accumulated score
    ``acc(parent) + log(WVC(child) / WVC(parent))``; the walk stops when that transition is below
    ``log(descend_share)``. The last node is the record area. Empty when the page has no
    characteristic at all.
    """
    total = weights.get(body.mem_id, 0.0)
    if total <= 0:
        return []
    floor = math.log(descend_share)
    path = [(body, 0.0)]
    node, acc = body, 0.0
    while True:
        here = weights.get(node.mem_id, 0.0)
        best, best_w = None, 0.0
        for child in node.iter():
            w = weights.get(child.mem_id, 0.0)
            if w > best_w:
                best, best_w = child, w
        if best is None or math.log(best_w / here) < floor:
            return path
        acc += math.log(best_w / here)
        node = best
        path.append((node, acc))


def _inside(node: LexborNode, tags: frozenset[str], stop: LexborNode) -> bool:
    parent = node.parent
    while parent is not None and parent.mem_id != stop.mem_id:
        if parent.tag in tags:
            return True
        parent = parent.parent
    return False


def _text(node: LexborNode) -> str:
    return " ".join(node.text(deep=True, separator=" ").split())


def _clean_key(key: str) -> str:
    return key.strip().rstrip(":：").strip()


def _self_and_descendants(area: LexborNode, selector: str) -> list[LexborNode]:
    found = list(area.css(selector))
    if area.css_matches(selector):
        found.insert(0, area)
    return found


def record_pairs(area: LexborNode, cfg: VsseConfig = DEFAULT_VSSE) -> list[dict[str, str]]:
    """Attribute–value pairs in ``area``: dt/dd, th/td rows, label/value pairs, "key: value"."""
    raw: list[tuple[str, str]] = []

    def is_key(text: str) -> bool:
        key = _clean_key(text)
        return (
            bool(key)
            and len(key) <= cfg.max_key_chars
            and len(key.split()) <= cfg.max_key_words
            and any(c.isalpha() for c in key)
        )

    for dl in _self_and_descendants(area, "dl"):
        key = ""
        values: list[str] = []
        for child in dl.iter():
            if child.tag == "dt":
                if key and values:
                    raw.append((key, " ".join(values)))
                key, values = _text(child), []
            elif child.tag == "dd" and key:
                values.append(_text(child))
        if key and values:
            raw.append((key, " ".join(values)))
    for tr in _self_and_descendants(area, "tr"):
        cells = [c for c in tr.iter() if c.tag in ("th", "td")]
        if len(cells) == 2 or (len(cells) > 2 and cells[0].tag == "th"):
            raw.append((_text(cells[0]), " ".join(_text(c) for c in cells[1:])))
    pair_tags = frozenset({"tr", "dl", "table"})
    for node in area.traverse():
        kids = list(node.iter())
        if len(kids) != 2 or node.tag in ("tr", "dl") or _inside(node, pair_tags, area):
            continue
        label, value = kids
        if label.tag not in LABEL_TAGS or value.tag not in LABEL_TAGS:
            continue
        if any(
            c.tag == "-text" and (c.text_content or "").strip()
            for c in node.iter(include_text=True)
        ):
            continue
        key_text, value_text = _text(label), _text(value)
        evidence = (
            key_text.endswith((":", "："))
            or label.tag in ("label", "strong", "b", "th")
            or bool(_LABEL_CLASS_RE.search(label.attributes.get("class") or ""))
        )
        if evidence and value_text and is_key(key_text):
            raw.append((key_text, value_text))
    for line in visible_text(area).split("\n"):
        cut = min((p for p in (line.find(d) for d in KEY_VALUE_DELIMITERS) if p > 0), default=-1)
        if cut < 0 or line[cut : cut + 3] == "://":
            continue
        if line[cut - 1].isdigit() and line[cut + 1 : cut + 2].isdigit():
            continue  # a time (12:30), not a key
        raw.append((line[:cut], line[cut + 1 :]))
    pairs: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for key, value in raw:
        key, value = _clean_key(key), " ".join(value.split())
        if not value or len(value) > cfg.max_value_chars or not is_key(key):
            continue
        norm = (key.lower(), value.lower())
        if norm not in seen:
            seen.add(norm)
            pairs.append({"attribute": key, "value": value})
    return pairs


# -- the method ---------------------------------------------------------------------------------


def _document(html: str | bytes, url: str | None, cfg: VsseConfig):
    doc = parse_page(html, url, cfg.keep_content_noscripts)
    if cfg.drop_tags:
        doc.tree.strip_tags(list(cfg.drop_tags))
    body = doc.tree.body
    if body is not None:
        for node in [n for n in body.traverse(include_text=True) if n.tag == "-comment"]:
            node.decompose()
    return doc, body


def make_config(config: VsseConfig | None = None, **overrides: Any) -> VsseConfig:
    """``config`` (default :data:`DEFAULT_VSSE`) with keyword overrides, checked."""
    cfg = with_settings(config or DEFAULT_VSSE, overrides, "VSSE")
    if cfg.refine not in _REFINE_MODES:
        raise BlockdexError(f"refine must be one of {', '.join(_REFINE_MODES)}, not {cfg.refine!r}")
    if not 0 < cfg.t1_ratio <= 1 or not 0 < cfg.descend_share <= 1:
        raise BlockdexError("t1_ratio and descend_share must be in (0, 1]")
    return cfg


class VsseBaseline:
    """VSSE as a blockdex method: ``blockdex extract page.html --method vsse``."""

    name = "vsse"

    def __init__(self, config: VsseConfig | None = None, **overrides: Any) -> None:
        self.config = make_config(config, **overrides)

    def run(
        self, html: str | bytes, *, url: str | None = None, query: str | None = None
    ) -> BaselineResult:
        """The content areas (or, in records mode, the record); ``query`` is not used."""
        cfg = self.config
        doc, body = _document(html, url, cfg)
        leaves = leaf_text_nodes(body) if body is not None else []
        if cfg.records:
            return self._records(doc.title, body, leaves)
        return self._content(doc.title, doc.meta.get("description", ""), leaves)

    def _content(self, title: str, description: str, leaves: list[TextLeaf]) -> BaselineResult:
        cfg = self.config
        scores = vvtc_scores(leaves)
        top = max(scores, default=0.0)
        info: dict[str, Any] = {"leaves": len(leaves), "max_vvtc": top}
        if top <= 0:
            info.update(areas=[], refine={"applied": False, "reason": "no punctuated text"})
            return BaselineResult(
                html=html_document(title, ""), text="", title=title, extra={"vsse": info}
            )
        kept = [i for i, s in enumerate(scores) if s >= cfg.t1_ratio * top]
        areas = content_areas(leaves, kept)
        area_ids = {a[-1].mem_id for a in areas}
        inside = [
            i for i, leaf in enumerate(leaves) if any(n.mem_id in area_ids for n in leaf.ancestors)
        ]
        info["kept"] = len(kept)
        info["areas"] = [tag_path(a) for a in areas]
        info["refine"] = self._refine(leaves, inside, f"{title} {description}")
        parts_html = [a[-1].html or "" for a in areas]
        text = "\n".join(t for t in (visible_text(a[-1]) for a in areas) if t)
        return BaselineResult(
            html=html_document(title, "".join(parts_html)),
            text=text,
            title=title,
            extra={"vsse": info},
        )

    def _refine(self, leaves: list[TextLeaf], inside: list[int], reference: str) -> dict[str, Any]:
        """Drop (in the tree) the area text nodes far from ``reference``, if the mode says so."""
        cfg = self.config
        report: dict[str, Any] = {"mode": cfg.refine, "t2": cfg.t2, "applied": False}
        if cfg.refine == "off" or not inside:
            return report
        if not keywords(reference):
            report["reason"] = "no title or description keywords"
            return report
        idf = page_idf([leaf.text for leaf in leaves])
        ref_hash = tfidf_simhash(reference, idf)
        distances = {i: hamming(tfidf_simhash(leaves[i].text, idf), ref_hash) for i in inside}
        near = [i for i in inside if distances[i] <= cfg.t2]
        area_chars = sum(leaves[i].chars for i in inside)
        share = sum(leaves[i].chars for i in near) / area_chars if area_chars else 0.0
        report["kept_share"] = round(share, 4)
        if cfg.refine == "auto" and share < cfg.refine_min_keep:
            report["reason"] = f"would keep {share:.0%} < refine_min_keep"
            return report
        keep = set(near)
        for i in inside:
            if i not in keep:
                leaves[i].node.decompose()
        report["applied"] = True
        report["dropped"] = len(inside) - len(near)
        return report

    def _records(
        self, title: str, body: LexborNode | None, leaves: list[TextLeaf]
    ) -> BaselineResult:
        cfg = self.config
        path = record_walk(body, wvc_weights(leaves), cfg.descend_share) if body else []
        if not path:
            extra = {"records": [], "vsse": {"record_area": None, "walk": []}}
            return BaselineResult(html=html_document(title, ""), text="", title=title, extra=extra)
        area = path[-1][0]
        walk = [{"element": element_label(n), "score": round(s, 4)} for n, s in path]
        pairs = record_pairs(area, cfg)
        extra = {
            "records": pairs,
            "vsse": {"record_area": tag_path([n for n, _ in path]), "walk": walk},
        }
        text = "\n".join(f"{p['attribute']}: {p['value']}" for p in pairs) or visible_text(area)
        return BaselineResult(
            html=html_document(title, area.html or ""), text=text, title=title, extra=extra
        )


class VsseRecordsBaseline(VsseBaseline):
    """VSSE's structured-record mode: ``--method vsse-records`` (pairs in ``extra["records"]``)."""

    name = "vsse-records"

    def __init__(self, config: VsseConfig | None = None, **overrides: Any) -> None:
        overrides.setdefault("records", True)
        super().__init__(config, **overrides)
