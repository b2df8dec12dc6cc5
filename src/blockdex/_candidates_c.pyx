# cython: language_level=3
"""What ``blockdex/candidates.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`readability_columns` — ``candidates.readability_columns``: readability's decision as
  six feature columns, the same floats (``_readability_fill``, which ``_features_c`` cimports to
  fill them inside its one-pass feature matrix).
"""

cimport cython
from libc.stdlib cimport free
from libc.string cimport memset
from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_KIND,
)
from blockdex._common_c cimport BlockIds, _alloc

cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)
    bint Py_UNICODE_ISUPPER(Py_UCS4 ch)
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch)

cdef str _path_tag_from_end(str path, Py_ssize_t m):
    """The ``m``-th tag of a '>'-joined tag path counted from its end (0: the last), or ''."""
    cdef Py_ssize_t end = len(path), pos, k
    for k in range(m):
        pos = path.rfind(">", 0, end)
        if pos < 0:
            return ""
        end = pos
    return path[path.rfind(">", 0, end) + 1 : end]


cdef enum:
    MAX_CLASS_NEEDLES = 128

cdef object _needles_for = None  # the word lists the table below was built from
cdef list _needle_keep = []  # the bytes objects _nd_ptr points into
cdef const unsigned char *_nd_ptr[MAX_CLASS_NEEDLES]
cdef Py_ssize_t _nd_len[MAX_CLASS_NEEDLES]
cdef int _nd_list[MAX_CLASS_NEEDLES]
cdef int _nd_first[257]  # the needles starting with byte c are _nd_first[c] .. _nd_first[c + 1]
cdef unsigned char _nd_pairs[8192]  # bit (c0 << 8 | c1): some word starts with bytes c0 c1
cdef int _n_lists = 0


cdef int _load_needles(tuple lists) except -1:
    """Index the ASCII words of ``lists`` by their first byte (once per ``lists`` object)."""
    global _needles_for, _n_lists
    cdef Py_ssize_t e, c
    if _needles_for is lists:
        return 0
    entries = sorted(
        ((<str> w).encode("ascii"), k) for k, words in enumerate(lists) for w in words if w
    )
    if len(entries) > MAX_CLASS_NEEDLES or len(lists) > 30:
        raise ValueError("too many class words")
    if any(len(b) < 2 for b, _ in entries):
        raise ValueError("class words need two characters or more")
    _needle_keep[:] = [b for b, _ in entries]
    memset(_nd_pairs, 0, sizeof(_nd_pairs))
    for b, _ in entries:
        c = (<const unsigned char *> (<char *> b))[0] << 8 | (<const unsigned char *> (<char *> b))[1]
        _nd_pairs[c >> 3] |= 1 << (c & 7)
    c = 0
    for e in range(len(entries)):
        b = <bytes> _needle_keep[e]
        _nd_ptr[e] = <const unsigned char *> (<char *> b)
        _nd_len[e] = len(b)
        _nd_list[e] = entries[e][1]
        while c <= (<const unsigned char *> (<char *> b))[0]:
            _nd_first[c] = e
            c += 1
    while c <= 256:
        _nd_first[c] = len(entries)
        c += 1
    _n_lists = len(lists)
    _needles_for = lists
    return 0


cdef int _needle_mask(str s) except -2:
    """Bit k set when a word of list k occurs in ``s`` (as the lists' regex alternations
    search); -1 for a string past one byte per character (the caller uses the regexes)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s), i, e, j, m
    cdef const unsigned char *data
    cdef const unsigned char *w
    cdef int mask = 0, full = (1 << _n_lists) - 1, bit, pair
    if n == 0:
        return 0
    if PyUnicode_KIND(s) != PyUnicode_1BYTE_KIND:
        return -1
    data = <const unsigned char *> PyUnicode_DATA(s)
    for i in range(n - 1):  # every word has two bytes or more
        pair = data[i] << 8 | data[i + 1]
        if not (_nd_pairs[pair >> 3] & (1 << (pair & 7))):
            continue  # no word starts here (most places: one bit test)
        for e in range(_nd_first[data[i]], _nd_first[data[i] + 1]):
            w = _nd_ptr[e]
            m = _nd_len[e]
            bit = 1 << _nd_list[e]
            if mask & bit or data[i + 1] != w[1] or i + m > n:
                continue
            j = 2
            while j < m and data[i + j] == w[j]:
                j += 1
            if j == m:
                mask |= bit
                if mask == full:
                    return mask
    return mask


@cython.boundscheck(False)
@cython.wraparound(False)
def readability_columns(BlockIds table, tuple params, float[:, ::1] out, Py_ssize_t col0=0):
    """``blockdex.candidates.readability_columns``: its columns written into
    ``out[:, col0:col0 + 6]`` (:func:`_readability_fill` on the blocks' table)."""
    if table.n == 0:
        return
    if out.shape[0] != table.n or col0 < 0 or out.shape[1] < col0 + 6:
        raise ValueError("arrays have the wrong shape")
    _readability_fill(table, params, out, col0)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _readability_fill(
    BlockIds table, tuple params, float[:, ::1] out, Py_ssize_t col0,
) except -1:
    """``blockdex.candidates.readability_columns``'s loops on the blocks' table (block i's
    scope is ``table.scope_ids[off[i]:off[i + 1]]``, dense numbers): the same additions in the
    same order, so the same floats, written into ``out[:, col0:col0 + 6]`` (every cell).
    ``params`` is ``candidates.COMPILED_PARAMS``: ``class_code``, the
    unlikely/maybe/positive/negative word lists (searched in C; ``class_code`` answers for
    strings past one byte a character), the tag weights, the paragraph tags, the minimum
    paragraph characters, the sibling minimum score and share, the class weight and the
    number of elements whose weights are summed."""
    cdef const Py_ssize_t *off = table.scope_off
    cdef const Py_ssize_t *ids = table.scope_ids
    cdef Py_ssize_t n_ids = table.n_elements
    cdef list texts = table.texts, paths = table.paths, tags = table.tags, owns = table.owns
    cdef Py_ssize_t n = table.n, i, j, k, d, m
    cdef Py_ssize_t a, n_cand = 0, top = -1, top_parent, nch
    cdef int bits
    cdef double score, density, best, top_score, limit
    cdef bint have, kept_block
    cdef long long total_chars = 0, kept_chars = 0, weight_sum, lc
    cdef str text, tokens
    cdef Py_ssize_t *first_block = NULL  # per id: the block and scope position it first shows in
    cdef Py_ssize_t *first_pos = NULL
    cdef Py_ssize_t *parent = NULL
    cdef long long *in_chars = NULL
    cdef long long *in_links = NULL
    cdef signed char *unlikely = NULL
    cdef int *weight = NULL
    cdef double *cand = NULL
    cdef signed char *is_cand = NULL
    cdef Py_ssize_t *cand_order = NULL
    cdef signed char *keep = NULL
    cdef signed char *removed = NULL
    cdef Py_ssize_t *chars = NULL
    cdef Py_ssize_t min_chars = params[4], weight_levels = params[8]
    cdef double sibling_min = params[5], sibling_share = params[6]
    cdef int class_weight = params[7]
    class_code, class_words, tag_weights, paragraph_tags = params[:4]
    if n == 0:
        return 0
    for i in range(n):
        for k in range(6):
            out[i, col0 + k] = 0.0
    _load_needles(<tuple> class_words)
    seen = {}
    try:
        a = max(n_ids, 1)
        first_block = <Py_ssize_t *> _alloc(a * sizeof(Py_ssize_t), False)
        first_pos = <Py_ssize_t *> _alloc(a * sizeof(Py_ssize_t), False)
        parent = <Py_ssize_t *> _alloc(a * sizeof(Py_ssize_t), False)
        in_chars = <long long *> _alloc(a * sizeof(long long), True)
        in_links = <long long *> _alloc(a * sizeof(long long), True)
        unlikely = <signed char *> _alloc(a, False)
        weight = <int *> _alloc(a * sizeof(int), False)
        cand = <double *> _alloc(a * sizeof(double), True)
        is_cand = <signed char *> _alloc(a, True)
        cand_order = <Py_ssize_t *> _alloc(a * sizeof(Py_ssize_t), False)
        keep = <signed char *> _alloc(a, True)
        removed = <signed char *> _alloc(n, True)
        chars = <Py_ssize_t *> _alloc(n * sizeof(Py_ssize_t), False)
        for d in range(n_ids):
            first_block[d] = -1
            parent[d] = -1
        # 1. containers' characters and link characters, parents, class codes; removal
        for i in range(n):
            nch = PyUnicode_GET_LENGTH(<str> texts[i])
            chars[i] = nch
            total_chars += nch
            lc = table.link_chars_of[i]
            m = off[i + 1] - off[i]
            for j in range(m):
                d = ids[off[i] + j]
                in_chars[d] += nch
                in_links[d] += lc
                if j:
                    parent[d] = ids[off[i] + j - 1]
                if first_block[d] < 0:
                    first_block[d] = i
                    first_pos[d] = m - 1 - j  # counted from the nearest element
                    tokens = <str> owns[table.elem_own[d]]
                    if PyUnicode_GET_LENGTH(tokens) == 0:
                        bits = 0
                    else:  # each distinct string scanned once
                        known = seen.get(tokens)
                        if known is None:
                            bits = _needle_mask(tokens)
                            seen[tokens] = bits
                        else:
                            bits = <int> known
                    if bits >= 0:
                        unlikely[d] = (bits & 1) != 0 and (bits & 2) == 0
                        weight[d] = (class_weight if bits & 4 else 0) - (
                            class_weight if bits & 8 else 0
                        )
                    else:
                        code = class_code(tokens)
                        unlikely[d] = 1 if code[0] else 0
                        weight[d] = <int> code[1]
            for j in range(m - 1 if m > 1 else m):
                d = ids[off[i] + j]
                if unlikely[d]:
                    tag = _path_tag_from_end(
                        <str> paths[table.path_of[first_block[d]]], first_pos[d]
                    )
                    if tag != "html" and tag != "body":
                        removed[i] = 1
                        break
        # 2. paragraph scores into the parent (in full) and the grandparent (at half)
        for i in range(n):
            m = off[i + 1] - off[i]
            if removed[i] or chars[i] < min_chars or m < 2:
                continue
            if tags[table.tag_of[i]] not in paragraph_tags:
                continue
            text = <str> texts[i]
            score = <double> (1 + text.count(",") + text.count("\uff0c") + min(chars[i] // 100, 3))
            for k in range(2 if m >= 3 else 1):
                d = ids[off[i + 1] - 2 - k]
                if not is_cand[d]:
                    is_cand[d] = 1
                    cand_order[n_cand] = d
                    n_cand += 1
                    tag = _path_tag_from_end(
                        <str> paths[table.path_of[first_block[d]]], first_pos[d]
                    )
                    cand[d] = <double> (<int> tag_weights.get(tag, 0) + weight[d])
                cand[d] += score * (1.0 if k == 0 else 0.5)
        # 3. link-density discount, the top candidate and its scoring siblings
        for k in range(n_cand):
            d = cand_order[k]
            density = <double> in_links[d] / <double> (in_chars[d] if in_chars[d] > 1 else 1)
            cand[d] *= 1.0 - (density if density < 1.0 else 1.0)
        for i in range(n):
            out[i, col0 + 3] = removed[i]
        if n_cand == 0:
            return 0
        top = cand_order[0]
        for k in range(1, n_cand):
            if cand[cand_order[k]] > cand[top]:
                top = cand_order[k]
        top_score = cand[top]
        top_parent = parent[top]
        keep[top] = 1
        if top_parent >= 0:
            limit = top_score * sibling_share
            if limit < sibling_min:
                limit = sibling_min
            for k in range(n_cand):
                d = cand_order[k]
                if d != top and parent[d] == top_parent and cand[d] >= limit:
                    keep[d] = 1
        # 4. the columns
        for i in range(n):
            m = off[i + 1] - off[i]
            kept_block = False
            for j in range(m):
                if keep[ids[off[i] + j]]:
                    kept_block = True
                    break
            if not kept_block and top_parent >= 0 and m >= 2 and ids[off[i + 1] - 2] == top_parent:
                if tags[table.tag_of[i]] == "p":
                    nch = chars[i]
                    lc = table.link_chars_of[i]
                    density = <double> lc / <double> (nch if nch > 1 else 1)
                    if nch > 80:
                        kept_block = density < 0.25
                    else:
                        kept_block = (
                            density == 0.0 and (<str> texts[i]).rstrip()[-1:] == "."
                        )
            if kept_block and not removed[i]:
                out[i, col0] = 1.0
                kept_chars += chars[i]
            if top_score > 0:
                have = False
                best = 0.0
                for j in range(m):
                    d = ids[off[i] + j]
                    score = cand[d] if is_cand[d] else 0.0
                    if not have or score > best:
                        best = score
                        have = True
                out[i, col0 + 1] = <float> (best / top_score)
                if m >= 2:
                    d = ids[off[i + 1] - 2]
                    out[i, col0 + 2] = <float> ((cand[d] if is_cand[d] else 0.0) / top_score)
            weight_sum = 0
            for j in range(m - weight_levels if m > weight_levels else 0, m):
                weight_sum += weight[ids[off[i] + j]]
            out[i, col0 + 5] = <float> (<double> weight_sum / <double> class_weight)
        density = <double> kept_chars / <double> (total_chars if total_chars > 1 else 1)
        for i in range(n):
            out[i, col0 + 4] = <float> density
    finally:
        free(first_block)
        free(first_pos)
        free(parent)
        free(in_chars)
        free(in_links)
        free(unlikely)
        free(weight)
        free(cand)
        free(is_cand)
        free(cand_order)
        free(keep)
        free(removed)
        free(chars)
    return 0
