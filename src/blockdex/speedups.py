"""blockdex's optional compiled code: which of it this process uses.

Every pure-Python module with hot loops has a compiled twin beside it, built from Cython by
``pip install`` when a C compiler is present: ``blockdex/<name>.py``'s twin is
``blockdex/_<name>_c.pyx`` (extension ``blockdex._<name>_c``; ``predict/content.py``'s is
``predict/_content_c.pyx``), holding faster versions of that module's loops and nothing else.
Two more extensions hold what several twins share and mirror no module: ``_lexbor_c`` (reading
lexbor's tree: the node layout, lexbor's functions found in selectolax, the layout check) and
``_common_c`` (block slots by offset, C buffers, the numbering of scope ids); their ``.pxd`` files
declare what the twins cimport. ``_cjk_c`` (``cjk.py``'s twin) holds the CJK table the token and
word counts read.

A module takes its twin with ``compiled = twin(__name__)`` and calls ``compiled.<function>``
where ``compiled is not None``, keeping its Python code for when it is None; a walk over lexbor's
nodes goes through :func:`lexbor`. Tests check that both paths give the same results. Set
``BLOCKDEX_PURE_PYTHON=1`` to run the Python code anyway (to compare, or to rule the compiled
code out when debugging). A twin that failed to build (or whose shared extension did) is None
on its own: its module runs as Python, the others stay compiled.
"""

from __future__ import annotations

import functools
import importlib
import os
from types import ModuleType

TWINS = (
    "blockdex.parse",
    "blockdex.cjk",
    "blockdex.clean",
    "blockdex.segment",
    "blockdex.features",
    "blockdex.candidates",
    "blockdex.predict.content",
    "blockdex.units",
    "blockdex.items",
    "blockdex.forest",
    "blockdex.pagetype",
)
"""The modules that have a compiled twin (each calls :func:`twin`; a test checks the list)."""


def _disabled() -> bool:
    return os.environ.get("BLOCKDEX_PURE_PYTHON", "").strip() not in ("", "0")


def twin_name(module: str) -> str:
    """The extension module that is ``module``'s compiled twin: ``blockdex.a.b`` ->
    ``blockdex.a._b_c``."""
    package, _, name = module.rpartition(".")
    return f"{package}._{name}_c"


def twin(module: str) -> ModuleType | None:
    """The compiled twin of the module named ``module`` (one of :data:`TWINS`; callers pass
    ``__name__``), or None when it is not built or ``BLOCKDEX_PURE_PYTHON`` is set."""
    if module not in TWINS:
        raise ValueError(f"{module} has no compiled twin (blockdex.speedups.TWINS)")
    if _disabled():
        return None
    try:
        return importlib.import_module(twin_name(module))
    except ImportError:
        return None


def twins() -> dict[str, ModuleType | None]:
    """Each module of :data:`TWINS` and its compiled twin (None where it runs as Python)."""
    return {name: twin(name) for name in TWINS}


@functools.cache
def lexbor_ready() -> bool:
    """Whether the compiled walks can read this selectolax's lexbor tree (``_lexbor_c`` is
    built and its layout check passed; checked once per process)."""
    if _disabled():
        return False
    try:
        from blockdex import _lexbor_c  # optional: built only where a C compiler was
    except ImportError:
        return False
    return bool(_lexbor_c.lexbor_ready())


def lexbor(module: ModuleType | None) -> ModuleType | None:
    """``module`` (a caller's ``compiled``) when its walks over lexbor's nodes can be used: it is
    built and reads this selectolax's tree correctly (:func:`lexbor_ready`); else None."""
    return module if module is not None and lexbor_ready() else None


def status() -> str:
    """One line for ``blockdex --version`` and bug reports."""
    if _disabled():
        return "compiled speed-ups: no (disabled by BLOCKDEX_PURE_PYTHON)"
    missing = [name for name, module in twins().items() if module is None]
    if len(missing) == len(TWINS):
        return "compiled speed-ups: no (not built)"
    if missing:
        return f"compiled speed-ups: partly (not built: {', '.join(map(twin_name, missing))})"
    return "compiled speed-ups: yes"
