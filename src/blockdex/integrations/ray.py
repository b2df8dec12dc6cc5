"""blockdex as a Ray Data batch function (``pip install 'blockdex[ray]'``).

::

    import ray
    from blockdex.integrations.ray import BlockdexMapper

    ds = ray.data.read_parquet("s3://bucket/pages/")          # columns: html, url (optional)
    out = ds.map_batches(BlockdexMapper, fn_constructor_kwargs={"output": "markdown"},
                         concurrency=64, batch_format="numpy")
    out.write_parquet("s3://bucket/extracted/")

Each row gets ``content``, ``title``, ``indices`` (JSON), ``n_blocks``, ``time_ms``, ``error`` and
``error_kind``: a page that fails becomes a row with ``error`` set, never a failed task. On a
cluster the same code runs after ``ray.init("ray://head:10001")``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from blockdex.batch import BatchConfig, PageInput, extract_record
from blockdex.options import ExtractOptions

OUTPUT_COLUMNS = ("content", "title", "indices", "n_blocks", "time_ms", "error", "error_kind")


class BlockdexMapper:
    """Callable class for ``Dataset.map_batches``: the model loads once per actor."""

    def __init__(
        self,
        *,
        predictor: str | None = None,
        query: str | None = None,
        output: str = "markdown",
        html_column: str = "html",
        url_column: str = "url",
    ) -> None:
        options = ExtractOptions.from_kwargs(output=output, query=query, predictor=predictor)
        self.config = BatchConfig(options=options)
        self.html_column = html_column
        self.url_column = url_column

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        htmls = batch[self.html_column]
        urls = batch.get(self.url_column)
        columns: dict[str, list[Any]] = {name: [] for name in OUTPUT_COLUMNS}
        for i, html in enumerate(htmls):
            url = urls[i] if urls is not None else None
            data = html if isinstance(html, bytes) else str(html).encode("utf-8", "surrogatepass")
            page = PageInput(id=str(i), source="ray", html=data, url=url or None, seq=i)
            rec = extract_record(page, self.config)
            rec["indices"] = json.dumps(rec.get("indices"))
            for name in OUTPUT_COLUMNS:
                columns[name].append(rec.get(name))
        out = dict(batch)
        for name, values in columns.items():
            out[name] = np.array(values, dtype=object)
        return out
