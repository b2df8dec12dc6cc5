"""Sums of decision trees stored as flat arrays: the evaluation every shipped model uses.

The content model's two stages (:mod:`blockdex.predict.content`), the page-type model
(:mod:`blockdex.pagetype`) and the relevance model (:mod:`blockdex.predict.relevance`) are
forests of shallow trees written as JSON (``feature``, ``threshold``, ``left``, ``right``,
``value``, ``roots``, ``depth``). A :class:`Forest` walks all trees in one compiled call
(``blockdex/_forest_c.pyx``), each tree written out as a complete tree, or, for trees too deep
for that layout (or more than 65,536 columns), all trees at once, one numpy step per tree level.
:class:`Forests` walks several forests over the same rows in one compiled call (the page-type
model's seven, one per type).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from blockdex import _forest_c as compiled

_NODE_DTYPE = np.dtype([("threshold", "<f4"), ("feature", "<u2"), ("pad", "<u2")])
"""The compiled evaluation's node (``_forest_c.forest_raw``): 8 bytes. Each tree is complete,
in heap order: node k's children are 2k + 1 (``x <= threshold``) and 2k + 2, so no child is
stored."""
_MAX_FEATURE = np.iinfo(np.uint16).max


def _check_rows(X: np.ndarray, n_features: int) -> None:
    if X.ndim != 2 or X.shape[1] < n_features:
        raise ValueError(f"expected rows of at least {n_features} features, got {X.shape}")


def _packed_raw(
    X: np.ndarray, nodes: np.ndarray, value: np.ndarray, depth: int, trees: np.ndarray
) -> np.ndarray:
    """The compiled walk (``_forest_c.forest_raw``) of forests stored one after the other,
    ``trees[f]`` trees for forest ``f``: their sums as a ``(forests, rows)`` array."""
    out = np.zeros((len(trees), X.shape[0]))
    compiled.forest_raw(np.ascontiguousarray(X, dtype=np.float32), nodes, value, depth, trees, out)
    return out


class Forest:
    """A sum of decision trees stored as flat arrays (leaves point to themselves)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.feature = np.asarray(spec["feature"], dtype=np.intp)
        self.threshold = np.asarray(
            [float(t) for t in spec["threshold"]], dtype=np.float64
        )  # "inf" strings mark leaves
        self.left = np.asarray(spec["left"], dtype=np.intp)
        self.right = np.asarray(spec["right"], dtype=np.intp)
        self.value = np.asarray(spec["value"], dtype=np.float64)
        self.roots = np.asarray(spec["roots"], dtype=np.intp)
        self.depth = int(spec["depth"])
        n_nodes = len(self.feature)
        for arr in (self.threshold, self.left, self.right, self.value):
            if len(arr) != n_nodes:
                raise ValueError("model arrays have different lengths")
        for arr in (self.left, self.right, self.roots):
            if len(arr) and (arr.min() < 0 or arr.max() >= n_nodes):
                raise ValueError("model node index out of range")
        if n_nodes and self.feature.min() < 0:
            raise ValueError("model feature index out of range")
        # children[2 * node + went_left]: one gather per level picks the next node
        self._children = np.stack([self.right, self.left], axis=1).ravel()
        # Features are float32, so x <= t (float64) exactly when x <= the largest float32 <= t:
        # comparing in float32 halves the memory traffic and changes no decision.
        thr32 = self.threshold.astype(np.float32)
        over = thr32.astype(np.float64) > self.threshold
        thr32[over] = np.nextafter(thr32[over], np.float32(-np.inf))
        self._threshold32 = thr32
        # Leaf values are used as float32 (both evaluations): with the 8-byte nodes, the
        # compiled walk's arrays are a third of their float64/16-byte size, which matters when
        # other work between pages has pushed them out of the CPU's cache.
        self.value = self.value.astype(np.float32).astype(np.float64)
        self._packed = self._pack()
        self._trees = np.array([len(self.roots)], dtype=np.intp)  # the compiled walk's count
        self.n_features = int(self.feature.max()) + 1 if n_nodes else 0

    def _pack(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(nodes as bytes, float32 leaf values)`` for the compiled walk: each tree as a
        complete tree of :attr:`depth` levels in heap order, or None when that layout would be
        too large (deeper than ``_forest_c.FOREST_MAX_DEPTH``; the numpy evaluation is used
        then).

        The layout is what the numpy walk does, written out: from the root, ``depth`` steps
        (a leaf steps to itself), then the value of the node reached. So a leaf higher up fills
        all the places below its own (the walk may go either way there: both children are the
        leaf), and a node reached at the last level gives its value there."""
        depth = self.depth
        if not 0 <= depth <= compiled.FOREST_MAX_DEPTH or (
            len(self.feature) and self.feature.max() > _MAX_FEATURE
        ):
            return None
        # level by level, every tree at once: each place's model node, a leaf's children being
        # the leaf itself (the numpy walk's step), so a leaf higher up fills its place's subtree
        n_trees = len(self.roots)
        level = self.roots[:, None]
        levels = []
        for _ in range(depth):
            levels.append(level)
            level = np.stack([self.left[level], self.right[level]], axis=2).reshape(n_trees, -1)
        heap = np.concatenate(levels, axis=1) if levels else np.zeros((n_trees, 0), np.intp)
        nodes = np.zeros(heap.size, dtype=_NODE_DTYPE)
        nodes["threshold"] = self._threshold32[heap].ravel()
        nodes["feature"] = self.feature[heap].ravel()
        return nodes.view(np.uint8), self.value.astype(np.float32)[level].ravel()

    ROWS_PER_CHUNK = 1024
    """Rows evaluated at once: the (rows x trees) node arrays of 20 000 blocks at once peaked at
    125 MB; in chunks of 1 024, at a few MB, with the same speed on ordinary pages."""

    def raw(self, X: np.ndarray) -> np.ndarray:
        """Sum of the trees' leaf values for each row of ``X``."""
        n = X.shape[0]
        _check_rows(X, self.n_features)
        if self._packed is not None:
            nodes, value = self._packed
            return _packed_raw(X, nodes, value, self.depth, self._trees)[0]
        if n <= self.ROWS_PER_CHUNK:
            return self._raw(X)
        step = self.ROWS_PER_CHUNK
        return np.concatenate([self._raw(X[i : i + step]) for i in range(0, n, step)])

    def _raw(self, X: np.ndarray) -> np.ndarray:
        n = X.shape[0]
        if n == 0:
            return np.zeros(0)
        flat = np.ascontiguousarray(X, dtype=np.float32).ravel()
        row_base = (np.arange(n) * X.shape[1])[:, None]
        node = np.repeat(self.roots[None, :], n, axis=0)  # (rows, trees)
        children, feature, threshold = self._children, self.feature, self._threshold32
        take = np.take
        for _ in range(self.depth):
            went_left = take(flat, take(feature, node) + row_base) <= take(threshold, node)
            node = take(children, 2 * node + went_left)
        return take(self.value, node).sum(axis=1)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Probabilities (logistic link): ``1 / (1 + exp(-raw))``, each step in place."""
        p = self.raw(X)
        np.negative(p, out=p)
        np.exp(p, out=p)
        p += 1.0
        return np.divide(1.0, p, out=p)


class Forests:
    """Several forests over the same rows, one sum each (a multi-class model's forests, one per
    class): evaluated in one compiled call over their trees stored one after the other, so that
    the walk fetches the next forest's trees ahead while it reads the one before (a page type's
    one row is otherwise mostly waiting on memory that other work has pushed out of the caches).
    Forests that the compiled layout cannot hold (see :meth:`Forest._pack`), or of different
    depths, are evaluated one by one."""

    def __init__(self, forests: list[Forest]) -> None:
        self.forests = forests
        self.n_features = max((f.n_features for f in forests), default=0)
        packs = [f._packed for f in forests]
        depths = {f.depth for f in forests}
        self._packed: tuple[np.ndarray, np.ndarray, np.ndarray, int] | None = None
        if forests and len(depths) == 1 and all(p is not None for p in packs):
            self._packed = (
                np.concatenate([p[0] for p in packs if p is not None]),
                np.concatenate([p[1] for p in packs if p is not None]),
                np.array([len(f.roots) for f in forests], dtype=np.intp),
                depths.pop(),
            )

    def raw(self, X: np.ndarray) -> np.ndarray:
        """Each forest's sums (:meth:`Forest.raw`, the same values) for each row of ``X``: a
        ``(rows, forests)`` array."""
        if self._packed is None:
            return np.stack([f.raw(X) for f in self.forests], axis=1)
        _check_rows(X, self.n_features)
        nodes, value, trees, depth = self._packed
        return np.ascontiguousarray(_packed_raw(X, nodes, value, depth, trees).T)
