"""Pages made of several real pages, for judging whether blockdex keeps the page's *own* article.

Two kinds, made deterministically from the shared data (``make_composite``), each page's ground
truth being the human main content of the page the composite is titled after:

* **next-story** — an article page with the next, unrelated story appended below it, as news
  sites with infinite scroll do: the first page's document (its ``<head>``, so its title, kept)
  with the second page's whole body (its navigation and footer too) added at the end of the
  body, in one of three ways (by record number): bare (the two bodies simply follow each other),
  each body in a ``<div class="story-wrapper">``, or each in an ``<article>``;
* **multi-article** — 2-4 pages' bodies side by side on one page, each in its own
  ``<article>`` (or ``<div class="post">``), the page titled after one of them (its ``<title>``,
  site name included), which may be any of them.

Records follow the QE set's layout (``id, kind, dataset, split, url, html, ground_truth_text``).
``split`` is ``dev`` for pages made from the main-content model's *training* pages (for tuning
rules) and ``test`` for pages made only from its *dev* pages (for reporting): the two are made
from disjoint pages, so a rule tuned on ``dev`` is judged on pages it never saw.
"""

from __future__ import annotations

import os
import random
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blockdex.evaluate.datasets import EvalPage, load_dataset, split_of
from blockdex.evaluate.metrics import word_tokens
from blockdex.evaluate.qe import write_qe

COMPOSITE_KINDS = ("next-story", "multi-article")
DEFAULT_COMPOSITE_DATASETS = ("scrapinghub-aeb", "l3s-gn1")


@dataclass(frozen=True, slots=True)
class CompositeConfig:
    seed: int = 29
    pages_per_dataset: int | None = None
    """Source pages read per dataset (None: all with ground truth)."""
    min_title_words: int = 3
    """A page is titled clearly enough to be the titled one with this many words in <title>."""
    min_ground_truth_words: int = 50
    """…and its ground truth has this many words (an article, not a stub)."""


DEFAULT_COMPOSITE = CompositeConfig()


def _parts(html: str) -> tuple[str, str, str]:
    """A page's ``<head>`` (as HTML), the inside of its ``<body>`` (as HTML) and its title."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    head = tree.head.html or "" if tree.head is not None else ""
    body = tree.body
    inner = "".join(child.html or "" for child in body.iter(include_text=True)) if body else ""
    title = tree.css_first("title")
    return head, inner, " ".join(title.text().split()) if title is not None else ""


def _body_html(html: str) -> str:
    return _parts(html)[1]


def _html_title(html: str) -> str:
    return _parts(html)[2]


def _usable(page: EvalPage, cfg: CompositeConfig) -> bool:
    return (
        page.ground_truth is not None
        and len(word_tokens(page.ground_truth)) >= cfg.min_ground_truth_words
        and len(word_tokens(_html_title(page.html))) >= cfg.min_title_words
    )


def next_story_html(first: EvalPage, second: EvalPage, style: str) -> str:
    """``first``'s document with ``second``'s body appended to its body (``style``: ``bare``,
    ``wrapper`` or ``article``)."""
    body_a, body_b = _body_html(first.html), _body_html(second.html)
    if style == "wrapper":
        inner = (
            f'<div class="story-wrapper" data-story="1">{body_a}</div>'
            f'<div class="story-wrapper" data-story="2">{body_b}</div>'
        )
    elif style == "article":
        inner = f"<article>{body_a}</article><article>{body_b}</article>"
    else:
        inner = body_a + body_b
    head = _parts(first.html)[0]
    return f"<!DOCTYPE html><html>{head}<body>{inner}</body></html>"


def multi_article_html(pages: Sequence[EvalPage], target: int, container: str) -> str:
    """A page holding each page's body in an ``<article>`` (``container``: ``article``) or a
    ``<div class="post">``, titled with ``pages[target]``'s ``<title>``."""
    title = _html_title(pages[target].html)
    open_tag, close_tag = (
        ("<article>", "</article>") if container == "article" else ('<div class="post">', "</div>")
    )
    entries = "".join(f"{open_tag}{_body_html(p.html)}{close_tag}" for p in pages)
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{title}</title></head><body>"
        "<header><a href='/'>Home</a> <a href='/latest'>Latest</a></header>"
        f"<main>{entries}</main>"
        "<footer><p>All stories on one page.</p></footer></body></html>"
    )


def _split_name(page: EvalPage) -> str:
    # records from the model's dev pages are for reporting (test), from its train pages for tuning
    return "test" if split_of(page.id) == "dev" else "dev"


def make_composite(
    datasets: Sequence[str] = DEFAULT_COMPOSITE_DATASETS,
    cfg: CompositeConfig = DEFAULT_COMPOSITE,
    *,
    kinds: Sequence[str] = COMPOSITE_KINDS,
    progress: bool = True,
) -> Iterator[dict[str, Any]]:
    """Yield composite records built from ``datasets`` (deterministic for ``cfg.seed``): one
    next-story and one multi-article page per usable source page."""
    from tqdm import tqdm

    for dataset in datasets:
        pages = [p for p in load_dataset(dataset) if _usable(p, cfg)]
        if cfg.pages_per_dataset is not None:
            pages = pages[: cfg.pages_per_dataset]
        for split in ("dev", "test"):
            pool = [p for p in pages if _split_name(p) == split]
            if len(pool) < 2:
                continue
            rng = random.Random(f"{cfg.seed}:{dataset}:{split}")
            bar = tqdm(pool, desc=f"composite {dataset} {split}", disable=not progress,
                       file=sys.stderr)  # fmt: skip
            for n, page in enumerate(bar):
                others = [p for p in pool if p.id != page.id]
                base = {"dataset": dataset, "split": split, "url": page.url,
                        "ground_truth_text": page.ground_truth, "source": page.id}  # fmt: skip
                if "next-story" in kinds:
                    second = rng.choice(others)
                    style = ("bare", "wrapper", "article")[n % 3]
                    yield {
                        "id": f"next-story:{page.id}:{style}",
                        "kind": "next-story",
                        **base,
                        "html": next_story_html(page, second, style),
                    }
                if "multi-article" in kinds:
                    group = rng.sample(others, min(rng.randint(1, 3), len(others)))
                    target = rng.randrange(len(group) + 1)
                    group.insert(target, page)
                    container = ("article", "div")[n % 2]
                    yield {
                        "id": f"multi-article:{page.id}:{len(group)}",
                        "kind": "multi-article",
                        **base,
                        "html": multi_article_html(group, target, container),
                    }


def default_composite_path(kind: str, seed: int = DEFAULT_COMPOSITE.seed) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "blockdex"
    return base / f"{kind}-seed{seed}.jsonl.gz"


def ensure_composite(kind: str, path: str | Path | None = None, *, progress: bool = True) -> Path:
    """The ``kind`` composite set at ``path`` (default: the user cache), made first if missing."""
    target = Path(path) if path else default_composite_path(kind)
    if not target.exists():
        print(f"making the {kind} set in {target} (once)…", file=sys.stderr)
        write_qe(target, make_composite(kinds=(kind,), progress=progress))
    return target
