"""Time and peak memory of every adversarial corpus case, each in a fresh process (issue #10).

    python benchmarks/adversarial.py                 # all cases, fast and slow
    python benchmarks/adversarial.py --fast          # only the fast ones
    python benchmarks/adversarial.py --out table.md  # also write the Markdown table

For each case of ``tests/adversarial/corpus.py`` the page is written to a temporary file and a
new interpreter runs ``blockdex.extract(…, output="json")`` on it (``tests.adversarial.harness``).
The table gives the input size, the outcome (``ok`` or the BlockdexError kind; ``crash`` and
``timeout`` are failures), the wall time of the child, its peak RSS (``VmHWM``, reported by the
child; ``ru_maxrss`` from ``os.wait4`` where /proc is missing), and the peak-RSS increase over a child that extracts a tiny page, divided by the
input size: the memory factor documented in docs/limits.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.adversarial import corpus  # noqa: E402


def run_child(data: bytes, content_type: str | None, timeout: float) -> dict:
    """Extract ``data`` in a fresh interpreter; its report plus wall time and peak RSS (MB).

    The child is reaped with ``os.wait4`` so its own ``ru_maxrss`` is read, not a maximum over
    all children as ``RUSAGE_CHILDREN`` would give.
    """
    with tempfile.NamedTemporaryFile(suffix=".html", delete=False) as f:
        f.write(data)
        path = f.name
    cmd = [sys.executable, "-m", "tests.adversarial.harness", "--file", path]
    if content_type:  # in a file: a hostile header may exceed the argument size limit
        with open(path + ".ctype", "w", encoding="utf-8") as f:
            f.write(content_type)
        cmd += ["--content-type-file", path + ".ctype"]
    timed_out = False
    with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out_f, stderr=err_f)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() - t0 > timeout:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                timed_out = True
                break
            time.sleep(0.02)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        os.unlink(path)
        if content_type:
            os.unlink(path + ".ctype")
        out_f.seek(0)
        err_f.seek(0)
        out, err = out_f.read(), err_f.read()
    rss_mb = usage.ru_maxrss / 1024
    if timed_out:
        return {"outcome": "timeout", "wall": wall, "rss_mb": rss_mb}
    try:
        report = json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        report = {"outcome": "crash", "error": err.decode(errors="replace")[-300:]}
    # The child's own VmHWM when it reported one: ru_maxrss of an exec'd child also counts the
    # peak of this (forking) process, which holds the generated pages.
    report.update(wall=wall, rss_mb=report.get("peak_rss_mb") or rss_mb)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fast", action="store_true", help="only the fast cases")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per case")
    parser.add_argument("--out", help="also write the Markdown table to this file")
    parser.add_argument("cases", nargs="*", help="case names (default: all)")
    args = parser.parse_args(argv)
    names = args.cases or corpus.names(True if args.fast else None)

    base = run_child(b"<html><body><p>hello world</p></body></html>", None, args.timeout)
    base_mb = base["rss_mb"]
    rows = [
        "| case | fast | input | outcome | wall s | peak RSS MB | RSS - base MB | ÷ input |",
        "|---|---|---:|---|---:|---:|---:|---:|",
    ]
    print(f"baseline (tiny page): peak RSS {base_mb:.0f} MB, wall {base['wall']:.2f} s")
    print(rows[0])
    print(rows[1])
    failures = 0
    for name in names:
        case = corpus.build(name)
        r = run_child(case.data, case.content_type, args.timeout)
        ratio = (r["rss_mb"] - base_mb) * 1024 * 1024 / max(len(case.data), 1)
        ratio_text = f"{max(ratio, 0):.1f}" if len(case.data) >= 1 << 20 else "–"
        outcome = r["outcome"]
        failures += outcome in ("crash", "timeout")
        row = (
            f"| {name} | {'yes' if case.fast else 'no'} | {_size(len(case.data))} | {outcome} "
            f"| {r['wall']:.2f} | {r['rss_mb']:.0f} | {max(r['rss_mb'] - base_mb, 0):.0f} "
            f"| {ratio_text} |"
        )
        rows.append(row)
        print(row, flush=True)
    if args.out:
        Path(args.out).write_text(
            f"Baseline child (tiny page): peak RSS {base_mb:.0f} MB.\n\n" + "\n".join(rows) + "\n"
        )
    return 1 if failures else 0


def _size(n: int) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


if __name__ == "__main__":
    sys.exit(main())
