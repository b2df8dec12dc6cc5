"""Formulas reach the output as TeX (blockdex.mathtex): each source a page writes them in."""

from __future__ import annotations

import sys
from pathlib import Path

import blockdex
from blockdex.clean import CleanConfig, clean_document
from blockdex.extract import ExtractConfig, Extractor
from blockdex.mathtex import formulas_to_tex, mathml_tex, unwrap_style
from blockdex.parse import parse_html

DATA = Path(__file__).parent / "data" / "fidelity"
parse_module = sys.modules["blockdex.parse"]

MATH_PAGE_MARKDOWN = """\
# Formulas written five ways

Euler's identity $e^{i\\pi}+1=0$ links five constants in one line of text.

By Pythagoras the sides satisfy $a^2 + b^2 = c^2$, a fact known for millennia and proved in many \
different ways.

The quadratic formula gives both roots at once:

$$x = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}$$

A MathML fraction with alternative text reads $\\tfrac{1}{2}$ in any reader, and one without it \
reads $\\sqrt{x}+y_{1}$ all the same.

Wikipedia writes the area of a circle as $A=\\pi r^{2}$, with the radius squared.

MathJax 3 shows a sum as $$\\sum_{k=1}^{n}k$$ and then explains why it equals half of n times n \
plus one."""


def _cleaned_body(html: str, **kw: object) -> str:
    doc = clean_document(parse_html(html), CleanConfig(**kw))  # type: ignore[arg-type]
    body = doc.tree.body
    assert body is not None
    return " ".join(body.text(separator=" ").split())


def test_every_math_source_becomes_tex_in_markdown() -> None:
    html = (DATA / "math.html").read_text()
    assert blockdex.extract(html).strip() == MATH_PAGE_MARKDOWN
    text = blockdex.extract(html, output="text")
    # the text output carries the same TeX; KaTeX's visual twin and Wikipedia's image alt are
    # not repeated
    assert "$e^{i\\pi}+1=0$" in text and "eiπ" not in text
    assert text.count("A=\\pi r^{2}") == 1 and "displaystyle" not in text


def test_without_the_step_the_formulas_leave_holes() -> None:
    html = (DATA / "math.html").read_text()
    text = _cleaned_body(html, formulas=False)
    assert "satisfy ," in text and "a^2" not in text


def test_the_page_walk_and_the_css_query_agree_on_whether_a_page_has_math() -> None:
    pages = {
        "<p>x <math><mi>x</mi></math></p>": True,
        "<p>x <mjx-container><mjx-math></mjx-math></mjx-container></p>": True,
        "<p>plain <b>text</b></p>": False,
    }
    for html, has in pages.items():
        assert parse_html(html).has_math is has
    doc = parse_html("<p>s <math alttext='y^2'><mi>y</mi></math> t</p>")
    doc.has_math = None  # not known: the cleaner asks the tree
    assert formulas_to_tex(doc) == 1
    assert doc.tree.body is not None and doc.tree.body.text() == "s $y^2$ t"


def test_mathjax2_saved_after_rendering_gives_each_formula_once() -> None:
    # MathJax 2 leaves a preview, the rendered formula and its assistive MathML before the script
    html = (
        "<p>Energy is <span class='MathJax_Preview'>E=mc^2</span>"
        "<span class='MathJax' id='MathJax-Element-1-Frame'><nobr>E=mc2</nobr>"
        "<span class='MJX_Assistive_MathML'><math><mi>E</mi><mo>=</mo><mi>m</mi>"
        "<msup><mi>c</mi><mn>2</mn></msup></math></span></span>"
        "<script type='math/tex' id='MathJax-Element-1'>E=mc^2</script> as Einstein wrote.</p>"
        "<p>And in MathML source: <script type='math/mml'><math><mfrac><mi>a</mi><mi>b</mi>"
        "</mfrac></math></script>.</p>"
    )
    text = _cleaned_body(html)
    assert text.count("E=mc") == 1 and "is $E=mc^2$ as Einstein wrote." in text
    assert "source: $\\frac{a}{b}$ ." in text


def test_mathml_linear_forms() -> None:
    def tex(markup: str) -> str:
        node = parse_html(f"<math>{markup}</math>").tree.css_first("math")
        assert node is not None
        return mathml_tex(node)

    assert tex("<mfrac><mn>1</mn><mi>n</mi></mfrac>") == "\\frac{1}{n}"
    assert tex("<mroot><mi>x</mi><mn>3</mn></mroot>") == "\\sqrt[3]{x}"
    assert tex("<msubsup><mi>x</mi><mi>i</mi><mn>2</mn></msubsup>") == "x_{i}^{2}"
    assert tex("<mi>sin</mi><mi>θ</mi>") == "\\sin\\theta"
    assert tex("<mi>π</mi><mi>r</mi>") == "\\pi r"
    assert tex("<mtext>if</mtext><mi>x</mi>") == "\\text{if}x"
    assert (
        tex("<mtable><mtr><mtd><mn>1</mn></mtd><mtd><mn>0</mn></mtd></mtr>"
            "<mtr><mtd><mn>0</mn></mtd><mtd><mn>1</mn></mtd></mtr></mtable>")
        == "\\begin{matrix}1 & 0 \\\\ 0 & 1\\end{matrix}"
    )  # fmt: skip
    assert tex("<mfenced><mi>a</mi><mi>b</mi></mfenced>") == "(a,b)"
    deep = "<mrow>" * 200 + "<mi>z</mi>" + "</mrow>" * 200
    assert tex(deep) == "z"  # bounded depth: the plain text


def test_display_style_wrapper_is_unwrapped_only_when_whole() -> None:
    assert unwrap_style("{\\displaystyle A=\\pi r^{2}}") == "A=\\pi r^{2}"
    assert unwrap_style("{\\displaystyle a}+{b}") == "{\\displaystyle a}+{b}"
    assert unwrap_style("  x \n+ y ") == "x + y"


def test_formulas_off_in_the_extractor_config() -> None:
    html = "<article><h1>T</h1><p>" + "Word " * 40 + "<script type='math/tex'>q^2</script></p>"
    on = Extractor().extract(html, output="text")
    off = Extractor(config=ExtractConfig(clean=CleanConfig(formulas=False))).extract(
        html, output="text"
    )
    assert "$q^2$" in on and "q^2" not in off
