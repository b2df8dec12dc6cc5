"""`blockdex batch`: every input yields one record, poison pages become error records,
killed runs resume without duplicates or gaps, WARC/JSONL/Parquet round-trip."""

from __future__ import annotations

import gzip
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from blockdex.batch import BatchConfig, read_records, run_batch
from blockdex.errors import BlockdexError
from blockdex.options import ExtractOptions, option_fields
from blockdex.pagetype import OTHER, PAGE_TYPES

DATA = Path(__file__).parent / "data"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
DIR_PAGES = sorted((DATA / "pages").glob("*.html"))
"""The hand-made pages in tests/data/pages, which several tests run as one directory."""
N_DIR_PAGES = len(DIR_PAGES)
PAGES = [*DIR_PAGES, DATA / "article.html"]


def _page(title: str, body: str = "<p>Some text of a page, long enough to be content.</p>") -> str:
    return f"<html><head><title>{title}</title></head><body><article>{body}</article></body></html>"


def _write_warc(path: Path, responses: list[tuple[str, str, bytes]]) -> None:
    """A gzipped WARC with a request and a response per page, ``(url, content_type, body)``."""
    warcio = pytest.importorskip("warcio", reason="warcio (the 'batch' extra) writes test WARCs")
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    with path.open("wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, ctype, body in responses:
            req = writer.create_warc_record(
                url,
                "request",
                payload=io.BytesIO(b""),
                http_headers=StatusAndHeaders(
                    "GET / HTTP/1.1", [("Host", "x")], is_http_request=True
                ),
            )
            writer.write_record(req)
            headers = StatusAndHeaders("200 OK", [("Content-Type", ctype)], protocol="HTTP/1.1")
            writer.write_record(
                writer.create_warc_record(
                    url, "response", payload=io.BytesIO(body), http_headers=headers
                )
            )
    assert warcio


def _cfg(**kw) -> BatchConfig:
    """A small batch; extraction options by their Python keywords (``predictor``, ``output``,
    ``favor`` …), given unchecked so that run_batch's own check is what refuses bad ones."""
    names = {"predictor": "method", "output": "format"}
    fields = {f.name for f in option_fields()}
    options = {names.get(k, k): kw.pop(k) for k in list(kw) if names.get(k, k) in fields}
    base = {"jobs": 2, "page_timeout": 10.0, "part_size": 3, "options": ExtractOptions(**options)}
    base.update(kw)
    return BatchConfig(**base)


def test_directory_jsonl_and_missing_files_each_yield_one_record(tmp_path):
    jsonl = tmp_path / "pages.jsonl.gz"
    with gzip.open(jsonl, "wt", encoding="utf-8") as fh:
        fh.write(
            json.dumps({"id": "a", "url": "https://a.example/", "html": _page("Alpha")}) + "\n"
        )
        fh.write("this line is not JSON\n")
        fh.write(json.dumps({"id": "b"}) + "\n")  # no html field
        fh.write("\n")
        fh.write(json.dumps({"html": _page("Gamma")}) + "\n")
    out = tmp_path / "out"
    summary = run_batch(
        [str(DATA / "pages"), str(jsonl), str(tmp_path / "missing.html")],
        out,
        _cfg(),
        progress=False,
    )
    recs = list(read_records(out))
    assert [r["seq"] for r in recs] == list(range(len(recs)))
    assert len(recs) == N_DIR_PAGES + 4 + 1 == summary.pages
    by_id = {r["id"]: r for r in recs}
    assert by_id["a"]["title"] == "Alpha" and by_id["a"]["url"] == "https://a.example/"
    assert "long enough to be content" in by_id["a"]["content"]
    assert by_id[f"{jsonl}:5"]["title"] == "Gamma"  # id falls back to file:line
    bad = [r for r in recs if r["error"]]
    assert Counter(r["error_kind"] for r in bad) == {"bad_input": 2, "read_error": 1}
    assert all(r["error"] for r in bad)
    good = [r for r in recs if not r["error"]]
    assert all(r["content"] and r["indices"] for r in good)
    assert all(r["page_type"] in (*PAGE_TYPES, OTHER) for r in good)
    assert all(0 <= r["page_type_confidence"] <= 1 for r in good)
    assert by_id[f"{DATA / 'pages' / 'forum.html'}"]["page_type"] == "forum"
    assert summary.ok == len(good) and sum(summary.errors.values()) == len(bad)
    assert json.loads((out / "_SUMMARY.json").read_text())["pages"] == len(recs)


def test_warc_round_trip_keeps_every_html_response_with_its_url(tmp_path):
    pages = [
        (f"https://site.example/{p.stem}", "text/html; charset=utf-8", p.read_bytes())
        for p in PAGES
    ]
    png = ("https://site.example/logo.png", "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    warc = tmp_path / "crawl.warc.gz"
    _write_warc(warc, [*pages[:3], png, *pages[3:]])
    out = tmp_path / "out"
    run_batch([str(warc)], out, _cfg(write="jsonl"), progress=False)
    recs = list(read_records(out))
    assert sorted(r["url"] for r in recs) == sorted(u for u, _, _ in pages)
    assert all(not r["error"] and r["content"] for r in recs)
    assert len({r["id"] for r in recs}) == len(recs)  # WARC record ids


@pytest.mark.dataset
def test_warc_of_shared_pages_round_trips(tmp_path):
    from blockdex.evaluate.datasets import load_dataset

    if not (SHARED / "scrapinghub-aeb").exists():
        pytest.skip(f"shared dataset not found at {SHARED} (dataset tests need ../shared/data)")
    pages = [p for _, p in zip(range(40), load_dataset("scrapinghub-aeb"), strict=False)]
    responses = [
        (
            p.url or f"https://shared.example/{p.id}",
            "text/html",
            p.html.encode("utf-8") if isinstance(p.html, str) else p.html,
        )
        for p in pages
    ]
    warc = tmp_path / "shared.warc.gz"
    _write_warc(warc, responses)
    out = tmp_path / "out"
    summary = run_batch([str(warc)], out, _cfg(part_size=16, write="parquet"), progress=False)
    recs = list(read_records(out))
    assert Counter(r["url"] for r in recs) == Counter(u for u, _, _ in responses)
    assert summary.ok == len(recs) == len(pages)


def test_poison_pages_become_error_records_and_the_run_goes_on(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "00-ok.html").write_text(_page("Fine page"))
    (src / "01-hang.html").write_text(_page("HANG forever"))
    (src / "02-crash.html").write_text(_page("CRASH the worker"))
    (src / "03-hog.html").write_text(_page("HOG memory"))
    (src / "04-binary.html").write_bytes(b"%PDF-1.7\n" + bytes(range(256)) * 64)
    (src / "05-huge.html").write_bytes(b"<p>" + b"x" * (50 * 1024 * 1024) + b"</p>")
    (src / "06-deep.html").write_text("<div>" * 20000 + "deep text" + "</div>" * 20000)
    (src / "07-bad-encoding.html").write_bytes(
        b'<meta charset="utf-8"><title>Bad \xff\xfe bytes</title><p>caf\xe9 cr\xe8me, ok.</p>'
    )
    (src / "08-ok.html").write_text(_page("Second fine page"))
    cfg = _cfg(predictor="_batch_predictors:Misbehaving", page_timeout=4.0, memory_limit_mb=1500)
    out = tmp_path / "out"
    summary = run_batch([str(src)], out, cfg, progress=False)
    recs = {Path(r["source"]).name: r for r in read_records(out)}
    assert len(recs) == 9 == summary.pages
    assert recs["01-hang.html"]["error_kind"] == "timeout"
    assert recs["02-crash.html"]["error_kind"] == "worker_crashed"
    assert recs["03-hog.html"]["error_kind"] in ("memory", "worker_crashed")
    assert recs["04-binary.html"]["error_kind"] == "not_html"
    assert recs["05-huge.html"]["error_kind"] == "page_too_large"
    for name in ("00-ok.html", "07-bad-encoding.html", "08-ok.html"):
        assert recs[name]["error"] is None and recs[name]["content"], name
    assert "deep text" in (recs["06-deep.html"]["content"] or "") or recs["06-deep.html"]["error"]
    assert summary.workers_replaced >= 2


def test_unknown_predictor_and_bad_settings_fail_before_starting(tmp_path):
    with pytest.raises(BlockdexError, match="unknown predictor"):
        run_batch([str(DATA / "pages")], tmp_path / "o1", _cfg(predictor="nope"), progress=False)
    with pytest.raises(BlockdexError, match=r"'crunch' is a classic method.*blockdex extract"):
        run_batch([str(DATA / "pages")], tmp_path / "o3", _cfg(predictor="crunch"), progress=False)
    with pytest.raises(BlockdexError, match="--write"):
        run_batch([str(DATA / "pages")], tmp_path / "o2", _cfg(write="csv"), progress=False)


def test_no_comments_reaches_the_workers_and_the_manifest(tmp_path):
    from blockdex.cli import main

    pages = tmp_path / "in"
    pages.mkdir()
    (pages / "thread.html").write_bytes((DATA / "pages" / "all-discussion.html").read_bytes())
    out = tmp_path / "out"
    rc = main(["batch", str(pages), "--out", str(out), "--quiet", "-j", "1", "--no-comments"])
    (record,) = read_records(out)
    # forum posts in comment-named elements are kept, with the warning only the option gives
    assert rc == 0 and "Post 5" in record["content"]
    assert any("inside a comment or discussion section" in w for w in record["warnings"])
    with pytest.raises(BlockdexError, match="comments"):  # the setting is part of the run
        run_batch([str(pages)], out, _cfg(), resume=True, progress=False)
    with pytest.raises(BlockdexError, match="--no-comments applies only"):
        run_batch([str(pages)], tmp_path / "o", _cfg(comments=False, query="x"), progress=False)


def test_favor_reaches_the_workers_and_the_manifest(tmp_path):
    from blockdex.cli import main

    pages = tmp_path / "in"
    pages.mkdir()
    (pages / "article.html").write_bytes((DATA / "article.html").read_bytes())
    sizes = {}
    for favor in ("precision", "recall"):
        out = tmp_path / favor
        rc = main(["batch", str(pages), "--out", str(out), "--quiet", "-j", "1", "--favor", favor])
        (record,) = read_records(out)
        assert rc == 0
        sizes[favor] = len(record["content"])
    assert sizes["precision"] < sizes["recall"]
    with pytest.raises(BlockdexError, match="favor"):  # the setting is part of the run
        run_batch([str(pages)], tmp_path / "recall", _cfg(), resume=True, progress=False)
    with pytest.raises(BlockdexError, match="--favor applies only"):
        run_batch([str(pages)], tmp_path / "o", _cfg(favor="recall", query="x"), progress=False)
    with pytest.raises(BlockdexError, match="--favor must be one of"):
        run_batch([str(pages)], tmp_path / "o2", _cfg(favor="most"), progress=False)


def test_links_reach_the_workers_and_the_manifest(tmp_path):
    from blockdex.cli import main

    pages = tmp_path / "in"
    pages.mkdir()
    (pages / "links.html").write_bytes((DATA / "fidelity" / "links.html").read_bytes())
    out = tmp_path / "out"
    args = ["batch", str(pages), "--out", str(out), "--quiet", "-j", "1", "-p", "all"]
    assert main([*args, "--links"]) == 0
    (record,) = read_records(out)
    assert "[installation notes](https://docs.example.org/guide/install.html)" in record["content"]
    with pytest.raises(BlockdexError, match="links"):  # the setting is part of the run
        run_batch([str(pages)], out, _cfg(predictor="all"), resume=True, progress=False)


def test_images_reach_the_workers_and_the_manifest(tmp_path):
    from blockdex.cli import main

    pages = tmp_path / "in"
    pages.mkdir()
    (pages / "images.html").write_bytes((DATA / "fidelity" / "images.html").read_bytes())
    out = tmp_path / "out"
    args = ["batch", str(pages), "--out", str(out), "--quiet", "-j", "1", "-p", "all"]
    assert main([*args, "--images"]) == 0
    (record,) = read_records(out)
    assert "![A plain image](/img/plain.png)" in record["content"]
    assert json.loads((out / "_MANIFEST.json").read_text())["images"] is True
    with pytest.raises(BlockdexError, match="images"):  # the setting is part of the run
        run_batch([str(pages)], out, _cfg(predictor="all"), resume=True, progress=False)


def test_existing_output_needs_resume_and_same_settings(tmp_path):
    out = tmp_path / "out"
    run_batch([str(DATA / "pages")], out, _cfg(), progress=False)
    with pytest.raises(BlockdexError, match="--resume"):
        run_batch([str(DATA / "pages")], out, _cfg(), progress=False)
    with pytest.raises(BlockdexError, match="part_size"):
        run_batch([str(DATA / "pages")], out, _cfg(part_size=2), resume=True, progress=False)
    again = run_batch([str(DATA / "pages")], out, _cfg(), resume=True, progress=False)
    assert again.pages == 0  # nothing left to do
    assert again.skipped_parts == -(-N_DIR_PAGES // _cfg().part_size)
    assert len(list(read_records(out))) == N_DIR_PAGES


def test_kill_minus_9_then_resume_gives_each_page_exactly_once(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    n = 24
    for i in range(n):
        (src / f"p{i:03d}.html").write_text(_page(f"SLOW page {i}"))
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        "-m",
        "blockdex",
        "batch",
        str(src),
        "--out",
        str(out),
        "--jobs",
        "1",
        "--part-size",
        "4",
        "--predictor",
        "_batch_predictors:Misbehaving",
        "--quiet",
        "--write",
        "jsonl",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]
        ),
    }
    proc = subprocess.Popen(cmd, env=env, start_new_session=True, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(list(out.glob("part-*"))) < 2:
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "the batch wrote no parts in time"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done_before = len(list(out.glob("part-*")))
    assert done_before < n // 4, "the run finished before it could be killed"
    res = subprocess.run([*cmd, "--resume"], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "skipped" in res.stderr
    recs = list(read_records(out))
    assert sorted(r["seq"] for r in recs) == list(range(n))  # no duplicates, no gaps
    assert sorted(Path(r["source"]).name for r in recs) == sorted(p.name for p in src.iterdir())
    assert not list(out.glob(".part-*"))


def test_parquet_parts_hold_the_same_records(tmp_path):
    pytest.importorskip("pyarrow", reason="Parquet output needs pyarrow (the 'batch' extra)")
    out = tmp_path / "out"
    run_batch(
        [str(DATA / "pages")], out, _cfg(write="parquet", include_blocks=True), progress=False
    )
    recs = list(read_records(out))
    assert len(recs) == N_DIR_PAGES and all(r["content"] and r["indices"] for r in recs)
    assert all(json.loads(r["blocks_json"]) for r in recs)


def test_cli_batch_prints_a_summary(tmp_path):
    from blockdex.cli import main

    out = tmp_path / "out"
    rc = main(["batch", str(DATA / "pages"), "--out", str(out), "--quiet", "-j", "1"])
    assert rc == 0
    assert len(list(read_records(out))) == N_DIR_PAGES


def test_datatrove_extractor_in_a_local_pipeline(tmp_path):
    pytest.importorskip("datatrove", reason="the datatrove integration needs blockdex[datatrove]")
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers import JsonlWriter

    from blockdex.integrations.datatrove import BlockdexExtractor

    warc_dir = tmp_path / "warc"
    warc_dir.mkdir()
    _write_warc(
        warc_dir / "a.warc.gz",
        [(f"https://dt.example/{p.stem}", "text/html", p.read_bytes()) for p in PAGES],
    )
    LocalPipelineExecutor(
        pipeline=[
            WarcReader(str(warc_dir)),
            BlockdexExtractor(timeout=30),
            JsonlWriter(str(tmp_path / "dt-out"), compression=None),
        ],
        tasks=1,
        logging_dir=str(tmp_path / "logs"),
    ).run()
    docs = [
        json.loads(line)
        for f in (tmp_path / "dt-out").glob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    assert sorted(d["metadata"]["url"] for d in docs) == sorted(
        f"https://dt.example/{p.stem}" for p in PAGES
    )
    article = next(d for d in docs if d["metadata"]["url"].endswith("/article"))
    assert "Tidal" in article["text"] and "<p>" not in article["text"]


def test_ray_map_batches_in_local_mode():
    ray = pytest.importorskip("ray", reason="the Ray integration needs blockdex[ray]")
    from blockdex.integrations.ray import BlockdexMapper

    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        rows = [
            {"html": p.read_text(encoding="utf-8"), "url": f"https://r.example/{p.stem}"}
            for p in PAGES
        ] + [{"html": "", "url": "https://r.example/empty"}]
        ds = ray.data.from_items(rows).map_batches(
            BlockdexMapper,
            fn_constructor_kwargs={"output": "text"},
            concurrency=1,
            batch_size=4,
            batch_format="numpy",
        )
        out = {r["url"]: r for r in ds.take_all()}
    finally:
        ray.shutdown()
    assert len(out) == len(rows)
    assert out["https://r.example/empty"]["error_kind"] == "empty_input"
    assert "Tidal" in out["https://r.example/article"]["content"]
    assert json.loads(out["https://r.example/article"]["indices"])


def test_a_fallback_is_recorded_and_written_to_parquet(tmp_path):
    pytest.importorskip("pyarrow")
    src = tmp_path / "pages"
    src.mkdir()
    page = Path(__file__).parent / "data" / "units" / "description-only.html"
    (src / "app.html").write_bytes(page.read_bytes())
    (src / "plain.html").write_text(_page("Plain"), encoding="utf-8")
    out = tmp_path / "out"
    run_batch([str(src)], out, _cfg(write="parquet"), progress=False)
    by_name = {Path(r["id"]).name: r for r in read_records(out)}
    assert by_name["app.html"]["fallback"] == "description"
    assert "Eagle Ridge" in by_name["app.html"]["content"]
    assert by_name["plain.html"]["fallback"] is None


def test_a_page_without_url_takes_its_canonical_or_base_and_records_its_metadata(tmp_path):
    # issue 43: batch records had "url": null and relative links, and no metadata
    links_page = (
        '<html><head><title>{t}</title>{head}<meta name="author" content="Ada"></head><body>'
        '<article><p>Read the <a href="/guide/tides">tide guide</a> before you sail, twice.</p>'
        "<p>Some text of a page, long enough to be content for the model.</p></article></body>"
        "</html>"
    )
    canonical = links_page.format(t="C", head='<link rel="canonical" href="https://c.example/a">')
    based = links_page.format(t="B", head='<base href="https://b.example/docs/">')
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "c.html").write_text(canonical, encoding="utf-8")
    (tmp_path / "in" / "b.html").write_text(based, encoding="utf-8")
    out = tmp_path / "out"
    run_batch([str(tmp_path / "in")], out, _cfg(jobs=1, links=True, output="json"), progress=False)
    recs = {r["title"]: r for r in read_records(out)}
    assert recs["C"]["url"] == "https://c.example/a"
    assert recs["B"]["url"] == "https://b.example/docs/"
    assert "(https://c.example/guide/tides)" in json.loads(recs["C"]["content"])["markdown"]
    assert "(https://b.example/guide/tides)" in json.loads(recs["B"]["content"])["markdown"]
    assert recs["C"]["metadata"]["author"] == "Ada" and recs["C"]["notes"] == []
