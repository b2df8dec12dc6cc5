"""Build hook for blockdex's compiled extensions (everything else is in pyproject.toml).

Each ``src/blockdex/**/_<name>_c.pyx`` is compiled from Cython: ``_<name>_c`` holds the rules of
the Python module ``<name>.py`` beside it that run in C, except ``_lexbor_c`` and ``_common_c``,
which hold what several of them share (``blockdex.extensions`` explains the layout). They are the
only implementation of those rules: without Cython or a C compiler the build stops, saying which
is missing, instead of installing a blockdex that cannot run.
"""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.errors import CCompilerError, ExecError, PlatformError

try:
    from Cython.Build import cythonize
except ImportError:  # a plain `setup.py` call without the build requirements
    raise SystemExit(
        "blockdex: building needs Cython>=3.0 and a C compiler. `pip install .` installs Cython "
        "itself (pyproject.toml lists it as a build requirement); for `python setup.py ...` "
        "run `pip install 'Cython>=3.0'` first."
    ) from None


class BuildCompiled(build_ext):
    """``build_ext`` whose failure to compile says what to install."""

    def run(self) -> None:
        try:
            super().run()
        except (CCompilerError, ExecError, PlatformError) as exc:  # no compiler, or it failed
            raise SystemExit(
                f"blockdex: its C extensions could not be built ({exc}). blockdex needs a C "
                "compiler (Debian/Ubuntu: `apt-get install build-essential python3-dev`; "
                "macOS: `xcode-select --install`; Windows: Microsoft C++ Build Tools)."
            ) from exc


sources = sorted(Path("src").glob("blockdex/**/_*_c.pyx"))
ext_modules = cythonize(
    [
        Extension(".".join(p.relative_to("src").with_suffix("").parts), [p.as_posix()])
        for p in sources
    ],
    compiler_directives={"language_level": "3"},
    quiet=True,
)

setup(ext_modules=ext_modules, cmdclass={"build_ext": BuildCompiled})
