# cython: language_level=3
"""What ``blockdex/items.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`children` — ``items._children``: every parent element with its children, from where
  consecutive blocks part, with the blocks' scope ids numbered densely into C arrays (the
  deepest shared element of two blocks found by comparing integers, not by set lookups).
* :func:`candidate_children` — the children of parents with enough of them, in order.
* :func:`word_prefix` — ``items._word_prefix``: words before each block, counted in C.
"""

cimport cython
from libc.stdlib cimport free
from blockdex._common_c cimport _alloc, _block_off, _blocks_of_class, _field, _number_scopes


cdef inline bint _holds(const Py_ssize_t *ids, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t e) noexcept:
    cdef Py_ssize_t k
    for k in range(lo, hi):
        if ids[k] == e:
            return True
    return False


@cython.boundscheck(False)
@cython.wraparound(False)
def children(blocks):
    """``blockdex.items._children``: parent element id → {child element id: (first block
    position, a block inside it, the child's position in that block's scope)}. None when the
    blocks are not all of one class with ``Block``'s slots (the caller then runs the Python
    code)."""
    cdef tuple seq = _blocks_of_class(blocks)
    cdef Py_ssize_t n, pos, j, i, k, total = 0, prev = -1, start, lo, hi, plo, child_id
    cdef Py_ssize_t *off = NULL
    cdef Py_ssize_t *ids = NULL
    cdef tuple sc, ps
    if seq is None:
        return None
    n = len(seq)
    scopes = []
    ok = []
    for pos in range(n):
        b = seq[pos]
        sc = <tuple> _field(b, _block_off[13])
        good = bool(sc) and _field(b, _block_off[11]) == "dom"
        ok.append(good)
        scopes.append(sc if good else ())
        total += len(sc) if good else 0
    out = {}
    try:
        off = <Py_ssize_t *> _alloc((n + 1) * sizeof(Py_ssize_t), False)
        ids = <Py_ssize_t *> _alloc(total * sizeof(Py_ssize_t), False)
        _number_scopes(scopes, total, off, ids)
        for pos in range(n):
            if not ok[pos]:
                prev = -1
                continue
            if prev >= 0:
                lo, hi, plo = off[pos], off[pos + 1], off[prev]
                i = -1
                j = hi - lo - 1
                while j >= 0:
                    for k in range(off[prev + 1] - plo):
                        if ids[plo + k] == ids[lo + j]:
                            i = k
                            break
                    if i >= 0:
                        break
                    j -= 1
                if 0 <= j < hi - lo - 1:
                    sc = <tuple> scopes[pos]
                    parent = sc[j]
                    kids = out.get(parent)
                    if kids is None:
                        kids = out[parent] = {}
                        ps = <tuple> scopes[prev]
                        if i + 1 < len(ps):  # the previous block's child is the first one seen
                            child_id = ids[plo + i + 1]
                            start = prev
                            while start > 0 and _holds(ids, off[start - 1], off[start], child_id):
                                start -= 1
                            kids[ps[i + 1]] = (start, prev, i + 1)
                    child = sc[j + 1]
                    if child not in kids:
                        kids[child] = (pos, pos, j + 1)
            prev = pos
    finally:
        free(off)
        free(ids)
    return out


@cython.boundscheck(False)
@cython.wraparound(False)
def candidate_children(blocks, dict kids_of, frozenset excluded, Py_ssize_t min_items):
    """The part of ``blockdex.items.find_item_lists`` that reads every child: for each parent of
    ``kids_of`` (:func:`children`) with at least ``min_items`` children, its children in order
    as ``(first, last, tag, class attribute)``, children whose tag is in ``excluded`` left out;
    parents left with fewer than ``min_items`` are not listed. Returns ``[(parent, children)]``,
    or None when the blocks are not all of one class with ``Block``'s slots."""
    cdef tuple seq = _blocks_of_class(blocks)
    cdef Py_ssize_t n = len(seq), k, m, first, at, depth, last
    cdef list order, kept
    if seq is None:
        return None
    out = []
    for parent, kids in kids_of.items():
        m = len(kids)
        if m < min_items:
            continue
        order = sorted(kids.items(), key=_first_of)
        kept = []
        for k in range(m):
            child, spec = order[k]
            first, at, depth = spec
            b = seq[at]
            sc = <tuple> _field(b, _block_off[13])
            tag = _segment_from_end(<str> _field(b, _block_off[5]), len(sc) - depth - 1)
            if tag in excluded:
                continue
            if k + 1 < m:
                last = order[k + 1][1][0] - 1
            else:
                last = first
                while last + 1 < n and child in <tuple> _field(seq[last + 1], _block_off[13]):
                    last += 1
            kept.append((first, last, tag, (<tuple> _field(b, _block_off[14]))[depth]))
        if len(kept) >= min_items:
            out.append((parent, kept))
    return out


cdef str _segment_from_end(str path, Py_ssize_t r):
    """``path.split(">")[-1 - r]``, or "" when ``r`` is negative or the path has fewer segments
    (``Block.path`` holds the block's scope tags at its end): no list of the path's tags."""
    cdef Py_ssize_t end = len(path), k
    if r < 0:
        return ""
    for k in range(r):
        end = path.rfind(">", 0, end)
        if end < 0:
            return ""
    return path[path.rfind(">", 0, end) + 1 : end]


def _first_of(kv):
    return kv[1][0]


@cython.boundscheck(False)
@cython.wraparound(False)
def word_prefix(blocks):
    """``blockdex.items._word_prefix``: the words before each block and in all (a list of
    ``len(blocks) + 1``), each block's words counted as its spaces plus one. None when the
    blocks are not all of one class with ``Block``'s slots."""
    cdef tuple seq = _blocks_of_class(blocks)
    cdef Py_ssize_t n, pos, total = 0
    cdef list out
    cdef str text
    if seq is None:
        return None
    n = len(seq)
    out = [0] * (n + 1)
    for pos in range(n):
        text = <str> _field(seq[pos], _block_off[3])
        if text:
            total += text.count(" ") + 1
        out[pos + 1] = total
    return out
