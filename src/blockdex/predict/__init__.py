"""Index predictors: given a :class:`~blockdex.page.Page` (and maybe a query), choose block indices.

Every strategy implements one method, ``predict(page, query=None) -> Selection``, and is
registered here by name so the API, CLI, server and benchmark can all pick it with a string.
Heavy predictors are registered as ``"module:Class"`` paths and imported only when asked for.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from blockdex.baselines import available_baselines, import_target
from blockdex.errors import BlockdexError, UnknownPredictor
from blockdex.intervals import chunk_page
from blockdex.page import Page, Selection


@runtime_checkable
class Predictor(Protocol):
    """Chooses which blocks of a page to keep.

    A predictor that never reads ``Block.html`` may say so with a class attribute
    ``reads_markup = False``: text output then segments without building the blocks' HTML
    (``Extractor.run(output="text")``). Without it, the markup is built."""

    name: str

    def predict(self, page: Page, query: str | None = None) -> Selection:
        """Return the selected block indices (``Block.index`` values) of ``page``."""
        ...


PredictorFactory = Callable[..., Predictor]

# name → "module:attribute" of a Predictor class/factory, imported on first use.
_REGISTRY: dict[str, str | PredictorFactory] = {
    "all": "blockdex.predict.basic:AllPredictor",
    "oracle": "blockdex.predict.basic:OraclePredictor",
    "content": "blockdex.predict.content:ContentPredictor",
    "heuristic": "blockdex.predict.heuristic:HeuristicPredictor",
    "llm": "blockdex.predict.llm:LLMPredictor",
    "lexical": "blockdex.predict.relevance:LexicalPredictor",
    "embedding": "blockdex.predict.relevance:EmbeddingPredictor",
    "hybrid": "blockdex.predict.relevance:HybridPredictor",
}

# One-line descriptions shown by `blockdex methods` and `--help`.
DESCRIPTIONS: dict[str, str] = {
    "all": "keep every block (the page's full cleaned text)",
    "oracle": "keep the blocks given in advance (tests and evaluation ceilings)",
    "content": "main content by blockdex's trained two-stage tree model (offline, CPU)",
    "heuristic": "main content by rules only (main container, link density, class names)",
    "llm": "a language model answers with block indices (--llm-url server or local GGUF)",
    "lexical": "query relevance by BM25 over blocks with their heading paths",
    "embedding": "query relevance by MiniLM embeddings (int8 ONNX, offline)",
    "hybrid": "query relevance: BM25 + embeddings + main content + page structure, learned",
}

DEFAULT_PREDICTOR = "content"
"""Used when no query is given and no predictor is named."""
DEFAULT_QUERY_PREDICTOR = "hybrid"
"""Used when a query is given and no predictor is named."""


def register_predictor(name: str, factory: str | PredictorFactory, description: str = "") -> None:
    """Make a predictor available by name (``factory`` may be a ``"module:attr"`` string)."""
    _REGISTRY[name] = factory
    if description:
        DESCRIPTIONS[name] = description


def available_predictors() -> list[str]:
    return sorted(_REGISTRY)


def get_predictor(name: str, **options: Any) -> Predictor:
    """Instantiate the predictor registered as ``name`` with ``options``."""
    try:
        factory = _REGISTRY[name]
    except KeyError:
        if ":" in name:  # "package.module:Class", e.g. a user's own predictor in batch workers
            try:
                factory = import_target(name)
            except (ImportError, AttributeError) as exc:
                raise UnknownPredictor(f"cannot load predictor {name!r}: {exc}") from None
            _check_options(name, factory, options)
            return factory(**options)

        if name in available_baselines():
            # extract, explain, serve and bench run classic methods themselves, before asking
            # for a predictor: whoever gets here (batch, the Python API) can only take predictors.
            raise UnknownPredictor(
                f"{name!r} is a classic method, not a block predictor "
                f"({', '.join(available_predictors())}); run it with 'blockdex extract "
                f"--method {name}', 'blockdex explain', the server or blockdex.baselines.get_baseline"
            ) from None
        raise UnknownPredictor(
            f"unknown predictor {name!r}; predictors: {', '.join(available_predictors())}; "
            f"classic methods: {', '.join(available_baselines())} ('blockdex methods' "
            "describes each)"
        ) from None
    if isinstance(factory, str):
        factory = import_target(factory)
        _REGISTRY[name] = factory
    _check_options(name, factory, options)
    return factory(**options)


def _check_options(name: str, factory: Callable[..., Any], options: dict[str, Any]) -> None:
    """A clear error, not a TypeError from deep inside, for options the predictor does not take
    (``--llm-url`` with the content model, say)."""
    if not options:
        return
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # no signature to read: let the call decide
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    named = [
        k
        for k, p in params.items()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    unknown = [k for k in options if k not in named]
    if unknown:
        raise BlockdexError(
            f"predictor {name!r} does not take {', '.join(map(repr, unknown))}"
            f" (its options: {', '.join(named) or 'none'})"
        )


def predict_in_chunks(
    predictor: Predictor,
    page: Page,
    query: str | None,
    max_doc_tokens: int,
    count: Callable[[str], int],
) -> Selection:
    """Run ``predictor`` on each chunk of ``page`` under ``max_doc_tokens`` and merge the results."""
    selection = Selection()
    for chunk in chunk_page(page, max_doc_tokens, count):
        selection = selection.union(predictor.predict(chunk, query))
    return selection
