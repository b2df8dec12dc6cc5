"""Many pages on one machine: files, JSONL and WARC in; JSONL(.gz) or Parquet parts out.

The shape follows datatrove's: a *reader* yields :class:`PageInput` values in a fixed order, a
pool of worker processes runs the pipeline, and a *writer* stores the records in numbered parts.

Three promises hold whatever the input holds:

* **Nothing is lost.** Every input page yields exactly one record: the extraction, or an error
  record whose ``error`` says why (unreadable file, not HTML, time limit, worker crash …).
* **A bad page cannot stop the run.** Each page runs in a worker process with a time limit and an
  address-space limit; a page that hangs or kills its worker becomes an error record, the worker
  is replaced, and the run goes on.
* **Resumable.** Pages are numbered in input order and part ``k`` holds pages
  ``[k·part_size, (k+1)·part_size)``. A part is written to a temporary file and renamed when all
  its pages are done, so after a crash (even ``kill -9``) ``--resume`` redoes only the parts that
  are missing: no duplicates, no gaps.
"""

from __future__ import annotations

import contextlib
import glob
import gzip
import io
import json
import multiprocessing as mp
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from blockdex.errors import BlockdexError, MissingExtra
from blockdex.extract import run
from blockdex.options import DEFAULT_OPTIONS, ExtractOptions, option_fields
from blockdex.predict import available_predictors, get_predictor
from blockdex.render import kept_blocks, result_notes

HTML_SUFFIXES = (".html", ".htm", ".xhtml", ".html.gz", ".htm.gz")
JSONL_SUFFIXES = (".jsonl", ".jsonl.gz", ".ndjson", ".ndjson.gz")
WARC_SUFFIXES = (".warc", ".warc.gz", ".warc.zst", ".warc.lz4")
WRITE_FORMATS = ("jsonl.gz", "jsonl", "parquet")
MANIFEST = "_MANIFEST.json"
WARM_UP_PAGE = (
    b"<html><head><title>Warm-up</title></head><body><nav><a href='/'>Home</a></nav>"
    b"<article><h1>Warm-up</h1><p>A short paragraph, so that every model loads once.</p>"
    b"</article></body></html>"
)
SUMMARY = "_SUMMARY.json"


@dataclass(frozen=True, slots=True)
class BatchConfig:
    """Settings of a batch run."""

    jobs: int = max(1, os.cpu_count() or 1)
    """Worker processes; one per core is the useful maximum (extraction is CPU-bound)."""
    page_timeout: float = 10.0
    """Seconds one page may take; a typical page takes 5-50 ms, so 10 s only stops pathology."""
    memory_limit_mb: int = 4096
    """Address-space limit of each worker (RLIMIT_AS); a page above it becomes an error record."""
    part_size: int = 1000
    """Pages per output part: the unit of atomic writing and of resuming."""
    write: str = "jsonl.gz"
    """File format of the parts: jsonl.gz, jsonl or parquet."""
    include_blocks: bool = False
    """Also store the kept blocks (index, tag, text, score) in each record."""
    options: ExtractOptions = DEFAULT_OPTIONS
    """What every page is extracted as (the record's content is in ``options.format``; json:
    the JSON record as a string)."""
    max_tasks_per_worker: int = 2000
    """Replace a worker after this many pages, bounding slow memory growth of long runs."""


@dataclass(slots=True)
class PageInput:
    """One page to extract, or the reason it could not even be read (``error``)."""

    id: str
    source: str
    html: bytes = b""
    url: str | None = None
    content_type: str | None = None
    error: str | None = None
    error_kind: str | None = None
    seq: int = -1


@dataclass(slots=True)
class BatchSummary:
    pages: int = 0
    ok: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    skipped_parts: int = 0
    seconds: float = 0.0
    workers_replaced: int = 0

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "pages": self.pages,
            "ok": self.ok,
            "errors": sum(self.errors.values()),
            "errors_by_kind": dict(self.errors),
            "resumed_parts_skipped": self.skipped_parts,
            "seconds": round(self.seconds, 3),
            "pages_per_second": round(self.pages_per_second, 2),
            "workers_replaced": self.workers_replaced,
        }

    def describe(self) -> str:
        kinds = ", ".join(f"{k} {n}" for k, n in self.errors.most_common()) or "none"
        return (
            f"{self.pages} pages: {self.ok} ok, {sum(self.errors.values())} errors ({kinds}); "
            f"{self.seconds:.1f} s, {self.pages_per_second:.1f} pages/s"
            + (f"; skipped {self.skipped_parts} finished parts" if self.skipped_parts else "")
        )


# --------------------------------------------------------------------------------------------
# Readers


def _open_maybe_gzip(path: Path) -> io.BufferedIOBase:
    fh = path.open("rb")
    if fh.peek(2)[:2] == b"\x1f\x8b":  # type: ignore[attr-defined]
        return gzip.GzipFile(fileobj=fh)  # type: ignore[return-value]
    return fh  # type: ignore[return-value]


def read_html_file(path: Path) -> Iterator[PageInput]:
    try:
        with _open_maybe_gzip(path) as fh:
            data = fh.read()
    except (OSError, EOFError) as exc:
        yield PageInput(str(path), str(path), error=f"cannot read: {exc}", error_kind="read_error")
        return
    yield PageInput(str(path), str(path), html=data)


def read_jsonl(path: Path) -> Iterator[PageInput]:
    """Records with an ``html`` field (``id`` and ``url`` used when present)."""
    try:
        fh = _open_maybe_gzip(path)
    except OSError as exc:
        yield PageInput(str(path), str(path), error=f"cannot read: {exc}", error_kind="read_error")
        return
    with fh:
        lineno = 0
        while True:
            lineno += 1
            source = f"{path}:{lineno}"
            try:
                line = fh.readline()
            except (OSError, EOFError) as exc:  # truncated gzip and the like
                yield PageInput(
                    source, source, error=f"cannot read: {exc}", error_kind="read_error"
                )
                return
            if not line:
                return
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
                if not isinstance(obj, dict):
                    raise ValueError("the line is not a JSON object")
                html = obj.get("html")
                if not isinstance(html, str):
                    raise ValueError("the record has no string field 'html'")
            except ValueError as exc:
                yield PageInput(
                    source, source, error=f"bad JSONL record: {exc}", error_kind="bad_input"
                )
                continue
            rid = obj.get("id")
            yield PageInput(
                str(rid) if rid is not None else source,
                source,
                html=html.encode("utf-8", "surrogatepass"),
                url=obj.get("url") if isinstance(obj.get("url"), str) else None,
            )


def _is_html_type(content_type: str | None) -> bool:
    if not content_type:
        return True  # unknown: let the parser's sniffing decide
    ct = content_type.split(";", 1)[0].strip().lower()
    return ct in ("text/html", "application/xhtml+xml", "text/xml", "application/xml", "text/plain")


def read_warc(path: Path) -> Iterator[PageInput]:
    """HTML response records of a WARC (FastWARC when installed, else warcio)."""
    try:
        yield from _read_warc_fastwarc(path)
    except ImportError:
        yield from _read_warc_warcio(path)


def _read_warc_fastwarc(path: Path) -> Iterator[PageInput]:
    from fastwarc.stream_io import FileStream, GZipStream
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    raw = FileStream(str(path), "rb")
    with path.open("rb") as probe:
        gz = probe.read(2) == b"\x1f\x8b"
    stream = GZipStream(raw) if gz else raw
    try:
        for record in ArchiveIterator(
            stream, record_types=WarcRecordType.response, parse_http=True
        ):
            url = record.headers.get("WARC-Target-URI")
            rid = record.record_id or url or f"{path}@{record.stream_pos}"
            ctype = record.http_headers.get("Content-Type") if record.http_headers else None
            if not _is_html_type(ctype):
                continue
            try:
                body = record.reader.read()
            except Exception as exc:  # a truncated record must not end the file
                yield PageInput(
                    rid,
                    str(path),
                    url=url,
                    error=f"bad WARC record: {exc}",
                    error_kind="read_error",
                )
                continue
            yield PageInput(rid, str(path), html=body, url=url, content_type=ctype)
    finally:
        stream.close()


def _read_warc_warcio(path: Path) -> Iterator[PageInput]:
    try:
        from warcio.archiveiterator import ArchiveIterator
    except ImportError:
        raise MissingExtra("fastwarc", "batch", "Reading WARC files") from None
    with path.open("rb") as fh:
        for record in ArchiveIterator(fh):
            if record.rec_type != "response":
                continue
            url = record.rec_headers.get_header("WARC-Target-URI")
            rid = record.rec_headers.get_header("WARC-Record-ID") or url or str(path)
            ctype = record.http_headers.get_header("Content-Type") if record.http_headers else None
            if not _is_html_type(ctype):
                continue
            yield PageInput(
                rid, str(path), html=record.content_stream().read(), url=url, content_type=ctype
            )


def _expand(spec: str) -> list[Path]:
    path = Path(spec)
    if path.is_dir():
        return sorted(
            p for p in path.rglob("*") if p.is_file() and p.name.lower().endswith(HTML_SUFFIXES)
        )
    if any(ch in spec for ch in "*?["):
        return sorted(Path(p) for p in glob.glob(spec, recursive=True) if Path(p).is_file())
    return [path]


def read_inputs(specs: Sequence[str]) -> Iterator[PageInput]:
    """Pages of every input, in a fixed order (so that resuming numbers them the same way)."""
    seq = 0
    for spec in specs:
        paths = _expand(spec)
        if not paths:
            page = PageInput(spec, spec, error="no input files match", error_kind="read_error")
            page.seq, seq = seq, seq + 1
            yield page
            continue
        for path in paths:
            name = path.name.lower()
            if not path.exists():
                pages: Iterable[PageInput] = [
                    PageInput(str(path), str(path), error="no such file", error_kind="read_error")
                ]
            elif name.endswith(WARC_SUFFIXES):
                pages = read_warc(path)
            elif name.endswith(JSONL_SUFFIXES):
                pages = read_jsonl(path)
            else:
                pages = read_html_file(path)
            for page in pages:
                page.seq, seq = seq, seq + 1
                yield page


# --------------------------------------------------------------------------------------------
# Workers


def _limit_memory(limit_mb: int) -> None:
    if limit_mb <= 0:
        return
    try:
        import resource

        limit = limit_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):  # not on this platform: rely on the time limit
        pass


def extract_record(page: PageInput, cfg: BatchConfig) -> dict[str, Any]:
    """One output record for ``page`` (never raises for bad input): the fields of the other
    doors (``url`` — the page's own when none is given —, ``warnings``, ``notes``, the
    ``metadata`` a crawl records)."""
    return extract_page(page, cfg)[0]


def extract_page(
    page: PageInput, cfg: BatchConfig, *, page_links: bool = False
) -> tuple[dict[str, Any], Any]:
    """:func:`extract_record`'s record, and the :class:`~blockdex.extract.Extraction` it was
    made from (None for an error record; ``page_links``: with what the page links to)."""
    t0 = time.perf_counter()
    record: dict[str, Any] = {
        "seq": page.seq,
        "id": page.id,
        "url": page.url,
        "source": page.source,
    }
    result = None
    try:
        result = run(
            page.html,
            cfg.options,
            url=page.url,
            content_type=page.content_type,
            page_links=page_links,
        )
        sel = result.selection
        record.update(
            title=result.page.title,
            url=result.page.url or page.url,  # without one given, the page's own (canonical)
            content=result.render(cfg.options.format),
            indices=[list(iv) for iv in sel.intervals],
            n_blocks=len(result.page.blocks),
            **result.page.page_type.to_json(),
            warnings=list(result.page.warnings) + list(sel.warnings),
            notes=result_notes(result.page, sel, result.query),
            fallback=sel.fallback,
            metadata=dict(result.page.meta),
        )
        if cfg.include_blocks:
            wanted = set(sel.indices)
            scores = sel.scores or {}
            record["blocks"] = [
                {
                    "index": b.index,
                    "tag": b.tag,
                    "text": b.text,
                    "score": float(scores[b.index]) if b.index in scores else None,
                }
                for b in kept_blocks(result.page, wanted)
            ]
        record["error"] = record["error_kind"] = None
    except BlockdexError as exc:
        result = None
        record.update(error=str(exc), error_kind=exc.kind)
    except MemoryError:
        result = None
        record.update(
            error=f"the page needed more than {cfg.memory_limit_mb} MB", error_kind="memory"
        )
    except RecursionError:
        result = None
        record.update(error="the page is nested too deeply", error_kind="too_deep")
    except Exception as exc:  # a bug in blockdex: report it, keep going
        result = None
        record.update(error=f"internal error: {type(exc).__name__}: {exc}", error_kind="internal")
    record["time_ms"] = round((time.perf_counter() - t0) * 1000, 3)
    return record, result


RecordTask = Callable[[PageInput, BatchConfig], dict[str, Any]]
"""What a worker does with one page: ``task(page, cfg) -> record`` (never raises for bad
input). :func:`extract_record` for batch runs; the crawler adds the page's links."""


def _worker_main(conn: Connection, cfg: BatchConfig, task: RecordTask | None = None) -> None:
    _limit_memory(cfg.memory_limit_mb)
    task = task or extract_record
    # Load models now, so that the first page's time limit is not spent on start-up.
    extract_record(PageInput("warm-up", "", html=WARM_UP_PAGE), cfg)
    conn.send(("ready", None))
    while True:
        try:
            page = conn.recv()
        except (EOFError, OSError):
            return
        if page is None:
            return
        conn.send(("done", task(page, cfg)))


class Worker:
    """One spawned worker process (memory limited, models loaded once) and its pipe: the unit
    of :class:`WorkerPool` and of the crawler's extraction pool."""

    def __init__(self, ctx: Any, cfg: BatchConfig, task: RecordTask | None = None) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, cfg, task), daemon=True)
        self.proc.start()
        child.close()
        self.page: PageInput | None = None
        self.started = 0.0
        self.ready = False
        self.tasks = 0

    def send(self, page: PageInput) -> None:
        self.page, self.started, self.tasks = page, time.monotonic(), self.tasks + 1
        self.conn.send(page)

    def receive(self) -> tuple[str, Any]:
        """The worker's next message, ``(kind, payload)``; ``("died", None)`` when its pipe
        broke (the process is gone)."""
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            return "died", None

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        else:
            with contextlib.suppress(OSError, BrokenPipeError):
                self.conn.send(None)
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def error_record(page: PageInput, error: str, kind: str, ms: float | None = None) -> dict:
    """The record of a page without a result: why (``error``, ``kind``), after ``ms``."""
    return {
        "seq": page.seq,
        "id": page.id,
        "url": page.url,
        "source": page.source,
        "error": error,
        "error_kind": kind,
        "time_ms": ms,
    }


class WorkerPool:
    """Processes that extract one page at a time, each under a time and memory limit."""

    def __init__(self, cfg: BatchConfig) -> None:
        self.cfg = cfg
        self.ctx = mp.get_context("spawn")
        self.workers = [Worker(self.ctx, cfg) for _ in range(max(1, cfg.jobs))]
        self.replaced = 0

    def _replace(self, i: int, kill: bool) -> None:
        self.workers[i].stop(kill=kill)
        self.workers[i] = Worker(self.ctx, self.cfg)
        self.replaced += 1

    def run(self, pages: Iterator[PageInput]) -> Iterator[dict[str, Any]]:
        """Records of ``pages`` in completion order (each page yields exactly one)."""
        exhausted = False
        try:
            while True:
                for worker in self.workers:  # hand out work
                    if worker.ready and worker.page is None and not exhausted:
                        page = next(pages, None)
                        if page is None:
                            exhausted = True
                        elif page.error is not None:
                            yield error_record(page, page.error, page.error_kind or "read_error")
                        else:
                            worker.send(page)
                busy = [w for w in self.workers if w.page is not None or not w.ready]
                if exhausted and not any(w.page is not None for w in self.workers):
                    return
                if not busy:
                    continue
                now = time.monotonic()
                deadlines = [w.started + self.cfg.page_timeout - now for w in busy if w.page]
                timeout = max(0.0, min(deadlines)) if deadlines else 60.0
                ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout)
                for i, worker in enumerate(self.workers):
                    yield from self._collect(i, worker, ready)
        finally:
            for worker in self.workers:
                worker.stop(kill=worker.page is not None)

    def _collect(self, i: int, worker: Worker, ready: list[Any]) -> Iterator[dict[str, Any]]:
        if worker.conn in ready:
            kind, payload = worker.receive()
            if kind == "ready":
                worker.ready = True
                return
            if kind == "done":
                worker.page = None
                yield payload
                if worker.tasks >= self.cfg.max_tasks_per_worker:
                    self._replace(i, kill=False)
                return
        if worker.conn in ready or worker.proc.sentinel in ready:
            if worker.proc.is_alive() and worker.conn not in ready:
                return
            page = worker.page
            code = worker.proc.exitcode
            self._replace(i, kill=True)
            if page is not None:
                yield error_record(
                    page,
                    f"the worker process died on this page (exit code {code})",
                    "worker_crashed",
                    round((time.monotonic() - worker.started) * 1000, 3),
                )
            elif not worker.ready:
                raise BlockdexError("a batch worker could not start: see the messages above")
            return
        if worker.page is not None and time.monotonic() - worker.started > self.cfg.page_timeout:
            page = worker.page
            self._replace(i, kill=True)
            yield error_record(
                page,
                f"the page took longer than the {self.cfg.page_timeout:g} s limit",
                "timeout",
                round(self.cfg.page_timeout * 1000, 3),
            )


# --------------------------------------------------------------------------------------------
# Writer


PARQUET_COLUMNS = (
    ("seq", "int64"),
    ("id", "string"),
    ("url", "string"),
    ("source", "string"),
    ("title", "string"),
    ("content", "string"),
    ("n_blocks", "int64"),
    ("page_type", "string"),
    ("page_type_confidence", "float64"),
    ("time_ms", "float64"),
    ("error", "string"),
    ("error_kind", "string"),
    ("fallback", "string"),
)


def part_name(k: int, write: str) -> str:
    return f"part-{k:06d}.{write}"


def write_part(out_dir: Path, k: int, records: list[dict[str, Any]], write: str) -> Path:
    """Write one part atomically (temporary file, fsync, rename)."""
    final = out_dir / part_name(k, write)
    tmp = out_dir / f".{final.name}.tmp-{os.getpid()}"
    records = sorted(records, key=lambda r: r["seq"])
    if write == "parquet":
        _write_parquet(tmp, records)
    else:
        raw = tmp.open("wb")
        fh: Any = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if write == "jsonl.gz" else raw
        with raw, fh:
            for rec in records:
                fh.write(json.dumps(rec, ensure_ascii=False).encode("utf-8", "surrogatepass"))
                fh.write(b"\n")
        with open(tmp, "rb+") as sync:
            os.fsync(sync.fileno())
    os.replace(tmp, final)
    return final


def _write_parquet(path: Path, records: list[dict[str, Any]]) -> None:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtra("pyarrow", "batch", "Writing Parquet") from None
    types = {"int64": pa.int64(), "string": pa.string(), "float64": pa.float64()}
    fields = [pa.field(name, types[t]) for name, t in PARQUET_COLUMNS]
    fields += [
        pa.field("indices", pa.list_(pa.list_(pa.int64()))),
        pa.field("warnings", pa.list_(pa.string())),
        pa.field("notes", pa.list_(pa.string())),
        pa.field("blocks_json", pa.string()),
        pa.field("metadata_json", pa.string()),
    ]
    columns: dict[str, list[Any]] = {f.name: [] for f in fields}
    for rec in records:
        for name, _ in PARQUET_COLUMNS:
            columns[name].append(rec.get(name))
        columns["indices"].append(rec.get("indices"))
        columns["warnings"].append(rec.get("warnings"))
        columns["notes"].append(rec.get("notes"))
        blocks = rec.get("blocks")
        columns["blocks_json"].append(json.dumps(blocks, ensure_ascii=False) if blocks else None)
        meta = rec.get("metadata")
        columns["metadata_json"].append(json.dumps(meta, ensure_ascii=False) if meta else None)
    table = pa.table(columns, schema=pa.schema(fields))
    pq.write_table(table, path)


def read_records(out_dir: str | Path) -> Iterator[dict[str, Any]]:
    """All records of a finished (or partial) batch output directory, in input order."""
    out = Path(out_dir)
    for path in sorted(out.glob("part-*")):
        if path.name.endswith(".parquet"):
            import pyarrow.parquet as pq

            yield from pq.read_table(path).to_pylist()
        else:
            with _open_maybe_gzip(path) as fh:
                for line in fh:
                    yield json.loads(line)


# --------------------------------------------------------------------------------------------
# The run


def _manifest(specs: Sequence[str], cfg: BatchConfig) -> dict[str, Any]:
    options = cfg.options
    manifest = {
        "inputs": list(specs),
        "part_size": cfg.part_size,
        "output": options.format,
        "write": cfg.write,
        "query": options.query,
        "predictor": options.method,
        "include_blocks": cfg.include_blocks,
    }
    for f in option_fields():  # the other options only when set, so that runs written
        value = getattr(options, f.name)  # before an option existed still resume
        if f.name not in ("format", "query", "method") and value != f.default:
            manifest[f.name] = value
    return manifest


def _finished_parts(out_dir: Path, write: str) -> set[int]:
    done = set()
    for path in out_dir.glob(f"part-*.{write}"):
        stem = path.name[len("part-") : -len(write) - 1]
        if stem.isdigit():
            done.add(int(stem))
    return done


def check_predictor(name: str | None) -> None:
    """Refuse an unknown predictor name before any worker starts (``module:Class`` names are
    loaded by the workers themselves)."""
    if name is not None and ":" not in name and name not in available_predictors():
        get_predictor(name)  # raises UnknownPredictor with the list of names


def run_batch(
    inputs: Sequence[str],
    out_dir: str | Path,
    cfg: BatchConfig | None = None,
    *,
    resume: bool = False,
    progress: bool = True,
) -> BatchSummary:
    """Extract every page of ``inputs`` into parts under ``out_dir``; return the summary."""
    cfg = cfg or BatchConfig()
    if cfg.write not in WRITE_FORMATS:
        raise BlockdexError(
            f"unknown --write {cfg.write!r}; choose one of {', '.join(WRITE_FORMATS)}"
        )
    if cfg.part_size < 1:
        raise BlockdexError("--part-size must be at least 1")
    cfg.options.validate("cli")
    check_predictor(cfg.options.method)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    manifest = _manifest(inputs, cfg)
    manifest_path = out / MANIFEST
    done_parts = _finished_parts(out, cfg.write)
    if manifest_path.exists() or done_parts:
        if not resume:
            raise BlockdexError(
                f"{out} holds the output of an earlier run; pass --resume to continue it "
                "or choose an empty directory"
            )
        old = json.loads(manifest_path.read_text()) if manifest_path.exists() else manifest
        if old != manifest:
            changed = sorted(k for k in manifest if old.get(k) != manifest[k])
            raise BlockdexError(
                f"cannot resume {out}: the earlier run used different {', '.join(changed)}"
            )
    for stale in out.glob(".part-*.tmp-*"):  # left by a crash mid-write
        stale.unlink()
    manifest_path.write_text(json.dumps(manifest, indent=1))

    summary = BatchSummary(skipped_parts=len(done_parts))
    size = cfg.part_size

    def todo() -> Iterator[PageInput]:
        for page in read_inputs(inputs):
            if page.seq // size not in done_parts:
                yield page

    counts: dict[int, int] = {}  # seq count of each part seen so far (input side)
    pending: dict[int, list[dict[str, Any]]] = {}
    input_done = False
    last_seq = -1

    def counted(pages: Iterator[PageInput]) -> Iterator[PageInput]:
        nonlocal input_done, last_seq
        for page in pages:
            counts[page.seq // size] = counts.get(page.seq // size, 0) + 1
            last_seq = page.seq
            yield page
        input_done = True

    from tqdm import tqdm

    bar = tqdm(
        unit="page",
        disable=not progress,
        file=sys.stderr,
        dynamic_ncols=True,
        desc="blockdex batch",
    )
    t0 = time.perf_counter()
    pool = WorkerPool(cfg)
    try:
        for rec in pool.run(counted(todo())):
            k = rec["seq"] // size
            pending.setdefault(k, []).append(rec)
            summary.pages += 1
            if rec.get("error"):
                summary.errors[rec["error_kind"] or "error"] += 1
            else:
                summary.ok += 1
            bar.update(1)
            bar.set_postfix(errors=sum(summary.errors.values()), refresh=False)
            full = len(pending[k]) == size
            if full or (input_done and k == last_seq // size and len(pending[k]) == counts[k]):
                write_part(out, k, pending.pop(k), cfg.write)
        for k, recs in sorted(pending.items()):  # the last, partial part(s)
            write_part(out, k, recs, cfg.write)
    finally:
        bar.close()
        summary.seconds = time.perf_counter() - t0
        summary.workers_replaced = pool.replaced
    (out / SUMMARY).write_text(json.dumps(summary.to_json(), indent=1))
    return summary
