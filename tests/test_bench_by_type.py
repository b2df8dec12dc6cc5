"""``blockdex bench --by-type``: wcxb's own scorer, and F1 with the fallback rate, per page type."""

from __future__ import annotations

import json
import runpy
import sys
from pathlib import Path

import pytest

import blockdex.evaluate.bench as bench_mod
from blockdex.cli import main
from blockdex.evaluate.metrics import PRF, wcxb_prf

EVAL = Path(__file__).parent / "data" / "eval"
BY_PAGE_TYPE = Path(__file__).parents[1] / "benchmarks" / "by_page_type.py"

PAGE_TEXT = "Opening hours and a map of the shop"
"""What a method that never returns empty-handed falls back to on a page with no main content."""


def test_wcxb_scorer_on_pages_with_no_main_content() -> None:
    # upstream: an empty reference scores 1.0 for an empty prediction, else 0.0 — on P, R and F1
    assert wcxb_prf("", "") == PRF(1.0, 1.0, 1.0)
    assert wcxb_prf("Menu", "") == PRF(0.0, 0.0, 0.0)
    assert (wcxb_prf(None, None).f1, wcxb_prf("", None).f1) == (1.0, 1.0)  # missing = empty
    assert wcxb_prf(" ... — ! ", "").f1 == 1.0  # no word is an empty output
    assert wcxb_prf("Menu", "").f1 == 0.0
    assert wcxb_prf("Menu", None).f1 == 0.0
    assert wcxb_prf("", "Bees make honey").f1 == 0.0


def test_wcxb_scorer_on_word_overlap() -> None:
    s = wcxb_prf("The cat sat on the MAT!", "the cat, sat")
    assert (s.precision, s.recall) == (0.5, 1.0)  # bags: "the" counts once in the reference
    assert s.f1 == pytest.approx(2 / 3)
    assert wcxb_prf("Hello, WORLD", "hello world").f1 == 1.0  # lower-cased \w+ tokens
    s = wcxb_prf("bees bees wasps", "bees honey")
    assert (s.precision, s.recall) == (pytest.approx(1 / 3), 0.5)


def _typed_dataset(path: Path) -> Path:
    """Four wcxb-like pages: an article and three products, two with no main content (one with
    an empty reference, one with none at all)."""
    html = "<html><body><nav>Home About</nav><p>{}</p></body></html>"
    rows = [
        ("a1", "article", "Bees make honey in hives."),
        ("p1", "product", ""),
        ("p2", "product", None),
        ("p3", "product", "A red kettle, 1.7 litres, 39 euros."),
    ]
    with path.open("w", encoding="utf-8") as f:
        for page_id, page_type, text in rows:
            rec = {
                "id": page_id,
                "html": html.format(text or PAGE_TEXT),
                "ground_truth_text": text,
                "page_type": page_type,
            }
            f.write(json.dumps(rec) + "\n")
    return path


def _fake_methods(name: str):
    """Methods whose outputs are known: the reference itself; nothing at all; the reference or,
    on a page with none, the page's text; the reference but a crash on page p1."""

    def run(page):
        if name == "silent":
            return ""
        if name == "fallback":
            return page.ground_truth or PAGE_TEXT
        if name == "crashy" and page.id == "p1":
            raise RuntimeError("peer crashed")
        return page.ground_truth or ""

    return run


@pytest.fixture
def typed_run(tmp_path: Path, monkeypatch, capsys) -> tuple[str, Path]:
    monkeypatch.setattr(bench_mod, "make_method", _fake_methods)
    dataset = _typed_dataset(tmp_path / "typed.jsonl")
    out = tmp_path / "out"
    args = ["bench", "--dataset", str(dataset), "--by-type", "--out", str(out)]
    assert main([*args, "--methods", "reference,silent,fallback,crashy"]) == 0
    return capsys.readouterr().out, out


def test_by_type_prints_wcxb_scores_per_type_and_all(typed_run) -> None:
    out, _ = typed_run
    lines = out.splitlines()
    # wcxb's scorer over all pages: a no-main-content page is 1 for an empty output, else 0;
    # a crash is 0 even there
    assert "| page type (pages) | reference | silent | fallback | crashy |" in lines
    assert "| product (3) | 1.000 | 0.667 | 0.333 | 0.667 |" in lines
    assert "| article (1) | 1.000 | 0.000 | 1.000 | 1.000 |" in lines
    assert "| all (4) | 1.000 | 0.500 | 0.500 | 0.750 |" in lines
    # product (most pages) before article, the all row last
    first = [ln.split(" (")[0] for ln in lines if ln.startswith(("| product (", "| article ("))]
    assert first[:2] == ["| product", "| article"]


def test_by_type_prints_f1_with_main_content_beside_the_fallback_rate(typed_run) -> None:
    out, _ = typed_run
    lines = out.splitlines()
    assert (
        "| page type (with / without main content) | reference F1 | reference fallback | "
        "silent F1 | silent fallback | fallback F1 | fallback fallback | crashy F1 | "
        "crashy fallback |"
    ) in lines
    assert (
        "| product (1 / 2) | 1.000 | 0% (0/2) | 0.000 | 0% (0/2) | 1.000 | 100% (2/2) | "
        "1.000 | 0% (0/2) |"
    ) in lines
    assert "| article (1 / 0) | 1.000 | – | 0.000 | – | 1.000 | – | 1.000 | – |" in lines
    assert (
        "| all (2 / 2) | 1.000 | 0% (0/2) | 0.000 | 0% (0/2) | 1.000 | 100% (2/2) | "
        "1.000 | 0% (0/2) |"
    ) in lines
    # the page with no reference at all is out of the overall table's F1, in wcxb's
    assert "1 typed page(s) have no reference text at all" in out


def test_by_type_tables_are_saved_and_the_benchmark_script_prints_them_again(
    typed_run, monkeypatch, capsys
) -> None:
    _, out_dir = typed_run
    saved = json.loads((out_dir / "results.json").read_text())
    (dataset,) = saved
    by_type = saved[dataset]["by_type"]
    assert list(by_type) == ["product", "article", "all"]
    assert by_type["product"]["fallback"]["wcxb_f1"] == pytest.approx(1 / 3)
    assert by_type["all"]["fallback"]["fallback_rate"] == 1.0
    assert by_type["all"]["crashy"]["wcxb_f1"] == 0.75
    assert "| all (4) | 1.000 | 0.500 | 0.500 | 0.750 |" in (out_dir / "results.md").read_text()

    argv = ["by_page_type.py", "--results", str(out_dir), "--dataset", dataset]
    monkeypatch.setattr(sys, "argv", [*argv, "--methods", "silent,fallback"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(BY_PAGE_TYPE), run_name="__main__")
    assert done.value.code == 0
    again = capsys.readouterr().out.splitlines()
    assert "| page type (pages) | silent | fallback |" in again
    assert "| product (3) | 0.667 | 0.333 |" in again
    assert "| all (2 / 2) | 0.000 | 0% (0/2) | 1.000 | 100% (2/2) |" in again


def test_by_type_on_a_dataset_without_types_says_so_in_one_line(capsys) -> None:
    assert main(["bench", "--dataset", str(EVAL), "--methods", "all", "--by-type"]) == 0
    out = capsys.readouterr().out
    assert "| all |" in out  # the usual table is still there
    said = [ln for ln in out.splitlines() if "page type" in ln]
    assert len(said) == 1 and "no page carries a page type" in said[0]
    assert "| page type" not in out


def test_oracle_keeps_nothing_on_a_page_with_no_main_content(tmp_path: Path, capsys) -> None:
    dataset = _typed_dataset(tmp_path / "typed.jsonl")
    assert main(["bench", "--dataset", str(dataset), "--methods", "oracle", "--by-type"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "| product (1 / 2) | 1.000 | 0% (0/2) |" in lines
    assert "| all (4) | 1.000 |" in lines
