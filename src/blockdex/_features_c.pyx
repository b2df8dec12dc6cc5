# cython: language_level=3
"""What ``blockdex/features.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`block_columns` — the per-block text columns (words, stop words, title words, marks).
* :func:`block_feature_matrix` — ``features.block_features``' matrix
  in one pass (with ``_scope_fill``'s scope columns and readability's, from ``_candidates_c``).
* :func:`context_matrix`, :func:`block_groups` — ``features.context_features`` and
  ``features.block_groups`` (``_context_fill``, ``_group_ids`` and ``_order_desc`` are also
  cimported by ``predict/_content_c``).
* :func:`set_family_words`, :func:`attr_family_rows`, :func:`level_mask`,
  :func:`clear_level_cache` — the class/id token families.
* :func:`path_rows` — the path columns of the distinct tag paths (numbered, with the
  blocks' class/id strings and scope elements, once a page: ``_common_c.BlockIds``).
"""

cimport cython
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset, memcpy, memcmp
from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH,
    PyUnicode_KIND, PyUnicode_READ,
)
from blockdex._common_c cimport BlockIds, _alloc, _char_t, _field, _id_slot, _slot_offset
from blockdex._cjk_c cimport _is_cjk
from blockdex._candidates_c cimport _readability_fill
from cpython.set cimport PySet_Contains
from libc.math cimport log1p
import numpy as np

cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)
    bint Py_UNICODE_ISUPPER(Py_UCS4 ch)
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch)

cdef enum:
    WORD_MAX = 64  # longer ASCII words are looked up the slow way (none is a stop word)


cdef inline unsigned long long _fnv(const unsigned char *w, Py_ssize_t n) noexcept:
    cdef unsigned long long h = 14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ w[i]) * 1099511628211ULL
    return h


@cython.final
cdef class _AsciiWordSet:
    """The ASCII members of a set of strings, for lookups of lower-cased ASCII words without
    making Python strings (open addressing over FNV-1a hashes; C arrays)."""
    cdef bytes pool
    cdef const unsigned char *chars
    cdef Py_ssize_t mask
    cdef Py_ssize_t *start  # pool offset of the word in each slot, -1: empty
    cdef Py_ssize_t *length
    cdef Py_ssize_t max_len

    def __cinit__(self):
        self.start = NULL
        self.length = NULL

    def __init__(self, words):
        members = sorted({w for w in words if w.isascii() and 0 < len(w) <= WORD_MAX})
        cdef Py_ssize_t size = 8, at = 0, k, n, j
        while size < 2 * len(members) + 2:
            size *= 2
        self.mask = size - 1
        free(self.start)
        free(self.length)
        self.start = <Py_ssize_t *> malloc(size * sizeof(Py_ssize_t))
        self.length = <Py_ssize_t *> malloc(size * sizeof(Py_ssize_t))
        if self.start == NULL or self.length == NULL:
            raise MemoryError()
        for j in range(size):
            self.start[j] = -1
            self.length[j] = 0
        self.pool = "".join(members).encode("ascii")
        self.chars = self.pool
        self.max_len = max((len(w) for w in members), default=0)
        for w in members:
            n = len(w)
            k = _fnv(self.chars + at, n) & self.mask
            while self.start[k] >= 0:
                k = (k + 1) & self.mask
            self.start[k] = at
            self.length[k] = n
            at += n

    def __dealloc__(self):
        free(self.start)
        free(self.length)

    cdef inline bint contains(self, const unsigned char *w, Py_ssize_t n) noexcept:
        if n > self.max_len:
            return False
        return self.contains_hashed(w, n, _fnv(w, n))

    cdef bint contains_hashed(
        self, const unsigned char *w, Py_ssize_t n, unsigned long long h
    ) noexcept:
        """:meth:`contains` with ``h`` the FNV-1a hash of the ``n`` bytes at ``w``."""
        cdef Py_ssize_t k, j, at
        if n > self.max_len:
            return False
        k = h & self.mask
        while self.start[k] >= 0:
            if self.length[k] == n:
                at = self.start[k]
                for j in range(n):
                    if self.chars[at + j] != w[j]:
                        break
                else:
                    return True
            k = (k + 1) & self.mask
        return False


cdef _AsciiWordSet _stop_set = None
cdef object _stop_set_of = None  # the frozenset _stop_set was built from

cdef Py_ssize_t _word_scan(
    const _char_t *d, Py_ssize_t n, str text, _AsciiWordSet stops_ascii,
    _AsciiWordSet title_ascii, frozenset stops, set title, long *n_stop, long *n_title,
) except -1:
    """:func:`_word_counts` on ``text``'s characters ``d`` (one loop per width)."""
    cdef Py_ssize_t i = 0, s, words = 0
    cdef unsigned char buf[WORD_MAX]
    cdef Py_UCS4 c
    cdef unsigned int lc
    cdef unsigned long long h
    cdef bint ascii, in_run
    while i < n:
        while i < n and Py_UNICODE_ISSPACE(d[i]):
            i += 1
        if i >= n:
            break
        s = i
        ascii = True
        in_run = False  # inside a run of characters that are not CJK
        h = 14695981039346656037ULL  # FNV-1a of the lower-cased word, as _fnv (ASCII words)
        while i < n:
            c = d[i]
            if c < 128:
                if Py_UNICODE_ISSPACE(c):
                    break
                if i - s < WORD_MAX:  # lower-cased into buf and hashed on the way
                    lc = (<unsigned int> c) + 32 if 65 <= c <= 90 else <unsigned int> c
                    buf[i - s] = <unsigned char> lc
                    h = (h ^ lc) * 1099511628211ULL
            else:
                if Py_UNICODE_ISSPACE(c):
                    break
                ascii = False
                if _is_cjk(c):
                    words += 1
                    in_run = False
                    i += 1
                    continue
            if not in_run:
                words += 1
                in_run = True
            i += 1
        if ascii and i - s <= WORD_MAX:
            if stops_ascii.contains_hashed(buf, i - s, h):
                n_stop[0] += 1
            if title is not None and title_ascii.contains_hashed(buf, i - s, h):
                n_title[0] += 1
        else:
            w = text[s:i].lower()
            if PySet_Contains(stops, w):
                n_stop[0] += 1
            if title is not None and PySet_Contains(title, w):
                n_title[0] += 1
    return words


cdef Py_ssize_t _word_counts(
    str text, _AsciiWordSet stops_ascii, _AsciiWordSet title_ascii, frozenset stops, set title,
    long *n_stop, long *n_title,
) except -1:
    """The words of ``text`` (:func:`blockdex.features.word_count`: ``text.split()``'s words,
    with each CJK character a word of its own) and how many of ``text.lower().split()``'s words
    are in ``stops`` and in ``title`` (None: not counted). Lower-casing neither makes nor
    removes whitespace, so those are ``text.split()``'s words, lowered one by one: ASCII words
    (at most WORD_MAX long) in the ASCII sets without a Python string, others as
    ``word.lower()`` in the sets."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text)
    n_stop[0] = n_title[0] = 0
    if kind == PyUnicode_1BYTE_KIND:
        return _word_scan(<const unsigned char *> data, n, text, stops_ascii, title_ascii,
                          stops, title, n_stop, n_title)
    if kind == PyUnicode_2BYTE_KIND:
        return _word_scan(<const unsigned short *> data, n, text, stops_ascii, title_ascii,
                          stops, title, n_stop, n_title)
    return _word_scan(<const unsigned int *> data, n, text, stops_ascii, title_ascii, stops,
                      title, n_stop, n_title)


cdef inline void _count_marks(
    const _char_t *data, Py_ssize_t n, const unsigned char *table, Py_ssize_t table_size,
    Py_ssize_t *digits, Py_ssize_t *marks,
) noexcept:
    """ASCII digits, and characters marked in ``table`` (below ``table_size``), in ``data``."""
    cdef Py_ssize_t j
    cdef Py_UCS4 c
    for j in range(n):
        c = data[j]
        if 48 <= c <= 57:
            digits[0] += 1
        elif c < <Py_UCS4> table_size and table[c]:
            marks[0] += 1


@cython.boundscheck(False)
@cython.wraparound(False)
def block_columns(
    BlockIds ids,
    frozenset stops,
    set title_words,
    dict tag_groups,
    dict tag_index,
    frozenset heading_tags,
    tuple sent_end,
    const unsigned char[::1] punct_table,
    double[:, ::1] out,
):
    """The per-block columns ``blockdex.features.block_features`` reads from the blocks' table
    (``ids``), in one pass.

    Columns: 0 characters, 1 words, 2 stop words, 3 title words, 4 link characters, 5 links,
    6 heading, 7 tag group index, 8 ends a sentence, 9 starts upper-case, 10 split part,
    11 from a script, 12 depth (clipped at 60, over 60), 13 punctuation marks (code points
    below U+10000 marked in ``punct_table``), 14 ASCII digits.
    """
    cdef Py_ssize_t i, n = ids.n
    cdef Py_ssize_t table_size = punct_table.shape[0]
    cdef const unsigned char *table = &punct_table[0] if table_size else NULL
    cdef bint use_title = bool(title_words)
    cdef _AsciiWordSet title_set = _AsciiWordSet(title_words) if use_title else None
    cdef _AsciiWordSet stop_set
    cdef list texts = ids.texts, tags = ids.tags
    cdef Py_ssize_t n_tags = len(tags), t
    cdef double *heading = NULL
    cdef double *group = NULL
    global _stop_set, _stop_set_of
    if out.shape[0] != n or out.shape[1] != 15:
        raise ValueError("out has the wrong shape")
    if _stop_set_of is not stops:
        _stop_set = _AsciiWordSet(stops)
        _stop_set_of = stops
    stop_set = _stop_set
    heading = <double *> _alloc(max(n_tags, 1) * sizeof(double), False)
    group = <double *> _alloc(max(n_tags, 1) * sizeof(double), False)
    try:
        for t in range(n_tags):  # each distinct tag's heading and group columns, once
            tag = tags[t]
            heading[t] = 1.0 if tag in heading_tags else 0.0
            group[t] = tag_index[tag_groups.get(tag, "other")]
        for i in range(n):
            _one_block_columns(
                <str> texts[i], i, ids, heading, group, stop_set, title_set, stops,
                title_words if use_title else None, sent_end, table, table_size, out,
            )
    finally:
        free(heading)
        free(group)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _one_block_columns(
    str text, Py_ssize_t i, BlockIds ids, const double *heading, const double *group,
    _AsciiWordSet stop_set, _AsciiWordSet title_set, frozenset stops, set title_words,
    tuple sent_end, const unsigned char *table, Py_ssize_t table_size, double[:, ::1] out,
) except -1:
    cdef Py_ssize_t n_chars, marks, digits, end, n_words
    cdef long n_stop, n_title, depth
    cdef int kind, t
    cdef void *data
    n_words = _word_counts(text, stop_set, title_set, stops, title_words, &n_stop, &n_title)
    t = ids.tag_of[i]
    depth = ids.depth_of[i]
    out[i, 0] = len(text)
    out[i, 1] = n_words
    out[i, 2] = n_stop
    out[i, 3] = n_title
    out[i, 4] = <double> ids.link_chars_of[i]
    out[i, 5] = ids.n_links_of[i]
    out[i, 6] = heading[t]
    out[i, 7] = group[t]
    kind = PyUnicode_KIND(text)
    data = PyUnicode_DATA(text)
    n_chars = len(text)
    end = n_chars  # text.rstrip() is text[:end]
    while end > 0 and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)):
        end -= 1
    out[i, 8] = 1.0 if end and text.endswith(sent_end, 0, end) else 0.0
    out[i, 9] = 1.0 if n_chars and Py_UNICODE_ISUPPER(PyUnicode_READ(kind, data, 0)) else 0.0
    out[i, 10] = 1.0 if ids.split_of[3 * i] >= 0 else 0.0
    out[i, 11] = 0.0 if ids.source_of[i] == 0 else 1.0
    out[i, 12] = (depth if depth < 60 else 60) / 60.0
    marks = digits = 0
    if kind == PyUnicode_1BYTE_KIND:  # one loop per width: the kind test leaves the loop
        _count_marks(<const unsigned char *> data, n_chars, table, table_size, &digits, &marks)
    elif kind == PyUnicode_2BYTE_KIND:
        _count_marks(<const unsigned short *> data, n_chars, table, table_size, &digits, &marks)
    else:
        _count_marks(<const unsigned int *> data, n_chars, table, table_size, &digits, &marks)
    out[i, 13] = marks
    out[i, 14] = digits
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _scope_fill(
    BlockIds ids,
    const double *good_words,
    double total_good,
    tuple repeat_levels,
    tuple scope_levels,
    double main_share,
    double *repeat_counts,
    float *scope_share,
    float *in_main,
) except -1:
    """The scope columns of ``blockdex.features.block_features`` (see its docstring) on C
    arrays (row-major), filling three outputs. The scopes' elements come numbered densely
    (``ids``: :class:`~blockdex._common_c.BlockIds`), so the per-container sums and the
    distinct-container counts are array work, not Python dicts and sets; the sums are the same
    additions in the same order; the temporaries are malloc'd."""
    cdef Py_ssize_t i, n = ids.n, pair_size
    cdef Py_ssize_t n_paths = 0, n_rep = len(repeat_levels), n_lv = len(scope_levels)
    cdef long long *pair_keys = NULL
    cdef signed char *pair_used = NULL
    cdef Py_ssize_t *counts = NULL
    cdef double *words = NULL
    n_paths = len(ids.paths)
    pair_size = 8
    while pair_size < 2 * n + 2:
        pair_size *= 2
    try:
        pair_keys = <long long *> _alloc(pair_size * sizeof(long long), False)
        pair_used = <signed char *> _alloc(pair_size, False)
        counts = <Py_ssize_t *> _alloc(max(n_paths, 1) * sizeof(Py_ssize_t), False)
        _scope_loops(
            ids.path_of, good_words, total_good, repeat_levels, scope_levels, main_share,
            repeat_counts, scope_share, in_main, n, n_paths, n_rep, n_lv, ids.n_elements,
            pair_size, ids.scope_off, ids.scope_ids, pair_keys, pair_used, counts, &words,
        )
    finally:
        free(pair_keys)
        free(pair_used)
        free(counts)
        free(words)
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _scope_loops(
    const Py_ssize_t *path_of, const double *good_words, double total_good,
    tuple repeat_levels, tuple scope_levels, double main_share, double *repeat_counts,
    float *scope_share, float *in_main, Py_ssize_t n, Py_ssize_t n_paths, Py_ssize_t n_rep,
    Py_ssize_t n_lv, Py_ssize_t n_ids, Py_ssize_t pair_size, const Py_ssize_t *off,
    const Py_ssize_t *ids, long long *pair_keys, signed char *pair_used, Py_ssize_t *counts,
    double **words_out,
) except -1:
    """The loops of :func:`_scope_fill` on the page's scope numbers."""
    cdef Py_ssize_t i, j, k, slot, d, n_sc, depth, best_depth = -1, key_id, main = -1
    cdef double threshold
    cdef double *words
    # 1. distinct containers k levels up per tag-path group (-1: the block has none so high)
    cdef Py_ssize_t pmask = pair_size - 1
    cdef long long pair
    for j in range(n_rep):
        k = repeat_levels[j]
        memset(pair_used, 0, pair_size)
        memset(counts, 0, max(n_paths, 1) * sizeof(Py_ssize_t))
        for i in range(n):
            n_sc = off[i + 1] - off[i]
            key_id = ids[off[i + 1] - 1 - k] if n_sc > k else -1
            pair = <long long> path_of[i] * (n_ids + 1) + (key_id + 1)
            slot = _id_slot(&pair_keys[0], <const char *> &pair_used[0], pmask, pair)
            if not pair_used[slot]:
                pair_used[slot] = 1
                pair_keys[slot] = pair
                counts[path_of[i]] += 1
        for i in range(n):
            repeat_counts[i * n_rep + j] = counts[path_of[i]]
    # 2. prose words per container, summed block by block in page order
    words = words_out[0] = <double *> _alloc(max(n_ids, 1) * sizeof(double), True)
    for i in range(n):
        if good_words[i]:
            for d in range(off[i], off[i + 1]):
                words[ids[d]] = words[ids[d]] + good_words[i]
    # 3. the main container: the deepest holding main_share of the prose (first such)
    threshold = main_share * total_good
    for i in range(n):
        if good_words[i] == 0:
            continue
        depth = 0
        for d in range(off[i], off[i + 1]):
            if depth > best_depth and words[ids[d]] >= threshold:
                best_depth = depth
                main = ids[d]
            depth += 1
    for i in range(n):
        n_sc = off[i + 1] - off[i]
        for j in range(n_lv):
            k = scope_levels[j]
            if n_sc > k:
                scope_share[i * n_lv + j] = words[ids[off[i + 1] - 1 - k]] / total_good
        if main >= 0:
            for d in range(off[i], off[i + 1]):
                if ids[d] == main:
                    in_main[i] = 1.0
                    break
    return 0

def block_groups(BlockIds ids, tuple levels, int[:, ::1] out):
    """``blockdex.features.block_groups``' partition into ``out`` (one column per group kind, as
    :func:`stage2_rows` numbers it: only which blocks share an id means anything), from the
    blocks' table (``ids``)."""
    if out.shape[0] != ids.n or out.shape[1] != 1 + len(levels):
        raise ValueError("out has the wrong shape")
    if out.shape[0] == 0:
        return
    _group_ids(ids, levels, &out[0, 0])

# -- class/id token families -----------------------------------------------------------------------

cdef enum:
    FAM_WHOLE = 0   # the whole token is the word
    FAM_PREFIX = 1  # the token starts with the word
    FAM_ANYWHERE = 2  # the word occurs in the token
    FAM_MAX_WORD = 32

cdef struct FamWord:
    int family
    int mode
    Py_ssize_t length
    Py_UCS4 chars[FAM_MAX_WORD]

cdef FamWord *_fam_words = NULL
cdef Py_ssize_t _n_fam_words = 0
# the words by first character: _fam_by_first[_fam_first[c] : _fam_first[c + 1]] (indices)
cdef Py_ssize_t _fam_first[129]
cdef Py_ssize_t *_fam_by_first = NULL


def set_family_words(list rows):
    """Load the word table ``(family, mode, word)`` that :func:`attr_family_rows` matches
    tokens against (``blockdex.features._family_word_table``: mode 0 the whole token, 1 a
    prefix, 2 anywhere; words of ASCII letters and digits)."""
    global _fam_words, _n_fam_words, _fam_by_first
    cdef Py_ssize_t n = len(rows)
    cdef FamWord *table = <FamWord *> malloc(max(n, 1) * sizeof(FamWord))
    cdef Py_ssize_t *by_first = <Py_ssize_t *> malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t i, j, c
    if table == NULL or by_first == NULL:
        free(table)
        free(by_first)
        raise MemoryError()
    for i, (family, mode, word) in enumerate(rows):
        if (not 0 <= family < 62 or mode not in (0, 1, 2) or not 0 < len(word) <= FAM_MAX_WORD
                or not word.isascii()):
            free(table)
            free(by_first)
            raise ValueError(f"bad family word row {(family, mode, word)!r}")
        table[i].family = family
        table[i].mode = mode
        table[i].length = len(word)
        for j in range(len(word)):
            table[i].chars[j] = ord(word[j])
    free(_fam_words)
    free(_fam_by_first)
    _fam_words = table
    _n_fam_words = n
    order = sorted(range(n), key=lambda k: (table[k].chars[0], k))
    for j in range(n):
        by_first[j] = order[j]
    _fam_by_first = by_first
    j = 0
    for c in range(129):
        while j < n and table[by_first[j]].chars[0] < c:
            j += 1
        _fam_first[c] = j


cdef inline bint _fam_eq(
    int kind, void *data, Py_ssize_t at, const FamWord *w
) noexcept:
    cdef Py_ssize_t j
    for j in range(w.length):
        if PyUnicode_READ(kind, data, at + j) != w.chars[j]:
            return False
    return True


cdef unsigned long long _token_mask(
    int kind, void *data, Py_ssize_t start, Py_ssize_t end
) noexcept:
    """The families of the words matching ``data[start:end]``: the token is a ``whole`` word,
    starts with a ``prefix`` word or holds an ``anywhere`` word. At each position only the words
    beginning with its character are tried (all words are ASCII)."""
    cdef unsigned long long mask = 0, bit
    cdef Py_ssize_t k, p, c, n = end - start
    cdef const FamWord *w
    for p in range(start, end):
        c = <Py_ssize_t> PyUnicode_READ(kind, data, p)
        if c >= 128:
            continue
        for k in range(_fam_first[c], _fam_first[c + 1]):
            w = &_fam_words[_fam_by_first[k]]
            bit = 1ULL << w.family
            if mask & bit or w.length > end - p:
                continue
            if w.mode != FAM_ANYWHERE and (p != start or (w.mode == FAM_WHOLE and w.length != n)):
                continue
            if _fam_eq(kind, data, p, w):
                mask |= bit
    return mask


cdef unsigned long long _level_mask(str level):
    """The families (``features.ATTR_FAMILIES``) of the tokens (runs between whitespace,
    ``_`` and ``-``) of at least two characters."""
    cdef int kind = PyUnicode_KIND(level)
    cdef void *data = PyUnicode_DATA(level)
    cdef Py_ssize_t i, start = 0, n = len(level)
    cdef Py_UCS4 c
    cdef unsigned long long mask = 0
    for i in range(n + 1):
        if i < n:
            c = PyUnicode_READ(kind, data, i)
            if not (c == 95 or c == 45 or Py_UNICODE_ISSPACE(c)):  # '_', '-'
                continue
        if i - start >= 2:
            mask |= _token_mask(kind, data, start, i)
        start = i + 1
    return mask


def level_mask(str level):
    """The compiled ``_level_mask`` (for tests)."""
    return _level_mask(level)


cdef struct _LevelEntry:
    unsigned long long h  # 0: an empty slot
    PyObject *level  # the level (a one-byte str, owned)
    unsigned long long mask

cdef enum:
    LEVEL_SLOTS = 1 << 17  # the one-byte level cache: slots, and entries kept before a clear
    LEVEL_KEEP = 1 << 16  # (as many as features._LEVEL_MASKS keeps)

cdef _LevelEntry *_levels = NULL
cdef Py_ssize_t _n_levels = 0


cdef void _levels_clear() noexcept:
    global _n_levels
    cdef Py_ssize_t k
    if _levels == NULL:
        return
    for k in range(LEVEL_SLOTS):
        if _levels[k].h:
            Py_XDECREF(_levels[k].level)
            _levels[k].h = 0
            _levels[k].level = NULL
    _n_levels = 0


cdef inline unsigned long long _bytes_hash(const unsigned char *p, Py_ssize_t n) noexcept:
    cdef unsigned long long h = <unsigned long long> n * 0x9E3779B97F4A7C15ULL, w
    cdef Py_ssize_t i = 0
    while i + 8 <= n:
        memcpy(&w, p + i, 8)
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL
        h ^= h >> 32
        i += 8
    w = 0
    if i < n:
        memcpy(&w, p + i, n - i)
        h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL
        h ^= h >> 29
    return h | 1


cdef unsigned long long _level_mask_1byte(str a, Py_ssize_t start, Py_ssize_t end) except? 0:
    """:func:`_level_mask` of ``a[start:end]`` for a one-byte ``a``, through a C table of the
    levels seen (their text compared byte for byte: a hit is the same level)."""
    global _levels, _n_levels
    cdef const unsigned char *p = <const unsigned char *> PyUnicode_DATA(a) + start
    cdef Py_ssize_t n = end - start, k
    cdef unsigned long long h = _bytes_hash(p, n), m
    cdef PyObject *lv
    if _levels == NULL:
        _levels = <_LevelEntry *> calloc(LEVEL_SLOTS, sizeof(_LevelEntry))
        if _levels == NULL:
            raise MemoryError()
    k = <Py_ssize_t> (h & (LEVEL_SLOTS - 1))
    while _levels[k].h:
        if _levels[k].h == h:
            lv = _levels[k].level
            if PyUnicode_GET_LENGTH(<object> lv) == n and \
                    memcmp(PyUnicode_DATA(<object> lv), p, n) == 0:
                return _levels[k].mask
        k = (k + 1) & (LEVEL_SLOTS - 1)
    level = a[start:end]
    m = _level_mask(level)
    if _n_levels >= LEVEL_KEEP:  # full: start over (the level is found again next time)
        _levels_clear()
        k = <Py_ssize_t> (h & (LEVEL_SLOTS - 1))
    Py_INCREF(level)
    _levels[k].h = h
    _levels[k].level = <PyObject *> level
    _levels[k].mask = m
    _n_levels += 1
    return m


@cython.boundscheck(False)
@cython.wraparound(False)
def attr_family_rows(list attr_strings, dict level_cache, float[:, ::1] out):
    """``blockdex.features._attr_matrix``: per attrs string (levels joined by ``" | "``), its
    families' bits over all levels, then over the nearest two, as 0/1 in ``out``'s row.
    ``level_cache`` maps a level to its mask (filled here) for strings of two- and four-byte
    characters; one-byte strings (nearly all) are split and looked up in C, no level string
    made unless it is new."""
    cdef Py_ssize_t i, j, f, n_levels, n_fam = out.shape[1] // 2, n, pos, start
    cdef unsigned long long far, near, m, last, before
    cdef const unsigned char *d
    cdef list levels
    cdef str a
    if out.shape[0] != len(attr_strings) or n_fam * 2 != out.shape[1]:
        raise ValueError("out has the wrong shape")
    for i in range(len(attr_strings)):
        a = attr_strings[i]
        far = near = 0
        if a and PyUnicode_KIND(a) == PyUnicode_1BYTE_KIND:
            # a.split(" | "): leftmost separators, not overlapping; near is the last two levels
            d = <const unsigned char *> PyUnicode_DATA(a)
            n = len(a)
            start = pos = 0
            last = before = 0
            while True:
                while pos + 3 <= n and not (d[pos] == 32 and d[pos + 1] == 124
                                            and d[pos + 2] == 32):
                    pos += 1
                if pos + 3 > n:
                    pos = n
                m = _level_mask_1byte(a, start, pos)
                far |= m
                before = last
                last = m
                if pos >= n:
                    break
                pos += 3
                start = pos
            near = last | before
        elif a:
            levels = a.split(" | ")
            n_levels = len(levels)
            for j in range(n_levels):
                lv = levels[j]
                v = level_cache.get(lv)
                if v is None:
                    m = _level_mask(lv)
                    level_cache[lv] = m
                else:
                    m = v
                far |= m
                if j >= n_levels - 2:
                    near |= m
        for f in range(n_fam):
            out[i, f] = (far >> f) & 1
            out[i, n_fam + f] = (near >> f) & 1


def clear_level_cache():
    """Forget the levels :func:`attr_family_rows` has seen (for tests)."""
    _levels_clear()

cdef enum:
    N_LOCAL = 18
    N_CONTEXT = 23


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def block_feature_matrix(
    const double[:, ::1] cols,
    BlockIds ids,
    const float[:, ::1] path_rows,
    const float[:, ::1] attr_rows,
    double html_bytes,
    Py_ssize_t n_title,
    tuple repeat_levels,
    tuple scope_levels,
    double main_share,
    double chars_per_word,
    double good_min_words,
    double good_max_link,
    Py_ssize_t window,
    float[:, ::1] out,
    tuple readability=None,
):
    """``blockdex.features.block_features`` from the per-block columns and the path/attrs rows
    on (``path_rows``/``attr_rows``: one row per distinct path and attrs string of ``ids``, the
    blocks' numbers): the page features, the prose ("good") words, the scope columns
    (:func:`_scope_fill`) and :func:`_feature_fill`'s numeric columns in one call, with no numpy
    array in between (the sums are of integers, exact in any order). With ``readability``
    (``candidates.COMPILED_PARAMS``) the last six columns of ``out`` are readability's
    (:func:`_readability_fill`, on the same scope numbers)."""
    cdef Py_ssize_t n = cols.shape[0], i, n_rep = len(repeat_levels), n_lv = len(scope_levels)
    cdef double chars, link, total_chars = 0.0, total_words = 0.0, total_good = 0.0
    cdef float page_feats[3]
    cdef double *good_words = NULL
    cdef double *repeat_counts = NULL
    cdef float *scope_share = NULL
    cdef float *in_main = NULL
    cdef Py_ssize_t n_extra = 6 if readability is not None else 0
    if n == 0:
        return
    if (cols.shape[1] != 15 or ids.n != n or path_rows.shape[0] != len(ids.paths)
            or attr_rows.shape[0] != len(ids.attrs) or n_rep != 2 or n_lv != 4):
        raise ValueError("arrays have the wrong shape")
    for i in range(n):
        chars = cols[i, 0] if cols[i, 0] > 1.0 else 1.0
        total_chars += chars
        total_words += cols[i, 1]
    if total_chars == 0:
        total_chars = 1.0
    if total_words == 0:
        total_words = 1.0
    page_feats[0] = <float> log1p(<double> n)
    page_feats[1] = <float> log1p(total_words)
    page_feats[2] = <float> log1p(html_bytes / total_chars) if html_bytes else 0.0
    try:
        good_words = <double *> _alloc(n * sizeof(double), False)
        repeat_counts = <double *> _alloc(n * n_rep * sizeof(double), True)
        scope_share = <float *> _alloc(n * n_lv * sizeof(float), True)
        in_main = <float *> _alloc(n * sizeof(float), True)
        for i in range(n):
            chars = cols[i, 0] if cols[i, 0] > 1.0 else 1.0
            link = cols[i, 4] / chars
            if link > 1.0:
                link = 1.0
            good_words[i] = cols[i, 1] if cols[i, 1] >= good_min_words and link < good_max_link \
                else 0.0
            total_good += good_words[i]
        if total_good == 0:
            total_good = 1.0
        _scope_fill(ids, good_words, total_good, repeat_levels, scope_levels, main_share,
                    repeat_counts, scope_share, in_main)
        _feature_fill(cols, ids.path_of, ids.attr_of, path_rows, attr_rows, page_feats, 3,
                      n_title, repeat_counts, scope_share, in_main, chars_per_word,
                      good_min_words, good_max_link, window, out, n_extra)
        if readability is not None:
            _readability_fill(ids, readability, out, out.shape[1] - 6)
    finally:
        free(good_words)
        free(repeat_counts)
        free(scope_share)
        free(in_main)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef int _feature_fill(
    const double[:, ::1] cols,
    const Py_ssize_t *path_of,
    const Py_ssize_t *attr_of,
    const float[:, ::1] path_rows,
    const float[:, ::1] attr_rows,
    const float *page_feats,
    Py_ssize_t n_page,
    Py_ssize_t n_title,
    const double *repeat_counts,
    const float *scope_share,
    const float *in_main,
    double chars_per_word,
    double good_min_words,
    double good_max_link,
    Py_ssize_t window,
    float[:, ::1] out,
    Py_ssize_t n_extra=0,
) except -1:
    """The numeric columns of ``out`` (the block's own, the one-hot tag group and the looked-up
    path/attrs rows, the page features, the context columns) from the page features and the
    scope columns as C arrays (row-major: ``repeat_counts`` n x 2, ``scope_share`` n x 4); the last ``n_extra`` columns
    of ``out`` are left alone."""
    cdef Py_ssize_t n = cols.shape[0]
    cdef Py_ssize_t n_tag, n_path = path_rows.shape[1], n_attr = attr_rows.shape[1]
    cdef Py_ssize_t o_tag, o_path, o_attr, o_page, o_ctx
    cdef Py_ssize_t n_paths = path_rows.shape[0]
    cdef double *link_arr
    cdef double *psum
    cdef double *c_logw
    cdef double *c_link
    cdef double *c_good
    cdef Py_ssize_t *pcount
    cdef Py_ssize_t *prev_good
    cdef float *log_words
    cdef unsigned char *good
    cdef double *bv = NULL
    cdef Py_ssize_t *iv = NULL
    if n == 0:
        return 0
    n_tag = out.shape[1] - N_LOCAL - n_path - n_attr - n_page - N_CONTEXT - n_extra
    if n_tag <= 0 or cols.shape[1] != 15 or out.shape[0] != n:
        raise ValueError("arrays have the wrong shape")
    o_tag = N_LOCAL
    o_path = o_tag + n_tag
    o_attr = o_path + n_path
    o_page = o_attr + n_attr
    o_ctx = o_page + n_page
    try:
        bv = <double *> _alloc((6 * (n + 1) + n_paths) * sizeof(double), False)
        iv = <Py_ssize_t *> _alloc((n_paths + n + 1) * sizeof(Py_ssize_t), True)
        link_arr = &bv[0]
        c_logw = &bv[n + 1]
        c_link = &bv[2 * (n + 1)]
        c_good = &bv[3 * (n + 1)]
        psum = &bv[4 * (n + 1)]
        log_words = <float *> &bv[4 * (n + 1) + n_paths]  # n floats + n bytes: in 2n doubles
        good = <unsigned char *> (log_words + n)
        pcount = &iv[0]
        prev_good = &iv[n_paths]
        _feature_loops(cols, path_of, attr_of, path_rows, attr_rows, page_feats, n_page,
                       n_title, repeat_counts, scope_share, in_main, chars_per_word,
                       good_min_words, good_max_link, window, out, n_tag, o_tag, o_path,
                       o_attr, o_page, o_ctx, link_arr, c_logw, c_link, c_good, psum, log_words,
                       good, pcount, prev_good)
    finally:
        free(bv)
        free(iv)
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _feature_loops(
    const double[:, ::1] cols, const Py_ssize_t *path_of, const Py_ssize_t *attr_of,
    const float[:, ::1] path_rows, const float[:, ::1] attr_rows, const float *page_feats,
    Py_ssize_t n_page, Py_ssize_t n_title, const double *repeat_counts,
    const float *scope_share, const float *in_main, double chars_per_word,
    double good_min_words, double good_max_link, Py_ssize_t window, float[:, ::1] out,
    Py_ssize_t n_tag, Py_ssize_t o_tag, Py_ssize_t o_path, Py_ssize_t o_attr, Py_ssize_t o_page,
    Py_ssize_t o_ctx, double *link_arr, double *c_logw, double *c_link, double *c_good,
    double *psum, float *log_words, unsigned char *good, Py_ssize_t *pcount,
    Py_ssize_t *prev_good,
) noexcept:
    cdef Py_ssize_t n = cols.shape[0], i, j, lo, hi, k, left, right, d1, d2
    cdef Py_ssize_t n_path = path_rows.shape[1], n_attr = attr_rows.shape[1]
    cdef Py_ssize_t n_paths = path_rows.shape[0], first_good = -1, last_good = -1
    cdef double chars, words, link, nonlinked, v, total_chars = 0, total_words = 0
    cdef double punct_sum = 0, vmax = 0, run = 0, no_good, nw
    for j in range(n_paths):
        psum[j] = 0.0
    # Page sums (integers in float64: exact in any order).
    for i in range(n):
        chars = cols[i, 0] if cols[i, 0] > 1.0 else 1.0
        total_chars += chars
        total_words += cols[i, 1]
        punct_sum += cols[i, 13]
    if total_chars == 0:
        total_chars = 1.0
    if total_words == 0:
        total_words = 1.0
    if punct_sum < 1.0:
        punct_sum = 1.0
    for i in range(n):  # vvtc's maximum first: the column is divided by it
        chars = cols[i, 0] if cols[i, 0] > 1.0 else 1.0
        v = (chars / total_chars) * (cols[i, 13] / punct_sum)
        if v > vmax:
            vmax = v
    if vmax < 1e-12:
        vmax = 1e-12
    # Local columns, cumulative sums for the windows, tag-path group sums.
    c_logw[0] = c_link[0] = c_good[0] = 0.0
    for i in range(n):
        chars = cols[i, 0] if cols[i, 0] > 1.0 else 1.0
        words = cols[i, 1]
        nw = words if words > 1.0 else 1.0
        link = cols[i, 4] / chars
        if link > 1.0:
            link = 1.0
        link_arr[i] = link
        nonlinked = chars - cols[i, 4]
        if nonlinked < 0.0:
            nonlinked = 0.0
        nonlinked = nonlinked / chars_per_word
        log_words[i] = <float> log1p(words)
        out[i, 0] = <float> log1p(chars)
        out[i, 1] = log_words[i]
        out[i, 2] = <float> link
        v = cols[i, 5] / (nonlinked if nonlinked > 1.0 else 1.0)
        out[i, 3] = <float> (v if v < 10.0 else 10.0)
        out[i, 4] = <float> (cols[i, 13] / nw)
        out[i, 5] = <float> cols[i, 8]
        out[i, 6] = <float> cols[i, 9]
        out[i, 7] = <float> (cols[i, 14] / chars)
        out[i, 8] = <float> (cols[i, 2] / nw)
        out[i, 9] = <float> (cols[i, 3] / nw)
        v = cols[i, 3] / <double> n_title
        out[i, 10] = <float> (v if v < 1.0 else 1.0)
        out[i, 11] = <float> cols[i, 10]
        out[i, 12] = <float> cols[i, 11]
        out[i, 13] = <float> cols[i, 12]
        out[i, 14] = (<float> i) / (<float> n)
        run += chars
        out[i, 15] = <float> ((run - chars) / total_chars)
        out[i, 16] = <float> (((chars / total_chars) * (cols[i, 13] / punct_sum)) / vmax)
        out[i, 17] = <float> log1p(cols[i, 5])
        for j in range(n_tag):
            out[i, o_tag + j] = 0.0
        out[i, o_tag + <Py_ssize_t> cols[i, 7]] = 1.0
        for j in range(n_path):
            out[i, o_path + j] = path_rows[path_of[i], j]
        for j in range(n_attr):
            out[i, o_attr + j] = attr_rows[attr_of[i], j]
        for j in range(n_page):
            out[i, o_page + j] = page_feats[j]
        good[i] = words >= good_min_words and link < good_max_link
        if good[i]:
            if first_good < 0:
                first_good = i
            last_good = i
        prev_good[i] = last_good  # the last good block at or before i
        c_logw[i + 1] = c_logw[i] + <double> log_words[i]
        c_link[i + 1] = c_link[i] + link
        c_good[i + 1] = c_good[i] + (1.0 if good[i] else 0.0)
        psum[path_of[i]] += words
        pcount[path_of[i]] += 1
    no_good = log1p(<double> n)
    right = -1  # the first good block at or after i, found walking backwards
    for i in range(n - 1, -1, -1):
        if good[i]:
            right = i
        k = o_ctx
        out[i, k] = <float> (psum[path_of[i]] / total_words)
        out[i, k + 1] = <float> log1p(<double> pcount[path_of[i]])
        out[i, k + 2] = <float> log1p(repeat_counts[2 * i])
        out[i, k + 3] = <float> log1p(repeat_counts[2 * i + 1])
        for j in range(4):
            out[i, k + 4 + j] = scope_share[4 * i + j]
        out[i, k + 8] = in_main[i]
        out[i, k + 9] = log_words[i - 1] if i >= 1 else 0.0
        out[i, k + 10] = log_words[i - 2] if i >= 2 else 0.0
        out[i, k + 11] = log_words[i + 1] if i + 1 < n else 0.0
        out[i, k + 12] = log_words[i + 2] if i + 2 < n else 0.0
        out[i, k + 13] = <float> (link_arr[i - 1] if i >= 1 else 0.0)
        out[i, k + 14] = <float> (link_arr[i - 2] if i >= 2 else 0.0)
        out[i, k + 15] = <float> (link_arr[i + 1] if i + 1 < n else 0.0)
        out[i, k + 16] = <float> (link_arr[i + 2] if i + 2 < n else 0.0)
        out[i, k + 17] = (1.0 if cols[i - 1, 6] > 0 else 0.0) if i >= 1 else 0.0
        out[i, k + 18] = (1.0 if cols[i + 1, 6] > 0 else 0.0) if i + 1 < n else 0.0
        lo = i - window if i - window > 0 else 0
        hi = i + window + 1 if i + window + 1 < n else n
        out[i, k + 19] = <float> ((c_logw[hi] - c_logw[lo]) / <double> (hi - lo))
        out[i, k + 20] = <float> ((c_link[hi] - c_link[lo]) / <double> (hi - lo))
        out[i, k + 21] = <float> ((c_good[hi] - c_good[lo]) / <double> (hi - lo))
        if first_good < 0:
            out[i, k + 22] = <float> no_good
        else:
            # numpy's searchsorted: left is the last good block before i (else the first good
            # block), right the first at or after i (else the last good block).
            left = prev_good[i - 1] if i >= 1 and prev_good[i - 1] >= 0 else first_good
            d1 = i - left if i >= left else left - i
            d2 = (right - i if right >= 0 else i - last_good)
            if d2 < 0:
                d2 = -d2
            out[i, k + 22] = <float> log1p(<double> (d1 if d1 < d2 else d2))


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def context_matrix(
    const double[::1] p,
    const int[:, ::1] groups,
    tuple windows,
    double mean,
    const Py_ssize_t[::1] order,
    float[:, ::1] out,
):
    """``blockdex.features.context_features`` written into ``out``; ``mean`` is ``p.mean()``
    and ``order`` is ``np.argsort(-p, kind="stable")`` (numpy's, so they are the same)."""
    cdef Py_ssize_t n = p.shape[0], i, j, n_groups = groups.shape[1]
    if n == 0:
        return
    if out.shape[0] != n or out.shape[1] != 7 + len(windows) + n_groups + 5 \
            or groups.shape[0] != n or order.shape[0] != n:
        raise ValueError("arrays have the wrong shape")
    for i in range(n):
        for j in range(n_groups):
            if groups[i, j] < 0:
                raise ValueError("negative group id")
    _context_fill(&p[0], n, &groups[0, 0], n_groups, windows, mean, &order[0], &out[0, 0],
                  out.shape[1])


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef int _context_fill(
    const double *p, Py_ssize_t n, const int *groups, Py_ssize_t n_groups, tuple windows,
    double mean, const Py_ssize_t *order, float *out, Py_ssize_t stride,
) except -1:
    """:func:`context_matrix` on C arrays (row-major; ``out`` rows ``stride`` floats apart;
    group ids non-negative)."""
    cdef Py_ssize_t i, j, k, w, lo, hi, col, size = 0, n_win = len(windows), g
    cdef double run, pmax
    cdef double *c = NULL
    cdef double *sums
    cdef Py_ssize_t *counts = NULL
    for i in range(n * n_groups):
        if groups[i] >= size:
            size = groups[i] + 1
    try:
        c = <double *> _alloc((n + 1 + size) * sizeof(double), False)
        sums = c + n + 1
        counts = <Py_ssize_t *> _alloc(size * sizeof(Py_ssize_t), False)
        c[0] = 0.0
        pmax = p[0]
        for i in range(n):
            c[i + 1] = c[i] + p[i]
            if p[i] > pmax:
                pmax = p[i]
            out[i * stride + 0] = <float> p[i]
            for k in range(1, 4):
                out[i * stride + k] = <float> (p[i - k] if i >= k else 0.0)
                out[i * stride + 3 + k] = <float> (p[i + k] if i + k < n else 0.0)
        col = 7
        for j in range(n_win):
            w = windows[j]
            for i in range(n):
                lo = i - w if i - w > 0 else 0
                hi = i + w + 1 if i + w + 1 < n else n
                out[i * stride + col] = <float> ((c[hi] - c[lo]) / <double> (hi - lo))
            col += 1
        for k in range(n_groups):  # scope levels, then the path group (column 0)
            j = k + 1 if k + 1 < n_groups else 0
            for g in range(size):
                sums[g] = 0.0
                counts[g] = 0
            for i in range(n):
                sums[groups[i * n_groups + j]] += p[i]
                counts[groups[i * n_groups + j]] += 1
            for i in range(n):
                g = groups[i * n_groups + j]
                out[i * stride + col] = <float> (sums[g] / <double> counts[g])
            col += 1
        run = 0.0
        for i in range(n):  # the largest probability before each block (0 for the first)
            out[i * stride + col] = <float> run
            if i == 0 or p[i] > run:
                run = p[i]
        run = 0.0
        for i in range(n - 1, -1, -1):  # and after it (0 for the last)
            out[i * stride + col + 1] = <float> run
            if i == n - 1 or p[i] > run:
                run = p[i]
        for i in range(n):
            out[i * stride + col + 2] = <float> mean
            out[i * stride + col + 3] = <float> pmax
        for k in range(n):
            out[order[k] * stride + col + 4] = <float> (<double> k / <double> n)
    finally:
        free(c)
        free(counts)
    return 0


cdef void _order_desc(const double *p, Py_ssize_t n, Py_ssize_t *order, Py_ssize_t *tmp) noexcept:
    """``np.argsort(-p, kind="stable")`` for ``p`` without NaN: positions by falling ``p``,
    equal values in position order (a stable sort's order is the only one). Bottom-up merge
    sort: a right element goes first only when strictly larger."""
    cdef Py_ssize_t i, width, lo, mid, hi, a, b, k
    cdef Py_ssize_t *src = order
    cdef Py_ssize_t *dst = tmp
    cdef Py_ssize_t *t
    for i in range(n):
        order[i] = i
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            a, b, k = lo, mid, lo
            while a < mid and b < hi:
                if p[src[b]] > p[src[a]]:
                    dst[k] = src[b]
                    b += 1
                else:
                    dst[k] = src[a]
                    a += 1
                k += 1
            while a < mid:
                dst[k] = src[a]
                a += 1
                k += 1
            while b < hi:
                dst[k] = src[b]
                b += 1
                k += 1
            lo = hi
        t = src
        src = dst
        dst = t
        width *= 2
    if src != order:
        memcpy(order, src, n * sizeof(Py_ssize_t))


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _group_ids(BlockIds ids, tuple levels, int *groups) except -1:
    """``blockdex.features.block_groups``' partition: per block, an id for its tag path
    (column 0) and for its ancestor at each of ``levels`` (or its outermost one, or itself
    alone when it has none), one numbering per column, first seen first. Only which blocks
    share an id matters to the context columns. Read off the page's numbers (``ids``): no
    string or element id is hashed."""
    cdef Py_ssize_t i, j, k, e, n = ids.n, n_g = 1 + len(levels), n_sc
    cdef int next_id
    cdef int *seen = NULL  # the column's id of each scope element (-1: not seen yet)
    cdef const Py_ssize_t *off = ids.scope_off
    for i in range(n):
        groups[i * n_g] = <int> ids.path_of[i]
    try:
        seen = <int *> _alloc(max(ids.n_elements, 1) * sizeof(int), False)
        for j in range(1, n_g):
            k = levels[j - 1]
            memset(seen, 0xFF, max(ids.n_elements, 1) * sizeof(int))
            next_id = 0
            for i in range(n):
                n_sc = off[i + 1] - off[i]
                if n_sc == 0:  # ("self", i): a group of its own
                    groups[i * n_g + j] = next_id
                    next_id += 1
                    continue
                e = ids.scope_ids[off[i + 1] - 1 - k] if n_sc > k else ids.scope_ids[off[i]]
                if seen[e] < 0:
                    seen[e] = next_id
                    next_id += 1
                groups[i * n_g + j] = seen[e]
    finally:
        free(seen)
    return 0

# -- tag-path columns ----------------------------------------------------------------------------

@cython.boundscheck(False)
@cython.wraparound(False)
def path_rows(list paths, tuple path_tags, float[:, ::1] out):
    """The ``path_<tag>`` columns of each path (``out[k, j]`` is 1 when
    ``path_tags[j]`` is one of the path's ``>``-separated tags other than the last)."""
    cdef Py_ssize_t k, j, m = len(path_tags)
    cdef list tags
    if out.shape[0] != len(paths) or out.shape[1] != m:
        raise ValueError("out has the wrong shape")
    for k in range(len(paths)):
        tags = (<str> paths[k]).split(">")
        present = set(tags[: len(tags) - 1])
        for j in range(m):
            out[k, j] = 1.0 if path_tags[j] in present else 0.0
