"""Shared fixtures: small pages in tests/data, and the shared datasets when present."""

from __future__ import annotations

from pathlib import Path

import pytest

from blockdex.evaluate.datasets import shared_data_dir

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="session")
def article_html() -> str:
    return (DATA / "article.html").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared evaluation datasets; tests using this skip when they are absent."""
    path = shared_data_dir()
    if path is None:
        pytest.skip("shared datasets not found (set BLOCKDEX_DATA or place them at ../shared/data)")
    return path
