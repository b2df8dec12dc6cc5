"""blockdex's optional compiled code: which of it this process uses.

``blockdex._speedups`` (Cython, built by ``pip install`` when a C compiler is present) holds
faster twins of the hottest pure-Python loops; every caller keeps the Python code for when it is
missing, and tests check that both give the same results. Set ``BLOCKDEX_PURE_PYTHON=1`` to run
the Python code anyway (to compare, or to rule the compiled code out when debugging).
"""

from __future__ import annotations

import os
from types import ModuleType


def _disabled() -> bool:
    return os.environ.get("BLOCKDEX_PURE_PYTHON", "").strip() not in ("", "0")


def _load() -> ModuleType | None:
    if _disabled():
        return None
    try:
        from blockdex import _speedups
    except ImportError:
        return None
    return _speedups


compiled: ModuleType | None = _load()
"""The compiled module, or None when blockdex runs as pure Python."""


def lexbor(module: ModuleType | None) -> ModuleType | None:
    """``module`` (a caller's ``compiled``) when its walks over lexbor's nodes can be used: it is
    built and reads this selectolax's tree correctly (checked once); else None."""
    return module if module is not None and module.lexbor_ready() else None


def status() -> str:
    """One line for ``blockdex --version`` and bug reports."""
    if compiled is None:
        why = "disabled by BLOCKDEX_PURE_PYTHON" if _disabled() else "not built"
        return f"compiled speed-ups: no ({why})"
    return "compiled speed-ups: yes"
