"""ExtractOptions: each option declared once reaches every door (command line, HTTP/OpenAPI, MCP,
Python) and is checked once with the door's own spelling in the error."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from blockdex.cli import build_parser
from blockdex.errors import BlockdexError, UnsupportedFormat
from blockdex.options import (
    ExtractOptions,
    InvalidOption,
    json_schema_properties,
    option_fields,
)

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
    for name in NAMES:
        assert request[name] == declared[name]
        assert batch_props[name] == declared[name]
    assert declared["favor"]["enum"] == ["balanced", "precision", "recall"]


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
    with pytest.raises(TypeError, match="unknown option"):
        ExtractOptions.from_kwargs(colour="red")


def test_payload_values_must_have_their_json_type() -> None:
    opts = ExtractOptions.from_payload({"favor": "precision", "links": True})
    assert (opts.favor, opts.links) == ("precision", True)
    assert ExtractOptions.from_payload({"format": "", "method": ""}) == ExtractOptions()
    for payload, message in (
        ({"links": "yes"}, "'links' must be true or false"),
        ({"query": 3}, "'query' must be a string"),
        ({"favor": "most"}, "'favor' must be one of balanced, precision, recall"),
    ):
        with pytest.raises(BlockdexError, match=message):
            ExtractOptions.from_payload(payload)
    from_query = ExtractOptions.from_payload({"comments": "0", "images": "on"}, strings=True)
    assert (from_query.comments, from_query.images) == (False, True)
    with pytest.raises(InvalidOption, match="'links' must be true or false, not 'maybe'"):
        ExtractOptions.from_payload({"links": "maybe"}, strings=True)
