"""DANAg: content vs. code per source line, smoothed (Mohammadzadeh et al., KDIR 2011).

"Extracting the main content of web documents based on a naive smoothing method" reads the page
as lines of HTML source. For every line it counts content characters ``T1`` (text outside tags)
and code characters ``T2`` (characters of the tags themselves) and plots ``T1 − T2``. Main
content shows up as a stretch of lines where text outweighs markup; navigation, link lists and
footers as lines dominated by tags. The phases, as implemented here:

1. **Preprocess** — parse the page, drop ``script``/``style`` (and other non-text elements) and
   comments, serialise the body again. Re-serialising repairs broken markup and makes the line
   structure independent of how the author indented the file.
2. **Lines** — the source is cut into lines at its own line breaks and before every opening
   (after every closing) block-level tag, so each paragraph, cell or list item is its own line
   even on minified pages that put the whole body on one source line.
3. **Smooth** — ``diff_i = Σ_{j=i−w}^{i+w} (T1_j − T2_j)`` with ``w = 1`` (the line and its two
   neighbours): a short line of markup inside an article no longer splits it.
4. **Select** — the contiguous region of lines with ``diff > 0`` holding the most content
   characters seeds the main content; it is extended up and down to further positive regions
   separated from it by at most ``max_gap`` (20) lines.
5. **Output** — the selected lines are parsed back into HTML and text.

:func:`plot` draws the raw and smoothed diagrams (needs matplotlib: ``blockdex[eval]``);
``blockdex danag page.html --plot out.png`` does it from the command line.
"""

from __future__ import annotations

import html as html_lib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from blockdex.baselines import BaselineResult, html_document, parse_page, with_settings
from blockdex.baselines.crunch import visible_text
from blockdex.errors import BlockdexError, MissingExtra
from blockdex.segment import BLOCK_TAGS


@dataclass(frozen=True, slots=True)
class DanagConfig:
    """DANAg settings."""

    window: int = 1
    """Neighbours on each side summed into a line's smoothed value (the paper: 1, i.e. i±1)."""
    max_gap: int = 20
    """Largest run of non-positive lines bridged when extending the main region (the paper)."""
    drop_tags: tuple[str, ...] = ("script", "style", "noscript", "template", "svg")
    """Removed before counting: code a browser never shows (the paper drops script and style)."""
    line_tags: frozenset[str] = BLOCK_TAGS
    """Tags that start a new line (opening) or end one (closing): the block-level elements."""
    keep_content_noscripts: bool = True
    """Unwrap a <noscript> holding the page's no-JS content (Discourse …) instead of dropping it."""
    break_after_closing: bool = True
    """End a line after a closing block tag too (off: closings stay with the line before)."""
    keep_source_lines: bool = True
    """Also break lines where the (re-serialised) source has line breaks, as the paper does."""


DEFAULT_DANAG = DanagConfig()

# A tag (or any other markup) in serialised HTML. Lexbor escapes "<" and ">" in text, and
# writes attribute values with "&quot;", so a tag ends at the first ">" outside quotes.
_MARKUP_RE = re.compile(r"""<(/?)([A-Za-z][A-Za-z0-9:_-]*)?(?:"[^"]*"|'[^']*'|[^'">])*>""")


@dataclass(frozen=True, slots=True)
class DanagLines:
    """The page as lines: their HTML, content characters T1 and code characters T2."""

    html: tuple[str, ...]
    content: tuple[int, ...]
    code: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class DanagSelection:
    """The curves and the chosen range of lines (inclusive); ``start > end`` when nothing."""

    raw: tuple[int, ...]
    smoothed: tuple[int, ...]
    regions: tuple[tuple[int, int], ...]
    main_region: tuple[int, int] | None
    start: int
    end: int


def preprocess(html: str | bytes, cfg: DanagConfig = DEFAULT_DANAG) -> tuple[str, str]:
    """The page body re-serialised without scripts, styles and comments; and the page title."""
    doc = parse_page(html, None, cfg.keep_content_noscripts)
    tree = doc.tree
    if cfg.drop_tags:
        tree.strip_tags(list(cfg.drop_tags))
    root = tree.body or tree.root
    if root is None:
        return "", doc.title
    for node in [n for n in root.traverse(include_text=True) if n.tag == "-comment"]:
        node.decompose()
    return root.inner_html or "", doc.title


def _text_chars(text: str) -> int:
    return len(" ".join(html_lib.unescape(text).split()))


def split_lines(source: str, cfg: DanagConfig = DEFAULT_DANAG) -> DanagLines:
    """Cut serialised HTML into lines and count T1 (text) and T2 (tag) characters of each."""
    lines: list[str] = []
    content: list[int] = []
    code: list[int] = []
    current: list[str] = []
    t1 = t2 = 0

    def close() -> None:
        nonlocal t1, t2
        piece = "".join(current)
        if piece.strip():
            lines.append(piece)
            content.append(t1)
            code.append(t2)
        current.clear()
        t1 = t2 = 0

    def add_text(text: str) -> None:
        nonlocal t1
        pieces = text.split("\n") if cfg.keep_source_lines else [text]
        for n, piece in enumerate(pieces):
            if n:
                close()
            current.append(piece)
            t1 += _text_chars(piece)

    pos = 0
    for m in _MARKUP_RE.finditer(source):
        if m.start() > pos:
            add_text(source[pos : m.start()])
        closing, name = m.group(1), (m.group(2) or "").lower()
        is_line_tag = name in cfg.line_tags
        if is_line_tag and not closing:
            close()
        current.append(m.group(0))
        t2 += len(m.group(0))
        if is_line_tag and closing and cfg.break_after_closing:
            close()
        pos = m.end()
    if pos < len(source):
        add_text(source[pos:])
    close()
    return DanagLines(tuple(lines), tuple(content), tuple(code))


def smooth(values: list[int] | tuple[int, ...], window: int = 1) -> list[int]:
    """Each value summed with its ``window`` neighbours on either side (missing ones are 0)."""
    n = len(values)
    prefix = [0]
    for v in values:
        prefix.append(prefix[-1] + v)
    return [prefix[min(i + window + 1, n)] - prefix[max(i - window, 0)] for i in range(n)]


def positive_regions(smoothed: list[int]) -> list[tuple[int, int]]:
    """Maximal runs of lines with a positive smoothed value, as inclusive ``(start, end)``."""
    regions: list[tuple[int, int]] = []
    start = None
    for i, v in enumerate(smoothed):
        if v > 0 and start is None:
            start = i
        elif v <= 0 and start is not None:
            regions.append((start, i - 1))
            start = None
    if start is not None:
        regions.append((start, len(smoothed) - 1))
    return regions


def select_lines(lines: DanagLines, cfg: DanagConfig = DEFAULT_DANAG) -> DanagSelection:
    """The main region (most content characters among positive regions), gap-extended."""
    raw = [a - b for a, b in zip(lines.content, lines.code, strict=True)]
    smoothed = smooth(raw, cfg.window)
    regions = positive_regions(smoothed)
    if not regions:
        return DanagSelection(tuple(raw), tuple(smoothed), (), None, 0, -1)
    weight = [sum(lines.content[s : e + 1]) for s, e in regions]
    best = max(range(len(regions)), key=weight.__getitem__)
    start, end = regions[best]
    # Bridge gaps of at most max_gap non-positive lines, downwards then upwards.
    j = best + 1
    while j < len(regions) and regions[j][0] - end - 1 <= cfg.max_gap:
        end = regions[j][1]
        j += 1
    j = best - 1
    while j >= 0 and start - regions[j][1] - 1 <= cfg.max_gap:
        start = regions[j][0]
        j -= 1
    return DanagSelection(tuple(raw), tuple(smoothed), tuple(regions), regions[best], start, end)


def analyse(
    html: str | bytes, cfg: DanagConfig = DEFAULT_DANAG
) -> tuple[DanagLines, DanagSelection, str]:
    """Lines, curves and selection of a page; and its title."""
    source, title = preprocess(html, cfg)
    lines = split_lines(source, cfg)
    return lines, select_lines(lines, cfg), title


class DanagBaseline:
    """DANAg as a blockdex method: ``blockdex extract page.html --method danag``."""

    name = "danag"

    def __init__(self, config: DanagConfig | None = None, **overrides: Any) -> None:
        self.config = with_settings(config or DEFAULT_DANAG, overrides, "DANAg")
        if self.config.window < 0 or self.config.max_gap < 0:
            raise BlockdexError("DANAg window and max_gap must be 0 or more")

    def run(
        self, html: str | bytes, *, url: str | None = None, query: str | None = None
    ) -> BaselineResult:
        """The selected lines as HTML and text (``query`` is ignored: DANAg has none)."""
        lines, sel, title = analyse(html, self.config)
        fragment = "\n".join(lines.html[sel.start : sel.end + 1])
        body = LexborHTMLParser(f"<html><body>{fragment}</body></html>").body
        body_html = body.inner_html if body is not None else ""
        out = html_document(title, body_html)
        extra = {
            "danag": {
                "lines": len(lines.html),
                "raw": list(sel.raw),
                "smoothed": list(sel.smoothed),
                "regions": [list(r) for r in sel.regions],
                "main_region": list(sel.main_region) if sel.main_region else None,
                "selected": [sel.start, sel.end] if sel.end >= sel.start else None,
            }
        }
        return BaselineResult(html=out, text=visible_text(body), title=title, extra=extra)


def plot(html: str | bytes, out_png: str | Path, config: DanagConfig = DEFAULT_DANAG) -> Path:
    """Draw the page's raw (T1 − T2) and smoothed diagrams, selected lines shaded, as a PNG."""
    try:  # optional extra (blockdex[eval]): only the diagram needs matplotlib
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtra("matplotlib", "eval", "drawing DANAg diagrams") from None
    _, sel, title = analyse(html, config)
    xs = range(len(sel.raw))
    fig, (ax_raw, ax_smooth) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    ax_raw.bar(xs, sel.raw, width=1.0, color="#4c72b0")
    ax_raw.set_ylabel("T1 − T2")
    ax_raw.set_title(f"DANAg: {title[:80]}" if title else "DANAg")
    ax_smooth.bar(xs, sel.smoothed, width=1.0, color="#55a868")
    ax_smooth.set_ylabel(f"smoothed (±{config.window})")
    ax_smooth.set_xlabel("line")
    if sel.end >= sel.start:
        for ax in (ax_raw, ax_smooth):
            ax.axvspan(sel.start - 0.5, sel.end + 0.5, color="#dd8452", alpha=0.25, lw=0)
    for ax in (ax_raw, ax_smooth):
        ax.axhline(0, color="black", lw=0.5)
    fig.tight_layout()
    out = Path(out_png)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out
