"""Load test of ``blockdex serve``: many concurrent clients posting a real page to /v1/extract.

Starts the server from this working tree in a subprocess, runs ``--clients`` asyncio clients
(httpx) for ``--seconds``, and prints requests/s, p50/p99 latency of answered requests, the
error count (anything but 200 and the server's deliberate 503s, which are counted separately)
and the server's peak resident memory (read from /proc, whole process tree).

    python benchmarks/load.py                       # 100 clients, 30 s, tests/data/article.html
    python benchmarks/load.py --clients 20 --seconds 10 --max-concurrency 8

Clients that get 503 wait for ``Retry-After`` (scaled by ``--retry-scale``) like a polite client
would; with ``--retry-scale 0`` they hammer the server again at once. Note that the clients run
on the same machine as the server and compete with it for the CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry))
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
        stack.extend(children.get(p, []))
    return total


class PeakRSS(threading.Thread):
    def __init__(self, pid: int, interval: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.pid, self.interval, self.peak = pid, interval, 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, process_tree_rss(self.pid))
            self.stop.wait(self.interval)


def start_server(args: argparse.Namespace, port: int) -> subprocess.Popen:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    cmd = [
        sys.executable,
        "-m",
        "blockdex",
        "serve",
        "--port",
        str(port),
        "--workers",
        str(args.workers),
        "--log-level",
        "warning",
    ]
    if args.max_concurrency:
        cmd += ["--max-concurrency", str(args.max_concurrency)]
    return subprocess.Popen(cmd, env=env)


def wait_ready(base: str, proc: subprocess.Popen, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with status {proc.returncode}")
        try:
            return httpx.get(base + "/healthz", timeout=2).json()
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit("the server did not become ready")


async def client_loop(
    client: httpx.AsyncClient,
    body: bytes,
    stop_at: float,
    stats: dict,
    retry_scale: float,
) -> None:
    headers = {"content-type": "application/json"}
    while time.monotonic() < stop_at:
        t0 = time.perf_counter()
        try:
            resp = await client.post("/v1/extract", content=body, headers=headers)
        except httpx.HTTPError as exc:
            stats["errors"] += 1
            stats["error_kinds"][type(exc).__name__] = (
                stats["error_kinds"].get(type(exc).__name__, 0) + 1
            )
            continue
        elapsed = time.perf_counter() - t0
        if resp.status_code == 200:
            stats["latencies"].append(elapsed)
        elif resp.status_code == 503:
            stats["rejected"] += 1
            wait = float(resp.headers.get("retry-after", "1")) * retry_scale
            if wait:
                await asyncio.sleep(wait * random.uniform(0.5, 1.0))
        else:
            stats["errors"] += 1
            key = f"HTTP {resp.status_code}"
            stats["error_kinds"][key] = stats["error_kinds"].get(key, 0) + 1


async def run_load(base: str, args: argparse.Namespace) -> dict:
    page = Path(args.page).read_text(encoding="utf-8")
    body = json.dumps({"html": page}).encode()
    stats: dict = {"latencies": [], "rejected": 0, "errors": 0, "error_kinds": {}}
    limits = httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        started = time.monotonic()
        stop_at = started + args.seconds
        await asyncio.gather(
            *(
                client_loop(client, body, stop_at, stats, args.retry_scale)
                for _ in range(args.clients)
            )
        )
        stats["wall"] = time.monotonic() - started
    return stats


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


def histogram_quantiles(metrics: str, route: str, qs: tuple[float, ...]) -> list[str]:
    """Upper bucket bounds holding the ``qs`` quantiles of the server's latency histogram."""
    prefix = f'blockdex_http_request_duration_seconds_bucket{{route="{route}",le="'
    buckets = [
        (line[len(prefix) :].split('"', 1)[0], float(line.rsplit(" ", 1)[1]))
        for line in metrics.splitlines()
        if line.startswith(prefix)
    ]
    total = buckets[-1][1] if buckets else 0
    return [next((le for le, n in buckets if n >= q * total), "+Inf") for q in qs]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--page", default=str(ROOT / "tests" / "data" / "article.html"))
    ap.add_argument("--workers", type=int, default=1, help="server worker processes")
    ap.add_argument("--max-concurrency", type=int, default=None, help="server slots per worker")
    ap.add_argument("--retry-scale", type=float, default=1.0, help="x Retry-After after a 503")
    args = ap.parse_args()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = start_server(args, port)
    try:
        health = wait_ready(base, proc)
        idle_rss = process_tree_rss(proc.pid)
        monitor = PeakRSS(proc.pid)
        monitor.start()
        stats = asyncio.run(run_load(base, args))
        monitor.stop.set()
        monitor.join()
        metrics = httpx.get(base + "/metrics", timeout=10).text
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()

    lat = stats["latencies"]
    print(f"page: {args.page} ({Path(args.page).stat().st_size:,} bytes)")
    print(
        f"server: {args.workers} worker(s), {health['capacity']} slots each; "
        f"{args.clients} clients for {stats['wall']:.1f} s on {os.cpu_count()} CPUs"
    )
    print(f"ok responses:     {len(lat):,}  ({len(lat) / stats['wall']:.1f} requests/s)")
    print(
        f"latency p50/p99:  {percentile(lat, 50) * 1000:.0f} ms / {percentile(lat, 99) * 1000:.0f} ms"
    )
    if lat:
        print(f"latency mean/max: {statistics.fmean(lat) * 1000:.0f} ms / {max(lat) * 1000:.0f} ms")
    print(f"503 (saturated):  {stats['rejected']:,}")
    print(f"errors:           {stats['errors']:,} {stats['error_kinds'] or ''}")
    print(f"server RSS:       idle {idle_rss / 2**20:.0f} MiB, peak {monitor.peak / 2**20:.0f} MiB")
    served = sum(
        float(line.rsplit(" ", 1)[1])
        for line in metrics.splitlines()
        if line.startswith('blockdex_http_requests_total{route="/v1/extract"')
    )
    print(f"server counted:   {served:.0f} /v1/extract requests (/metrics)")
    p50, p99 = histogram_quantiles(metrics, "/v1/extract", (0.5, 0.99))
    print(f"server-side p50/p99 (histogram bucket bounds, all statuses): <= {p50} s / <= {p99} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
