"""Extraction for a crawl: the batch runner's worker processes extract each fetched page and
take from that one parse its links, its canonical URL and its feeds, and a SimHash of its text,
under a time and memory limit; the fetcher never waits for them."""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from multiprocessing import connection
from typing import Any

from blockdex.batch import BatchConfig, PageInput, RecordTask, Worker, error_record, extract_page
from blockdex.crawl.discovery import DEFAULT_DISCOVERY
from blockdex.crawl.simhash import text_simhash
from blockdex.errors import BlockdexError


def crawl_page_task(page: PageInput, cfg: BatchConfig) -> dict[str, Any]:
    """The worker's job for one fetched page: the batch record, plus the page's metadata, links,
    canonical URL, feeds and a SimHash of its extracted text (never raises for bad input)."""
    t0 = time.perf_counter()
    record, result = extract_page(page, cfg, page_links=True)  # with the metadata, as batch has it
    record.setdefault("metadata", {})
    record.update(links=[], canonical=None, feeds=[], simhash=None)
    found = result.page_links if result is not None else None
    if found is not None:
        links = list(found.links[: DEFAULT_DISCOVERY.max_links])
        record.update(links=links, canonical=found.canonical, feeds=list(found.feeds))
    if result is not None and not record.get("error"):
        fingerprint = text_simhash(result.text)
        record["simhash"] = f"{fingerprint:016x}" if fingerprint is not None else None
    record["time_ms"] = round((time.perf_counter() - t0) * 1000, 3)  # all of the page's work
    return record


class ExtractionPool:
    """The batch runner's worker processes (:class:`blockdex.batch.Worker`: spawned, memory
    limited, models loaded once), driven from asyncio: each exchange runs in a thread of its own,
    so a slow page holds one worker and one thread, never the event loop or the other pages."""

    start_timeout: float = 300.0
    """Seconds a new worker may take to import blockdex and load its models."""

    def __init__(self, cfg: BatchConfig, task: RecordTask) -> None:
        self.cfg = cfg
        self.task = task
        self._ctx = mp.get_context("spawn")
        self._make = lambda: Worker(self._ctx, cfg, task)
        self._lock = threading.Lock()
        self._workers = [self._make() for _ in range(max(1, cfg.jobs))]
        self._idle: asyncio.Queue[Any] = asyncio.Queue()
        for worker in self._workers:
            self._idle.put_nowait(worker)
        self._threads = ThreadPoolExecutor(max(1, cfg.jobs), thread_name_prefix="blockdex-extract")
        self.replaced = 0

    async def run(self, page: PageInput) -> dict[str, Any]:
        """The worker record of ``page`` (an error record when its worker died or timed out)."""
        worker = await self._idle.get()
        try:
            loop = asyncio.get_running_loop()
            record, worker = await loop.run_in_executor(self._threads, self._exchange, worker, page)
        finally:
            self._idle.put_nowait(worker)
        return record

    def _replace(self, worker: Any, kill: bool) -> Any:
        worker.stop(kill=kill)
        new = self._make()
        with self._lock:
            self._workers[self._workers.index(worker)] = new
            self.replaced += 1
        return new

    def _exchange(self, worker: Any, page: PageInput) -> tuple[dict[str, Any], Any]:
        if not worker.ready:
            ready = connection.wait([worker.conn, worker.proc.sentinel], self.start_timeout)
            kind = worker.receive()[0] if worker.conn in ready else "died"
            if kind != "ready":
                raise BlockdexError("an extraction worker could not start: see the messages above")
            worker.ready = True
        worker.send(page)
        ready = connection.wait([worker.conn, worker.proc.sentinel], self.cfg.page_timeout)
        if worker.conn in ready:
            kind, payload = worker.receive()
            if kind == "done":
                worker.page = None
                if worker.tasks >= self.cfg.max_tasks_per_worker:
                    worker = self._replace(worker, kill=False)
                return payload, worker
        ms = round((time.monotonic() - worker.started) * 1000, 3)
        if worker.proc.is_alive() and not ready:
            error = f"the page took longer than the {self.cfg.page_timeout:g} s limit"
            kind = "timeout"
        else:
            worker.proc.join(1)
            error = f"the worker process died on this page (exit code {worker.proc.exitcode})"
            kind = "worker_crashed"
        return error_record(page, error, kind, ms), self._replace(worker, kill=True)

    def close(self) -> None:
        with self._lock:
            workers = list(self._workers)
        for worker in workers:
            worker.stop(kill=worker.page is not None)
        self._threads.shutdown(wait=False, cancel_futures=True)
