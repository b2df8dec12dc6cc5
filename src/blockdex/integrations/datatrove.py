"""blockdex as a datatrove extractor step (``pip install 'blockdex[datatrove]'``).

Use it where FineWeb used ``Trafilatura``, after a WARC reader::

    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import WarcReader
    from datatrove.pipeline.writers import JsonlWriter
    from blockdex.integrations.datatrove import BlockdexExtractor

    LocalPipelineExecutor(
        pipeline=[
            WarcReader("s3://commoncrawl/crawl-data/CC-MAIN-2024-10/segments/", glob_pattern="*/warc/*"),
            BlockdexExtractor(output="markdown"),
            JsonlWriter("out/"),
        ],
        tasks=64,
    ).run()

The same pipeline runs unchanged on ``SlurmPipelineExecutor`` or ``RayPipelineExecutor``.
datatrove runs ``extract`` in a sandbox process with a per-document timeout; documents whose
extraction fails, times out or is empty are dropped and counted in datatrove's stats.
"""

from __future__ import annotations

from typing import Any

from blockdex.errors import BlockdexError, MissingExtra
from blockdex.extract import run
from blockdex.options import ExtractOptions, option_fields

try:
    from datatrove.pipeline.extractors.base import BaseExtractor
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise MissingExtra("datatrove", "datatrove", "The datatrove integration") from exc


class BlockdexExtractor(BaseExtractor):
    """Replaces each document's HTML ``text`` by what blockdex extracts from it."""

    name = "⛏ blockdex"

    def __init__(
        self,
        *,
        predictor: str | None = None,
        query: str | None = None,
        output: str = "markdown",
        timeout: float = 5.0,
        **options: Any,
    ) -> None:
        """``options`` are those of :class:`~blockdex.options.ExtractOptions` (``links``,
        ``max_tokens`` …); any other keyword goes to the predictor itself (``threshold=0.5``)."""
        super().__init__(timeout=timeout)
        names = {f.name for f in option_fields()}
        self.options = ExtractOptions.from_kwargs(
            predictor=predictor,
            query=query,
            output=output,
            **{k: v for k, v in options.items() if k in names},
        )
        self.method_options = {k: v for k, v in options.items() if k not in names}

    def extract(self, text: str) -> str:
        try:  # the pipeline is built in the sandbox process, once
            result = run(text, self.options, method_options=self.method_options)
            return result.render(self.options.format)
        except BlockdexError:
            return ""  # not HTML, empty, too large: datatrove counts and drops it
