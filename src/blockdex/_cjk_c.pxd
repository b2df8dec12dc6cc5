# cython: language_level=3
"""The CJK code point table of ``blockdex._cjk_c`` (loaded from ``blockdex.cjk.CJK_RANGES`` by
its ``set_cjk_ranges``), which the token and word counts of the other compiled modules read."""

cdef Py_UCS4 _cjk_lo[16]
cdef Py_UCS4 _cjk_hi[16]
cdef int _n_cjk
cdef Py_UCS4 _cjk_min


cdef inline bint _is_cjk(Py_UCS4 c) noexcept:
    cdef int r
    if c < _cjk_min:
        return False
    for r in range(_n_cjk):
        if _cjk_lo[r] <= c <= _cjk_hi[r]:
            return True
    return False
