"""The query-relevant extraction (QE) evaluation set, made deterministically from the shared data.

No public data set pairs HTML pages with queries and query-relevant ground truth, so blockdex
makes one from the human main-content ground truth of the shared datasets (``make_qe``):

* **section** — a heading (h2-h6) of the page's main content is the query; the relevant text is
  that heading and the content blocks of its section (content = aligned to the human ground
  truth, section = up to the next heading of the same or a higher level);
* **section-shuffled** — the same with the heading's words shuffled and stop words dropped;
* **multi-article** — 2-4 real pages of one dataset merged into a digest page, each page's whole
  body (navigation and footers included) in its own ``<article>``; the query is one page's title
  — every other digest its whole ``<title>``, site name included, as people paste it, the others
  with the site name stripped — and the relevant text is that page's ground truth;
* **no-answer** — a query taken from another page, checked to share few words with this page;
  the right answer is the empty selection (empty-vs-empty scores 1.0);
* **structured** — a question whose answer is one cell of a data table or one definition in a
  code block of the page's main content: a row's label and a column's header (``Alpha
  Precision``), the answer the cell's value and that header; or a function's or class's name
  (``ratio function``), the answer its definition line. The answer strings are the record's
  ``with`` snippets (``blockdex bench`` reports the share of records whose output holds them
  all, and the median output words).

Each record has ``id, kind, dataset, split, query, url, html, relevant_text``. ``split`` is
``dev`` (for tuning: made from pages of the main-content model's training split) or ``test``
(made only from pages that model never saw).
"""

from __future__ import annotations

import gzip
import json
import random
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blockdex.evaluate.align import block_labels
from blockdex.evaluate.datasets import EvalPage, load_dataset, split_of
from blockdex.evaluate.metrics import word_tokens
from blockdex.extract import Extractor
from blockdex.features import stopwords
from blockdex.predict.structure import DEFINITION_RE

HEADING_TAGS = {"h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
TITLE_SEPARATORS = re.compile(r"\s+(?:\||-|–|—|::|·|»)\s+")
DEFAULT_QE_DATASETS = ("scrapinghub-aeb", "wcxb", "l3s-gn1")


@dataclass(frozen=True, slots=True)
class QEConfig:
    seed: int = 13
    pages_per_dataset: int = 240
    """Source pages read per dataset (the first N with ground truth): keeps generation ~1 min."""
    sections_per_page: int = 2
    """At most this many section queries per page (chosen at random, seeded)."""
    min_query_words: int = 2
    min_section_words: int = 30
    """A section must hold this much text besides its heading to be worth asking for."""
    max_section_share: float = 0.7
    """…and at most this share of the page's content (else it is the whole article)."""
    digests_per_dataset: int = 40
    no_answer_per_dataset: int = 40
    max_no_answer_overlap: float = 0.34
    """A no-answer query may share at most this share of its content words with the page."""
    structured_per_page: int = 2
    """At most this many table questions and this many code questions per page."""
    max_label_words: int = 6
    """A row label or column header asked for has at most this many words (a name, not prose)."""
    max_value_words: int = 12
    structured_pages: int = 2000
    """Pages read per dataset for the structured kind (those holding a table or a code block):
    more than ``pages_per_dataset``, since few pages have either."""


DEFAULT_QE = QEConfig()


def _stopwords() -> frozenset[str]:
    return stopwords()


def content_words(text: str) -> list[str]:
    stop = _stopwords()
    return [w for w in word_tokens(text) if w not in stop and len(w) > 1]


def clean_title(title: str) -> str:
    """The article part of a ``<title>``: the longest piece between site-name separators."""
    parts = [p.strip() for p in TITLE_SEPARATORS.split(title or "") if p.strip()]
    return max(parts, key=len) if parts else ""


@dataclass(slots=True)
class _Source:
    page: EvalPage
    title: str
    sections: list[tuple[str, str]]  # (heading, relevant text)
    text_words: frozenset[str]
    html_title: str = ""
    """The page's ``<title>`` as written (site name included)."""
    structured: list[tuple[str, str, tuple[str, ...], str]] = field(default_factory=list)
    """(kind of question, query, answer strings, relevant text): :func:`_structured_questions`."""


_CELL_MARK_RE = re.compile(r"<(/?)(t[dh])((?: [^<>]*)?)>")
_TAG_RE = re.compile(r"<[^<>]*>")


def _row_cells(html: str) -> list[tuple[str, str, bool]]:
    """A row block's cells as (tag, text, spans another row or column)."""
    import html as html_lib

    cells = []
    parts = _CELL_MARK_RE.split(html)  # text, then (slash, tag, attributes) of each mark
    for k in range(1, len(parts), 4):
        closing, tag, attrs, inner = parts[k], parts[k + 1], parts[k + 2], parts[k + 3]
        if closing:
            continue
        text = " ".join(html_lib.unescape(_TAG_RE.sub(" ", inner)).split())
        cells.append((tag, text, "span" in attrs))
    return cells


def _is_label(text: str, cfg: QEConfig) -> bool:
    return bool(re.search(r"[^\W\d_]{2}", text)) and len(text.split()) <= cfg.max_label_words


def _structured_questions(
    seg: Any, content: list[bool], cfg: QEConfig, rng: random.Random
) -> list[tuple[str, str, tuple[str, ...], str]]:
    """Table and code questions of a page's main content (see the module's ``structured``)."""
    tables: dict[int, list[int]] = {}
    blocks = seg.blocks
    for pos, block in enumerate(blocks):
        if block.tag == "tr" and len(block.chain) >= 2 and block.chain[-2][0] == "table":
            tables.setdefault(block.chain[-2][1], []).append(pos)
    table_qs: list[tuple[str, str, tuple[str, ...], str]] = []
    for rows in tables.values():
        if sum(content[p] for p in rows) * 2 < len(rows):
            continue  # not main content
        parsed = [_row_cells(blocks[p].html) for p in rows]
        heads = 0
        while heads < len(parsed) and parsed[heads] and all(t == "th" for t, _, _ in parsed[heads]):
            heads += 1
        body = parsed[heads:]
        if heads != 1 or len(body) < 2 or any(s for _, _, s in parsed[0]):
            continue  # one plain header row and at least two rows under it
        header = [t for _, t, _ in parsed[0]]
        labels = [row[0][1] for row in body if row]
        for row in body:
            if len(row) != len(header) or any(s for _, _, s in row) or labels.count(row[0][1]) > 1:
                continue
            label = row[0][1]
            if not _is_label(label, cfg):
                continue
            for col in range(1, len(header)):
                value = row[col][1]
                if not _is_label(header[col], cfg) or not value:
                    continue
                if len(value.split()) > cfg.max_value_words or header[col] == label:
                    continue
                if not re.search(r"\w", value):
                    continue
                relevant = f"{' | '.join(header)}\n{' | '.join(t for _, t, _ in row)}"
                table_qs.append(("table", f"{label} {header[col]}", (value, header[col]), relevant))
    code_qs: list[tuple[str, str, tuple[str, ...], str]] = []
    defined: dict[str, int] = {}
    for block in blocks:
        if block.tag == "pre":
            for m in DEFINITION_RE.finditer(block.text):
                defined[m.group(2)] = defined.get(m.group(2), 0) + 1
    for pos, block in enumerate(blocks):
        if block.tag != "pre" or not content[pos]:
            continue
        for m in DEFINITION_RE.finditer(block.text):
            keyword, name = m.group(1), m.group(2)
            if defined[name] > 1 or len(name) < 3:
                continue  # a name defined twice on the page does not say which is meant
            line = " ".join(block.text[m.start() :].split("\n", 1)[0].split())
            noun = "class" if keyword == "class" else "function"
            code_qs.append(("code", f"{name} {noun}", (line,), block.text))
    out = rng.sample(table_qs, min(cfg.structured_per_page, len(table_qs)))
    return out + rng.sample(code_qs, min(cfg.structured_per_page, len(code_qs)))


_STRUCTURE_RE = re.compile(r"<(?:table|pre)\b", re.I)


def _has_structure(html: str) -> bool:
    return _STRUCTURE_RE.search(html) is not None


def _structured_of(
    page: EvalPage, cfg: QEConfig, rng: random.Random
) -> list[tuple[str, str, tuple[str, ...], str]]:
    seg = Extractor("all").segment(page.html, url=page.url)
    content = [s >= 0.5 for s in block_labels(seg, page.ground_truth or "")]
    return _structured_questions(seg, content, cfg, rng)


def _sections(
    page: EvalPage, cfg: QEConfig, rng: random.Random | None = None
) -> tuple[str, list[tuple[str, str]], frozenset[str], str, list]:
    seg = Extractor("all").segment(page.html, url=page.url)
    labels = block_labels(seg, page.ground_truth or "")
    content = [s >= 0.5 for s in labels]
    total = sum(len(word_tokens(b.text)) for b, c in zip(seg.blocks, content, strict=True) if c)
    found: list[tuple[str, str]] = []
    blocks = seg.blocks
    for i, block in enumerate(blocks):
        level = HEADING_TAGS.get(block.tag)
        if level is None or not content[i]:
            continue
        heading = " ".join(block.text.split())
        if len(word_tokens(heading)) < cfg.min_query_words:
            continue
        body: list[str] = []
        for j in range(i + 1, len(blocks)):
            other = HEADING_TAGS.get(blocks[j].tag, 1 if blocks[j].tag == "h1" else None)
            if other is not None and other <= level:
                break
            if content[j]:
                body.append(blocks[j].text)
        words = sum(len(word_tokens(t)) for t in body)
        if words < cfg.min_section_words or words > cfg.max_section_share * max(total, 1):
            continue
        found.append((heading, "\n".join([heading, *body])))
    all_words = frozenset(content_words(" ".join(b.text for b in blocks)))
    structured = _structured_questions(seg, content, cfg, rng) if rng is not None else []
    return seg.title or "", found, all_words, seg.meta.get("html_title", ""), structured


def _body_html(html: str) -> str:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    return tree.body.html or "" if tree.body is not None else html


def _digest(pages: Sequence[_Source]) -> str:
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Reading list digest</title>"
        "</head><body><header><h1>Reading list digest</h1><nav><a href='/'>Home</a> "
        "<a href='/archive'>Archive</a></nav></header><main>"
    ]
    for n, src in enumerate(pages):
        body = _body_html(src.page.html)
        # each page's <body> is unwrapped into the digest entry (nested <body> tags are invalid)
        body = re.sub(r"</?body\b[^>]*>", "", body, flags=re.I)
        parts.append(f"<article class='digest-entry' id='entry-{n}'>{body}</article>")
    parts.append("</main><footer><p>Digest compiled automatically.</p></footer></body></html>")
    return "".join(parts)


def _shuffled(query: str, rng: random.Random) -> str:
    words = content_words(query)
    rng.shuffle(words)
    return " ".join(words)


def make_qe(
    datasets: Sequence[str] = DEFAULT_QE_DATASETS,
    cfg: QEConfig = DEFAULT_QE,
    *,
    progress: bool = True,
) -> Iterator[dict[str, Any]]:
    """Yield QE records built from ``datasets`` (deterministic for a given ``cfg.seed``)."""
    from tqdm import tqdm

    for dataset in datasets:
        rng = random.Random(f"{cfg.seed}:{dataset}")
        # its own generator: adding the structured kind changed no record of the other kinds
        structured_rng = random.Random(f"{cfg.seed}:{dataset}:structured")
        labelled = [p for p in load_dataset(dataset) if p.ground_truth and p.ground_truth.strip()]
        pages = labelled[: cfg.pages_per_dataset]
        sources: list[_Source] = []
        for page in tqdm(pages, desc=f"qe {dataset}", disable=not progress, file=sys.stderr):
            title, sections, words, html_title, structured = _sections(page, cfg, structured_rng)
            sources.append(_Source(page, title, sections, words, html_title, structured))
        for src in sources:
            split = "test" if split_of(src.page.id) == "dev" else "dev"
            chosen = rng.sample(src.sections, min(cfg.sections_per_page, len(src.sections)))
            for n, (heading, relevant) in enumerate(chosen):
                base = {
                    "dataset": dataset,
                    "split": split,
                    "url": src.page.url,
                    "html": src.page.html,
                    "relevant_text": relevant,
                }
                yield {
                    "id": f"section:{src.page.id}:{n}",
                    "kind": "section",
                    "query": heading,
                    **base,
                }
                shuffled = _shuffled(heading, rng)
                if shuffled and shuffled != heading.lower():
                    yield {
                        "id": f"section-shuffled:{src.page.id}:{n}",
                        "kind": "section-shuffled",
                        "query": shuffled,
                        **base,
                    }
        more = [
            (page, _structured_of(page, cfg, structured_rng))
            for page in labelled[cfg.pages_per_dataset : cfg.structured_pages]
            if _has_structure(page.html)
        ]
        for page, questions in [(s.page, s.structured) for s in sources] + more:
            for n, (what, query, answers, relevant) in enumerate(questions):
                yield {
                    "id": f"structured:{page.id}:{n}",
                    "kind": "structured",
                    "question": what,
                    "dataset": dataset,
                    "split": "test" if split_of(page.id) == "dev" else "dev",
                    "query": query,
                    "url": page.url,
                    "html": page.html,
                    "relevant_text": relevant,
                    "with": list(answers),
                }
        # Digest pages: groups of 2-4 pages of the same split, one page's title asked for.
        titled = [s for s in sources if len(word_tokens(clean_title(s.title))) >= 3]
        for split_name in ("dev", "test"):
            pool = [
                s
                for s in titled
                if ("test" if split_of(s.page.id) == "dev" else "dev") == split_name
            ]
            share = cfg.digests_per_dataset * len(pool) // max(len(titled), 1)
            for n in range(share):
                if len(pool) < 2:
                    break
                group = rng.sample(pool, min(rng.randint(2, 4), len(pool)))
                target = rng.randrange(len(group))
                query = clean_title(group[target].title)
                full = " ".join(group[target].html_title.split())
                if n % 2 == 0 and full and full != query:
                    query = full  # the <title> as pasted, site name included
                yield {
                    "id": f"multi-article:{dataset}:{split_name}:{n}",
                    "kind": "multi-article",
                    "dataset": dataset,
                    "split": split_name,
                    "query": query,
                    "url": None,
                    "html": _digest(group),
                    "relevant_text": group[target].page.ground_truth,
                }
        # No-answer: a query of another page that this page does not speak about.
        queries = [(s.page.id, h) for s in sources for h, _ in s.sections] + [
            (s.page.id, clean_title(s.title)) for s in titled
        ]
        made = 0
        for src in rng.sample(sources, len(sources)):
            if made >= cfg.no_answer_per_dataset or not queries:
                break
            for _ in range(20):
                other_id, query = rng.choice(queries)
                words = content_words(query)
                if other_id == src.page.id or len(words) < 2:
                    continue
                overlap = sum(w in src.text_words for w in words) / len(words)
                if overlap <= cfg.max_no_answer_overlap:
                    yield {
                        "id": f"no-answer:{src.page.id}",
                        "kind": "no-answer",
                        "dataset": dataset,
                        "split": "test" if split_of(src.page.id) == "dev" else "dev",
                        "query": query,
                        "url": src.page.url,
                        "html": src.page.html,
                        "relevant_text": "",
                    }
                    made += 1
                    break


def write_qe(path: str | Path, records: Iterator[dict[str, Any]]) -> dict[str, int]:
    """Write records as JSONL (gzip when the name ends in .gz), atomically; returns counts per
    ``split/kind``. Every made evaluation set (QE, composite pages) is written by this."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    counts: dict[str, int] = {}
    tmp = path.with_name(path.name + ".tmp")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(tmp, "wt", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            key = f"{rec['split']}/{rec['kind']}"
            counts[key] = counts.get(key, 0) + 1
    tmp.replace(path)
    return counts


def default_qe_path(seed: int = DEFAULT_QE.seed) -> Path:
    import os

    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "blockdex"
    # v2: with the structured kind (a set made before it lacks those records)
    return base / f"qe-v2-seed{seed}.jsonl.gz"


def ensure_qe(path: str | Path | None = None, *, progress: bool = True) -> Path:
    """The QE set at ``path`` (default: the user cache), made first if it does not exist."""
    target = Path(path) if path else default_qe_path()
    if not target.exists():
        print(f"making the QE set in {target} (once)…", file=sys.stderr)
        write_qe(target, make_qe(progress=progress))
    return target
