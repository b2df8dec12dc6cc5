"""Decoding, parsing limits and metadata: what users see for odd or unusable input."""

from __future__ import annotations

import pytest

from blockdex.clean import CleanConfig
from blockdex.errors import EmptyInput, NotHTML, PageTooLarge
from blockdex.parse import ParseLimits, decode_html, parse_html
from blockdex.segment import SegmentConfig

PAGE = "<html><head><title>Caf\u00e9 cr\u00e8me</title></head><body><p>Na\u00efve \u00fcber</p></body></html>"


def test_utf8_bom_wins() -> None:
    text, enc = decode_html(b"\xef\xbb\xbf" + PAGE.encode("utf-8"))
    assert enc.startswith("utf-8") and "Caf\u00e9" in text and not text.startswith("\ufeff")


def test_utf16_bom() -> None:
    text, enc = decode_html(PAGE.encode("utf-16"))
    assert enc.startswith("utf-16") and "Na\u00efve" in text


def test_http_charset_is_honoured() -> None:
    data = PAGE.encode("cp1252")
    text, enc = decode_html(data, content_type="text/html; charset=windows-1252")
    assert "Caf\u00e9" in text and enc in ("cp1252", "windows-1252")


def test_meta_charset_is_honoured() -> None:
    page = PAGE.replace("<head>", '<head><meta charset="iso-8859-1">')
    text, _ = decode_html(page.encode("latin-1"))
    assert "cr\u00e8me" in text


def test_undeclared_legacy_encoding_is_detected() -> None:
    body = (
        "<html><body><p>"
        + "\u0420\u0443\u0441\u0441\u043a\u0438\u0439 \u0442\u0435\u043a\u0441\u0442 \u0434\u043b\u044f \u043f\u0440\u043e\u0432\u0435\u0440\u043a\u0438. "
        * 20
        + "</p></body></html>"
    )
    text, _ = decode_html(body.encode("cp1251"))
    assert "\u0420\u0443\u0441\u0441\u043a\u0438\u0439" in text


def test_title_and_og_metadata() -> None:
    doc = parse_html(
        '<html><head><title>Plain title</title><meta property="og:title" content="OG title">'
        '<meta property="og:site_name" content="Site"></head><body><p>x</p></body></html>'
    )
    assert doc.title in ("Plain title", "OG title")
    assert doc.meta.get("og:site_name") == "Site" or "Site" in doc.meta.values()


@pytest.mark.parametrize(
    ("data", "error", "words"),
    [
        (b"", EmptyInput, "empty"),
        (b"   \n ", EmptyInput, "empty"),
        (b"%PDF-1.7\n...", NotHTML, "PDF"),
        (b"\x89PNG\r\n\x1a\n....", NotHTML, "PNG"),
        (bytes(range(0, 32)) * 50, NotHTML, "binary"),
        (b"just some words, no markup at all", NotHTML, "no HTML tags"),
    ],
)
def test_unusable_input_raises_a_clear_error(data: bytes, error: type, words: str) -> None:
    with pytest.raises(error, match=words):
        parse_html(data)


def test_size_limit() -> None:
    with pytest.raises(PageTooLarge, match="over the limit"):
        parse_html(b"<p>" + b"a" * 2000 + b"</p>", limits=ParseLimits(max_input_bytes=1000))


def test_metadata_from_meta_tags_and_json_ld() -> None:
    doc = parse_html(
        '<html lang="pt-BR"><head><title>Page</title>'
        '<meta property="og:site_name" content="Folha Verde">'
        '<link rel="canonical" href="https://example.org/a">'
        '<meta property="article:published_time" content="2026-03-14T09:00:00Z">'
        '<script type="application/ld+json">{"@graph": [{"@type": "NewsArticle", '
        '"author": [{"@type": "Person", "name": "Ana Souza"}, {"name": "Rui Lima"}], '
        '"datePublished": "2020-01-01"}]}</script></head><body><p>x</p></body></html>'
    )
    assert doc.meta["site_name"] == "Folha Verde"
    assert doc.meta["canonical"] == "https://example.org/a"
    assert doc.meta["date"] == "2026-03-14T09:00:00Z"  # meta tag wins over JSON-LD
    assert doc.meta["author"] == "Ana Souza, Rui Lima"  # JSON-LD fills what tags lack
    assert doc.meta["language"] == "pt-BR"
    assert doc.title == "Page"


def test_declared_page_types_are_read_from_open_graph_and_json_ld() -> None:
    doc = parse_html(
        '<html><head><meta property="og:type" content="Article">'
        '<script type="application/ld+json">[{"@type": "WebSite"}, {"@graph": ['
        '{"@type": ["NewsArticle", "WebSite"], "author": {"@type": "Person", "name": "A"}},'
        '{"@type": 7}]}]</script></head><body><p>x</p></body></html>'
    )
    assert doc.meta["og_type"] == "Article"
    assert "page_type" not in doc.meta  # the classified type is a result field, not metadata
    # top-level items and @graph members, in order, once each; nested objects are not types
    # of the page, and a non-string @type is ignored
    assert doc.meta["schema_types"] == "WebSite, NewsArticle"
    assert "schema_types" not in parse_html("<html><body><p>x</p></body></html>").meta


def test_broken_json_ld_is_ignored() -> None:
    doc = parse_html(
        '<html><head><script type="application/ld+json">{not json</script></head>'
        "<body><p>x</p></body></html>"
    )
    assert "author" not in doc.meta


def test_unclosed_title_that_swallowed_the_page_is_repaired() -> None:
    body = "".join(f"<p>Paragraph {i} of the story, with words.</p>" for i in range(40))
    html = f"<html><head><title>Real headline</titXX\n</head><body>{body}</body></html>"
    doc = parse_html(html)
    assert "Paragraph 39" in doc.tree.body.text()
    assert doc.title.startswith("Real headline")
    assert any("unclosed <title>" in w for w in doc.warnings)


def test_a_normal_long_title_is_left_alone() -> None:
    doc = parse_html("<html><head><title>" + "word " * 600 + "</title></head><body><p>x</p></body>")
    assert not doc.warnings


@pytest.mark.parametrize(
    ("config", "field", "value"),
    [
        (ParseLimits, "max_depth", 0),
        (ParseLimits, "max_dom_nodes", -1),
        (ParseLimits, "sniff_bytes", -1),
        (ParseLimits, "max_control_ratio", 1.5),
        (ParseLimits, "max_control_ratio", float("nan")),
        (CleanConfig, "match_probes", 0),
        (CleanConfig, "max_known_share", -0.1),
        (SegmentConfig, "check_time_every", 0),
        (SegmentConfig, "max_block_tokens", 0),
        (SegmentConfig, "max_path_levels", 1),
        (SegmentConfig, "max_attr_levels", 0),
    ],
)
def test_configs_refuse_values_that_make_no_sense(config: type, field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"{config.__name__}.{field} must be at"):
        config(**{field: value})
    smallest = {"max_known_share": 0, "max_path_levels": 2, "max_attr_levels": 2}
    config(**{field: smallest.get(field, 1)})  # allowed
