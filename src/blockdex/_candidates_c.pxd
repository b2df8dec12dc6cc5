# cython: language_level=3
"""What ``blockdex._features_c`` cimports from ``blockdex._candidates_c``."""

from blockdex._common_c cimport BlockIds

cdef int _readability_fill(
    BlockIds table, tuple params, float[:, ::1] out, Py_ssize_t col0,
) except -1
