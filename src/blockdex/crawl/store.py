"""The files of a crawl, written so that a killed crawl resumes without duplicates or gaps.

``OUT/`` holds:

* ``pages.jsonl`` — one record per URL the crawl dealt with (page, duplicate or error). It is
  also the crawl's journal: a record carries the links its page holds, so the frontier is
  rebuilt from it on ``--resume`` and a page's links are never written apart from its record.
* ``_frontier.jsonl`` — what sitemaps and feeds listed (one line per document read).
* ``<host>/<path>.md`` — one file per page, mirroring its URL (:func:`url_to_path`).
* ``pages.warc.gz`` (``--warc``) — the fetched HTML responses, for ``blockdex batch``.
* ``_CRAWL.json`` (the settings a resumed crawl must share) and ``_SUMMARY.json``.

Every line is written whole with one ``write`` on a file opened for appending, and a page's file
(temporary name, then rename) and WARC record are written *before* its line. A crawl killed at
any point leaves at most a torn last line, which resuming cuts off, and files or WARC records of
pages without a line, which are written again (the WARC is cut back to its last recorded record).
So every page is recorded exactly once. (Lines are not fsync'ed one by one: a killed process loses
nothing the kernel has, a power cut may lose the last lines, whose pages are then fetched again.)
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from blockdex.errors import BlockdexError, MissingExtra

PAGES = "pages.jsonl"
FRONTIER = "_frontier.jsonl"
MANIFEST = "_CRAWL.json"
SUMMARY = "_SUMMARY.json"
WARC = "pages.warc.gz"
SUFFIXES = {"markdown": ".md", "text": ".txt", "html": ".html", "json": ".json"}
# Hop-by-hop and encoding headers that no longer describe the stored (decoded) body.
WARC_DROPPED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
# Page suffixes dropped from mirrored file names (``guide/intro.html`` → ``guide/intro.md``).
PAGE_SUFFIXES = (".html", ".htm", ".xhtml", ".shtml", ".php", ".asp", ".aspx", ".jsp")
_UNSAFE_NAME = re.compile(r"[^\w.\-]+")
MAX_NAME_BYTES = 100
"""Longest file or directory name written (bytes of UTF-8); longer ones are cut and hashed."""


def _short_hash(text: str, n: int = 10) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:n]


def safe_name(name: str) -> str:
    """A file or directory name that is safe on common file systems: word characters, ``.``,
    ``-`` and ``_`` only, no leading dot, at most :data:`MAX_NAME_BYTES` bytes."""
    cleaned = _UNSAFE_NAME.sub("_", name).strip()
    if cleaned.startswith("."):
        cleaned = "_" + cleaned[1:]
    if not cleaned:
        return "_"
    if len(cleaned.encode("utf-8")) > MAX_NAME_BYTES:
        cut = cleaned
        while len(cut.encode("utf-8")) > MAX_NAME_BYTES - 11:
            cut = cut[:-1]
        cleaned = f"{cut}-{_short_hash(name)}"
    return cleaned


def url_to_path(url: str, suffix: str = ".md") -> str:
    """The relative file path that mirrors ``url``: ``host[_port]/dir/…/name{suffix}``.

    A path ending in ``/`` is written as ``index``; page suffixes (``.html``, ``.php`` …) are
    dropped; a query string adds a short hash of itself to the name, so that ``list?page=2`` and
    ``list?page=3`` are two files."""
    parts = urlsplit(url)
    segments = [unquote(s) for s in (parts.path or "/").split("/")[1:]]
    *dirs, last = segments or [""]
    lower = last.lower()
    for page_suffix in PAGE_SUFFIXES:
        if lower.endswith(page_suffix) and len(last) > len(page_suffix):
            last = last[: -len(page_suffix)]
            break
    if not last:
        last = "index"
    if parts.query:
        last = f"{last}_{_short_hash(parts.query)}"
    names = [safe_name(parts.netloc.replace(":", "_"))]
    names += [safe_name(d) for d in dirs if d]
    names.append(safe_name(last) + suffix)
    return "/".join(names)


def unique_path(path: str, url: str) -> str:
    """``path`` made distinct for ``url`` when another URL already claimed it."""
    stem, dot, ext = path.rpartition(".")
    return f"{stem}-{_short_hash(url, 8)}{dot}{ext}" if dot else f"{path}-{_short_hash(url, 8)}"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8", "surrogatepass") + b"\n"


def _write_atomically(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class Journal:
    """An append-only JSON-lines file whose lines are each written with one ``write``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def read(self, drop: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        """Its lines, without the fields in ``drop``, after cutting off a torn last line (a
        write a kill interrupted). Read line by line: a large crawl's contents never sit in
        memory at once."""
        if not self.path.exists():
            return []
        out = []
        good = 0  # bytes up to the end of the last whole line
        with self.path.open("rb") as fh:
            for number, line in enumerate(fh, 1):
                if not line.endswith(b"\n"):
                    break
                good += len(line)
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line.decode("utf-8", "surrogatepass"))
                except ValueError:
                    raise BlockdexError(
                        f"{self.path}, line {number}, is not JSON: was the file edited? "
                        "remove the line, or start the crawl in an empty directory"
                    ) from None
                for key in drop:
                    obj.pop(key, None)
                out.append(obj)
        if good < self.path.stat().st_size:
            os.truncate(self.path, good)
        return out

    def append(self, obj: Any) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        _write_all(self._fd, _dumps(obj))

    def close(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None


class CrawlStore:
    """The output directory of one crawl (see the module's description)."""

    def __init__(
        self,
        out_dir: str | Path,
        manifest: dict[str, Any],
        *,
        resume: bool = False,
        output: str = "markdown",
        warc: bool = False,
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        self.out = Path(out_dir)
        self.suffix = SUFFIXES[output]
        self._check_directory(manifest, resume, defaults or {})
        self.pages = Journal(self.out / PAGES)
        self.frontier = Journal(self.out / FRONTIER)
        self._paths: dict[str, str] = {}
        self._warc_fd: int | None = None
        self._warc_size = 0
        self.warc = warc
        if warc:
            try:
                import warcio  # noqa: F401  # optional extra (blockdex[batch]): --warc only
            except ImportError:
                raise MissingExtra("warcio", "batch", "Writing a WARC (--warc)") from None

    def _check_directory(
        self, manifest: dict[str, Any], resume: bool, defaults: Mapping[str, Any]
    ) -> None:
        """Make the directory, or check that it holds the crawl ``manifest`` continues (a
        setting a manifest lacks has its value in ``defaults``)."""
        out = self.out
        try:
            out.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise BlockdexError(f"--out {out} exists and is not a directory") from None
        except OSError as exc:
            raise BlockdexError(f"cannot create --out {out}: {exc.strerror or exc}") from None
        path = out / MANIFEST
        if path.exists():
            if not resume:
                raise BlockdexError(
                    f"{out} holds an earlier crawl; pass --resume to continue it "
                    "or choose an empty directory"
                )
            try:
                old = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise BlockdexError(f"cannot read {path}: {exc}") from None
            changed = sorted(
                k
                for k in {*old, *manifest}
                if old.get(k, defaults.get(k)) != manifest.get(k, defaults.get(k))
            )
            if changed:
                raise BlockdexError(
                    f"cannot resume {out}: the earlier crawl used different {', '.join(changed)}"
                )
        elif any(out.iterdir()):
            raise BlockdexError(
                f"{out} is not empty and holds no crawl; choose an empty directory for --out"
            )
        try:
            _write_atomically(path, json.dumps(manifest, indent=1).encode("utf-8"))
            for stale in out.rglob(".*.tmp-*"):  # left by a kill mid-write
                stale.unlink()
        except OSError as exc:
            raise BlockdexError(f"cannot write to --out {out}: {exc.strerror or exc}") from None

    # -- resuming

    def load(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The records and document events of earlier runs; marks their files as taken and
        cuts the WARC back to the end of its last recorded response."""
        records = self.pages.read(drop=("content", "metadata", "warnings"))
        events = self.frontier.read()
        warc_end = 0
        for rec in records:
            if rec.get("file"):
                self._paths[rec["file"]] = rec["url"]
            where = rec.get("warc")
            if where:
                warc_end = max(warc_end, where["offset"] + where["length"])
        path = self.out / WARC
        if self.warc and path.exists() and path.stat().st_size > warc_end:
            os.truncate(path, warc_end)
        return records, events

    # -- writing

    def append_record(self, record: dict[str, Any]) -> None:
        self._guard(lambda: self.pages.append(record), self.pages.path)

    def append_event(self, event: dict[str, Any]) -> None:
        self._guard(lambda: self.frontier.append(event), self.frontier.path)

    def write_page(self, url: str, content: str) -> str:
        """Write a page's content to the file mirroring ``url``; return its relative path."""
        rel = url_to_path(url, self.suffix)
        owner = self._paths.get(rel)
        if owner is not None and owner != url:
            rel = unique_path(rel, url)
        data = content.encode("utf-8", "surrogatepass")
        try:
            self._write_file(rel, data)
        except (NotADirectoryError, IsADirectoryError, FileExistsError):
            # a file where a directory of the path should be (``/a`` then ``/a.md/b``)
            host = rel.split("/", 1)[0]
            rel = f"{host}/_/{safe_name(unique_path('page', url))}{self.suffix}"
            self._guard(lambda: self._write_file(rel, data), self.out / rel)
        except OSError as exc:
            raise BlockdexError(f"cannot write {self.out / rel}: {exc.strerror or exc}") from None
        self._paths[rel] = url
        return rel

    def _write_file(self, rel: str, data: bytes) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_atomically(path, data)

    def write_warc(
        self,
        url: str,
        status_line: str,
        headers: Iterable[tuple[str, str]],
        body: bytes,
        date: str,
    ) -> dict[str, int]:
        """Append one response record; return where it is (``offset``, ``length``)."""
        # optional extra (blockdex[batch]), present: the constructor checked
        from warcio.statusandheaders import StatusAndHeaders
        from warcio.warcwriter import WARCWriter

        buffer = io.BytesIO()
        writer = WARCWriter(buffer, gzip=True)
        http_headers = StatusAndHeaders(
            status_line,
            [(k, v) for k, v in headers if k.lower() not in WARC_DROPPED_HEADERS],
            protocol="HTTP/1.1",
        )
        record = writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(body),
            http_headers=http_headers,
            warc_headers_dict={"WARC-Date": date},
        )
        writer.write_record(record)
        data = buffer.getvalue()
        path = self.out / WARC

        def append() -> None:
            if self._warc_fd is None:
                self._warc_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                self._warc_size = os.fstat(self._warc_fd).st_size
            _write_all(self._warc_fd, data)

        self._guard(append, path)
        offset = self._warc_size
        self._warc_size += len(data)
        return {"offset": offset, "length": len(data)}

    def write_summary(self, summary: dict[str, Any]) -> None:
        path = self.out / SUMMARY
        data = json.dumps(summary, indent=1, ensure_ascii=False).encode("utf-8")
        self._guard(lambda: _write_atomically(path, data), path)

    def close(self) -> None:
        self.pages.close()
        self.frontier.close()
        if self._warc_fd is not None:
            os.fsync(self._warc_fd)
            os.close(self._warc_fd)
            self._warc_fd = None

    @staticmethod
    def _guard(write: Any, path: Path) -> None:
        try:
            write()
        except OSError as exc:
            raise BlockdexError(f"cannot write {path}: {exc.strerror or exc}") from None
