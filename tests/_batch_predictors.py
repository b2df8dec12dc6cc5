"""Predictors that misbehave on purpose, for the batch worker-pool tests.

They are loaded inside spawned worker processes by the name ``_batch_predictors:Misbehaving``
(pytest puts ``tests/`` on ``sys.path`` and spawned workers inherit it).
"""

from __future__ import annotations

import os
import time

from blockdex.page import Page, Selection


class Misbehaving:
    """Keeps every block, except on pages whose title asks for trouble."""

    name = "misbehaving"

    def predict(self, page: Page, query: str | None = None) -> Selection:
        title = page.title or ""
        if "HANG" in title:
            time.sleep(3600)
        if "CRASH" in title:
            os._exit(3)
        if "HOG" in title:
            hog = bytearray(8 << 30)  # 8 GiB: far above the workers' limit
            del hog
        if "SLOW" in title:
            time.sleep(0.25)
        return Selection.from_indices(b.index for b in page.blocks)
