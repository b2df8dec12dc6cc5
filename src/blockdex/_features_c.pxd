# cython: language_level=3
"""What ``blockdex.predict._content_c`` (the second stage's input rows) cimports from
``blockdex._features_c``."""

cdef int _context_fill(
    const double *p, Py_ssize_t n, const int *groups, Py_ssize_t n_groups, tuple windows,
    double mean, const Py_ssize_t *order, float *out, Py_ssize_t stride,
) except -1
cdef void _order_desc(const double *p, Py_ssize_t n, Py_ssize_t *order, Py_ssize_t *tmp) noexcept
from blockdex._common_c cimport BlockIds

cdef int _group_ids(BlockIds ids, tuple levels, int *groups) except -1
