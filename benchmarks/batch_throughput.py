"""Batch throughput at 1 and 2 jobs, and the memory high-water mark of a worker (issue 8).

    python benchmarks/batch_throughput.py [--datasets scrapinghub-aeb wcxb] [--pages 400]

Writes the first ``--pages`` pages of the datasets into one JSONL file, then runs
``blockdex batch`` on it with ``--jobs 1`` and ``--jobs 2``, each in a fresh process so that
``ru_maxrss`` of the workers is measured per run. Prints pages/s, the speed-up of 2 jobs over 1,
and the peak RSS of a worker process (the largest over the run's workers).
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
import time
from itertools import islice
from pathlib import Path


def run_one(inputs: str, jobs: int) -> dict:
    from blockdex.batch import BatchConfig, run_batch

    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        summary = run_batch([inputs], out, BatchConfig(jobs=jobs, part_size=200), progress=False)
        seconds = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {
        "jobs": jobs,
        "pages": summary.pages,
        "ok": summary.ok,
        "seconds": seconds,
        "pages_per_second": summary.pages / seconds,
        "worker_peak_rss_mb": peak_kb / 1024,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--datasets", nargs="+", default=["scrapinghub-aeb", "wcxb"])
    ap.add_argument("--pages", type=int, default=400)
    ap.add_argument("--one", nargs=2, metavar=("INPUT", "JOBS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]))))
        return 0

    from blockdex.evaluate.datasets import load_dataset

    per = args.pages // len(args.datasets)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "pages.jsonl.gz"
        n = size = 0
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            for name in args.datasets:
                for page in islice(load_dataset(name), per):
                    html = page.html if isinstance(page.html, str) else page.html.decode("utf-8")
                    fh.write(json.dumps({"id": page.id, "url": page.url, "html": html}) + "\n")
                    n += 1
                    size += len(html)
        print(f"{n} pages, {size / n / 1024:.0f} KiB of HTML on average, {os.cpu_count()} cores")
        results = []
        for jobs in (1, 2):
            out = subprocess.run(
                [sys.executable, __file__, "--one", str(path), str(jobs)],
                capture_output=True,
                text=True,
                check=True,
            )
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    for r in results:
        print(
            f"jobs={r['jobs']}: {r['pages']} pages ({r['ok']} ok) in {r['seconds']:.1f} s = "
            f"{r['pages_per_second']:.1f} pages/s; worker peak RSS {r['worker_peak_rss_mb']:.0f} MB"
        )
    print(
        f"speed-up of 2 jobs over 1: {results[1]['pages_per_second'] / results[0]['pages_per_second']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
