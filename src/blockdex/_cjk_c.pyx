# cython: language_level=3
"""The C side of ``blockdex/cjk.py``: holds its ``CJK_RANGES`` in C (loaded by
:func:`set_cjk_ranges` when ``blockdex.cjk`` is imported), for the token count of ``_segment_c`` and
the word counts of ``_features_c``, which cimport ``_is_cjk`` (``_cjk_c.pxd``).
"""

# Code point ranges of scripts written without spaces between words (blockdex.cjk.CJK_RANGES,
# loaded by set_cjk_ranges): each of their characters counts as one word.
_n_cjk = 0
_cjk_min = 0x110000

def set_cjk_ranges(list ranges):
    """Load the ``(first, last)`` code point ranges whose characters count as words."""
    global _n_cjk, _cjk_min
    if len(ranges) > 16:
        raise ValueError("at most 16 ranges")
    _n_cjk = 0
    _cjk_min = 0x110000
    for lo, hi in ranges:
        _cjk_lo[_n_cjk] = lo
        _cjk_hi[_n_cjk] = hi
        _cjk_min = min(_cjk_min, <Py_UCS4> lo)
        _n_cjk += 1
