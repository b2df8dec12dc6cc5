"""Hostile and broken pages never crash, hang or blow up (issue #10).

Every case of :mod:`tests.adversarial.corpus` goes through ``blockdex.extract(…, output="json")``
in a forked child with a hard timeout (a hang fails the test instead of blocking CI). The page
must either come back as valid UTF-8 JSON whose selection lies within the page's blocks, or
raise a :class:`blockdex.errors.BlockdexError` with a message. Slow cases are marked ``slow``.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.adversarial import corpus
from tests.adversarial.harness import run_isolated

# Generous bounds: the fast cases take < 2 s each on a shared 2-core machine.
FAST_TIMEOUT = 30.0
SLOW_TIMEOUT = 180.0
REGEX_PROBE_SECONDS = 5.0

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def _warm_pipeline() -> None:
    """Load the model once in the parent, so every forked child starts warm."""
    import blockdex

    blockdex.extract("<p>warm up</p>")


def _assert_sane(report: dict, name: str) -> None:
    outcome = report["outcome"]
    assert outcome not in ("crash", "timeout"), f"{name}: {report.get('error', outcome)}\n" + str(
        report.get("tb", "")
    )


def _params(fast: bool) -> list:
    marks = () if fast else (pytest.mark.slow,)
    return [pytest.param(name, marks=marks, id=name) for name in corpus.names(fast)]


@pytest.mark.parametrize("name", _params(True) + _params(False))
def test_extract_survives(name: str) -> None:
    case = corpus.build(name)
    timeout = FAST_TIMEOUT if case.fast else SLOW_TIMEOUT
    report = run_isolated(case.data, case.content_type, timeout=timeout)
    _assert_sane(report, name)


# A representative subset through the command line (in-process ``cli.main``, forked).
CLI_CASES = [
    "random_bytes",
    "truncated_utf8",
    "utf16_without_bom",
    "nested_div_100k",
    "many_attributes",
    "jsonld_deep_nesting",
    "probe_has_tag_in_write",
    "cjk_rtl_emoji",
]


@pytest.mark.parametrize("name", CLI_CASES)
def test_cli_survives(name: str) -> None:
    case = corpus.build(name)
    report = run_isolated(case.data, timeout=FAST_TIMEOUT, cli=True)
    _assert_sane(report, name)
    if report["outcome"] == "error":
        lines = report["stderr"].strip().splitlines()
        assert lines[-1].startswith("blockdex: error: "), report["stderr"]


def test_cli_subprocess_stdin_and_warnings() -> None:
    """The real executable: a limit warning reaches stderr, the output stays valid."""
    data = corpus.build("nested_div_100k").data
    proc = subprocess.run(
        [sys.executable, "-m", "blockdex", "extract", "-", "--format", "text"],
        input=data,
        capture_output=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    proc.stdout.decode("utf-8")
    assert b"ParseLimits.max_depth" in proc.stderr


def test_cli_subprocess_error_is_one_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "blockdex", "extract", "-", "--max-bytes", "1000"],
        input=corpus.build("nested_div_1k").data,
        capture_output=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 1
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("blockdex: error: "), lines


# -- the limits degrade as documented --------------------------------------------------------------
def _json(html: bytes | str, **config) -> dict:
    from blockdex.extract import ExtractConfig, Extractor

    out = Extractor(config=ExtractConfig(**config)).extract(html, output="json")
    return json.loads(out)


def test_depth_limit_flattens_with_warning() -> None:
    record = _json(corpus.build("nested_div_100k").data)
    assert any("ParseLimits.max_depth" in w for w in record["warnings"])
    assert "The committee met" in record["markdown"]


def test_small_pages_are_checked_after_parsing_with_the_same_result() -> None:
    """Pages under PARSE_FIRST_MAX_TAGS are parsed first and their tree checked; a violation
    falls back to the pre-parse scan, so the result is the scan's."""
    from blockdex.parse import PARSE_FIRST_MAX_TAGS, bound_markup, parse_html

    deep = "<html><body>" + "<div>" * 600 + "<p>deep text</p>" + "</div>" * 600 + "</body></html>"
    crowded = (
        "<html><body><div " + " ".join(f"a{k}=1" for k in range(1_200)) + ">x</div></body></html>"
    )
    for page, limit in ((deep, "max_depth"), (crowded, "max_attributes")):
        assert page.count("<") <= PARSE_FIRST_MAX_TAGS
        doc = parse_html(page)
        assert any(f"ParseLimits.{limit}" in w for w in doc.warnings), doc.warnings
        assert doc.html_chars == len(bound_markup(page)[0]) < len(page)
    # a page within the limits is parsed once, unchanged and without warnings
    fine = "<html><body>" + "<div>" * 400 + "<p>text</p>" + "</div>" * 400 + "</body></html>"
    doc = parse_html(fine)
    assert not doc.warnings and doc.html_chars == len(fine)


def test_node_limit_cuts_with_warning() -> None:
    from blockdex.parse import ParseLimits

    html = "<p>first paragraph kept</p>" + "<p><span>x</span></p>" * 2000
    record = _json(html, parse=ParseLimits(max_dom_nodes=500))
    assert any("ParseLimits.max_dom_nodes" in w for w in record["warnings"])
    assert record["n_blocks"] < 500


def test_block_limits_with_warning() -> None:
    from blockdex.segment import SegmentConfig

    record = _json("<p>" + "x" * 100_000 + "</p>", segment=SegmentConfig(max_block_chars=1000))
    assert record["n_blocks"] == 100
    record = _json(
        "<p>" + "word " * 10_000 + "</p>",
        segment=SegmentConfig(max_blocks=7, max_block_tokens=50),
    )
    assert record["n_blocks"] == 7
    assert any("SegmentConfig.max_blocks" in w for w in record["warnings"])


def test_time_budget_truncates_with_warning() -> None:
    page = corpus.build("tiny_tables").data
    record = _json(page, time_budget_s=0.0)
    assert any("time budget" in w for w in record["warnings"])


def test_input_limit_raises_page_too_large() -> None:
    from blockdex.errors import PageTooLarge
    from blockdex.parse import ParseLimits

    with pytest.raises(PageTooLarge, match="max_input_bytes"):
        _json(b"<p>" + b"a" * 5000, parse=ParseLimits(max_input_bytes=1000))


def test_ordinary_nesting_is_untouched() -> None:
    """Optional end tags and unclosed inline tags on a real-looking page trigger nothing."""
    cells = "".join(f"<td><font>cell {k}<div>inner {k}</div>" for k in range(3000))
    items = "".join(f"<li><span>item {k}" for k in range(3000))
    html = f"<table><tr>{cells}</table><ul>{items}</ul>" + "<p>para" * 3000
    record = _json(html)
    assert not record.get("warnings") or not any("ParseLimits" in w for w in record["warnings"])


# -- every regex in src/blockdex against a backtracking probe ---------------------------------------
def _probe_all_regexes() -> list[tuple[str, float]]:
    timings = []
    for module, attr, method, subject in corpus.REGEX_PROBES:
        rx = getattr(importlib.import_module(f"blockdex.{module}"), attr)
        s = subject()
        t0 = time.perf_counter()
        result = getattr(rx, method)(s)
        if method == "finditer":
            list(result)
        timings.append((f"{module}.{attr}", time.perf_counter() - t0))
    return timings


def _regex_child(conn) -> None:  # pragma: no cover - runs in the forked child
    conn.send(_probe_all_regexes())
    conn.close()


def test_regexes_have_no_catastrophic_backtracking() -> None:
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_regex_child, args=(child,))
    proc.start()
    child.close()
    ready = parent.poll(120)
    if not ready:
        proc.kill()
    proc.join()
    assert ready, "a regex probe did not finish within 120 s (catastrophic backtracking)"
    slow = [(name, round(t, 2)) for name, t in parent.recv() if t > REGEX_PROBE_SECONDS]
    assert not slow, f"regexes slower than {REGEX_PROBE_SECONDS}s on their probe: {slow}"


def test_every_module_regex_has_a_probe() -> None:
    """A new module-level pattern in src/blockdex must get a probe in corpus.REGEX_PROBES."""
    import re

    probed = {(m, a) for m, a, _, _ in corpus.REGEX_PROBES}
    src = ROOT / "src" / "blockdex"
    skip_dirs = {"baselines"}  # the classic methods have their own test modules
    missing = []
    for path in src.rglob("*.py"):
        if skip_dirs & set(path.relative_to(src).parts):
            continue
        module = ".".join(path.relative_to(src).with_suffix("").parts)
        for m in re.finditer(r"^(_?[A-Z][A-Z0-9_]*_RE)\s*=\s*re\.compile", path.read_text(), re.M):
            if (module, m.group(1)) not in probed:
                missing.append(f"{module}.{m.group(1)}")
    assert not missing, f"add backtracking probes for: {missing}"
