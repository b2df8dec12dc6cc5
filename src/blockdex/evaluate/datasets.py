"""Evaluation pages with ground truth: the shared JSONL.GZ datasets and a user's own files.

Accepted sources:

* a dataset name under the shared data folder (``scrapinghub-aeb``, ``l3s-gn1``, ``wcxb``,
  ``trafilatura-eval``, ``webmainbench-samples``); the folder is ``$BLOCKDEX_DATA`` or
  ``../shared/data`` next to the working directory or the repository;
* a ``.jsonl`` / ``.jsonl.gz`` file with the same fields (``html``, ``ground_truth_text``,
  optional ``with``/``without``, ``url``, ``id``);
* a directory of ``NAME.html`` files each with a ``NAME.txt`` ground truth beside it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from blockdex.errors import BlockdexError
from blockdex.parse import decode_html

SHARED_DATASETS = ("scrapinghub-aeb", "l3s-gn1", "wcxb", "trafilatura-eval", "webmainbench-samples")


@dataclass(frozen=True, slots=True)
class EvalPage:
    """One page with its ground truth."""

    id: str
    html: str
    ground_truth: str | None = None
    url: str | None = None
    with_snippets: tuple[str, ...] = ()
    without_snippets: tuple[str, ...] = ()
    dataset: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    query: str | None = None
    """For query-relevant evaluation sets: the query; ``ground_truth`` is the relevant text."""


def shared_data_dir() -> Path | None:
    """The shared data folder, or None when it is not present."""
    env = os.environ.get("BLOCKDEX_DATA")
    candidates = [Path(env)] if env else []
    repo = Path(__file__).resolve().parents[3]
    candidates += [Path.cwd() / ".." / "shared" / "data", repo.parent / "shared" / "data"]
    for c in candidates:
        if c.is_dir() and any(c.glob("*/pages.jsonl.gz")):
            return c.resolve()
    return None


def _page_from_record(rec: dict[str, Any], dataset: str, n: int) -> EvalPage:
    gt = rec.get("ground_truth_text", rec.get("relevant_text"))
    meta = {
        k: rec[k]
        for k in ("page_type", "title", "meta", "blocks", "encoding", "split", "kind")
        if k in rec
    }
    return EvalPage(
        id=str(rec.get("id", n)),
        html=rec["html"],
        ground_truth=gt,
        url=rec.get("url"),
        with_snippets=tuple(rec.get("with") or ()),
        without_snippets=tuple(rec.get("without") or ()),
        dataset=dataset,
        meta=meta,
        query=rec.get("query"),
    )


def _iter_jsonl(path: Path, dataset: str) -> Iterator[EvalPage]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for n, line in enumerate(f):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BlockdexError(f"{path}:{n + 1}: not valid JSON ({exc.msg})") from None
            if "html" not in rec:
                raise BlockdexError(f"{path}:{n + 1}: record has no 'html' field")
            yield _page_from_record(rec, dataset, n)


def _iter_dir(path: Path) -> Iterator[EvalPage]:
    files = sorted(p for p in path.rglob("*") if p.suffix.lower() in (".html", ".htm"))
    if not files:
        raise BlockdexError(f"{path} holds no .html files")
    for p in files:
        txt = p.with_suffix(".txt")
        gt = txt.read_text(encoding="utf-8", errors="replace") if txt.exists() else None
        raw = p.read_bytes()

        html, _ = decode_html(raw)
        yield EvalPage(id=str(p.relative_to(path)), html=html, ground_truth=gt, dataset=path.name)


def load_dataset(source: str, limit: int | None = None) -> list[EvalPage]:
    """Pages of a shared dataset name, a JSONL(.gz) file or a directory of .html/.txt pairs."""
    path = Path(source)
    if path.is_file():
        it = _iter_jsonl(path, path.name.split(".")[0])
    elif path.is_dir() and not (path / "pages.jsonl.gz").exists():
        it = _iter_dir(path)
    else:
        if path.is_dir():
            file = path / "pages.jsonl.gz"
            name = path.name
        else:
            base = shared_data_dir()
            if base is None:
                raise BlockdexError(
                    f"dataset {source!r} not found: set BLOCKDEX_DATA to the folder holding the "
                    "shared datasets, or give a path to a JSONL file or a directory"
                )
            file = base / source / "pages.jsonl.gz"
            name = source
            if not file.exists():
                known = ", ".join(sorted(p.parent.name for p in base.glob("*/pages.jsonl.gz")))
                raise BlockdexError(f"unknown dataset {source!r}; available: {known}")
        it = _iter_jsonl(file, name)
    pages: list[EvalPage] = []
    for page in it:
        pages.append(page)
        if limit is not None and len(pages) >= limit:
            break
    return pages


def split_of(page_id: str, dev_share: float = 0.3, seed: str = "blockdex-2026") -> str:
    """Fixed, seeded train/dev assignment of a page by its id: ``"train"`` or ``"dev"``."""
    h = hashlib.sha256(f"{seed}:{page_id}".encode()).digest()
    return "dev" if int.from_bytes(h[:8], "big") / 2**64 < dev_share else "train"
