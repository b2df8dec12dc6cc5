"""blockdex: index-based extraction of what an LLM should read from a web page.

>>> import blockdex
>>> md = blockdex.extract("<html><body><p>Hello, world.</p></body></html>")
>>> md.strip()
'Hello, world.'
"""

from blockdex.extensions import require as _require_extensions

_require_extensions()  # one line that says how to build them, not an ImportError deep inside

from blockdex.errors import BlockdexError  # noqa: E402
from blockdex.extract import ExtractConfig, Extraction, Extractor, extract, segment  # noqa: E402
from blockdex.page import Block, Page, Selection  # noqa: E402
from blockdex.predict import (  # noqa: E402
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
