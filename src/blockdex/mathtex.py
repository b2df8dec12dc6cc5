"""Formulas as TeX: what a page writes as math reaches the blocks as ``$…$`` and ``$$…$$``.

Pages write formulas in ways a text extractor loses: MathJax keeps the TeX in a ``<script>``,
KaTeX shows visual spans (``eiπ+1=0``) beside a hidden MathML copy that holds the TeX, MathML
is an element tree whose text runs together, and Wikipedia adds a fallback image whose ``alt``
repeats the formula. The cleaner drops scripts and ``<math>`` as noise, so without this step a
sentence keeps a hole where its formula was ("the sides satisfy , a fact…").

:func:`formulas_to_tex` runs before the noise is dropped and replaces each formula with its TeX:
an inline formula with the text ``$TeX$`` where it stood, a display formula with a ``<div>``
holding ``$$TeX$$`` (a block of its own, so Markdown writes it on its own line), or with the
text ``$$TeX$$`` when it stands inside a sentence's paragraph (it stays with its sentence). The TeX comes
from, in order of preference: the source the page kept (MathJax's script, KaTeX's and MathML's
``application/x-tex`` annotation, MathML's ``alttext``, Wikipedia's ``alttext``), else a linear
TeX form of the MathML (:func:`mathml_tex`). Wikipedia's ``{\\displaystyle …}`` wrapper is
unwrapped. Every predictor, the text output and an LLM reading the blocks then see the formula.
"""

from __future__ import annotations

import html as html_lib
import re

from selectolax.lexbor import LexborHTMLParser, LexborNode

from blockdex.parse import Document

TEX_ENCODINGS = ("application/x-tex", "text/x-tex", "application/x-latex", "tex", "latex")
"""``<annotation encoding=…>`` values that hold TeX (lower-cased)."""

MATHJAX2_RENDERED = (
    ".MathJax_Preview, .MathJax, .MathJax_Display, .MathJax_SVG, .MathJax_SVG_Display, "
    ".MathJax_CHTML, .MJX_Assistive_MathML, .MathJax_MathML"
)
"""What MathJax 2 writes beside each ``<script type="math/tex">`` once it has run (a saved
page): the preview, the rendered formula and its assistive MathML. The script holds the TeX;
these would repeat the formula."""

MAX_DEPTH = 64
"""MathML nested deeper than this is written as its plain text (bounded work on hostile pages)."""

_STYLE_WRAPPER_RE = re.compile(r"^\{\\(?:displaystyle|textstyle|scriptstyle)\s*(.*)\}$", re.S)
_SPACES_RE = re.compile(r"\s+")


def unwrap_style(tex: str) -> str:
    """``{\\displaystyle x^2}`` → ``x^2`` (Wikipedia wraps every formula so); other TeX as it is,
    spaces collapsed."""
    tex = _SPACES_RE.sub(" ", tex).strip()
    m = _STYLE_WRAPPER_RE.match(tex)
    if m is not None and _balanced(m.group(1)):
        tex = m.group(1).strip()
    return tex


def _balanced(tex: str) -> bool:
    depth = 0
    escaped = False
    for ch in tex:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def has_formulas(doc: Document) -> bool:
    """Whether the page may hold a formula this module rewrites (cheap: what the walk after
    parsing found, else one CSS query)."""
    if doc.scripts is not None and any(
        t is not None and t.strip().lower().startswith("math/") for t, _, _, _ in doc.scripts
    ):
        return True
    if doc.has_math is not None:
        return doc.has_math
    return doc.tree.css_first("math, mjx-container, script[type^='math/' i]") is not None


def formulas_to_tex(doc: Document) -> int:
    """Replace every formula in ``doc.tree`` with its TeX (see the module's docstring); returns
    how many were replaced. Call before the noise (scripts, ``<math>``) is dropped."""
    tree = doc.tree
    if tree.root is None or not has_formulas(doc):
        return 0
    done = 0
    for node in tree.css(".mwe-math-element"):  # Wikipedia: MathML + fallback image
        math = node.css_first("math")
        tex = _math_source(math) if math is not None else None
        if tex is None:
            img = node.css_first("img[alt]")
            tex = img.attributes.get("alt") if img is not None else None
        display = node.css_first(".mwe-math-mathml-display, .mwe-math-fallback-image-display")
        if tex is None and math is not None:
            tex = mathml_tex(math)
        done += _replace(node, tex, display is not None)
    for node in tree.css(".katex-display"):  # KaTeX, display: the annotation holds the TeX
        done += _replace(node, _katex_tex(node), True)
    for node in tree.css(".katex"):
        done += _replace(node, _katex_tex(node), False)
    for node in tree.css("mjx-container"):  # MathJax 3: its assistive MathML
        math = node.css_first("math")
        tex = None if math is None else (_math_source(math) or mathml_tex(math))
        display = (node.attributes.get("display") or "").lower() in ("true", "block")
        done += _replace(node, tex, display)
    scripts = tree.css("script[type^='math/' i]")
    if scripts:
        for node in tree.css(MATHJAX2_RENDERED):
            node.decompose()
        for node in scripts:
            kind = (node.attributes.get("type") or "").lower()
            code = node.text(deep=True)
            tex = _mml_text_tex(code) if kind.startswith("math/mml") else code
            done += _replace(node, tex, "mode=display" in kind.replace(" ", ""))
    for node in tree.css("math"):
        if _inside_math(node):
            continue  # replaced with its outermost formula
        display = (node.attributes.get("display") or "").lower() == "block"
        done += _replace(node, _math_source(node) or mathml_tex(node), display)
    return done


def _inside_math(node: LexborNode) -> bool:
    p = node.parent
    while p is not None:
        if p.tag == "math":
            return True
        p = p.parent
    return False


def _replace(node: LexborNode, tex: str | None, display: bool) -> int:
    """Put ``tex`` where ``node`` is (nothing when there is no TeX); 1 when there was."""
    tex = unwrap_style(tex) if tex else ""
    if not tex:
        node.decompose()
        return 0
    if display and not _in_running_text(node):
        holder = LexborHTMLParser(f"<div>$${html_lib.escape(tex, quote=False)}$$</div>")
        div = holder.css_first("div")
        if div is not None:
            node.replace_with(div)
            return 1
    mark = "$$" if display else "$"
    node.replace_with(f"{mark}{tex}{mark}")
    return 1


def _in_running_text(node: LexborNode) -> bool:
    """Whether text stands beside ``node`` in its parent (a display formula inside a sentence's
    paragraph stays in it, as ``$$…$$``, rather than a block of its own the predictor judges
    apart from its sentence)."""
    for step in ("prev", "next"):
        sib = getattr(node, step)
        while sib is not None:
            if sib.tag == "-text":
                if (sib.text_content or "").strip():
                    return True
            elif sib.tag and sib.tag[0] not in "-_!#":
                return sib.tag in _INLINE_TAGS
            sib = getattr(sib, step)
    return False


_INLINE_TAGS = frozenset(
    [
        "a",
        "abbr",
        "b",
        "bdi",
        "bdo",
        "cite",
        "code",
        "data",
        "dfn",
        "em",
        "i",
        "kbd",
        "mark",
        "q",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "sup",
        "time",
        "u",
        "var",
    ]
)


def _katex_tex(node: LexborNode) -> str | None:
    for ann in node.css("annotation"):
        if (ann.attributes.get("encoding") or "").lower() in TEX_ENCODINGS:
            return ann.text(deep=True)
    math = node.css_first("math")
    return None if math is None else (_math_source(math) or mathml_tex(math))


def _math_source(math: LexborNode) -> str | None:
    """The TeX a ``<math>`` element carries: its ``alttext`` or a TeX annotation."""
    alt = (math.attributes.get("alttext") or "").strip()
    if alt:
        return alt
    for ann in math.css("annotation"):
        if (ann.attributes.get("encoding") or "").lower() in TEX_ENCODINGS:
            text = ann.text(deep=True).strip()
            if text:
                return text
    return None


def _mml_text_tex(code: str) -> str | None:
    """TeX of MathML written as text (MathJax 2's ``<script type="math/mml">``)."""
    fragment = LexborHTMLParser(code)
    math = fragment.css_first("math")
    if math is None:
        return None
    return _math_source(math) or mathml_tex(math)


# -- MathML to TeX ------------------------------------------------------------------------------

_SKIPPED = frozenset({"annotation", "annotation-xml", "mprescripts", "none", "mphantom"})


def mathml_tex(node: LexborNode) -> str:
    """A linear TeX form of a MathML element: ``mfrac`` → ``\\frac{a}{b}``, ``msup`` → ``a^{b}``,
    ``msqrt`` → ``\\sqrt{…}``, tables as ``matrix``; tokens (``mi mn mo``) as their text. Not
    every construct TeX has, but every symbol the page shows, in order."""
    return _tex(node, 0).strip()


def _kids(node: LexborNode) -> list[LexborNode]:
    return [c for c in node.iter(include_text=False) if c.tag and c.tag not in _SKIPPED]


def _group(tex: str) -> str:
    return f"{{{tex}}}"


def _base(tex: str) -> str:
    if len(tex) == 1 or _CONTROL_WORD_RE.fullmatch(tex):
        return tex
    return tex if tex.startswith("{") and _balanced(tex[1:-1]) else _group(tex)


_CONTROL_WORD_RE = re.compile(r"\\[A-Za-z]+")


_CONTROL_WORD_END_RE = re.compile(r"\\[A-Za-z]+$")


def _join(parts: list[str]) -> str:
    """Tokens in a row: a space where two would run together (``a b``, ``\\pi r``)."""
    out: list[str] = []
    for p in parts:
        if not p:
            continue
        if out and p[0].isalnum():
            last = out[-1]
            # a control word ends the text so far: only its tail needs a look
            if last[-1].isalnum() or _CONTROL_WORD_END_RE.search(last[-64:]):
                out.append(" ")
        out.append(p)
    return "".join(out)


def _tex(node: LexborNode, depth: int) -> str:
    tag = node.tag or ""
    if depth > MAX_DEPTH:
        return _SPACES_RE.sub(" ", node.text(deep=True)).strip()
    if tag in ("mi", "mn", "mo", "ms"):
        text = _SPACES_RE.sub(" ", node.text(deep=True)).strip()
        if tag == "mi" and len(text) > 1 and text.isalpha():
            return f"\\{text}" if text in _FUNCTIONS else f"\\mathrm{{{text}}}"
        return _SYMBOLS.get(text, text)
    if tag == "mtext":
        text = _SPACES_RE.sub(" ", node.text(deep=True)).strip()
        return f"\\text{{{text}}}" if text else ""
    if tag == "mspace":
        return " "
    if tag == "semantics":
        kids = _kids(node)
        return _tex(kids[0], depth + 1) if kids else ""
    kids = _kids(node)
    args = [_tex(k, depth + 1) for k in kids]
    if tag == "mfrac" and len(args) == 2:
        return f"\\frac{{{args[0]}}}{{{args[1]}}}"
    if tag == "msqrt":
        return f"\\sqrt{{{_join(args)}}}"
    if tag == "mroot" and len(args) == 2:
        return f"\\sqrt[{args[1]}]{{{args[0]}}}"
    if tag in ("msup", "mover") and len(args) == 2:
        return f"{_base(args[0])}^{_group(args[1])}"
    if tag in ("msub", "munder") and len(args) == 2:
        return f"{_base(args[0])}_{_group(args[1])}"
    if tag in ("msubsup", "munderover") and len(args) == 3:
        return f"{_base(args[0])}_{_group(args[1])}^{_group(args[2])}"
    if tag == "mfenced":
        opens = node.attributes.get("open")
        closes = node.attributes.get("close")
        seps = node.attributes.get("separators")
        sep = (seps if seps is not None else ",").strip()[:1]
        inner = sep.join(args) if sep else _join(args)
        return f"{'(' if opens is None else opens}{inner}{')' if closes is None else closes}"
    if tag == "mtable":
        return "\\begin{matrix}" + " \\\\ ".join(args) + "\\end{matrix}"
    if tag == "mtr" or tag == "mlabeledtr":
        return " & ".join(args)
    return _join(args)


_FUNCTIONS = frozenset(
    [
        "sin",
        "cos",
        "tan",
        "cot",
        "sec",
        "csc",
        "arcsin",
        "arccos",
        "arctan",
        "sinh",
        "cosh",
        "tanh",
        "log",
        "ln",
        "exp",
        "lim",
        "max",
        "min",
        "sup",
        "inf",
        "det",
        "gcd",
        "deg",
        "dim",
        "ker",
        "arg",
    ]
)
_SYMBOLS = {
    "∑": "\\sum",
    "∏": "\\prod",
    "∫": "\\int",
    "∞": "\\infty",
    "≤": "\\le",
    "≥": "\\ge",
    "≠": "\\ne",
    "±": "\\pm",
    "×": "\\times",
    "⋅": "\\cdot",
    "→": "\\to",
    "∈": "\\in",
    "π": "\\pi",
    "α": "\\alpha",
    "β": "\\beta",
    "γ": "\\gamma",
    "δ": "\\delta",
    "θ": "\\theta",
    "λ": "\\lambda",
    "μ": "\\mu",
    "σ": "\\sigma",
    "⁡": "",  # function application: invisible
    "⁢": "",  # invisible times
}
