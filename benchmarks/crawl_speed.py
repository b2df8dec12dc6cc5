"""Pages per second of ``blockdex crawl`` on a local site, with one and with two extraction
workers, and how the work splits between fetching and extraction.

The site (``--pages`` static pages of ~600 words, each linking to a dozen others, written to a
temporary directory) is served by ``python -m http.server`` in a process of its own, on
loopback, so that serving does not share the crawler's interpreter. Politeness is off
(``delay=0``, 8 requests in flight): the figure is the crawler's own speed, not a site's.

Reported per run: wall-clock pages/s; the steady rate (pages/s after the first page is
recorded, i.e. without the workers' start-up); per page, the CPU time of the crawler's own
process (fetching: HTTP, the address checks, the event loop, writing the files and records)
and the extraction workers' time (extraction, links, SimHash), and the share of each in their
sum; and the mean latency of a fetch (mostly waiting for the server, overlapped 8 at a time).

    python benchmarks/crawl_speed.py [--pages 300] [--rounds 1] [--jobs 1,2]
"""

from __future__ import annotations

import argparse
import random
import re
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from blockdex.crawl import CrawlConfig, run_crawl
from blockdex.fetch import FetchConfig

WORDS = re.findall(
    r"\w+",
    "river harbour lantern meadow quarry orchard beacon granite willow compass ferry "
    "summit cellar market bridge tower garden valley forest island canal station library "
    "theatre museum chapel mill farm school bakery kiln forge loom barn pier dock wharf "
    "lighthouse keeper baker miller weaver smith carpenter mason farmer fisher sailor "
    "painter teacher counted carried painted mended built opened closed watched measured "
    "gathered repaired quiet bright narrow ancient crowded steep gentle rusty golden "
    "hollow broad northern",
)


def write_site(root: Path, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    for i in range(n):
        links = sorted({rng.randrange(n) for _ in range(12)} | {(i + 1) % n})
        nav = "".join(f'<li><a href="/p{j}.html">Page {j}</a></li>' for j in links)
        paragraphs = "".join(
            "<p>"
            + " ".join(
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(9, 15))).capitalize() + "."
                for _ in range(6)
            )
            + "</p>"
            for _ in range(7)
        )
        html = (
            f"<!doctype html><html><head><meta charset=utf-8><title>Page {i} | Bench site"
            f"</title></head><body><header><a href='/'>Bench site</a></header>"
            f"<nav><ul>{nav}</ul></nav><main><article><h1>Page {i}</h1>{paragraphs}"
            f"</article></main><footer>Copyright the bench site</footer></body></html>"
        )
        (root / f"p{i}.html").write_text(html, encoding="utf-8")
    (root / "index.html").write_text(
        "<html><body><a href='/p0.html'>Start</a></body></html>", encoding="utf-8"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit("the local site did not start")


def first_record_time(path: Path, stop: threading.Event, found: list[float]) -> None:
    while not stop.is_set():
        if path.exists() and path.stat().st_size > 0:
            found.append(time.perf_counter())
            return
        time.sleep(0.005)


def crawl_once(base: str, jobs: int, out: Path) -> dict[str, float]:
    cfg = CrawlConfig(
        depth=1000,
        max_pages=0,
        sitemaps=False,
        delay=0.0,
        per_host=8,
        concurrency=16,
        jobs=jobs,
        fetch=FetchConfig(max_seconds=60.0, allow_private=True),
    )
    stop, found = threading.Event(), []
    watcher = threading.Thread(
        target=first_record_time, args=(out / "pages.jsonl", stop, found), daemon=True
    )
    watcher.start()
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    summary = run_crawl([base + "/"], out, cfg, progress=False)
    t1 = time.perf_counter()
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    crawler_cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    stop.set()
    pages = summary.pages
    first = found[0] if found else t0
    work = crawler_cpu + summary.extract_seconds
    return {
        "pages": pages,
        "errors": sum(summary.errors.values()),
        "seconds": t1 - t0,
        "pages_per_s": pages / (t1 - t0),
        "steady_pages_per_s": (pages - 1) / (t1 - first) if t1 > first else 0.0,
        "crawler_cpu_ms": 1000 * crawler_cpu / max(1, pages),
        "extract_ms": 1000 * summary.extract_seconds / max(1, pages),
        "fetch_share": crawler_cpu / work if work else 0.0,
        "latency_ms": 1000 * summary.fetch_seconds / max(1, summary.fetched),
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--pages", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--jobs", default="1,2", help="extraction workers to compare, comma-separated")
    args = ap.parse_args()
    jobs_list = [int(j) for j in args.jobs.split(",")]

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "site"
        root.mkdir()
        write_site(root, args.pages)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
            cwd=root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for(port)
            base = f"http://127.0.0.1:{port}"
            print(f"{args.pages + 1} pages at {base}; rounds alternate the worker counts")
            header = (
                f"{'jobs':>4} {'round':>5} {'pages':>5} {'err':>3} {'wall s':>7} {'pages/s':>8}"
                f" {'steady/s':>8} | per page: {'crawler CPU ms':>14} {'extraction ms':>13}"
                f" {'fetch:extract':>13} {'fetch latency ms':>16}"
            )
            print(header)
            for r in range(args.rounds):
                for jobs in jobs_list:
                    out = Path(tmp) / f"out-{jobs}-{r}"
                    m = crawl_once(base, jobs, out)
                    share = f"{100 * m['fetch_share']:.0f}:{100 - 100 * m['fetch_share']:.0f}"
                    print(
                        f"{jobs:>4} {r + 1:>5} {m['pages']:>5} {m['errors']:>3}"
                        f" {m['seconds']:>7.2f} {m['pages_per_s']:>8.1f}"
                        f" {m['steady_pages_per_s']:>8.1f} |           {m['crawler_cpu_ms']:>14.1f}"
                        f" {m['extract_ms']:>13.1f} {share:>13} {m['latency_ms']:>16.1f}"
                    )
        finally:
            server.terminate()
            server.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
