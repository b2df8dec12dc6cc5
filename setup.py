"""Build hook for blockdex's optional compiled speed-ups (everything else is in pyproject.toml).

Each ``src/blockdex/**/_<name>_c.pyx`` is compiled from Cython when a C compiler is present:
``_<name>_c`` is the compiled twin of the Python module ``<name>.py`` beside it, except
``_lexbor_c`` and ``_common_c``, which hold what several twins share (``blockdex.speedups``
explains the layout). An extension that cannot be built is skipped (``optional=True``) and
blockdex runs the pure-Python code paths it stands in for, which give the same results more slowly.
"""

from pathlib import Path

from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:  # building without the build requirements (a plain `setup.py` call)
    ext_modules = []
else:
    sources = sorted(Path("src").glob("blockdex/**/_*_c.pyx"))
    ext_modules = cythonize(
        [
            Extension(
                ".".join(p.relative_to("src").with_suffix("").parts), [p.as_posix()], optional=True
            )
            for p in sources
        ],
        compiler_directives={"language_level": "3"},
        quiet=True,
    )

setup(ext_modules=ext_modules)
