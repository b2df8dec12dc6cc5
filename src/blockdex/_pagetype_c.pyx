# cython: language_level=3
"""Compiled twin of ``blockdex/pagetype.py`` (optional; built by ``pip install``).

* :func:`block_sums` — ``pagetype._block_sums``: the page type's per-block counts (words as
  ``str.split`` counts them, characters, link characters, long and short blocks, headings,
  words by tag group, linked headlines, questions, labels) in one pass over the blocks.
* :func:`scope_counts` — ``pagetype._scope_counts``: how many blocks each element's class/id
  tokens enclose (``Counter`` over ``Block.scope_attrs``, empty tokens left out).

It gives what its pure-Python twin gives (tests/test_speedups.py compares them); blockdex uses
the Python code when this module is not built, and ``BLOCKDEX_PURE_PYTHON=1`` forces it.
"""

cimport cython
from cpython.dict cimport PyDict_GetItem
from cpython.ref cimport PyObject
from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
)
from blockdex._common_c cimport _block_off, _blocks_of_class, _char_t, _field

cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)
    bint PyUnicode_IS_ASCII(object o)

cdef enum:
    LABEL_BUF = 128  # the key of an ASCII text of at most LABEL_BUF characters fits


cdef Py_ssize_t _scan(
    const _char_t *d, Py_ssize_t n, bint *question
) noexcept:
    """``len(text.split())`` (whitespace as ``str.split`` reads it), and whether ``?`` occurs."""
    cdef Py_ssize_t i, words = 0
    cdef bint in_word = False, q = False
    cdef Py_UCS4 c
    for i in range(n):
        c = d[i]
        if c == 63:  # '?'
            q = True
        if Py_UNICODE_ISSPACE(c):
            in_word = False
        elif not in_word:
            in_word = True
            words += 1
    question[0] = q
    return words


cdef str _ascii_label_key(const unsigned char *d, Py_ssize_t n):
    """``" ".join(_LETTERS_RE.findall(text.lower()))`` for an ASCII ``text`` of at most
    LABEL_BUF characters: its runs of letters, lower-cased, one space between them (in ASCII,
    ``[^\\W\\d_]`` is ``[A-Za-z]``)."""
    cdef char buf[LABEL_BUF]
    cdef Py_ssize_t i, m = 0
    cdef unsigned char c
    cdef bint gap = False
    for i in range(n):
        c = d[i]
        if 65 <= c <= 90:
            c += 32
        if 97 <= c <= 122:
            if gap and m:
                buf[m] = 32
                m += 1
            gap = False
            buf[m] = <char> c
            m += 1
        else:
            gap = True
    return buf[:m].decode("ascii")


@cython.boundscheck(False)
@cython.wraparound(False)
def block_sums(
    blocks, dict tag_codes, Py_ssize_t n_groups, Py_ssize_t long_words,
    Py_ssize_t short_words, Py_ssize_t label_max, dict label_group, Py_ssize_t n_labels,
    label_key,
):
    """``blockdex.pagetype._block_sums`` (see there for what it returns), or None when the blocks
    are not all of one class with ``Block``'s slots or a block's ``link_chars`` is not an int.

    ``tag_codes`` maps a tag to ``8 * (its TAG_SHARES group + 1) + kind`` (kind 1: h1, 2: h2,
    3: h3-h6, 4: pre); ``label_group`` a label's key to its LABELS group; ``label_key`` is the
    Python function making a text's key, called for texts past ASCII."""
    cdef tuple seq = _blocks_of_class(blocks)
    cdef Py_ssize_t n, pos, w, length, link, total = 0, chars = 0, links = 0
    cdef Py_ssize_t n_long = 0, long_sum = 0, n_short = 0, h1 = 0, h2 = 0, h3 = 0, pre = 0
    cdef Py_ssize_t linked_headings = 0, headline_links = 0, questions = 0, code, kind
    cdef bint question
    cdef int ukind
    cdef list texts, char_ends, tag_words, labels
    cdef str text, tag, key
    cdef object b, lc
    cdef PyObject *found
    if seq is None:
        return None
    n = len(seq)
    texts = [None] * n
    char_ends = [0] * (n + 1)
    tag_words = [0] * n_groups
    labels = [0] * n_labels
    for pos in range(n):
        b = seq[pos]
        text = <str> _field(b, _block_off[3])
        tag = <str> _field(b, _block_off[1])
        lc = _field(b, _block_off[8])
        if type(lc) is not int:
            return None
        link = lc
        texts[pos] = text
        length = PyUnicode_GET_LENGTH(text)
        ukind = PyUnicode_KIND(text)
        if ukind == PyUnicode_1BYTE_KIND:
            w = _scan(<const unsigned char *> PyUnicode_DATA(text), length, &question)
        elif ukind == PyUnicode_2BYTE_KIND:
            w = _scan(<const unsigned short *> PyUnicode_DATA(text), length, &question)
        else:
            w = _scan(<const unsigned int *> PyUnicode_DATA(text), length, &question)
        chars += length
        char_ends[pos + 1] = chars
        total += w
        links += link
        if w >= long_words:
            n_long += 1
            long_sum += w
        if w <= short_words:
            n_short += 1
        questions += question
        if w >= 4 and 5 * link >= 4 * length:
            headline_links += 1
        found = PyDict_GetItem(tag_codes, tag)
        if found != NULL:
            code = <object> found
            kind = code & 7
            if code >= 8:
                tag_words[(code >> 3) - 1] += w
            if kind == 1:
                h1 += 1
            elif kind == 2:
                h2 += 1
            elif kind == 3:
                h3 += 1
            elif kind == 4:
                pre += 1
            if 1 <= kind <= 3 and 2 * link >= length:
                linked_headings += 1
        if length <= label_max:
            if PyUnicode_IS_ASCII(text) and length <= LABEL_BUF:
                key = _ascii_label_key(<const unsigned char *> PyUnicode_DATA(text), length)
            else:
                key = label_key(text)
            found = PyDict_GetItem(label_group, key)
            if found != NULL:
                labels[<Py_ssize_t> <object> found] += 1
    return (
        texts, char_ends, total, links, n_long, long_sum, n_short, h1, h2, h3, pre, tag_words,
        linked_headings, headline_links, questions, labels,
    )


@cython.boundscheck(False)
@cython.wraparound(False)
def scope_counts(blocks):
    """``blockdex.pagetype._scope_counts``: each non-empty ``scope_attrs`` string of the
    blocks → how many blocks hold it (once per place it holds it), or None when the blocks are
    not all of one class with ``Block``'s slots."""
    cdef tuple seq = _blocks_of_class(blocks)
    cdef dict counts = {}
    cdef object s
    cdef PyObject *found
    if seq is None:
        return None
    for b in seq:
        for s in _field(b, _block_off[14]):
            if not s:
                continue
            found = PyDict_GetItem(counts, s)
            if found == NULL:
                counts[s] = 1
            else:
                counts[s] = <object> found + 1
    return counts
