"""Run one adversarial case through blockdex and check what a user would see.

:func:`check_output` runs in-process and returns a small JSON-able report; :func:`run_isolated`
runs it in a forked child with a hard timeout, so a hang (a regex that backtracks, a C loop)
fails a test instead of blocking CI, and a crash of the interpreter is reported, not fatal.

``python -m tests.adversarial.harness NAME [--cli]`` (or ``--file PATH``) runs one case in this
process and prints the report as JSON (the benchmark uses it to measure each case in a fresh
process).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import tempfile
import time
import traceback
from typing import Any


def validate_json_output(out: object) -> dict[str, Any]:
    """Assert the JSON output's invariants; returns the parsed record."""
    assert isinstance(out, str), f"output is {type(out).__name__}, not str"
    out.encode("utf-8")  # raises on lone surrogates
    record = json.loads(out)
    n = record["n_blocks"]
    assert isinstance(n, int) and n >= 0
    for a, b in record["intervals"]:
        assert 0 <= a <= b < n, f"interval [{a},{b}] outside [0,{n})"
    for block in record.get("blocks", []):
        assert 0 <= block["index"] < n
    for w in record.get("warnings", []):
        assert isinstance(w, str)
    return record


def check_output(data: bytes, content_type: str | None = None) -> dict[str, Any]:
    """Extract ``data`` as JSON; report ``ok`` or the BlockdexError kind, else ``crash``."""
    from blockdex.errors import BlockdexError
    from blockdex.extract import Extractor, extract

    t0 = time.perf_counter()
    report: dict[str, Any] = {"bytes": len(data)}
    try:
        if content_type is None:
            out = extract(data, output="json")
        else:
            out = Extractor().extract(data, output="json", content_type=content_type)
        record = validate_json_output(out)
        report.update(
            outcome="ok",
            n_blocks=record["n_blocks"],
            selected=len(record.get("blocks", [])),
            output_chars=len(out),
            warnings=record.get("warnings", []),
        )
    except BlockdexError as exc:
        report.update(outcome=exc.kind, message=str(exc))
        assert str(exc).strip(), "a BlockdexError needs a message"
    except BaseException as exc:
        report.update(
            outcome="crash", error=f"{type(exc).__name__}: {exc}"[:500], tb=traceback.format_exc()
        )
    report["seconds"] = round(time.perf_counter() - t0, 3)
    return report


def check_cli(data: bytes) -> dict[str, Any]:
    """Run ``blockdex extract FILE --format json -o OUT`` in-process; report exit status."""
    import contextlib
    import io

    from blockdex import cli

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "page.html")
        dst = os.path.join(tmp, "out.json")
        with open(src, "wb") as f:
            f.write(data)
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                status = cli.main(["extract", src, "--format", "json", "-o", dst])
        except BaseException as exc:
            return {"outcome": "crash", "error": f"{type(exc).__name__}: {exc}"[:500]}
        report: dict[str, Any] = {"status": status, "stderr": err.getvalue()}
        if status == 0:
            with open(dst, encoding="utf-8") as f:
                validate_json_output(f.read())
            report["outcome"] = "ok"
        else:
            lines = err.getvalue().strip().splitlines()
            report["outcome"] = "error" if status == 1 and lines else "crash"
        return report


def _child(conn: Any, data: bytes, content_type: str | None, cli: bool) -> None:
    try:
        report = check_cli(data) if cli else check_output(data, content_type)
    except BaseException as exc:
        report = {"outcome": "crash", "error": f"{type(exc).__name__}: {exc}"[:500]}
    conn.send(report)
    conn.close()


def run_isolated(
    data: bytes, content_type: str | None = None, *, timeout: float = 60.0, cli: bool = False
) -> dict[str, Any]:
    """:func:`check_output` (or :func:`check_cli`) in a forked child killed after ``timeout``."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, data, content_type, cli))
    t0 = time.perf_counter()
    proc.start()
    child.close()
    report: dict[str, Any] | None = None
    if parent.poll(timeout):
        try:
            report = parent.recv()
        except EOFError:
            report = None
    proc.join(5)
    if proc.is_alive():
        proc.kill()
        proc.join()
    if report is None:
        if time.perf_counter() - t0 >= timeout:
            return {"outcome": "timeout", "seconds": timeout}
        return {"outcome": "crash", "error": f"child died with exit code {proc.exitcode}"}
    return report


def main(argv: list[str]) -> int:
    """``NAME`` (a corpus case) or ``--file PATH [--content-type CT]``; ``--cli`` for the CLI."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tests.adversarial.harness")
    parser.add_argument("name", nargs="?")
    parser.add_argument("--file")
    parser.add_argument("--content-type")
    parser.add_argument("--content-type-file", help="read the Content-Type from this file")
    parser.add_argument("--cli", action="store_true")
    args = parser.parse_args(argv)
    if args.file:
        with open(args.file, "rb") as f:
            data, content_type = f.read(), args.content_type
        if args.content_type_file:
            with open(args.content_type_file, encoding="utf-8") as f:
                content_type = f.read()
    else:
        from tests.adversarial.corpus import build

        case = build(args.name)
        data, content_type = case.data, case.content_type
    report = check_cli(data) if args.cli else check_output(data, content_type)
    report.pop("tb", None)
    report["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(report, ensure_ascii=False))
    return 0


def peak_rss_mb() -> float | None:
    """This process's peak resident set (``VmHWM``) in MB, or None off Linux.

    Unlike ``ru_maxrss``, ``VmHWM`` belongs to the address space created at ``exec``, so it does
    not inherit the peak of the (possibly large) process that forked this one.
    """
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
