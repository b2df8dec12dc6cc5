"""Batch throughput per core and the workers' memory over a long run (issues 8 and 45).

    python benchmarks/batch_throughput.py [--datasets scrapinghub-aeb wcxb] [--pages 400]
    python benchmarks/batch_throughput.py --documents 20000 [--jobs 1 2] [--max-tasks 0]

Writes pages of the shared datasets into one JSONL file — the first ``--pages`` of them, or with
``--documents N`` every page of the datasets (all five shared sets by default) repeated in turn
until there are N documents, each with an id of its own — then runs ``blockdex batch`` on it
(:func:`blockdex.batch.run_batch`, parts of 200 records) with each ``--jobs`` count, each run
in a fresh process so that ``ru_maxrss`` of its workers is measured per run.

While a run goes, a thread of that process reads every worker's resident memory (``VmRSS`` of
``/proc/<pid>/status``) every ``--every`` seconds, with how many records the run has written
(``part-*`` files). Printed per run: pages/s, pages/s per core (pages/s over the jobs), pages per
CPU-second of the workers (``RUSAGE_CHILDREN``), the peak RSS of a worker (``ru_maxrss``) and the
workers' RSS (the largest of them, and their sum) at 10%, 50% and 100% of the documents:
RSS that grows with the documents is a leak. ``--max-tasks 0`` keeps each worker for the whole
run (``BatchConfig.max_tasks_per_worker``, by default 2000, replaces a worker after that many
pages, which would hide slow growth); ``--json FILE`` writes the runs with their samples.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from itertools import islice
from pathlib import Path

ALL_SETS = ("l3s-gn1", "scrapinghub-aeb", "trafilatura-eval", "wcxb", "webmainbench-samples")
PART_SIZE = 200


def _rss_kb(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _workers(parent: int) -> list[int]:
    """The batch workers among ``parent``'s children (spawned processes, not the resource
    tracker)."""
    pids = []
    for task in Path(f"/proc/{parent}/task").iterdir():
        try:
            pids += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    out = []
    for pid in pids:
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"multiprocessing" in cmd and b"resource_tracker" not in cmd:
            out.append(pid)
    return out


class Sampler(threading.Thread):
    """Every ``every`` seconds: seconds since start, records written, {worker pid: RSS KiB}."""

    def __init__(self, out_dir: str, every: float) -> None:
        super().__init__(daemon=True)
        self.out_dir, self.every = Path(out_dir), every
        self.samples: list[tuple[float, int, dict[int, int]]] = []
        self.stop = threading.Event()
        self.t0 = time.perf_counter()

    def run(self) -> None:
        me = os.getpid()
        while not self.stop.wait(self.every):
            done = PART_SIZE * sum(1 for _ in self.out_dir.glob("part-*"))
            rss = {pid: kb for pid in _workers(me) if (kb := _rss_kb(pid)) is not None}
            self.samples.append((time.perf_counter() - self.t0, done, rss))


def run_one(inputs: str, jobs: int, max_tasks: int, every: float) -> dict:
    from blockdex.batch import BatchConfig, run_batch

    cfg = BatchConfig(jobs=jobs, part_size=PART_SIZE)
    if max_tasks >= 0:
        cfg = BatchConfig(jobs=jobs, part_size=PART_SIZE, max_tasks_per_worker=max_tasks or 1 << 60)
    with tempfile.TemporaryDirectory() as out:
        sampler = Sampler(out, every)
        sampler.start()
        t0 = time.perf_counter()
        summary = run_batch([inputs], out, cfg, progress=False)
        seconds = time.perf_counter() - t0
        sampler.stop.set()
        sampler.join()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "jobs": jobs,
        "max_tasks_per_worker": cfg.max_tasks_per_worker,
        "pages": summary.pages,
        "ok": summary.ok,
        "workers_replaced": summary.workers_replaced,
        "seconds": seconds,
        "pages_per_second": summary.pages / seconds,
        "pages_per_second_per_core": summary.pages / seconds / jobs,
        "worker_cpu_seconds": cpu,
        "pages_per_cpu_second": summary.pages / cpu if cpu else 0.0,
        "worker_peak_rss_mb": usage.ru_maxrss / 1024,
        "samples": sampler.samples,
    }


def rss_at(run: dict, share: float) -> tuple[float, float] | None:
    """The workers' RSS (MB: the largest worker's, all workers' sum) in the first sample once
    ``share`` of the documents are written (the last sample for 1.0), among the samples that
    see all the workers (at the very end, one may have stopped)."""
    most = max((len(s[2]) for s in run["samples"]), default=0)
    samples = [s for s in run["samples"] if s[2] and len(s[2]) == most]
    if not samples:
        return None
    if share >= 1.0:
        chosen = samples[-1]
    else:
        chosen = next((s for s in samples if s[1] >= share * run["pages"]), samples[-1])
    rss = list(chosen[2].values())
    return max(rss) / 1024, sum(rss) / 1024


def write_inputs(path: Path, datasets: list[str], pages: int, documents: int | None) -> int:
    """The JSONL input; returns the average HTML size in KiB."""
    from blockdex.evaluate.datasets import load_dataset

    rows = []
    if documents:
        for name in datasets:
            rows += [(name, p) for p in load_dataset(name)]
    else:
        per = pages // len(datasets)
        for name in datasets:
            rows += [(name, p) for p in islice(load_dataset(name), per)]
    n = documents or len(rows)
    size = 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as fh:  # 20,000 pages: 4 GB
        for k in range(n):
            name, page = rows[k % len(rows)]
            html = page.html if isinstance(page.html, str) else page.html.decode("utf-8")
            doc_id = f"{name}/{page.id}/{k // len(rows)}"
            fh.write(json.dumps({"id": doc_id, "url": page.url, "html": html}) + "\n")
            size += len(html)
    print(
        f"{n} documents ({len(rows)} distinct pages of {', '.join(datasets)}), "
        f"{size / n / 1024:.0f} KiB of HTML on average, {os.cpu_count()} cores"
    )
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=None)
    ap.add_argument("--pages", type=int, default=400, help="the first pages of the datasets")
    ap.add_argument("--documents", type=int, default=None, help="repeat pages to this many")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument(
        "--max-tasks",
        type=int,
        default=-1,
        help="pages before a worker is replaced (0: never; default: BatchConfig's)",
    )
    ap.add_argument("--every", type=float, default=1.0, help="seconds between RSS samples")
    ap.add_argument("--json", type=Path, help="write the runs (with their samples) here")
    ap.add_argument("--one", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        inputs, jobs, max_tasks, every = args.one
        print(json.dumps(run_one(inputs, int(jobs), int(max_tasks), float(every))))
        return 0

    datasets = args.datasets or (list(ALL_SETS) if args.documents else ["scrapinghub-aeb", "wcxb"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pages.jsonl.gz"
        write_inputs(path, datasets, args.pages, args.documents)
        results = []
        for jobs in args.jobs:
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(path), str(jobs), str(args.max_tasks),
                 str(args.every)],
                capture_output=True,
                text=True,
                check=True,
            )  # fmt: skip
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    for r in results:
        print(
            f"jobs={r['jobs']}: {r['pages']} pages ({r['ok']} ok) in {r['seconds']:.1f} s = "
            f"{r['pages_per_second']:.1f} pages/s, {r['pages_per_second_per_core']:.1f} pages/s "
            f"per core, {r['pages_per_cpu_second']:.1f} pages per worker CPU-second; worker "
            f"peak RSS {r['worker_peak_rss_mb']:.0f} MB; workers replaced {r['workers_replaced']}"
        )
        at = {share: rss_at(r, share) for share in (0.1, 0.5, 1.0)}
        if all(at.values()):
            print(
                "  workers' RSS (largest / sum, MB) at "
                + ", ".join(f"{s:.0%}: {v[0]:.0f} / {v[1]:.0f}" for s, v in at.items() if v)
            )
    if len(results) >= 2:
        print(
            f"speed-up of {results[1]['jobs']} jobs over {results[0]['jobs']}: "
            f"{results[1]['pages_per_second'] / results[0]['pages_per_second']:.2f}x"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
