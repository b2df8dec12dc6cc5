"""blockdex's compiled extensions: the check that they are built, and the line ``--version`` prints.

The rules that run on every node or block of a page (the parse limits' scan, the cleaner's and
the segmenter's walks over lexbor's tree, the features, units, item lists, the trees, the page
type's counts, the writers' layout walk and Markdown's tree and inline Markdown) are written once,
in Cython: ``blockdex/<name>.py`` calls them from ``blockdex/_<name>_c.pyx`` beside it
(``predict/content.py``'s from ``predict/_content_c.pyx``, ``predict/kinds.py``'s from
``predict/_kinds_c.pyx``).
``_lexbor_c`` (reading lexbor's tree: the node layout, lexbor's functions found in selectolax,
the layout check) and ``_common_c`` (block slots by offset, C buffers, the numbering of scope
ids) hold what several of them share. There is no pure-Python fallback (DESIGN.md, "One
implementation of each rule"): ``pip install .`` builds them, which needs a C compiler.

:func:`require` runs when ``blockdex`` is imported: a missing extension, or a selectolax whose
lexbor tree the walks cannot read, stops the import with one line that says what to do.
"""

from __future__ import annotations

import importlib
import os
import sys

EXTENSIONS = (
    "blockdex._lexbor_c",
    "blockdex._common_c",
    "blockdex._cjk_c",
    "blockdex._parse_c",
    "blockdex._clean_c",
    "blockdex._segment_c",
    "blockdex._features_c",
    "blockdex._candidates_c",
    "blockdex._units_c",
    "blockdex._items_c",
    "blockdex._assemble_c",
    "blockdex._markdown_c",
    "blockdex._forest_c",
    "blockdex._pagetype_c",
    "blockdex.predict._content_c",
    "blockdex.predict._kinds_c",
)
"""Every compiled extension (``src/blockdex/**/_*_c.pyx``; a test checks the list), those of
subpackages last."""

BUILD_HINT = (
    "build them with `pip install .` in blockdex's source tree (needs a C compiler), or "
    "`python setup.py build_ext --inplace` with Cython installed"
)


class ExtensionsMissing(ImportError):
    """blockdex's compiled extensions are not built, or cannot read selectolax's tree."""


def run_as_command() -> bool:
    """Whether this process is the ``blockdex`` command: its console script, or ``python -m
    blockdex`` (whose package is imported while ``sys.argv[0]`` is still ``-m``)."""
    first = sys.argv[0] if sys.argv else ""
    return first == "-m" or os.path.basename(first) in ("blockdex", "blockdex.exe")


def require() -> None:
    """Import every extension and check that the walks can read this selectolax's lexbor tree;
    raise :class:`ExtensionsMissing` with a one-line message when either fails."""
    missing: list[str] = []
    for name in EXTENSIONS:
        if missing and name.count(".") > 1:
            continue  # importing its package (blockdex.predict) imports the missing ones
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            missing.append(name)
        except ImportError as exc:  # built for another Python or against other sources
            raise ExtensionsMissing(
                f"blockdex's compiled extension {name} cannot be loaded ({exc}): rebuild them: "
                + BUILD_HINT
            ) from None
    if missing:
        raise ExtensionsMissing(
            f"blockdex's compiled extensions were not built ({', '.join(missing)} missing): "
            + BUILD_HINT
        )
    from blockdex import _clean_c, _lexbor_c

    if not (_lexbor_c.lexbor_ready() and _clean_c.can_remove()):
        import selectolax

        raise ExtensionsMissing(
            "blockdex's compiled walks cannot read the lexbor tree of selectolax "
            f"{getattr(selectolax, '__version__', '?')} (its node layout or functions differ "
            "from the ones blockdex reads); install a selectolax release blockdex supports"
        )


def status() -> str:
    """One line for ``blockdex --version`` and bug reports (only reached once :func:`require`
    passed)."""
    return f"compiled extensions: {len(EXTENSIONS)} loaded"
