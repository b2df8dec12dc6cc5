"""The block explorer in a real browser: headless Chromium submits a page through the form.

Needs the ``playwright`` Python package (its driver only; no browser download) and a system
Chromium (Debian: ``apt-get install chromium``). The screenshot is saved to
``$BLOCKDEX_ARTIFACTS`` or ``tests/artifacts/`` for a human to look at.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from blockdex.server import ServerConfig, serve_in_thread

DATA = Path(__file__).parent / "data"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _chromium() -> str:
    for candidate in (
        os.environ.get("BLOCKDEX_CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
        shutil.which("google-chrome"),
    ):
        if candidate and Path(candidate).exists():
            return candidate
    pytest.skip("no Chromium found (apt-get install chromium, or set BLOCKDEX_CHROMIUM)")


def _artifacts() -> Path:
    path = Path(os.environ.get("BLOCKDEX_ARTIFACTS") or Path(__file__).parent / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _rgb(css_colour: str) -> tuple[int, int, int]:
    r, g, b = (int(x) for x in re.findall(r"\d+", css_colour)[:3])
    return r, g, b


@contextlib.contextmanager
def _explored(html: str, wait_for: str) -> Iterator[Any]:
    """The explorer's result page in headless Chromium after submitting ``html`` through the
    form (default method, no query), once ``wait_for`` (a CSS selector) is on it."""
    pytest.importorskip("starlette", reason="the explorer needs blockdex[server]")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the browser test needs the playwright package"
    )
    executable = _chromium()
    with serve_in_thread(ServerConfig(max_concurrency=2)) as base, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_FLAGS, timeout=60_000
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(base + "/", wait_until="load")
            page.fill("#html", html)
            page.fill("#query", "")
            page.select_option("#method", "")
            with page.expect_navigation():
                page.click("#submit")
            page.wait_for_selector(wait_for, timeout=30_000)
            yield page
        finally:
            browser.close()


def test_explorer_marks_kept_green_and_dropped_red() -> None:
    article = (DATA / "article.html").read_text(encoding="utf-8")
    with _explored(article, "ol.blocks li.block") as page:
        kept = page.locator("li.block.kept")
        dropped = page.locator("li.block.dropped")
        assert kept.count() > 0 and dropped.count() > 0
        assert kept.count() + dropped.count() == page.locator("li.block").count()
        indices = [
            int(i)
            for i in page.locator("li.block").evaluate_all("els => els.map(e => e.dataset.index)")
        ]
        assert indices == sorted(indices) and indices[0] == 0

        def background(locator) -> tuple[int, int, int]:
            return _rgb(locator.evaluate("e => getComputedStyle(e).backgroundColor"))

        r, g, b = background(kept.first)
        assert g > r and g > b, f"kept block is not green: rgb{(r, g, b)}"
        r, g, b = background(dropped.first)
        assert r > g and r > b, f"dropped block is not red: rgb{(r, g, b)}"

        assert "night shift" in page.locator("pre.markdown").inner_text()
        assert page.locator("dd.method").inner_text().startswith("content")
        assert page.locator("#html").input_value().startswith("<!DOCTYPE html>")

        shot = _artifacts() / "explorer.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000


def test_explorer_frames_units_and_marks_the_primary_article() -> None:
    story = (DATA / "units" / "next-story.html").read_text(encoding="utf-8")
    with _explored(story, "li.unit") as page:
        primary = page.locator("li.unit.article.primary")
        assert primary.count() == 1
        assert (
            "Riverton opens its new public library"
            in primary.locator(".unit-label").first.inner_text()
        )
        # the appended story is framed as an article of its own, outside the primary one
        others = page.locator("li.unit.article:not(.primary)")
        labels = " ".join(others.locator(":scope > .unit-label").all_inner_texts())
        assert "Harbour United" in labels
        assert primary.locator("li.block", has_text="Harbour United came").count() == 0
        # its blocks sit inside the frame, and the frame is drawn
        assert primary.locator("li.block.kept").count() > 0
        width = primary.evaluate("e => getComputedStyle(e).borderTopWidth")
        assert float(width.rstrip("px")) >= 2
        assert page.locator("li.unit.section").count() > 0

        shot = _artifacts() / "explorer-units.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000


def test_explorer_frames_item_lists_and_their_items() -> None:
    grid = (DATA / "kinds" / "product_grid.html").read_text(encoding="utf-8")
    with _explored(grid, "li.unit.items") as page:
        lists = page.locator("li.unit.items")
        cards = lists.first.locator("li.unit.item")
        assert cards.count() == 6
        assert "item list" in lists.first.locator(":scope > .unit-label").inner_text()
        assert "Summit Pro" in " ".join(cards.locator(":scope > .unit-label").all_inner_texts())
        # each card frames its own blocks, and the list's frame is drawn in its own colour
        assert cards.nth(4).locator("li.block", has_text="€279.00").count() == 1
        r, g, b = _rgb(lists.first.evaluate("e => getComputedStyle(e).borderTopColor"))
        assert b > r and b > g, f"the item list's frame is not blue: rgb{(r, g, b)}"

        shot = _artifacts() / "explorer-items.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
