"""blockdex: index-based extraction of what an LLM should read from a web page.

>>> import blockdex
>>> md = blockdex.extract("<html><body><p>Hello, world.</p></body></html>")
>>> md.strip()
'Hello, world.'
"""

from blockdex.extensions import ExtensionsMissing as _ExtensionsMissing
from blockdex.extensions import require as _require_extensions
from blockdex.extensions import run_as_command as _run_as_command

try:
    _require_extensions()  # one line that says how to build them, not an ImportError deep inside
except _ExtensionsMissing as _exc:
    if _run_as_command():  # the `blockdex` command: its one-line error, no traceback
        raise SystemExit(f"blockdex: error: {_exc}") from None
    raise

from blockdex.errors import BlockdexError
from blockdex.extract import ExtractConfig, Extraction, Extractor, extract, segment
from blockdex.page import Block, Page, Selection
from blockdex.predict import (
    Predictor,
    available_predictors,
    get_predictor,
    register_predictor,
)

__version__ = "0.1.0"

__all__ = [
    "Block",
    "BlockdexError",
    "ExtractConfig",
    "Extraction",
    "Extractor",
    "Page",
    "Predictor",
    "Selection",
    "__version__",
    "available_predictors",
    "extract",
    "get_predictor",
    "register_predictor",
    "segment",
]
