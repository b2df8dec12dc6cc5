"""The compiled twins (blockdex/_<name>_c.pyx, see blockdex.speedups) give exactly what the
pure-Python code gives.

Each test runs the same input through both paths; where the extension is not built the
comparisons skip (the Python path is then the only one, and every other test covers it). CI sets
``BLOCKDEX_REQUIRE_COMPILED=1`` so that a build that silently failed turns red there.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.adversarial import corpus

from blockdex.cjk import CJK_RANGES
from blockdex.clean import HTML_WRITES, STATE_NAMES, clean_document
from blockdex.errors import BlockdexError
from blockdex.evaluate.datasets import load_dataset
from blockdex.features import block_features
from blockdex.page import Block, Page
from blockdex.parse import parse_html
from blockdex.predict import content as content_module
from blockdex.predict.content import ContentModel
from blockdex.speedups import TWINS, lexbor, lexbor_ready, status, twin_name, twins

segment_module = importlib.import_module("blockdex.segment")
parse_module = importlib.import_module("blockdex.parse")
features_module = importlib.import_module("blockdex.features")
candidates_module = importlib.import_module("blockdex.candidates")
clean_module = importlib.import_module("blockdex.clean")
units_module = importlib.import_module("blockdex.units")
forest_module = importlib.import_module("blockdex.forest")

parse_c = parse_module.compiled
segment_c = segment_module.compiled
features_c = features_module.compiled
clean_c = clean_module.compiled
content_c = content_module.compiled
units_c = units_module.compiled
forest_c = forest_module.compiled

needs_compiled = pytest.mark.skipif(
    not all(twins().values()),
    reason="a compiled twin is not built (or BLOCKDEX_PURE_PYTHON is set)",
)


def test_compiled_code_is_there_when_required() -> None:
    if os.environ.get("BLOCKDEX_REQUIRE_COMPILED") != "1":
        pytest.skip("BLOCKDEX_REQUIRE_COMPILED is not set (CI sets it)")
    assert all(twins().values()), status()
    assert lexbor_ready(), "the compiled walks cannot read this selectolax's tree"
    assert status() == "compiled speed-ups: yes"


# -- forest evaluation ---------------------------------------------------------------------------


@needs_compiled
def test_compiled_forest_sums_equal_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    model = ContentModel.load()
    rng = np.random.default_rng(7)
    n_features = len(model.stage2.feature) and int(model.stage2.feature.max()) + 1
    X = rng.normal(0.0, 2.0, size=(2500, n_features)).astype(np.float32)  # > 1 row chunk
    X[:5] = 0.0  # exact ties with thresholds at 0 take the same branch
    for forest in (model.stage1, model.stage2):
        # groups of 16 rows, and the rows after the last full group
        for n in (2500, 0, 1, 15, 16, 17, 33):
            fast = forest.raw(X[:n])
            monkeypatch.setattr(forest_module, "compiled", None)
            slow = forest.raw(X[:n])
            monkeypatch.undo()
            assert fast.shape == slow.shape == (n,)
            np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-9)


def test_forests_the_packed_layout_cannot_hold_use_the_numpy_walk() -> None:
    # two trees sharing their leaves: not a forest of trees, so no preorder layout
    spec = {
        "feature": [0, 0, 0, 0],
        "threshold": [0.5, "inf", "inf", 1.5],
        "left": [1, 1, 2, 1],
        "right": [2, 1, 2, 2],
        "value": [0.0, -1.0, 1.0, 0.0],
        "roots": [0, 3],
        "depth": 1,
    }
    forest = forest_module.Forest(spec)
    assert forest._packed is None
    assert forest.raw(np.array([[0.0], [1.0], [2.0]])).tolist() == [-2.0, 0.0, 2.0]


@needs_compiled
def test_packed_nodes_are_eight_bytes_in_preorder() -> None:
    forest = ContentModel.load().stage1
    nodes, value, roots = forest._packed
    assert forest_c.FOREST_NODE_BYTES == 8 and len(nodes) == 8 * len(value)
    packed = nodes.view(forest_module._NODE_DTYPE)
    leaves = packed["right"] == 0
    assert np.isnan(packed["threshold"][leaves]).all()
    assert (value[~leaves] == 0).all() and roots[0] == 0


def test_a_model_with_an_index_out_of_range_is_refused() -> None:
    spec = {
        "feature": [0, 0, 0],
        "threshold": [0.5, "inf", "inf"],
        "left": [1, 1, 2],
        "right": [2, 1, 2],
        "value": [0.0, -1.0, 1.0],
        "roots": [0],
        "depth": 1,
    }
    assert forest_module.Forest(spec).raw(np.array([[0.0], [1.0]])).tolist() == [-1.0, 1.0]
    for key, bad in (("feature", [-1, 0, 0]), ("right", [3, 1, 2]), ("roots", [-1])):
        with pytest.raises(ValueError, match="out of range"):
            forest_module.Forest({**spec, key: bad})


# -- the segmentation walk -------------------------------------------------------------------------


def _test_pages(data_dir: Path) -> list[Path]:
    """The small HTML pages of tests/data (never empty: the fixtures ship with the repo)."""
    files = sorted(data_dir.glob("*.html")) + sorted((data_dir / "pages").glob("*.html"))
    assert files
    return files


def _normalised(page: Page) -> tuple[object, ...]:
    """A page's blocks with node ids replaced by their order of first appearance.

    Script-rescued fragments are parsed afresh on every run, so their ids (node addresses) differ
    between two runs of the same path; everything else must match exactly.
    """
    ids: dict[int, int] = {}

    def norm(i: int) -> int:
        return ids.setdefault(i, len(ids))

    return (
        page.title,
        page.warnings,
        tuple(
            (
                b.index,
                b.tag,
                b.html,
                b.text,
                tuple((t, norm(i)) for t, i in b.chain),
                b.path,
                b.attrs,
                b.depth,
                b.link_chars,
                b.n_links,
                b.split,
                b.source,
                b.attributes,
                tuple(norm(i) for i in b.scope),
                b.scope_attrs,
            )
            for b in page.blocks
        ),
    )


def _both_ways(html: str | bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    try:
        doc = clean_document(parse_html(html))
    except BlockdexError:
        return None, None
    fast = segment_module.segment_document(doc)
    with monkeypatch.context() as m:
        m.setattr(segment_module, "compiled", None)
        slow = segment_module.segment_document(doc)
    return _normalised(fast), _normalised(slow)


needs_compiled_walk = pytest.mark.skipif(
    lexbor(segment_c) is None,
    reason="the compiled walk is not built or cannot read this selectolax's tree",
)

_HAND_MADE = [
    "<body><div>a<p>b</p>c</div></body>",
    "<figure><img src=a.png><figcaption>Cap <b>one</b></figcaption></figure><img alt=x src=b>",
    "<figure><figcaption>First</figcaption><div><img src=c.png></div></figure>",
    "<table><caption>T</caption><tr><td>1</td><td><b>2</b></td></tr>"
    "<tr><td><div>block</div></td></tr></table>",
    '<pre><code class="language-python">x = 1\n\ny</code></pre><pre>a<br>b</pre>',
    "<ul><li><a href=/>one</a> two</li><li><em>x</em><strong>y</strong></li></ul>",
    "<my-el class='Nav Bar' id=Top role=main itemprop=x>custom <svg><title>t</title></svg></my-el>",
    "<p>caf\u00e9 &amp; &lt;tags&gt; \u4e2d\u6587</p><!-- comment --><p>x<?php echo 1 ?></p>",
    "<div><script>var s = '<p>Rescued paragraph from a script with enough words.</p>';</script>"
    "<noscript><p>noscript text</p></noscript><p>after</p></div>",
    "<a href=/><div>block in link</div>tail</a>",
    "<dl><dt>term</dt><dd>def <code>c</code></dd></dl><details><summary>s</summary>d</details>",
    "<table><tr><th colspan=' 2'>h</th><td rowspan=0>a</td><td colspan=7x rowspan=99>b</td>"
    "<td colspan=-3 rowspan='\u0663'>c</td><td colspan=1234567>d</td></tr></table>",
    # grid rows: cells holding nested tables (their cells and children keep them in the chain)
    "<table><tr><th>a</th><td>x <table><caption>c</caption><thead><tr><th>h</th></tr></thead>"
    "<tr><td>1<table><tr><td>deep</td></tr></table></td></tr></table> y</td></tr>"
    "<tr><td><table><tr><td>only</td></tr></table></td><td><div>layout</div></td></tr></table>",
    # class/id/role/itemprop tokens: case, empty values, a cut at 200 characters across values,
    # non-ASCII values (decoded, then lower-cased)
    f"<div class='{'Ab-' * 60}' id='{'Cd' * 30}' ROLE=Main itemprop=''><p>x</p>"
    "<section class='' id=\u00c9T\u00c9 role=NAV><p>y</p></section>"
    f"<article Class='Post Entry' itemprop='{'Z' * 199}'><p>z</p></article></div>",
    # runs of nothing but blank nodes and <br>s (not joined), of non-ASCII spaces (joined, then
    # empty), a cell separator after blanks, <pre> runs of newlines and of spaces
    "<div> \n <br> <p>a</p>\t<br><br> <b> </b><p>b</p>\u00a0\u2003<br><p>c</p> </div>"
    "<table><tr><td> </td><td>\u00a0</td><td> <br> </td></tr></table>"
    "<pre><br><br></pre><pre>  </pre><pre>\n<b> </b>\n</pre><div><i> </i><code> </code></div>",
    # blanks at the start of a run (left out), before a row's first cell (kept: the cell is set
    # apart), inside a kept inline element that stays open across a block, links in blank runs
    # and in runs with no text node at all (their count goes to the next run)
    "<table><tr> <td>a</td> <td> b </td>\n</tr><tr><td>c</td></tr></table>"
    "<div> <b> <p>x</p> y <p>z</p></b> </div><div><a> </a><p>p</p>after <a href=#>l</a></div>"
    "<div><a href=#><img src=x.png></a><p>q</p>tail</div><li> <code> </code> </li>",
    # breaks a block's text keeps (one a line break, several a paragraph break; none at its ends)
    # and those it does not (headings, table rows, <pre>)
    "<p><br>a<br>b <br> \n <br>c<br><b><br></b></p><h3>h<br>i</h3><div>x<br><br></div>"
    "<table><tr><td>r<br>s</td></tr></table><pre>p<br>q</pre><li>\u00a0<br>li</li>",
    # code languages: the pre's, its code's, its wrappers' (two levels up), data-lang, none
    "<div class='highlight-python'><div class=highlight><pre>a</pre></div></div>"
    "<pre class='brush: js'>b<div>c</div></pre><pre data-lang=Ruby><code class=lang-go>d</code></pre>"
    "<div class=highlight-default><div><div><pre class=language->e</pre></div></div></div>",
]


@needs_compiled_walk
@pytest.mark.parametrize("html", _HAND_MADE)
def test_compiled_walk_equals_python_on_hand_made_pages(
    html: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = _both_ways(html, monkeypatch)
    assert fast == slow


def _without_html(normalised: tuple[object, ...]) -> tuple[object, ...]:
    title, warnings, blocks = normalised
    return title, warnings, tuple((b[0], b[1], "", *b[3:]) for b in blocks)  # type: ignore[union-attr]


@needs_compiled_walk
def test_a_walk_without_markup_gives_the_same_blocks_with_empty_html(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # text output segments with SegmentConfig.markup off: the same blocks, html "", both walks
    # (links on or off: they live in the markup)
    pages: list[str | bytes] = [*_HAND_MADE, *(p.read_bytes() for p in _test_pages(data_dir))]
    pages += [case.data for case in corpus.cases(fast=True) if len(case.data) < 500_000]
    checked = 0
    for html in pages:
        try:
            doc = clean_document(parse_html(html, url="https://example.org/a/"))
        except BlockdexError:
            continue
        for links in (False, True):
            with_markup = dataclasses.replace(segment_module.DEFAULT_SEGMENT, links=links)
            cfg = dataclasses.replace(with_markup, markup=False)
            full = _without_html(_normalised(segment_module.segment_document(doc, with_markup)))
            fast = _normalised(segment_module.segment_document(doc, cfg))
            with monkeypatch.context() as m:
                m.setattr(segment_module, "compiled", None)
                slow = _normalised(segment_module.segment_document(doc, cfg))
            assert fast == slow == full
        checked += 1
    assert checked > 60


@needs_compiled_walk
@pytest.mark.parametrize("levels", [2, 3, 12])
def test_compiled_walk_equals_python_at_any_path_depth(
    levels: int, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the class/id levels too
    cfg = dataclasses.replace(
        segment_module.DEFAULT_SEGMENT, max_path_levels=levels, max_attr_levels=levels
    )
    for path in _test_pages(data_dir):
        doc = clean_document(parse_html(path.read_bytes()))
        fast = segment_module.segment_document(doc, cfg)
        with monkeypatch.context() as m:
            m.setattr(segment_module, "compiled", None)
            slow = segment_module.segment_document(doc, cfg)
        assert _normalised(fast) == _normalised(slow)
        assert all(b.path.count(">") < levels for b in fast.blocks if b.tag != "img")


@needs_compiled_walk
def test_compiled_walk_equals_python_on_the_test_pages(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for path in _test_pages(data_dir):
        fast, slow = _both_ways(path.read_bytes(), monkeypatch)
        assert fast == slow, path.name


@needs_compiled_walk
def test_compiled_walk_equals_python_on_hostile_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    for case in corpus.cases(fast=True):
        fast, slow = _both_ways(case.data, monkeypatch)
        assert fast == slow, case.name


def _cleaned_both_ways(html: str | bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    fast, slow = parse_html(html), parse_html(html)
    clean_module.drop_noise(fast)
    with monkeypatch.context() as m:
        m.setattr(clean_module, "compiled", None)
        clean_module.drop_noise(slow)
    return fast.tree.html or "", slow.tree.html or ""


@needs_compiled_walk
def test_noise_removal_by_present_names_equals_stripping_every_name(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages = [p.read_bytes() for p in _test_pages(data_dir)] + [
        c.data for c in corpus.cases(fast=True)
    ]
    for html in [*_HAND_MADE, *pages]:
        try:
            fast, slow = _cleaned_both_ways(html, monkeypatch)
        except BlockdexError:
            continue
        assert fast == slow


@needs_compiled_walk
def test_swallowed_markup_check_equals_the_css_query(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages = [p.read_bytes() for p in _test_pages(data_dir)] + [
        c.data for c in corpus.cases(fast=True)
    ]
    swallowing = [
        "<title>" + "<p>para</p>" * 60,
        "<html><body><textarea>" + "<b>x</b>" * 80 + "</body>",
        "<svg><title>" + "<i>a</i> " * 60 + "</title></svg>",
        "<title>short</title><p>body</p>",
    ]
    found = 0
    for html in [*swallowing, *pages]:
        try:
            text = html if isinstance(html, str) else html.decode("utf-8", "replace")
            tree = parse_module.parse_bounded(text)[0]
        except BlockdexError:
            continue
        fast = parse_module.repair_swallowed_markup(tree, text)
        with monkeypatch.context() as m:
            m.setattr(parse_module, "compiled", None)
            slow = parse_module.repair_swallowed_markup(tree, text)
        assert fast == slow
        found += fast is not None
    assert found >= 2


@needs_compiled_walk
def test_compiled_meta_rows_equal_the_css_query(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages: list[str | bytes] = [p.read_bytes() for p in _test_pages(data_dir)]
    pages += [c.data for c in corpus.cases(fast=True)]
    pages.append(
        "<svg><meta name=a content=b></svg><link rel><link REL=Canonical href=x>"
        "<META Property=og:title CONTENT=T><meta name=description>"
        '<script type="Application/LD+JSON">{"a": 1}</script><script type=" application/ld+json">'
        '{}</script><svg><script type="application/ld+json">{"c": 3}</script></svg>'
        '<script type="application/ld+json"></script><script TYPE=application/ld+json>[]</script>'
    )
    pages.append(  # the first title and html count, wherever they are
        "<html xml:lang=fr><body><svg><title>a <tspan>b</tspan></title></svg><title>c</title>"
    )
    pages.append("<html lang=de><head><title></title></head></html>")
    seen = 0
    kinds: Counter[str] = Counter()
    for html in pages:
        try:
            tree = parse_html(html).tree
        except BlockdexError:
            continue
        fast = parse_module._meta_rows(tree)
        with monkeypatch.context() as m:
            m.setattr(parse_module, "compiled", None)
            slow = parse_module._meta_rows(tree)
        assert fast == slow
        seen += len(fast)
        kinds.update(row[0] for row in fast)
    assert seen > 10
    assert kinds["ld+json"] >= 5 and kinds["meta"] and kinds["link"]
    assert kinds["title"] >= 5 and kinds["html"] >= 5


@needs_compiled_walk
def test_compiled_script_listing_equals_the_css_query(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages: list[str | bytes] = [p.read_bytes() for p in _test_pages(data_dir)]
    pages += [c.data for c in corpus.cases(fast=True)]
    pages.append(
        '<script>document.write("<p>x</p>")</script><script type=Module id=A></script>'
        "<svg><script>el.innerHTML = 'y'</script></svg><SCRIPT ID=__NEXT_DATA__>{}</SCRIPT>"
        "<script>var __NUXT__ = {}</script><script>writer.innerHTMLish()</script>"
        '<script type="application/ld+json">{"text": "été"}</script><p>body</p>'
    )
    found: Counter[int] = Counter()  # needle masks
    for html in pages:
        try:
            doc = parse_html(html, scripts=clean_module.SCRIPTS_READ)
        except BlockdexError:
            continue
        assert doc.scripts is not None  # listed by parse_html's walk
        surveyed = [(t, i, read(), holds) for t, i, read, holds in clean_module._scripts(doc)]
        doc.scripts = None
        fast = [(t, i, read(), holds) for t, i, read, holds in clean_module._scripts(doc)]
        with monkeypatch.context() as m:
            m.setattr(clean_module, "compiled", None)
            slow = [(t, i, read(), holds) for t, i, read, holds in clean_module._scripts(doc)]
        assert fast == slow
        assert [(t, i, h) for t, i, _, h in surveyed] == [(t, i, h) for t, i, _, h in fast]
        for (stype, sid, code, holds), (*_, full, _) in zip(surveyed, fast, strict=True):
            # the walk kept the code of every script the cleaner reads
            if holds or "json" in stype or sid in clean_module.STATE_SCRIPT_IDS:
                assert code == full
        found.update(row[3] for row in fast)
    assert found[0] >= 4 and found[1] and found[2]  # none, state only, HTML writes only
    assert sum(n for mask, n in found.items() if mask) >= 4


@needs_compiled_walk
def test_page_survey_finds_what_the_swallow_and_script_walks_find(data_dir: Path) -> None:
    # meta_elements returns page_survey's rows: test_compiled_meta_rows_equal_the_css_query
    # checks them against the CSS query
    pages: list[str | bytes] = [p.read_bytes() for p in _test_pages(data_dir)]
    pages += [c.data for c in corpus.cases(fast=True)]
    pages += ["<title>" + "<p>para</p>" * 60, "<textarea>" + "<b>x</b>" * 80]
    limits = parse_module.DEFAULT_LIMITS
    suspects = 0
    for html in pages:
        try:
            text = html if isinstance(html, str) else html.decode("utf-8", "replace")
            tree = parse_module.parse_bounded(text)[0]
        except BlockdexError:
            continue
        if tree.root is None:
            continue
        root = tree.root.mem_id
        suspect, _, scripts, _ = parse_module._survey(tree, limits, clean_module.SCRIPTS_READ)
        assert suspect == parse_c.swallow_suspects(
            root, parse_module._SWALLOWING, limits.swallowed_chars
        )
        listed = clean_c.script_elements(root, clean_module.SCRIPTS_READ.needles)
        assert [(t, i, h) for t, i, _, h in scripts] == [(t, i, h) for t, i, _, h in listed]
        suspects += suspect
    assert suspects >= 2


_script_texts = st.lists(
    st.sampled_from(
        [*STATE_NAMES, *HTML_WRITES, "__", "_", "__NUXT", "__DATA_", "document.", "write",
         ".inner", "HTML", "__proto__", "x", " ", "\u00e9", "\u4e2d", "\U0001f600"]
    ),
    max_size=10,
).map("".join)  # fmt: skip


@needs_compiled_walk
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_script_texts)
def test_compiled_script_needle_masks_name_the_needles_the_code_holds(code: str) -> None:
    """Bit g of a script's mask (both compiled walks) is set when its code holds a needle of
    ``SCRIPT_NEEDLE_GROUPS[g]`` (framework state, HTML writes)."""
    tree = parse_module.parse_bounded(f"<body><script>{code}x</script></body>")[0]
    assert tree.root is not None
    root = tree.root.mem_id
    want = clean_module._needle_mask(code + "x")
    scripts = parse_module._survey(tree, parse_module.DEFAULT_LIMITS, clean_module.SCRIPTS_READ)[2]
    assert [h for *_, h in scripts] == [want]
    listed = clean_c.script_elements(root, clean_module.SCRIPTS_READ.needles)
    assert [h for *_, h in listed] == [want]


@needs_compiled_walk
def test_compiled_noise_removal_leaves_the_tree_the_python_steps_leave(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages: list[str | bytes] = [p.read_bytes() for p in _test_pages(data_dir)]
    pages += [c.data for c in corpus.cases(fast=True)]
    pages += [
        '<p style="color:red;display: none">a<svg><g>x</g></svg></p><p>kept</p>',
        "<p HIDDEN>b</p><p style='DISPLAY:NONE'>case kept, as lexbor compares</p>",
        '<span style="visibility:hidden">c<script>1</script></span><SVG><path/></SVG>',
        "<form><input type=HIDDEN name=x><select><option>o</select></form><p>after</p>",
        '<svg><g style="display:none"><text>t</text></g></svg><math><mi>x</mi></math>',
        "<html hidden><head><title>t</title></head><body><p>root hidden</p></body></html>",
        '<html><body style="display:none"><p>body hidden</p></body></html>',
        "<html><head hidden><meta name=a content=b></head><body><p>x</p></body></html>",
        "<body><noscript>" + "<b>x</b>" * 600 + "</noscript><p>y</p>",  # 1,199 joined
        "<body><p>a</p><noscript><p>" + "words " * 200 + "</p></noscript>",
        "<div hidden><noscript><p>" + "words " * 200 + "</p></noscript></div><p>z</p>",
        "<template><p>t</p><noscript>n</noscript></template><dialog>d</dialog><p>w</p>",
    ]
    compiled_runs = 0
    for html in pages:
        for noscript_chars in (1000, 0):
            cfg = dataclasses.replace(
                clean_module.DEFAULT_CLEAN, noscript_content_chars=noscript_chars
            )
            try:
                fast, slow = parse_html(html), parse_html(html)
            except BlockdexError:
                break
            assert fast.tree.root is not None
            root_id = fast.tree.root.mem_id
            would = clean_c.noise_drop(root_id, clean_module._NOISE_NAMES, noscript_chars, 0, 0)
            if would is not None:  # the dry run above changed the tree: parse again
                compiled_runs += 1
                fast = parse_html(html)
            clean_module.drop_noise(fast, cfg)
            with monkeypatch.context() as m:
                m.setattr(clean_module, "compiled", None)
                clean_module.drop_noise(slow, cfg)
            assert fast.tree.html == slow.tree.html
            assert (fast.tree.body is None) == (slow.tree.body is None)
            assert (fast.tree.head is None) == (slow.tree.head is None)
    assert compiled_runs > 20


_INTERFACE_PAGES = [
    # hover cards: by class, nested (the inner one goes), triggers, a "MORE" card after its name
    '<p>A <span class="tooltip">t<span class="tooltiptext">tip</span></span> '
    '<span class="s-popover--content">p</span><a class="x-tooltip">a</a>'
    '<span class="q-tooltip" title="x">titled</span><div class="ss-tooltip">'
    '<button class="ss-tooltip-label">n</button></div><body class="wvs-tooltip">b</body></p>',
    '<p>Gov. <span><a href="/p">Name</a> <!-- c --> <span><span><a href="/p">Full</a>'
    '<a href="/s">Story</a><a href="/p">More »</a></span></span></span> said.</p>'
    '<p><a href="/q">N</a><div><a href="/r">x</a><a href="/q">MORE</a></div></p>',
    # permalinks: by class, by the id of the heading or its section, glyphs, words, too long
    '<section id=s><h2 id=h>T<a class="headerlink" href="#s">¶</a>'
    '<a href="#h"> 🔗️ </a><a href="#h">Link to this heading</a>'
    '<a href="#h">words here</a><a href="#other">#</a><a class=ANCHOR href=/x>§</a>'
    f'<a class=anchor href="#h">{"#" * 70}</a></h2></section>',
]


@needs_compiled_walk
def test_compiled_interface_removal_leaves_the_tree_the_python_rules_leave(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the compiled walk only picks the candidates the rules read: the same elements go
    pages: list[str | bytes] = [*_INTERFACE_PAGES, *_HAND_MADE]
    pages += [p.read_bytes() for p in _test_pages(data_dir)]
    pages += [c.data for c in corpus.cases(fast=True)]
    removed = 0
    for html in pages:
        try:
            fast, slow = parse_html(html), parse_html(html)
        except BlockdexError:
            continue
        clean_module.drop_noise(fast)
        clean_module.drop_noise(slow)
        n_fast = clean_module.drop_interface(fast)
        with monkeypatch.context() as m:
            m.setattr(clean_module, "compiled", None)
            n_slow = clean_module.drop_interface(slow)
        assert n_fast == n_slow
        assert fast.tree.html == slow.tree.html
        removed += n_fast
    assert removed >= 7  # the hand-made pages alone remove 7


@pytest.mark.parametrize(
    "html",
    [
        "<html hidden><body><p>This page hides itself until a script runs.</p></body>",
        '<html><body style="display:none"><p>This page hides itself until a script runs.</p>',
        "<body hidden><p>This page hides itself until a script runs.</p><p hidden>not this</p>",
    ],
)
def test_a_hidden_root_or_body_is_kept(html: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from blockdex import extract

    # selectolax refused to remove the root (a traceback); a removed body left nothing
    assert extract(html, predictor="all") == "This page hides itself until a script runs.\n"
    monkeypatch.setattr(clean_module, "compiled", None)
    assert extract(html, predictor="all") == "This page hides itself until a script runs.\n"


_random_html = importlib.import_module("tests.test_segment")._html()


@needs_compiled_walk
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_random_html)
def test_compiled_walk_equals_python_on_random_html(html: str) -> None:
    with pytest.MonkeyPatch.context() as mp:
        fast, slow = _both_ways(html, mp)
    assert fast == slow


@needs_compiled_walk
def test_compiled_walk_equals_python_on_dataset_pages(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("scrapinghub-aeb", "l3s-gn1", "wcxb", "trafilatura-eval"):
        for page in load_dataset(name, limit=60):
            fast, slow = _both_ways(page.html, monkeypatch)
            assert fast == slow, f"{name} {page.id}"


@needs_compiled
def test_features_are_unchanged_by_the_compiled_walk(
    article_html: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = clean_document(parse_html(article_html))
    fast = block_features(segment_module.segment_document(doc))
    monkeypatch.setattr(segment_module, "compiled", None)
    slow = block_features(segment_module.segment_document(doc))
    np.testing.assert_array_equal(fast, slow)


# -- the parse limits' long-tag scan -----------------------------------------------------------------

# with characters one of whose bytes is that of '<' or '>' (two-byte text is searched by byte)
_MARKUP_PIECES = ["<", ">", "<a", "<Z", "<1", "x", " ", "\u00e9", "\U0001f600", " b=1", '"']
_MARKUP_PIECES += ["\u013c", "\u3e3c", "\u3c00", "\u013e", "\u2019"]
# four-byte characters whose low sixteen bits are '<', '>' or a letter
_MARKUP_PIECES += ["\U0001003c", "\U0001003e", "\U00010041"]
_markupish = st.lists(st.sampled_from(_MARKUP_PIECES), max_size=60).map("".join)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(_markupish, st.integers(0, 6))
def test_compiled_long_tag_scan_equals_the_regex(text: str, min_chars: int) -> None:
    rx = parse_module._long_tag_re(min_chars)
    assert parse_c.long_tags(text, min_chars) == [m.span() for m in rx.finditer(text)]


@needs_compiled
def test_compiled_long_tag_scan_equals_the_regex_on_test_pages(data_dir: Path) -> None:
    for path in sorted(data_dir.glob("**/*.html")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for n in (1, 40, 1000):
            expected = [m.span() for m in parse_module._long_tag_re(n).finditer(text)]
            assert parse_c.long_tags(text, n) == expected, (path.name, n)


@needs_compiled
@pytest.mark.parametrize("wide", ["", "\u3042", "\U0001f600"])
def test_compiled_long_tag_scan_finds_more_spans_than_its_first_buffer(wide: str) -> None:
    """Two- and four-byte text keeps the first 64 spans in a fixed buffer and scans again for
    more: 300 long tags, each found."""
    text = wide + "".join(f"<a b=1 c=2 d{k}>x" for k in range(300)) + "<"
    rx = parse_module._long_tag_re(3)
    assert parse_c.long_tags(text, 3) == [m.span() for m in rx.finditer(text)]
    assert len(parse_c.long_tags(text, 3)) == 300
    assert parse_c.tag_scan(text, 3)[0] == text.count("<")


_attributish = st.lists(
    st.sampled_from(
        ["<a", " ", "b", "=", '"', "'", "/", ">", "\xa0", "\u3000", "x=1", 'c="d e"', "é", "<"]
    ),
    max_size=60,
).map("".join)


@needs_compiled
@settings(max_examples=500, deadline=None)
@given(_attributish)
def test_name_runs_bound_the_attribute_count(text: str) -> None:
    """The crowded-tag check counts attributes only where the runs allow too many."""
    runs = parse_c.name_runs(text, 0, len(text))
    assert runs >= len(parse_module._ATTR_RE.findall(text, 0, len(text)))


@needs_compiled
@settings(max_examples=500, deadline=None)
@given(st.one_of(_attributish, _markupish), st.integers(0, 8))
def test_tag_scan_counts_every_lt_and_finds_the_crowded_spans(text: str, limit: int) -> None:
    n_lt, spans = parse_c.tag_scan(text, limit)
    assert n_lt == text.count("<")
    assert spans == [
        (i, j) for i, j in parse_c.long_tags(text, limit) if parse_c.name_runs(text, i, j) > limit
    ]


@needs_compiled
def test_tag_scan_counts_on_test_pages(data_dir: Path) -> None:
    for path in _test_pages(data_dir):
        text = path.read_text(encoding="utf-8", errors="replace")
        for variant in (text, text.encode("ascii", "ignore").decode(), text + "\U0001f600<"):
            assert parse_c.tag_scan(variant, 40)[0] == variant.count("<"), path.name


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(_attributish, st.integers(0, 8))
def test_compiled_crowded_tag_check_equals_the_regexes(text: str, max_attributes: int) -> None:
    fast = parse_module._tag_count_and_crowding(text, max_attributes)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(parse_module, "compiled", None)
        assert fast == parse_module._tag_count_and_crowding(text, max_attributes)
    tags = [m.group() for m in parse_module._long_tag_re(max_attributes).finditer(text)]
    crowded = any(len(parse_module._ATTR_RE.findall(t)) > max_attributes for t in tags)
    assert fast == (text.count("<"), crowded)  # the definition, counting every match


# -- per-block feature columns -------------------------------------------------------------------

# Readability's class words in every position: overlapping (foot/footer), at the ends, with a
# hyphen, split by a non-ASCII character (the compiled scan hands those strings to the regexes),
# in html/body (never removed) and nested past the path levels.
_CLASS_WORDS_PAGE = (
    "<body class='sidebar'><div id='main-content' class='post'>"
    + "".join(
        f"<div class='{c}'><p>{t}, a paragraph of readable prose, with commas, and more words "
        f"here.</p><p>Short line.</p><ul><li>item</li></ul></div>"
        for c, t in [
            ("footer", "Footer words"),
            ("foot-note", "Note"),
            ("com-box", "Box"),
            ("ad-break", "Ad"),
            ("comment\u00e9 hentry", "Latin"),
            ("comm\u4e2dent article", "Wide"),
            ("x" * 190 + " sidebar", "Long"),
            ("a", "Letter"),
            ("tags widget related", "Related"),
        ]
    )
    + "<div><div><div><div><div><div><div><div><div><div><div><div><div class=text>"
    "<p>Deep prose, nested past the path levels, with enough characters to count.</p>"
    + "</div>" * 13
    + "</div></body>"
)


def _features_both_ways(html: str | bytes, monkeypatch: pytest.MonkeyPatch):
    page = segment_module.segment_document(clean_document(parse_html(html)))
    fast = block_features(page)
    with monkeypatch.context() as m:
        m.setattr(features_module, "compiled", None)
        m.setattr(candidates_module, "compiled", None)
        slow = block_features(page)
    return fast, slow


@needs_compiled
def test_compiled_feature_columns_equal_python_on_test_pages(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for path in _test_pages(data_dir):
        fast, slow = _features_both_ways(path.read_bytes(), monkeypatch)
        np.testing.assert_array_equal(fast, slow, err_msg=path.name)


@needs_compiled
@pytest.mark.parametrize(
    "html",
    [
        *_HAND_MADE,
        "<p>one</p>",
        "<p>A long enough paragraph of prose, with words and more words in it.</p>",
        "<nav><a href=/a>1</a> <a href=/b>2</a></nav><p>Prose of eight words or more, 2024.</p>"
        "<p>\u3002\uff0c short</p><footer>\U0001f600 12 34</footer>",
        _CLASS_WORDS_PAGE,
    ],
)
def test_compiled_feature_matrix_equals_python_on_small_pages(
    html: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = _features_both_ways(html, monkeypatch)
    np.testing.assert_array_equal(fast, slow)


@needs_compiled
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_random_html)
def test_compiled_feature_matrix_equals_python_on_random_html(html: str) -> None:
    with pytest.MonkeyPatch.context() as mp:
        try:
            fast, slow = _features_both_ways(html, mp)
        except BlockdexError:  # not HTML: nothing to compare
            return
    np.testing.assert_array_equal(fast, slow)


# Characters at, just inside and just outside each range whose characters count as words.
_CJK_EDGES = sorted({chr(c) for lo, hi in CJK_RANGES for c in (lo - 1, lo, hi, hi + 1)})
_wordy = st.lists(
    st.sampled_from(
        ["The", "the", "AND", "of", "x", " ", "\x1c", "\t\n", "Caf\u00e9", "a" * 70, "Title",
         "\u0130", "2024", "of.", "\xa0", "Über", "und", "\U0001f600", "\u3002", "!",
         "\u212a", "\u2028", "»", "ǅ", "\u1e9e", "THE\u212a", *_CJK_EDGES, "图书馆",
         "\uff0c", "\u3000"]
    ),
    max_size=30,
).map("".join)  # fmt: skip


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    st.lists(_wordy, min_size=1, max_size=5),
    st.sampled_from(["", "The title", "a" * 70, "Über Café und \u0130", "k \u212a"]),
)
def test_compiled_word_counts_equal_python(texts: list[str], title: str) -> None:
    blocks = tuple(Block(index=i, tag="p", html=t, text=t) for i, t in enumerate(texts))
    stops = features_module.stopwords()
    title_words = set(features_module.WORD_RE.findall(title.lower()))
    fast = features_module._block_columns(blocks, stops, title_words)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(features_module, "compiled", None)
        slow = features_module._block_columns(blocks, stops, title_words)
    np.testing.assert_array_equal(fast, slow)


@needs_compiled
def test_compiled_feature_columns_equal_python_on_dataset_pages(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("scrapinghub-aeb", "l3s-gn1", "wcxb", "trafilatura-eval"):
        for page in load_dataset(name, limit=40):
            fast, slow = _features_both_ways(page.html, monkeypatch)
            np.testing.assert_array_equal(fast, slow, err_msg=f"{name} {page.id}")


@needs_compiled
def test_one_compiled_call_after_the_columns_equals_python(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # block_feature_matrix (page features, prose words, scope columns and the matrix in one
    # call) is what block_features uses; called directly here so that a fallback cannot hide it
    f = features_module
    for page_data in load_dataset("scrapinghub-aeb", limit=30):
        page = segment_module.segment_document(clean_document(parse_html(page_data.html)))
        blocks = page.blocks
        title_words = set(f.WORD_RE.findall(page.title.lower())) if page.title else set()
        cols = f._block_columns(blocks, f.stopwords(), title_words)
        path_ids, path_of, attr_ids, attr_of = f._path_attr_ids(blocks)
        path_rows = np.empty((len(path_ids), len(f.PATH_TAGS)), dtype=np.float32)
        features_c.path_rows(list(path_ids), f.PATH_TAGS, path_rows)
        out = np.empty((len(blocks), len(f.BASE_FEATURE_NAMES)), dtype=np.float32)
        features_c.block_feature_matrix(
            blocks, cols, path_of, attr_of, path_rows, f._attr_matrix(attr_ids),
            float(page.html_bytes), max(len(title_words), 1), f.REPEAT_LEVELS, f.SCOPE_LEVELS,
            f.MAIN_CONTAINER_SHARE, f.CHARS_PER_WORD, f.GOOD_MIN_WORDS,
            f.GOOD_MAX_LINK_DENSITY, f.CONTEXT_WINDOW, out,
        )  # fmt: skip
        with monkeypatch.context() as m:
            m.setattr(features_module, "compiled", None)
            slow = block_features(page)[:, : len(f.BASE_FEATURE_NAMES)]
        np.testing.assert_array_equal(out, slow, err_msg=page_data.id)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0, 1e-300, 0.1 + 0.2]) | st.floats(0, 1),
                  st.integers(0, 5), st.integers(0, 3)),
        min_size=1,
        max_size=60,
    )
)  # fmt: skip
def test_compiled_context_columns_equal_numpy(rows: list[tuple[float, int, int]]) -> None:
    p = np.array([r[0] for r in rows])
    groups = np.array([[r[1], r[2], r[1] + r[2], 7, r[2]] for r in rows], dtype=np.int32)
    fast = features_module.context_features(p, groups)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(features_module, "compiled", None)
        slow = features_module.context_features(p, groups)
    np.testing.assert_array_equal(fast, slow)


@needs_compiled
def test_compiled_context_columns_equal_numpy_on_dataset_pages(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ContentModel.load()
    for name in ("scrapinghub-aeb", "wcxb", "trafilatura-eval"):
        for page in load_dataset(name, limit=30):
            seg = segment_module.segment_document(clean_document(parse_html(page.html)))
            p1 = model.stage1.predict(block_features(seg))
            groups = features_module.block_groups(seg)
            fast = features_module.context_features(p1, groups)
            with monkeypatch.context() as m:
                m.setattr(features_module, "compiled", None)
                slow = features_module.context_features(p1, groups)
            np.testing.assert_array_equal(fast, slow, err_msg=f"{name} {page.id}")


def _stage2_rows_numpy(
    blocks: tuple[Block, ...], p: np.ndarray, X: np.ndarray, lo: float, hi: float
) -> tuple[np.ndarray, np.ndarray]:
    """What ContentModel.probabilities built before stage2_rows, on the Python path."""
    page = Page(blocks=blocks)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(features_module, "compiled", None)
        ctx = features_module.context_features(p, features_module.block_groups(page))
    unsure = (p >= lo) & (p <= hi)
    return np.flatnonzero(unsure), np.hstack([X[unsure], ctx[unsure]])


def _stage2_rows(blocks: tuple[Block, ...], p: np.ndarray, X: np.ndarray, lo: float, hi: float):
    return content_c.stage2_rows(
        blocks, p, float(p.mean()), features_module.PROB_SCOPE_LEVELS,
        features_module.PROB_WINDOWS, lo, hi, X,
    )  # fmt: skip


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0.0, 0.03, 0.25, 0.5, 0.97, 1.0, 0.1 + 0.2]) | st.floats(0, 1),
                  st.integers(0, 3), st.lists(st.integers(0, 6), max_size=6)),
        min_size=1,
        max_size=70,
    ),
    st.sampled_from([(0.03, 0.97), (0.0, 1.0), (0.5, 0.5), (0.6, 0.4)]),
)  # fmt: skip
def test_compiled_stage2_rows_equal_numpy(
    rows: list[tuple[float, int, list[int]]], bounds: tuple[float, float]
) -> None:
    # ties in p (the rank column's stable order), shared and missing scope levels, paths
    blocks = tuple(
        Block(index=i, tag="p", html="x", text="x", path=f"body>p{path}",
              scope=tuple(1000 + 10 * lv + s for lv, s in enumerate(scope)))
        for i, (_, path, scope) in enumerate(rows)
    )  # fmt: skip
    p = np.array([r[0] for r in rows])
    X = np.random.default_rng(len(rows)).normal(size=(len(rows), 5)).astype(np.float32)
    positions, fast = _stage2_rows(blocks, p, X, *bounds)
    want_positions, slow = _stage2_rows_numpy(blocks, p, X, *bounds)
    np.testing.assert_array_equal(positions, want_positions)
    assert fast.dtype == slow.dtype == np.float32
    assert fast.shape == slow.shape
    np.testing.assert_array_equal(fast, slow)


@needs_compiled
def test_compiled_stage2_rows_give_way_past_64_bits_or_on_nan() -> None:
    blocks = (Block(index=0, tag="p", html="x", text="x", scope=(1 << 70, 5)),)
    X = np.zeros((1, 3), dtype=np.float32)
    assert _stage2_rows(blocks, np.array([0.5]), X, 0.03, 0.97) is None
    blocks = (Block(index=0, tag="p", html="x", text="x", scope=(4, 5)),)
    assert _stage2_rows(blocks, np.array([np.nan]), X, 0.03, 0.97) is None


@needs_compiled
def test_compiled_stage2_rows_equal_numpy_on_dataset_pages(shared_data: Path) -> None:
    model = ContentModel.load()
    for name in ("scrapinghub-aeb", "wcxb", "l3s-gn1", "trafilatura-eval"):
        for page in load_dataset(name, limit=30):
            seg = segment_module.segment_document(clean_document(parse_html(page.html)))
            X = block_features(seg)
            p1 = model.stage1.predict(X)
            positions, fast = _stage2_rows(seg.blocks, p1, X, 0.03, 0.97)
            want_positions, slow = _stage2_rows_numpy(seg.blocks, p1, X, 0.03, 0.97)
            np.testing.assert_array_equal(positions, want_positions, err_msg=page.id)
            np.testing.assert_array_equal(fast, slow, err_msg=f"{name} {page.id}")


@needs_compiled
def test_content_probabilities_equal_the_python_path(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = ContentModel.load()
    for page in load_dataset("scrapinghub-aeb", limit=40):
        seg = segment_module.segment_document(clean_document(parse_html(page.html)))
        fast = model.probabilities(seg, content_module.CONFIDENT)
        with monkeypatch.context() as m:
            m.setattr(content_module, "compiled", None)
            m.setattr(features_module, "compiled", None)
            slow = model.probabilities(seg, content_module.CONFIDENT)
        np.testing.assert_array_equal(fast, slow, err_msg=page.id)


# -- script rescue: string literals ----------------------------------------------------------------

_scriptish = st.lists(
    st.sampled_from(['"', "\\", "\n", "\r", "a", " ", "\u00e9", '\\"', '"x"', "\\\n", "'"]),
    max_size=50,
).map("".join)


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(_scriptish, st.sampled_from([0, 1, 3]))
def test_compiled_string_literal_scan_equals_the_regex(code: str, min_chars: int) -> None:
    expected = [
        m.span(1)
        for m in clean_module._STRING_LITERAL_RE.finditer(code)
        if m.group(2) == '"' and len(m.group(1)) >= min_chars
    ]
    assert clean_c.long_string_literals(code, min_chars) == expected


@needs_compiled
def test_rescued_text_is_the_same_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    prose = " ".join(["word"] * 60)
    code = (
        'window.__INITIAL_STATE__ = {"a": "'
        + prose
        + '", "b": "short", "c": "'
        + prose.replace("word", "w\\u00e9rd\\n")
        + '", "d": "unclosed '
        + prose
        + "\n}"
    )
    fast = list(clean_module._prose_literals(code, 200))
    monkeypatch.setattr(clean_module, "compiled", None)
    assert fast == list(clean_module._prose_literals(code, 200))
    assert len(fast) == 2 and "w\u00e9rd" in fast[1]


# -- numbering: Block objects ------------------------------------------------------------------------


def test_raw_block_fields_are_in_the_order_the_compiled_walk_passes_them() -> None:
    assert [f.name for f in dataclasses.fields(segment_module._RawBlock)] == [
        "tag", "html", "text", "chain", "path", "attrs", "depth", "link_chars", "n_links",
        "attributes", "source", "scope", "scope_attrs",
    ]  # fmt: skip


@needs_compiled
def test_compiled_block_construction_sets_every_field_of_block() -> None:
    assert tuple(f.name for f in dataclasses.fields(Block)) == segment_c.BLOCK_FIELDS
    raw = segment_module._RawBlock(
        tag="p",
        html="<b>x</b>",
        text="x",
        chain=(("p", 7),),
        path="body>p",
        attrs="a | b",
        depth=2,
        link_chars=1,
        n_links=1,
        attributes=(("src", "s"),),
        source="dom",
        scope=(3, 7),
        scope_attrs=("main", "post"),
    )
    fast = segment_c.block_from_raw(Block, 4, raw)
    slow = segment_module._python_block_from_raw(Block, 4, raw)
    assert type(fast) is Block and fast == slow and hash(fast) == hash(slow)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.text = "changed"  # type: ignore[misc]


@needs_compiled
def test_compiled_scope_columns_equal_python(monkeypatch: pytest.MonkeyPatch) -> None:
    html = (
        "<body><main><article>"
        + "".join(
            f"<p>Paragraph {i} has quite a few words in it, enough for prose.</p>" for i in range(6)
        )
        + "</article><ul>"
        + "".join(f"<li><div class=card><a href=/{i}>Teaser {i}</a></div></li>" for i in range(5))
        + "</ul></main><footer><p>Footer text with several words but a link <a href=/>x</a></p>"
        "</footer></body>"
    )
    fast, slow = _features_both_ways(html, monkeypatch)
    np.testing.assert_array_equal(fast, slow)


@needs_compiled
@pytest.mark.parametrize("base", [0, 1 << 40, -(1 << 45), 1 << 70])
def test_compiled_scope_columns_equal_python_for_any_ids(
    base: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Synthetic scopes (shared, repeated and missing levels; ids past 64 bits make the
    compiled pass give way to the Python loops): the columns equal the Python ones."""
    rng = np.random.default_rng(7)
    blocks = []
    for i in range(60):
        depth = int(rng.integers(0, 7))
        scope = tuple(base + int(rng.integers(0, 12)) * 7 + lv for lv in range(depth))
        words = " ".join(["word"] * int(rng.integers(0, 40)))
        blocks.append(Block(index=i, tag="p", html=words, text=words, scope=scope,
                            path=f"body>div>p{i % 4}"))  # fmt: skip
    page = Page(blocks=tuple(blocks), title="t")
    fast = block_features(page)
    with monkeypatch.context() as m:
        m.setattr(features_module, "compiled", None)
        slow = block_features(page)
    np.testing.assert_array_equal(fast, slow)
    assert fast.shape[0] == 60


_spacey = st.lists(
    st.sampled_from(
        [
            "a",
            "\u00e9",
            "\U0001f600",
            " ",
            "  ",
            "\t",
            "\n",
            "\xa0",
            "\u3000",
            "\u2028",
            "\x1c",
            "\u200b",
        ]
    ),
    max_size=40,
).map("".join)


@needs_compiled
@settings(max_examples=400, deadline=None)
@given(_spacey)
def test_compiled_whitespace_squash_equals_split_and_join(text: str) -> None:
    assert segment_c.squash(text) == " ".join(text.split())


# -- class/id token families -----------------------------------------------------------------------

_family_words = [w for _, _, w in features_module._family_word_table() or []]
_class_strings = st.lists(
    st.one_of(
        st.sampled_from(_family_words or ["x"]),
        st.sampled_from([" ", "-", "_", "--", "\xa0", "\u3000", "s", "x", "1", "\u00e9", "|"]),
        st.text(alphabet="abcdeilmnoprst", max_size=4),
    ),
    max_size=12,
).map("".join)


def test_every_family_pattern_is_a_word_table() -> None:
    """The compiled matcher needs plain word alternations; a richer pattern would silently
    send every page to the slower regex path."""
    rows = features_module._family_word_table()
    assert rows is not None
    assert {k for k, _, _ in rows} == set(range(len(features_module.ATTR_FAMILIES)))


@needs_compiled
def test_the_compiled_word_table_refuses_what_it_cannot_match() -> None:
    for row in ((0, 2, "caf\u00e9"), (0, 3, "nav"), (62, 0, "nav"), (0, 0, "")):
        with pytest.raises(ValueError, match="bad family word row"):
            features_c.set_family_words([row])
    assert features_module._compiled_families()  # the table in use is loaded again


@needs_compiled
@settings(max_examples=600, deadline=None)
@given(_class_strings)
def test_compiled_class_families_equal_the_regexes(level: str) -> None:
    assert features_c.level_mask(level) == features_module._level_mask.__wrapped__(level)


@needs_compiled
def test_compiled_family_rows_equal_python_on_dataset_attrs(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    strings = sorted(
        {
            b.attrs
            for name in ("scrapinghub-aeb", "l3s-gn1", "wcxb")
            for page in load_dataset(name, limit=60)
            for b in segment_module.segment_document(clean_document(parse_html(page.html))).blocks
        }
    )
    fast = features_module._attr_matrix(strings)
    with monkeypatch.context() as m:
        m.setattr(features_module, "compiled", None)
        slow = features_module._attr_matrix(strings)
    assert fast.sum() > 0
    np.testing.assert_array_equal(fast, slow)


_attrs_strings = st.lists(
    st.sampled_from(
        ["nav", "Menu", "post-body", "comment_list", " | ", " |", "| ", "|", " ", "", "caf\u00e9",
         "\u2019", "ad", "x" * 9, "sidebar widget", "  | | ", "footer-links"]
    ),
    max_size=14,
).map("".join)  # fmt: skip


@needs_compiled
@settings(max_examples=500, deadline=None)
@given(st.lists(_attrs_strings, max_size=8), st.booleans())
def test_compiled_family_rows_equal_python(strings: list[str], clear: bool) -> None:
    # one-byte strings go through the C level table, others through the dict; empty levels,
    # separators at the ends and side by side split as str.split(" | ") does
    if clear:
        features_c.clear_level_cache()
    fast = features_module._attr_matrix(strings)
    again = features_module._attr_matrix(strings)  # now from the table
    with pytest.MonkeyPatch.context() as m:
        m.setattr(features_module, "compiled", None)
        slow = features_module._attr_matrix(strings)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(again, slow)


# -- block groups and the parse depth check ----------------------------------------------------------


def _assert_same_partition(fast: np.ndarray, slow: np.ndarray, name: str) -> None:
    """Column by column, the two numberings group the same blocks together (a one-to-one map
    between their ids): all the context columns read of them."""
    assert fast.shape == slow.shape, name
    for j in range(fast.shape[1]):
        pairs = set(zip(fast[:, j].tolist(), slow[:, j].tolist(), strict=True))
        assert len(pairs) == len(set(fast[:, j].tolist())) == len(set(slow[:, j].tolist())), (
            f"{name}: column {j} groups other blocks together"
        )


def _groups_both_ways(page: Page, monkeypatch: pytest.MonkeyPatch) -> tuple[np.ndarray, ...]:
    fast = features_module.block_groups(page)
    with monkeypatch.context() as m:
        m.setattr(features_module, "compiled", None)
        slow = features_module.block_groups(page)
    return fast, slow


@needs_compiled
def test_compiled_block_groups_partition_like_python(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(3)
    for path in _test_pages(data_dir):
        page = segment_module.segment_document(clean_document(parse_html(path.read_bytes())))
        fast, slow = _groups_both_ways(page, monkeypatch)
        _assert_same_partition(fast, slow, path.name)
        p = rng.random(len(page.blocks))
        np.testing.assert_array_equal(
            features_module.context_features(p, fast),
            features_module.context_features(p, slow),
            err_msg=path.name,
        )


@needs_compiled
@pytest.mark.parametrize("base", [0, 1 << 40, -(1 << 45), 1 << 70])
def test_compiled_block_groups_for_any_ids(base: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Synthetic scopes (shared, repeated and missing levels; ids past 64 bits make the compiled
    numbering give way to the Python loop): the same partition as the Python loop."""
    rng = np.random.default_rng(11)
    blocks = []
    for i in range(50):
        depth = int(rng.integers(0, 7))
        scope = tuple(base + int(rng.integers(0, 9)) * 7 + lv for lv in range(depth))
        blocks.append(Block(index=i, tag="p", html="w", text="w", scope=scope,
                            path=f"body>div>p{i % 3}"))  # fmt: skip
    page = Page(blocks=tuple(blocks), title="t")
    fast, slow = _groups_both_ways(page, monkeypatch)
    _assert_same_partition(fast, slow, f"base {base}")
    assert len(set(fast[:, 0].tolist())) == 3


@needs_compiled_walk
def test_compiled_depth_check_equals_the_css_query() -> None:
    from selectolax.lexbor import LexborHTMLParser

    pages = [
        "<p>x</p>",
        "",
        "<template><div><div>x</div></div></template>",
        "<svg><g><g><g></g></g></g></svg>",
        "<table><tr><td><table><tr><td>x",
        "<div>" * 40 + "x",
        "<span><b><i>" * 10 + "x",
        *[case.data.decode("utf-8", "replace") for case in corpus.cases(fast=True)],
    ]
    # Only the pages parse_bounded asks this of: few tags, none crowded with attributes (lexbor's
    # CSS query takes minutes on an element with 300,000 attributes).
    limits = parse_module.DEFAULT_LIMITS
    pages = [
        p
        for p in pages
        if p.count("<") <= parse_module.PARSE_FIRST_MAX_TAGS
        and not parse_module._tag_count_and_crowding(p, limits.max_attributes)[1]
    ]
    for html in pages:
        tree = LexborHTMLParser(html)
        for depth in (1, 2, 3, 5, 12, 30, 512):
            expected = tree.css_first(parse_module._depth_selector(depth)) is not None
            root = tree.root
            got = root is not None and parse_c.has_deep_element(root.mem_id, depth)
            assert got == expected, (html[:60], depth)
            if root is not None:  # the survey's depth check (parse_html's one walk)
                surveyed = parse_c.page_survey(
                    root.mem_id,
                    parse_module._SWALLOWING,
                    limits.swallowed_chars,
                    clean_module.SCRIPTS_READ.needles,
                    clean_module.STATE_SCRIPT_IDS,
                    depth,
                )
                assert (surveyed is None) == expected, (html[:60], depth)
                if surveyed is not None:
                    assert surveyed == parse_c.page_survey(
                        root.mem_id,
                        parse_module._SWALLOWING,
                        limits.swallowed_chars,
                        clean_module.SCRIPTS_READ.needles,
                        clean_module.STATE_SCRIPT_IDS,
                    )


@needs_compiled_walk
@pytest.mark.parametrize("tag", ["div", "span", "template", "svg", "table"])
@pytest.mark.parametrize("extra", [-10, -3, 0, 1, 5])
def test_parse_html_checks_depth_in_the_survey_as_parse_bounded_does(
    tag: str, extra: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = parse_module.DEFAULT_LIMITS
    k = limits.max_depth + extra
    html = f"<title>t</title><p>{f'<{tag}>' * k}x<script>var a = 1</script>{f'</{tag}>' * k}"
    doc = parse_html(html)
    # parse_bounded's own check (a separate walk) before the survey
    first = parse_module._parse_first
    monkeypatch.setattr(parse_module, "_parse_first", lambda t, lim, _check: first(t, lim, True))
    ref = parse_html(html)
    assert (doc.warnings, doc.title, doc.html_chars, doc.scripts) == (
        ref.warnings,
        ref.title,
        ref.html_chars,
        ref.scripts,
    )
    assert doc.tree.html == ref.tree.html
    if tag in ("div", "span"):  # (lexbor nests template and table otherwise)
        assert bool(doc.warnings) == (extra > 0)  # flattened by bound_markup past max_depth
    if tag == "svg" and extra > 0:  # the scan drops a drawing's content: nothing to flatten
        assert not doc.warnings and "<svg></svg>" in doc.tree.html


@needs_compiled
def test_compiled_whitespace_squash_of_a_huge_text_equals_split_and_join() -> None:
    text = " lead\u3000" + "word \t\n" * 60_000 + "\xa0tail "  # over the window: windowed path
    assert segment_c.squash(text) == " ".join(text.split())


_title_texts = st.lists(
    st.sampled_from(
        ["Storm", "storm", "hits", "the", "TOWN", " ", "  ", "\u00e9t\u00e9", "\u3000", "x"]
    ),
    max_size=14,
).map("".join)


@needs_compiled
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(["p", "h1", "img", "li"]), _title_texts), max_size=12),
    st.floats(0, 20),
    st.floats(0, 80),
    st.integers(0, 8),
    st.integers(0, 3),
)
def test_compiled_title_candidates_equal_the_python_filter(
    rows: list[tuple[str, str]], shortest: float, longest: float, max_spaces: int, need: int
) -> None:
    blocks = tuple(
        Block(index=i, tag=tag, html=text, text=text) for i, (tag, text) in enumerate(rows)
    )
    probe = ("storm", "hits", "town", "the", "\u00e9t\u00e9")
    needs = ((("storm", "hits", "town"), 2), (("the", "\u00e9t\u00e9"), need))
    args = (blocks, shortest, longest, max_spaces, probe, need, needs)
    assert units_c.title_candidates(*args) == units_module._title_candidates(*args)


@needs_compiled
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["p", "h1", "h6", "h7", "h0", "hr", "H2", "h", "h12", "\u0125\u0032"]),
            _title_texts,
            st.sampled_from(["dom", "script", "meta"]),
            st.lists(st.integers(-(1 << 62), 1 << 62), max_size=3).map(tuple),
        ),
        max_size=12,
    )
)
def test_compiled_block_rows_equal_the_python_ones(
    rows: list[tuple[str, str, str, tuple[int, ...]]],
) -> None:
    """``heading_positions`` and the element ids and text-length sums ``find_units`` reads."""
    from itertools import accumulate

    blocks = tuple(
        Block(index=i, tag=tag, html=text, text=text, source=source, scope=scope)
        for i, (tag, text, source, scope) in enumerate(rows)
    )
    levels = [units_module.HEADING_LEVELS.get(b.tag, 0) for b in blocks]
    assert units_c.heading_positions(blocks) == [(i, v) for i, v in enumerate(levels) if v]
    element_ids = [b.scope[-1] if b.scope and b.source == "dom" else None for b in blocks]
    prefix = [0, *accumulate(len(b.text) for b in blocks)]
    assert units_c.unit_rows(blocks) == (element_ids, prefix)
    assert units_c.unit_rows([*blocks, object()]) is None  # not all Blocks: the Python code
    assert units_c.heading_positions([*blocks, object()]) is None


def test_the_compiled_ab_benchmark_switches_every_module_that_uses_the_compiled_code() -> None:
    """benchmarks/compiled_ab.py's "python" column must be the whole pure-Python path: every
    module that takes a compiled twin (``compiled = twin(__name__)``) is in its list, no module
    imports a compiled extension by itself, and each twin's .pyx sits beside its module."""
    import ast
    import importlib.util

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("compiled_ab", root / "benchmarks/compiled_ab.py")
    assert spec is not None and spec.loader is not None
    ab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ab)
    users = set()
    for path in (root / "src/blockdex").rglob("*.py"):
        name = ".".join(path.relative_to(root / "src").with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module == "blockdex.speedups"
                and any(a.name == "twin" for a in node.names)
            ):
                users.add(name)
            if isinstance(node, ast.ImportFrom | ast.Import) and name != "blockdex.speedups":
                imported = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
                imported += [a.name for a in node.names]
                assert not any(x.rpartition(".")[2].endswith("_c") for x in imported), name
        if name in users:  # the name compiled_ab switches is the one the module reads
            assert any(
                isinstance(n, ast.Assign)
                and [t.id for t in n.targets if isinstance(t, ast.Name)] == ["compiled"]
                and ast.unparse(n.value) == "twin(__name__)"
                for n in tree.body
            ), name
    assert users == set(ab.USERS) == set(TWINS)
    pyx = {
        ".".join(p.relative_to(root / "src").with_suffix("").parts)
        for p in (root / "src/blockdex").rglob("_*_c.pyx")
    }
    assert pyx == {twin_name(m) for m in TWINS} | {"blockdex._lexbor_c", "blockdex._common_c"}
    before = {m: importlib.import_module(m).compiled for m in TWINS}
    try:
        ab._set(dict.fromkeys(TWINS))
        assert all(importlib.import_module(m).compiled is None for m in TWINS)
    finally:
        ab._set(before)


@needs_compiled
@pytest.mark.parametrize("max_blocks", [1, 2, 3, 5, 8, 1000])
def test_compiled_numbering_equals_python_at_the_block_cap(
    max_blocks: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs of short blocks are numbered in C, long ones split in Python: the cap and the
    split parts land where the Python loop puts them."""
    long_text = " ".join(f"word{i}." for i in range(3000))
    html = (
        "<p>one</p><p>two</p>"
        f"<p>{long_text}</p><img alt='a caption' src=x.png><pre>{long_text}</pre><p>end</p>"
    )
    cfg = dataclasses.replace(segment_module.DEFAULT_SEGMENT, max_blocks=max_blocks)

    def run() -> tuple[object, ...]:
        page = segment_module.segment_document(clean_document(parse_html(html)), cfg)
        return _normalised(page)

    fast = run()
    with monkeypatch.context() as m:
        m.setattr(segment_module, "compiled", None)
        slow = run()
    assert fast == slow


@needs_compiled
@given(st.one_of(st.text(max_size=300), _wordy), st.integers(min_value=0, max_value=80))
@settings(max_examples=500, deadline=None)
def test_compiled_token_count_equals_the_regex(text: str, limit: int) -> None:
    full = len(segment_module._TOKEN_RE.findall(text))
    assert segment_c.count_tokens_upto(text, limit) == (full if full <= limit else limit + 1)


@needs_compiled
@given(
    st.text(alphabet=st.sampled_from(["a", "\x00", "\u2019", "\U0001f600", "\xe9"]), max_size=9000)
)
@settings(max_examples=300, deadline=None)
def test_compiled_nul_check_equals_in(text: str) -> None:
    assert parse_c.has_nul(text) == ("\x00" in text)


@needs_compiled
@given(
    st.text(
        alphabet=st.sampled_from(
            [
                "a",
                "\x00",
                "\x08",
                "\t",
                "\x0b",
                "\x0c",
                "\x0e",
                "\x1f",
                " ",
                "\x7f",
                "\x80",
                "\u2019",
                "\U0001f600",
            ]
        ),
        max_size=300,
    ),
    st.integers(min_value=-5, max_value=320),
)
@settings(max_examples=500, deadline=None)
def test_compiled_control_count_equals_the_regex(text: str, end: int) -> None:
    expected = len(parse_module._CONTROL_RE.findall(text[: max(end, 0)]))
    assert parse_c.count_controls(text, end) == expected


# -- the UTF-8 bytes lexbor parses ------------------------------------------------------------------


@needs_compiled
@given(
    st.text(
        alphabet=st.sampled_from(
            [
                *("a", "<", " ", "\x7f", "\x80", "\xe9", "\xff", "\u07ff", "\u0800", "\u2019"),
                *("\ud7ff", "\ud800", "\udbff", "\udc00", "\udfff", "\ue000", "\uffff"),
                *("\U00010000", "\U0001f600", "\U0010ffff"),
            ]
        ),
        max_size=200,
    )
)
@settings(max_examples=1000, deadline=None)
def test_compiled_utf8_encoder_equals_str_encode(text: str) -> None:
    # lone surrogates (any kind of text) are dropped, as errors="ignore" does; runs of 16+
    # characters take the ASCII fast path, the rest the character loop
    for t in (text, text * 20, "a" * 17 + text, text + "b" * 33):
        assert parse_c.utf8_ignore(t) == t.encode("utf-8", "ignore")


@needs_compiled
def test_compiled_utf8_encoder_equals_str_encode_on_dataset_pages(shared_data: Path) -> None:
    for name in ("scrapinghub-aeb", "l3s-gn1", "wcxb", "trafilatura-eval", "webmainbench-samples"):
        for page in load_dataset(name, limit=60):
            assert parse_c.utf8_ignore(page.html) == page.html.encode("utf-8", "ignore"), page.id


def test_lexbor_parses_the_encoded_bytes_as_it_parses_the_text() -> None:
    # bytes are parsed as UTF-8 as they are: no <meta charset> sniffing, no BOM handling
    from selectolax.lexbor import LexborHTMLParser

    for html in (
        '<meta charset="iso-8859-1"><p>caf\xe9 \u2019 \U0001f600</p>',
        '\ufeff<html><head><meta http-equiv="content-type" content="text/html; charset=shift_jis">'
        "<body><p>\u65e5\u672c\u8a9e \ud800 x</p>",
        "<p>plain ascii</p>",
    ):
        want = LexborHTMLParser(html).html
        assert parse_module._lexbor_parse(html).html == want
        assert LexborHTMLParser(html.encode("utf-8", "ignore")).html == want


@needs_compiled
def test_compiled_readability_columns_equal_python_on_dataset_pages(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("scrapinghub-aeb", "wcxb", "webmainbench-samples"):
        for page in load_dataset(name, limit=40):
            fast, slow = _features_both_ways(page.html, monkeypatch)
            np.testing.assert_array_equal(fast, slow, err_msg=f"{name} {page.id}")


items_module = importlib.import_module("blockdex.items")


def _segment_page(html: str) -> Page:
    from blockdex.extract import Extractor

    return Extractor("all").segment(html)


def _item_lists_both_ways(blocks: tuple[Block, ...]) -> tuple:
    fast = items_module.find_item_lists(blocks)
    compiled, items_module.compiled = items_module.compiled, None
    try:
        slow = items_module.find_item_lists(blocks)
    finally:
        items_module.compiled = compiled
    return fast, slow


@needs_compiled
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.lists(st.integers(1, 9), min_size=1, max_size=5).map(tuple),
            st.sampled_from(["div", "li", "p", "article"]),
            st.sampled_from(["", "card", "card big", "row-1", "row-2"]),
            st.sampled_from(["dom", "script"]),
        ),
        max_size=30,
    )
)
def test_compiled_item_lists_equal_python_on_random_scopes(rows: list) -> None:
    """Blocks with random nested scopes (ids small, so siblings repeat): the same lists."""
    blocks = tuple(
        Block(
            index=i,
            tag="p",
            html="a b c d e",
            text="a b c d e",
            source=source,
            scope=(0, *scope),
            scope_attrs=("", *([cls] * len(scope))),
            path=">".join(["body", *([tag] * len(scope))]),
        )
        for i, (scope, tag, cls, source) in enumerate(rows)
    )
    fast, slow = _item_lists_both_ways(blocks)
    assert fast == slow
    assert items_module.compiled.children([*blocks, object()]) is None  # not all Blocks


@needs_compiled
def test_compiled_item_lists_equal_python_on_the_test_pages(data_dir: Path) -> None:
    for path in sorted(data_dir.rglob("*.html")):
        page = _segment_page(path.read_text(encoding="utf-8", errors="replace"))
        fast, slow = _item_lists_both_ways(page.blocks)
        assert fast == slow, path.name


@needs_compiled
@pytest.mark.dataset
def test_compiled_item_lists_equal_python_on_dataset_pages(shared_data: Path) -> None:
    for name in ("scrapinghub-aeb", "wcxb", "trafilatura-eval"):
        for page in load_dataset(name, limit=60):
            blocks = _segment_page(page.html).blocks
            fast, slow = _item_lists_both_ways(blocks)
            assert fast == slow, f"{name} {page.id}"


@needs_compiled
@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=" ab\n\t\u00a0", max_size=12), max_size=20))
def test_compiled_word_prefix_equals_python(texts: list[str]) -> None:
    """Words before each block: empty texts, runs of spaces, newlines and no-break spaces."""
    blocks = tuple(Block(index=i, tag="p", html=t, text=t) for i, t in enumerate(texts))
    compiled, items_module.compiled = items_module.compiled, None
    try:
        slow = items_module._word_prefix(blocks)
    finally:
        items_module.compiled = compiled
    assert items_module._word_prefix(blocks) == slow
    assert items_module.compiled.word_prefix([*blocks, object()]) is None  # not all Blocks


# -- the page type's columns ---------------------------------------------------------------------

pagetype_module = importlib.import_module("blockdex.pagetype")

_LABELISH = st.lists(
    st.sampled_from(
        ["Add", "to", "cart", "ADD TO CART", "Sort by:", "sort-by", "Reply", "reply!", " ", "\t",
         "\x1c", "\xa0", "\u2028", "?", "3", "_", "-", "See also", "Caf\u00e9", "\u0130",
         "\u212a", "\u00b2", "\u01c5", "\U0001f600", "\u3002", "returns", "Q\u0301", "\n",
         # pronouns, years, relative dates and currency signs, and what comes close to them
         "we", "We", "WE", "we we", " We we ", "us us us", "our", "us", "You", "your", "I", "i", "my", "me", "\u0130", "2024",
         "2039", "2040", "1999", "20245", "202\u0664", "\u0662\u0660\u0662\u0664", " ago",
         "ago", " agox", " ago_", " ago\u00e9", " ago.", "$", "\u20ac", "\u00a3", "\u00a5",
         "\u20b9", "\u20a9", "\u20bd", "\u00a2"]
    ),
    max_size=12,
).map("".join)  # fmt: skip
_TAGS = st.sampled_from(
    ["p", "li", "h1", "h2", "h3", "h5", "h6", "pre", "td", "th", "div", "a", "span", "img",
     "nav", "custom-tag", "table"]
)  # fmt: skip
_ATTRS = st.one_of(
    st.sampled_from(["", "product-card", "comment reply", "grid item", "hero cta", "x"]),
    st.lists(
        st.sampled_from(
            [*pagetype_module.CLASS_WORD_LIST[::3], "pri", "prices", "listitem", "lis", "-",
             " ", "_", "é", "\u212a", "\U0001f600", "2", "Product", "toc", "tocs", "threadtopic"]
        ),
        max_size=8,
    ).map("".join),
)  # fmt: skip


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(_LABELISH, _wordy, st.text(max_size=60)),
            _TAGS,
            st.integers(0, 90),
            st.lists(_ATTRS, max_size=4),
        ),
        max_size=25,
    )
)
def test_compiled_page_type_sums_equal_python(
    rows: list[tuple[str, str, int, list[str]]],
) -> None:
    """Labels of every casing and punctuation, texts past ASCII (where lower-casing changes
    their length, or letters are not ASCII), every tag group, link text up to the whole block."""
    blocks = tuple(
        Block(index=i, tag=tag, html=t, text=t, link_chars=link, scope_attrs=tuple(attrs))
        for i, (t, tag, link, attrs) in enumerate(rows)
    )
    cfg = pagetype_module.DEFAULT_PAGE_TYPE

    def sums() -> tuple:
        scopes = pagetype_module._scope_counts(blocks)
        classes = pagetype_module._class_counts(scopes)
        return pagetype_module._block_sums(blocks, cfg), dict(scopes), classes

    fast = sums()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(pagetype_module, "compiled", None)
        slow = sums()
    assert fast == slow
    assert sum(fast[0].labels) == sum(
        len(t) <= pagetype_module.LABEL_MAX_CHARS
        and pagetype_module._label_key(t) in pagetype_module._LABEL_GROUP
        for t, *_ in rows
    )


@needs_compiled
def test_compiled_page_type_sums_give_way_to_python_on_other_objects() -> None:
    block = Block(index=0, tag="p", html="x", text="x", link_chars=1.5)  # type: ignore[arg-type]
    cfg = pagetype_module.DEFAULT_PAGE_TYPE
    tables = pagetype_module._compiled_tables(cfg)
    fast = pagetype_module.compiled
    assert fast.block_sums((block,), *tables) is None  # not an int
    assert fast.block_sums([block, object()], *tables) is None
    assert fast.scope_counts([block, object()]) is None
    assert pagetype_module._block_sums((block,), cfg).link_chars == 1.5
    block = Block(index=0, tag="p", html="x", text="We 2024 $")
    assert fast.block_sums((block,), *tables) is not None
    # patterns, signs or pronouns other than the ones the compiled code reads: the Python code
    for at, other in [(8, "$€"), (9, r"20[0-2]\d(?!\d)"), (10, " ago"), (11, ("we", "Us"))]:
        changed = list(tables)
        changed[at] = other
        if at == 11:
            changed[12] = (0, 0)
        assert fast.block_sums((block,), *changed) is None, other


@needs_compiled
@pytest.mark.dataset
def test_compiled_page_type_columns_equal_python_on_dataset_pages(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("scrapinghub-aeb", "wcxb", "trafilatura-eval", "l3s-gn1"):
        for page in load_dataset(name, limit=40):
            seg = _segment_page(page.html)
            fast = pagetype_module.page_type_features(seg)
            with monkeypatch.context() as m:
                m.setattr(pagetype_module, "compiled", None)
                slow = pagetype_module.page_type_features(seg)
            assert fast.tobytes() == slow.tobytes(), f"{name} {page.id}"
