# cython: language_level=3
"""What ``blockdex/predict/content.py`` runs in C: the only implementation of these rules
(built by ``pip install``).

* :func:`stage2_rows` — the second stage's input rows, ``np.hstack([X[unsure],
  context_features(p, block_groups(page))[unsure]])`` in one call (the context columns by
  ``_features_c``'s C functions).
"""

cimport cython
from libc.stdlib cimport free
from libc.string cimport memcpy
from blockdex._common_c cimport BlockIds, _alloc
from blockdex._features_c cimport _context_fill, _group_ids, _order_desc
import numpy as np


@cython.boundscheck(False)
@cython.wraparound(False)
def stage2_rows(
    BlockIds ids,
    const double[::1] p,
    double mean,
    tuple levels,
    tuple windows,
    double lo,
    double hi,
    const float[:, ::1] X,
):
    """The second stage's input in one call: the positions of the blocks whose first-stage
    probability ``p`` is within ``[lo, hi]``, and their rows of ``X`` followed by their
    :func:`context_matrix` columns (groups as ``blockdex.features.block_groups``, ``mean`` is
    ``p.mean()``, the rank by a stable sort) as one float32 matrix: what
    ``np.hstack([X[unsure], context_features(p, block_groups(page))[unsure]])`` gives (``ids``:
    the blocks' numbers, ``blockdex.ids.page_ids``). Returns ``(positions, rows)``, or None
    when it cannot (a NaN probability): the caller then takes the numpy route."""
    cdef Py_ssize_t n = p.shape[0], i, j, m = 0, r = 0, n_g = 1 + len(levels)
    cdef Py_ssize_t n_x = X.shape[1], n_ctx = 7 + len(windows) + n_g + 5
    cdef int *groups = NULL
    cdef Py_ssize_t *order = NULL
    cdef float *ctx = NULL
    if ids.n != n or X.shape[0] != n:
        raise ValueError("arrays have the wrong shape")
    for i in range(n):
        if p[i] != p[i]:
            return None
        if p[i] >= lo and p[i] <= hi:
            m += 1
    positions = np.empty(m, dtype=np.intp)
    rows = np.empty((m, n_x + n_ctx), dtype=np.float32)
    if m == 0:
        return positions, rows
    cdef Py_ssize_t[::1] pos = positions
    cdef float[:, ::1] out = rows
    try:
        groups = <int *> _alloc(n * n_g * sizeof(int), False)
        _group_ids(ids, levels, groups)
        order = <Py_ssize_t *> _alloc(2 * n * sizeof(Py_ssize_t), False)
        _order_desc(&p[0], n, order, order + n)
        ctx = <float *> _alloc(n * n_ctx * sizeof(float), False)
        _context_fill(&p[0], n, groups, n_g, windows, mean, order, ctx, n_ctx)
        for i in range(n):
            if p[i] >= lo and p[i] <= hi:
                pos[r] = i
                memcpy(&out[r, 0], &X[i, 0], n_x * sizeof(float))
                memcpy(&out[r, n_x], ctx + i * n_ctx, n_ctx * sizeof(float))
                r += 1
    finally:
        free(groups)
        free(order)
        free(ctx)
    return positions, rows
