"""The command line: outputs, and one clear line for every kind of bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from blockdex.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_extract_prints_markdown(capsys, data_dir: Path) -> None:
    code, out, err = run(capsys, "extract", str(data_dir / "article.html"))
    assert code == 0, err
    assert "# How Tidal Power Plants Store Energy" in out
    assert "## Pumping at slack water" in out


@pytest.mark.parametrize("fmt", ["markdown", "text", "html", "json"])
def test_every_format(capsys, data_dir: Path, fmt: str) -> None:
    code, out, err = run(capsys, "extract", str(data_dir / "article.html"), "--format", fmt)
    assert code == 0, err
    assert "slack water" in out
    if fmt == "json":
        assert json.loads(out)["title"]


def test_blocks_lists_numbered_blocks(capsys, data_dir: Path) -> None:
    code, out, _ = run(capsys, "blocks", str(data_dir / "article.html"))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("[0] <")
    code, out, _ = run(capsys, "blocks", str(data_dir / "article.html"), "--json")
    assert json.loads(out)


def test_stdin_and_output_file(monkeypatch, capsys, data_dir: Path, tmp_path: Path) -> None:
    import io

    data = (data_dir / "article.html").read_bytes()
    monkeypatch.setattr(sys, "stdin", type("S", (), {"buffer": io.BytesIO(data)})())
    out_file = tmp_path / "out.md"
    code, _, err = run(capsys, "extract", "-", "-o", str(out_file), "--format", "text")
    assert code == 0, err
    assert "slack water" in out_file.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"\x89PNG\r\n\x1a\n" + bytes(200), "PNG"),
        (bytes(range(256)) * 20, "binary"),
        (b"name,price\nwidget,3\n", "no HTML tags"),
    ],
)
def test_bad_files_give_one_clear_line(
    capsys, tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "input.html"
    path.write_bytes(content)
    code, out, err = run(capsys, "extract", str(path))
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and err.startswith("blockdex: error:") and message in err


def test_missing_file_and_directory(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "extract", str(tmp_path / "nope.html"))
    assert code == 1 and "no such file" in err
    code, _, err = run(capsys, "extract", str(tmp_path))
    assert code == 1 and "directory" in err


def test_unknown_predictor_lists_the_available_ones(capsys, data_dir: Path) -> None:
    code, _, err = run(capsys, "extract", str(data_dir / "article.html"), "--predictor", "nope")
    assert code == 1 and "unknown" in err and "all" in err
    assert "classic methods: " in err and "crunch" in err  # they run through extract too


def test_options_of_another_predictor_are_an_error_not_a_traceback(capsys, data_dir: Path) -> None:
    page = str(data_dir / "article.html")
    code, out, err = run(capsys, "extract", page, "--llm-url", "http://127.0.0.1:9/v1")
    assert code == 1 and out == ""
    assert err == "blockdex: error: --llm-url applies only to --predictor llm\n"
    code, _, err = run(capsys, "extract", page, "-q", "tides", "--llm-model", "m")
    assert code == 1 and "--llm-model applies only to --predictor llm" in err
    # the Python API says the same in its own words
    from blockdex.errors import BlockdexError
    from blockdex.extract import Extractor

    with pytest.raises(BlockdexError, match="predictor 'content' does not take 'llm_url'"):
        Extractor(llm_url="http://127.0.0.1:9/v1").run("<p>A short page of prose.</p>")


def test_the_oracle_without_ground_truth_says_why_it_kept_nothing(capsys, data_dir: Path) -> None:
    code, _, err = run(capsys, "extract", str(data_dir / "article.html"), "-p", "oracle")
    assert code == 0 and "the oracle keeps the blocks it is given and was given none" in err


def test_no_comments_flag(capsys, data_dir: Path) -> None:
    # a page of forum posts in comment-named elements: kept anyway, with a warning that only
    # the option produces (the filter itself: tests/test_content.py)
    page = str(data_dir / "pages" / "all-discussion.html")
    kept_anyway = "every kept block is inside a comment or discussion section"
    code, out, err = run(capsys, "extract", page, "-f", "text")
    assert code == 0 and "Post 5" in out and kept_anyway not in err
    code, out, err = run(capsys, "extract", page, "--no-comments", "-f", "text")
    assert code == 0 and "Post 5" in out and kept_anyway in err
    code, _, err = run(capsys, "extract", page, "--no-comments", "-q", "pump")
    assert code == 1 and "--no-comments applies only to the main-content model" in err


def test_methods_lists_predictors(capsys) -> None:
    code, out, _ = run(capsys, "methods")
    assert code == 0 and "all" in out and "oracle" in out


def test_no_command_prints_help(capsys) -> None:
    code, _, err = run(capsys)
    assert code == 2 and "extract" in err


def test_console_script_runs(data_dir: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "blockdex", "extract", str(data_dir / "article.html"), "-f", "text"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Tidal" in proc.stdout


def test_limit_flags_reach_the_parser(capsys, tmp_path: Path) -> None:
    page = tmp_path / "deep.html"
    body = (
        "<div>" * 40
        + "<p>Deep text that a reader sees, with a sentence or two.</p>"
        + "</div>" * 40
    )
    many = "".join(f"<p>Paragraph number {i} with some words in it.</p>" for i in range(50))
    page.write_text(f"<html><body>{body}{many}</body></html>", encoding="utf-8")
    code, out, err = run(capsys, "blocks", str(page), "--max-depth", "10")
    assert code == 0 and "nested deeper than 10" in err + out
    code, out, err = run(capsys, "extract", str(page), "--max-nodes", "60", "-f", "json")
    assert code == 0
    assert any("max_dom_nodes" in w for w in json.loads(out)["warnings"])
    assert "Paragraph number 49" not in out
    code, out, _ = run(capsys, "extract", str(page), "--time-budget", "0", "-f", "text")
    assert code == 0 and "Paragraph number 49" in out
    code, _, err = run(capsys, "extract", str(page), "--max-depth", "0")
    assert code == 1 and "--max-depth must be at least 1" in err
    code, _, err = run(capsys, "blocks", str(page), "--max-nodes", "0")
    assert code == 1 and "--max-nodes must be at least 1" in err  # the flag, not the field
    code, _, err = run(capsys, "extract", str(page), "--time-budget", "-1")
    assert code == 1 and "--time-budget" in err


def test_favor_flag_moves_the_decision(capsys, data_dir: Path) -> None:
    page = str(data_dir / "article.html")
    words = {}
    for favor in ("precision", "balanced", "recall"):
        code, out, _ = run(capsys, "extract", page, "--favor", favor, "-f", "text")
        assert code == 0
        words[favor] = set(out.split())
    # a stricter decision keeps a subset of the blocks: fewer words, none new
    assert words["precision"] < words["balanced"] < words["recall"]
    code, _, err = run(capsys, "extract", page, "--favor", "recall", "-q", "pump")
    assert code == 1 and "--favor applies only to the main-content model" in err


def test_links_flag(capsys, data_dir: Path) -> None:
    page = str(data_dir / "fidelity" / "links.html")
    code, out, _ = run(capsys, "extract", page, "--links", "-p", "all")
    assert code == 0 and "[installation notes](https://docs.example.org/guide/install.html)" in out
    code, out, _ = run(capsys, "extract", page, "-p", "all")
    assert code == 0 and "](" not in out


def test_images_flag(capsys, data_dir: Path) -> None:
    page = str(data_dir / "fidelity" / "images.html")
    url = "https://site.example/post/1"
    code, out, _ = run(capsys, "extract", page, "--images", "-p", "all", "--url", url)
    assert code == 0 and "![A lazy image](https://site.example/img/lazy.jpg)" in out
    code, out, _ = run(capsys, "extract", page, "-p", "all", "--url", url)
    assert code == 0 and "](" not in out and "Sales by year" in out
    code, out, _ = run(capsys, "extract", page, "--images", "-p", "all", "-f", "json")
    assert code == 0 and "![A plain image](/img/plain.png)" in json.loads(out)["markdown"]


# -- the fields of the other doors (issue 43) --------------------------------------------------


def test_a_limit_warning_names_the_option_and_the_help_its_real_default(
    capsys, data_dir: Path
) -> None:
    from blockdex.parse import DEFAULT_LIMITS

    code, _, err = run(capsys, "extract", str(data_dir / "article.html"), "--max-nodes", "20")
    assert code == 0 and "--max-nodes or ParseLimits.max_dom_nodes" in err
    with pytest.raises(SystemExit):
        run(capsys, "extract", "--help")
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"(default {DEFAULT_LIMITS.max_dom_nodes:,})" in help_text
    assert f"(default {DEFAULT_LIMITS.max_depth:,})" in help_text


def test_json_output_carries_the_note_the_other_formats_print(capsys, tmp_path: Path) -> None:
    page = tmp_path / "empty.html"
    page.write_text("<html><head><title>T</title></head><body><nav></nav></body></html>")
    code, out, err = run(capsys, "extract", str(page), "--format", "json")
    assert code == 0 and "note" not in err
    assert json.loads(out)["notes"] == ["empty result: the page has no text blocks"]
    code, out, err = run(capsys, "extract", str(page))
    assert "blockdex: note: empty result: the page has no text blocks" in err
