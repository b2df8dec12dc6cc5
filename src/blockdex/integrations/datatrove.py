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

try:
    from datatrove.pipeline.extractors.base import BaseExtractor
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    from blockdex.errors import MissingExtra

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
        **predictor_options: Any,
    ) -> None:
        super().__init__(timeout=timeout)
        self.predictor = predictor
        self.query = query
        self.output = output
        self.predictor_options = predictor_options
        self._extractor: Any = None

    def extract(self, text: str) -> str:
        from blockdex.errors import BlockdexError
        from blockdex.extract import Extractor

        if self._extractor is None:  # built in the sandbox process, once
            self._extractor = Extractor(self.predictor, **self.predictor_options)
        try:
            return self._extractor.extract(text, query=self.query, output=self.output)
        except BlockdexError:
            return ""  # not HTML, empty, too large: datatrove counts and drops it
