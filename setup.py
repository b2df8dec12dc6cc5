"""Build hook for blockdex's optional compiled speed-ups (everything else is in pyproject.toml).

``blockdex._speedups`` is compiled from Cython when a C compiler is present; when it cannot be
built the extension is skipped (``optional=True``) and blockdex runs its pure-Python code paths,
which give the same results more slowly.
"""

from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:  # building without the build requirements (a plain `setup.py` call)
    ext_modules = []
else:
    ext_modules = cythonize(
        [Extension("blockdex._speedups", ["src/blockdex/_speedups.pyx"], optional=True)],
        compiler_directives={"language_level": "3"},
        quiet=True,
    )

setup(ext_modules=ext_modules)
