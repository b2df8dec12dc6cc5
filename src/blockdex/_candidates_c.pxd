# cython: language_level=3
"""What ``blockdex._features_c`` cimports from ``blockdex._candidates_c``."""

cdef int _readability_fill(
    tuple blocks, const Py_ssize_t *off, const Py_ssize_t *ids, Py_ssize_t n_ids, tuple params,
    float[:, ::1] out, Py_ssize_t col0,
) except -1
