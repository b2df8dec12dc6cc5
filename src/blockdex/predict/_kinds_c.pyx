# cython: language_level=3
"""What ``blockdex/predict/kinds.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`kept_marks` — which of the kept blocks are images, reviews and quotes
  (``kinds._shop_page``, ``kinds._quoted_once``), each class/id string and tag path tested once
  a page instead of once a block.
* :func:`unpriced_items` — the items of a list without a currency sign (``kinds._priced_rails``).
* :func:`column_of` — the element around the heaviest kept block that holds a share of the kept
  words (``kinds._column``).
* :func:`blocks_in` — the blocks inside an element (``kinds._main_column``).
"""

cimport cython
from cpython.unicode cimport PyUnicode_READ_CHAR
from libc.stdlib cimport free
from blockdex._common_c cimport BlockIds, _alloc

IMAGES = 1
REVIEWS = 2
QUOTES = 4

cdef extern from "Python.h":
    Py_ssize_t PyUnicode_FindChar(object text, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end,
                                  int direction) except -2

cdef enum:
    _KNOWN = 1  # the string was tested
    _REVIEW = 2  # an attrs string naming a review, rating or testimonial
    _QUOTE = 4  # an attrs string naming a quote / a path through a <blockquote>


cdef inline signed char _attr_marks(str attrs):
    """Whether one attrs string names a review (``kinds.REVIEW_WORDS``) and whether it names a
    quote (``quote`` or ``Quote``), with ``_KNOWN`` set."""
    cdef signed char m = _KNOWN
    if "review" in attrs or "rating" in attrs or "testimonial" in attrs:
        m |= _REVIEW
    if "quote" in attrs or "Quote" in attrs:
        m |= _QUOTE
    return m


@cython.boundscheck(False)
@cython.wraparound(False)
def kept_marks(BlockIds ids, list kept, int wanted):
    """The positions among ``kept`` (block positions, in order) of the images (``IMAGES`` in
    ``wanted``: a block whose tag is ``img``), the reviews (``REVIEWS``: its attrs name
    ``review``, ``rating`` or ``testimonial``, inside a word too) and the quotes (``QUOTES``: a
    ``blockquote`` block, one below a ``<blockquote>`` in its path, or one whose attrs name
    ``quote`` or ``Quote``), as three lists (empty when not wanted). ``ids`` numbers the page's
    blocks (``blockdex.ids.page_ids``): each distinct attrs string and tag path is searched
    once."""
    cdef Py_ssize_t n = ids.n, n_attrs = len(ids.attrs), n_paths = len(ids.paths)
    cdef Py_ssize_t i, a, p
    cdef signed char *attr_marks = NULL
    cdef signed char *path_marks = NULL
    cdef signed char m
    cdef str tag
    images, reviews, quotes = [], [], []
    if not kept:
        return images, reviews, quotes
    try:
        attr_marks = <signed char *> _alloc(n_attrs, True)
        path_marks = <signed char *> _alloc(n_paths, True)
        for i in kept:
            if i < 0 or i >= n:
                raise IndexError("a kept position outside the page's blocks")
            tag = <str> ids.tags[ids.tag_of[i]]
            if wanted & IMAGES and tag == "img":
                images.append(i)
            if not wanted & (REVIEWS | QUOTES):
                continue
            a = ids.attr_of[i]
            m = attr_marks[a]
            if m == 0:
                m = attr_marks[a] = _attr_marks(<str> ids.attrs[a])
            if wanted & REVIEWS and m & _REVIEW:
                reviews.append(i)
            if not wanted & QUOTES:
                continue
            if tag == "blockquote" or m & _QUOTE:
                quotes.append(i)
                continue
            p = ids.path_of[i]
            if path_marks[p] == 0:
                path_marks[p] = _KNOWN | (_QUOTE if "blockquote" in <str> ids.paths[p] else 0)
            if path_marks[p] & _QUOTE:
                quotes.append(i)
    finally:
        free(attr_marks)
        free(path_marks)
    return images, reviews, quotes


cdef inline bint _has_sign(str text, str signs):
    """Whether ``text`` holds one of the characters of ``signs`` (``pagetype.PRICE_RE``'s class)."""
    cdef Py_ssize_t k
    for k in range(len(signs)):
        if PyUnicode_FindChar(text, PyUnicode_READ_CHAR(signs, k), 0, len(text), 1) >= 0:
            return True
    return False


@cython.boundscheck(False)
@cython.wraparound(False)
def unpriced_items(BlockIds ids, list items, str signs, Py_ssize_t allowed):
    """How many of ``items`` (``(first, last)`` block positions of the blocks' table ``ids``)
    hold no block whose text has a character of ``signs`` (a currency sign:
    ``pagetype.PRICE_RE``), counted until the count passes ``allowed`` (then ``allowed + 1``)."""
    cdef Py_ssize_t first, last, i, n = ids.n, unpriced = 0
    cdef bint priced
    cdef list texts = ids.texts
    for item in items:
        first, last = item
        if first < 0 or last >= n:
            raise IndexError("an item outside the page's blocks")
        priced = False
        for i in range(first, last + 1):
            if _has_sign(<str> texts[i], signs):
                priced = True
                break
        if not priced:
            unpriced += 1
            if unpriced > allowed:
                break
    return unpriced


@cython.boundscheck(False)
@cython.wraparound(False)
def column_of(BlockIds ids, list kept, list weights, double need, Py_ssize_t heaviest):
    """The first element of the scope of block ``kept[heaviest]``, nearest first, whose blocks
    among ``kept`` (positions of the blocks' table ``ids``: those whose scope holds it) weigh
    at least ``need`` (``weights``, one a kept block, summed in their order), as its element id,
    or None (``kinds._column``)."""
    cdef Py_ssize_t k, j, n = len(kept), e, d, b, h
    cdef double held
    cdef const Py_ssize_t *off = ids.scope_off
    cdef const Py_ssize_t *sc = ids.scope_ids
    if len(weights) != n:
        raise ValueError("one weight a kept block")
    h = kept[heaviest]
    for k in range(off[h + 1] - 1, off[h] - 1, -1):
        e = sc[k]
        held = 0.0
        for j in range(n):
            b = kept[j]
            for d in range(off[b], off[b + 1]):
                if sc[d] == e:
                    held += <double> weights[j]
                    break
        if held >= need:
            return ids.elem_id[e]
    return None


@cython.boundscheck(False)
@cython.wraparound(False)
def blocks_in(BlockIds ids, long long element):
    """One byte a block of the table ``ids``, 1 where ``element`` (an element id) is in the
    block's ``scope``: the blocks inside that element (``kinds._main_column``)."""
    cdef Py_ssize_t i, d, n = ids.n
    cdef bytearray out = bytearray(n)
    cdef unsigned char *o = out
    for i in range(n):
        for d in range(ids.scope_off[i], ids.scope_off[i + 1]):
            if ids.elem_id[ids.scope_ids[d]] == element:
                o[i] = 1
                break
    return out
