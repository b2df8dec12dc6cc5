"""ExtractOptions: each option declared once reaches every door (command line, HTTP/OpenAPI, MCP,
Python), is checked once with the door's own spelling in the error, and ``max_tokens`` (the
option added through the declaration alone) cuts the output at block boundaries everywhere."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

import blockdex
from blockdex.cli import build_parser, main
from blockdex.errors import BlockdexError, UnsupportedFormat
from blockdex.options import (
    ExtractOptions,
    InvalidOption,
    json_schema_properties,
    option_fields,
)
from blockdex.segment import count_tokens

DATA = Path(__file__).parent / "data"
ARTICLE = (DATA / "article.html").read_text(encoding="utf-8")
NAMES = [f.name for f in option_fields()]


def _subparser(name: str) -> Any:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices[name]


@pytest.mark.parametrize("command", ["extract", "batch", "crawl"])
def test_every_option_is_a_flag_of_every_extracting_command(command: str) -> None:
    dests = {a.dest: a for a in _subparser(command)._actions}
    for f in option_fields():
        assert f.name in dests, f"{command} lacks {f.name}"
        assert dests[f.name].help == f.metadata["help"] or command == "crawl"
        assert set(f.metadata["flags"]) <= set(dests[f.name].option_strings)


def test_openapi_request_schemas_are_the_declared_options() -> None:
    from blockdex.server.http import openapi_schema
    from blockdex.server.service import ServerConfig

    schema = openapi_schema(ServerConfig())
    declared = json_schema_properties()
    request = schema["components"]["schemas"]["ExtractRequest"]["properties"]
    batch = schema["paths"]["/v1/extract/batch"]["post"]["requestBody"]["content"]
    batch_props = batch["application/json"]["schema"]["properties"]
    proxy = {p["name"]: p for p in schema["paths"]["/v1/proxy"]["get"]["parameters"]}
    for name in NAMES:
        assert request[name] == declared[name]
        assert batch_props[name] == declared[name]
        if name not in ("format", "links"):  # the proxy's own parameters
            assert proxy[name]["description"] == declared[name]["description"]
    assert declared["favor"]["enum"] == ["balanced", "precision", "recall"]
    assert declared["max_tokens"] == {
        "type": "integer",
        "description": option_fields()[-1].metadata["help"],
        "minimum": 1,
    }


def test_mcp_extract_tool_lists_every_option_with_its_help() -> None:
    pytest.importorskip("mcp")
    from blockdex.server.mcp import create_mcp_server

    server, service = create_mcp_server()
    try:
        tools = asyncio.run(server.list_tools())
    finally:
        service.stop()
    extract = next(t for t in tools if t.name == "extract")
    props = extract.input_schema["properties"]
    for f in option_fields():
        assert props[f.name]["description"] == f.metadata["help"]
    assert list(props)[-2:] == ["start_index", "max_length"]


def test_each_door_names_a_refused_option_its_own_way() -> None:
    cases = {
        "cli": "--no-comments applies only to the main-content model (no --query, no other --predictor)",
        "payload": "'comments': false applies only to the main-content model (no query, no other method)",
        "kwargs": "comments=False applies only to the main-content model (no query, no other predictor)",
    }
    for door, message in cases.items():
        with pytest.raises(InvalidOption) as err:
            ExtractOptions(comments=False, query="tides").validate(door)  # type: ignore[arg-type]
        assert str(err.value) == message
    with pytest.raises(InvalidOption, match=r"^--favor applies only"):
        ExtractOptions(favor="recall", method="all").validate("cli")
    with pytest.raises(InvalidOption, match=r"^--allow-empty applies only"):
        ExtractOptions(never_empty=False, method="all").validate("cli")
    with pytest.raises(UnsupportedFormat, match="unknown output format 'pdf'"):
        ExtractOptions.from_kwargs(output="pdf")
    with pytest.raises(InvalidOption, match="max_tokens must be at least 1, not 0"):
        ExtractOptions.from_kwargs(max_tokens=0)
    with pytest.raises(TypeError, match="unknown option"):
        ExtractOptions.from_kwargs(colour="red")


def test_payload_values_must_have_their_json_type() -> None:
    opts = ExtractOptions.from_payload({"favor": "precision", "links": True, "max_tokens": 40})
    assert (opts.favor, opts.links, opts.max_tokens) == ("precision", True, 40)
    assert ExtractOptions.from_payload({"format": "", "method": ""}) == ExtractOptions()
    for payload, message in (
        ({"links": "yes"}, "'links' must be true or false"),
        ({"max_tokens": "40"}, "'max_tokens' must be a whole number"),
        ({"max_tokens": True}, "'max_tokens' must be a whole number"),
        ({"query": 3}, "'query' must be a string"),
        ({"favor": "most"}, "'favor' must be one of balanced, precision, recall"),
    ):
        with pytest.raises(BlockdexError, match=message):
            ExtractOptions.from_payload(payload)
    from_query = ExtractOptions.from_payload(
        {"comments": "0", "max_tokens": "25", "images": "on"}, strings=True
    )
    assert (from_query.comments, from_query.max_tokens, from_query.images) == (False, 25, True)
    with pytest.raises(InvalidOption, match="'max_tokens' must be a whole number, not 'many'"):
        ExtractOptions.from_payload({"max_tokens": "many"}, strings=True)


def _block_texts(markdown: str) -> list[str]:
    return [p for p in markdown.split("\n\n") if p.strip()]


def test_max_tokens_cuts_between_blocks_within_the_budget() -> None:
    whole = blockdex.extract(ARTICLE, output="json")
    blocks = json.loads(whole)["blocks"]
    counts = [count_tokens(b["text"]) for b in blocks]
    budget = counts[0] + counts[1] + counts[2] + counts[3] // 2  # the fourth does not fit
    record = json.loads(blockdex.extract(ARTICLE, output="json", max_tokens=budget))
    assert [b["index"] for b in record["blocks"]] == [b["index"] for b in blocks[:3]]
    assert sum(count_tokens(b["text"]) for b in record["blocks"]) <= budget
    assert any("max_tokens" in w for w in record["warnings"])
    text = blockdex.extract(ARTICLE, output="text", max_tokens=budget)
    assert text == "".join(b["text"] + "\n" for b in blocks[:3])
    # a budget the whole result fits leaves it as it is, without a warning
    assert blockdex.extract(ARTICLE, max_tokens=10_000) == blockdex.extract(ARTICLE)


def test_max_tokens_reaches_every_door_alike(tmp_path: Path, capsys: Any) -> None:
    budget = 60
    expected = blockdex.extract(ARTICLE, max_tokens=budget)
    assert expected != blockdex.extract(ARTICLE) and expected.strip()

    page = tmp_path / "article.html"
    page.write_text(ARTICLE, encoding="utf-8")
    out = tmp_path / "out.md"
    assert main(["extract", str(page), "--max-tokens", str(budget), "-o", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == expected
    assert "cut at the token budget" in capsys.readouterr().err

    assert main(["extract", str(page), "--max-tokens", "0"]) == 1
    assert "--max-tokens must be at least 1, not 0" in capsys.readouterr().err

    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from blockdex.server.http import create_app

    with TestClient(create_app()) as client:
        body = client.post("/v1/extract", json={"html": ARTICLE, "max_tokens": budget}).json()
        assert body["content"] == expected
        raw = client.post(
            f"/v1/extract?max_tokens={budget}",
            content=ARTICLE.encode(),
            headers={"Content-Type": "text/html"},
        ).json()
        assert raw["content"] == expected
        refused = client.post("/v1/extract", json={"html": ARTICLE, "max_tokens": "many"})
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_request"

    pytest.importorskip("mcp")
    from blockdex.server.mcp import create_mcp_server

    server, service = create_mcp_server()
    try:
        result = asyncio.run(server.call_tool("extract", {"html": ARTICLE, "max_tokens": budget}))
    finally:
        service.stop()
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert text.startswith(expected) and "cut at the token budget" in text


def test_max_tokens_in_a_batch_record_and_its_manifest(tmp_path: Path) -> None:
    from blockdex.batch import BatchConfig, read_records, run_batch

    pages = tmp_path / "in"
    pages.mkdir()
    (pages / "article.html").write_text(ARTICLE, encoding="utf-8")
    cfg = BatchConfig(jobs=1, options=ExtractOptions(max_tokens=60))
    run_batch([str(pages)], tmp_path / "out", cfg, progress=False)
    (record,) = list(read_records(tmp_path / "out"))
    assert record["content"] == blockdex.extract(ARTICLE, max_tokens=60)
    manifest = json.loads((tmp_path / "out" / "_MANIFEST.json").read_text())
    assert manifest["max_tokens"] == 60 and "comments" not in manifest
