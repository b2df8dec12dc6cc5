# cython: language_level=3
"""What ``blockdex/items.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`children` — ``items._children``: every parent element with its children, from where
  consecutive blocks part, on the page's dense scope numbers (``_common_c.BlockIds``: the
  deepest shared element of two blocks found by comparing integers, not by set lookups).
* :func:`candidate_children` — the children of parents with enough of them, in order.
* :func:`word_prefix` — ``items._word_prefix``: words before each block, counted in C.
* :func:`class_signature` — the template key of an element (tag and class/id tokens).
* :func:`template_lists` — a parent's children grouped by that key into item lists.
"""

cimport cython
from libc.stdlib cimport free
from blockdex._common_c cimport BlockIds, _alloc, _block_off, _blocks_of_class, _field


cdef inline bint _holds(const Py_ssize_t *ids, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t e) noexcept:
    cdef Py_ssize_t k
    for k in range(lo, hi):
        if ids[k] == e:
            return True
    return False


@cython.boundscheck(False)
@cython.wraparound(False)
def children(blocks, BlockIds numbers):
    """``blockdex.items._children``: parent element id → {child element id: (first block
    position, a block inside it, the child's position in that block's scope)}. The scope
    elements are compared as the page's dense numbers (``numbers``, of these ``blocks``);
    blocks not from the page's DOM count as holding none. None when the blocks are not all of
    one class with ``Block``'s slots (the caller then raises)."""
    cdef tuple seq = _blocks_of_class(blocks)
    cdef Py_ssize_t n, pos, j, i, k, prev = -1, start, lo, hi, plo, child_id, n_ids
    cdef const Py_ssize_t *off
    cdef const Py_ssize_t *ids
    cdef Py_ssize_t *end = NULL  # a block's scope ends here: off[pos + 1], or off[pos] (none)
    cdef Py_ssize_t *stamp = NULL
    cdef Py_ssize_t *first_at = NULL
    cdef tuple sc, ps
    if seq is None:
        return None
    if numbers.blocks is not blocks:
        raise ValueError("numbers are of other blocks")
    n = len(seq)
    off = numbers.scope_off
    ids = numbers.scope_ids
    n_ids = numbers.n_elements
    out = {}
    try:
        end = <Py_ssize_t *> _alloc(max(n, 1) * sizeof(Py_ssize_t), False)
        for pos in range(n):
            b = seq[pos]
            good = off[pos + 1] > off[pos] and _field(b, _block_off[11]) == "dom"
            end[pos] = off[pos + 1] if good else off[pos]
        # stamp[e] == prev: element e is in the previous block's scope, first at first_at[e]
        stamp = <Py_ssize_t *> _alloc(max(n_ids, 1) * sizeof(Py_ssize_t), False)
        first_at = <Py_ssize_t *> _alloc(max(n_ids, 1) * sizeof(Py_ssize_t), False)
        for k in range(n_ids):
            stamp[k] = -1
        for pos in range(n):
            if end[pos] == off[pos]:
                prev = -1
                continue
            if prev >= 0:
                lo, hi, plo = off[pos], end[pos], off[prev]
                # the deepest element of this scope that the previous one holds, and where the
                # previous scope holds it first
                i = -1
                j = hi - lo - 1
                while j >= 0:
                    if stamp[ids[lo + j]] == prev:
                        i = first_at[ids[lo + j]]
                        break
                    j -= 1
                if 0 <= j < hi - lo - 1:
                    sc = <tuple> _field(seq[pos], _block_off[13])
                    parent = sc[j]
                    kids = out.get(parent)
                    if kids is None:
                        kids = out[parent] = {}
                        ps = <tuple> _field(seq[prev], _block_off[13])
                        if i + 1 < len(ps):  # the previous block's child is the first one seen
                            child_id = ids[plo + i + 1]
                            start = prev
                            while start > 0 and _holds(ids, off[start - 1], end[start - 1],
                                                       child_id):
                                start -= 1
                            kids[ps[i + 1]] = (start, prev, i + 1)
                    child = sc[j + 1]
                    if child not in kids:
                        kids[child] = (pos, pos, j + 1)
            prev = pos
            lo, hi = off[pos], end[pos]
            for k in range(hi - lo - 1, -1, -1):  # from the end: the first place wins
                stamp[ids[lo + k]] = pos
                first_at[ids[lo + k]] = k
    finally:
        free(end)
        free(stamp)
        free(first_at)
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
                last = _child_end(seq, n, first, child, depth)
            kept.append((first, last, tag, (<tuple> _field(b, _block_off[14]))[depth]))
        if len(kept) >= min_items:
            out.append((parent, kept))
    return out


cdef Py_ssize_t _child_end(tuple seq, Py_ssize_t n, Py_ssize_t first, object child,
                           Py_ssize_t at) except -1:
    """The last of the blocks from ``first`` on whose scopes hold ``child`` (``first``'s own
    too, unread): ``child in scope`` block by block, the test looking first at the place the
    previous block held it (``at`` to begin with: scopes that keep the same ancestors hold it
    there), then at every place."""
    cdef Py_ssize_t last = first, k, m
    cdef tuple nxt
    while last + 1 < n:
        nxt = <tuple> _field(seq[last + 1], _block_off[13])
        m = len(nxt)
        if not (at < m and (nxt[at] is child or nxt[at] == child)):
            if child not in nxt:
                break
            for k in range(m):
                if nxt[k] is child or nxt[k] == child:
                    at = k
                    break
        last += 1
    return last


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


cdef extern from "Python.h":
    bint Py_UNICODE_ISDECIMAL(Py_UCS4 ch)
    const char *PyUnicode_AsUTF8AndSize(object s, Py_ssize_t *size) except NULL

from libc.string cimport memcmp, memcpy


cpdef str fold_digits(str s):
    """``s`` with each run of decimal digits (``\\d+`` as ``re`` reads a ``str`` pattern: the
    characters ``str.isdecimal`` accepts) replaced by ``#``: the item lists' class signatures,
    and the page-kind rules' templates (:mod:`blockdex.predict.kinds`)."""
    cdef Py_ssize_t n = len(s), i = 0, start = 0
    cdef list parts
    while i < n and not Py_UNICODE_ISDECIMAL(s[i]):
        i += 1
    if i == n:
        return s
    parts = []
    while i < n:
        if Py_UNICODE_ISDECIMAL(s[i]):
            parts.append(s[start:i])
            parts.append("#")
            while i < n and Py_UNICODE_ISDECIMAL(s[i]):
                i += 1
            start = i
        else:
            i += 1
    parts.append(s[start:])
    return "".join(parts)


cdef inline bint _ascii_space(char c) noexcept:
    """``str.split``'s white space among ASCII characters: tab to carriage return, 0x1c-0x1f
    (the separators), space."""
    return c == 32 or 9 <= c <= 13 or 28 <= c <= 31


cdef inline int _token_cmp(const char *buf, Py_ssize_t a, Py_ssize_t la, Py_ssize_t b,
                           Py_ssize_t lb) noexcept:
    """Two ASCII tokens of ``buf`` compared as ``str`` compares them."""
    cdef int c = memcmp(buf + a, buf + b, <size_t> (la if la < lb else lb))
    if c:
        return c
    return (la > lb) - (la < lb)


cdef object _ascii_signature(str tag, str attrs):
    """:func:`class_signature` of an ASCII ``attrs`` made in C buffers (one string made), or
    None for a long tag or class attribute."""
    cdef Py_ssize_t n, i = 0, k, t = 0, at = 0, size, s0, l0
    cdef const char *src = PyUnicode_AsUTF8AndSize(attrs, &n)
    cdef char buf[256]
    cdef char out[768]
    cdef Py_ssize_t start[129]
    cdef Py_ssize_t length[129]
    if n > 256:
        return None
    # the tokens, each run of digits folded to '#', copied into buf, kept sorted as they come
    # (insertion: a class attribute holds a few tokens)
    while i < n:
        while i < n and _ascii_space(src[i]):
            i += 1
        if i == n:
            break
        s0 = at
        while i < n and not _ascii_space(src[i]):
            if 48 <= src[i] <= 57:
                buf[at] = 35  # '#'
                at += 1
                while i < n and 48 <= src[i] <= 57:
                    i += 1
            else:
                buf[at] = src[i]
                at += 1
                i += 1
        l0 = at - s0
        k = t
        while k > 0 and _token_cmp(buf, start[k - 1], length[k - 1], s0, l0) > 0:
            start[k] = start[k - 1]
            length[k] = length[k - 1]
            k -= 1
        start[k] = s0
        length[k] = l0
        t += 1
    tag_bytes = tag.encode("utf-8")
    size = len(tag_bytes)
    if size > 256:
        return None
    memcpy(out, <const char *> tag_bytes, size)
    for k in range(t):  # sorted: a repeated token follows its first copy
        if k and _token_cmp(buf, start[k - 1], length[k - 1], start[k], length[k]) == 0:
            continue
        out[size] = 46  # '.'
        memcpy(out + size + 1, buf + start[k], length[k])
        size += 1 + length[k]
    return out[:size].decode("utf-8")


def class_signature(str tag, str attrs):
    """``tag.token.token`` from an element's tag and its class/id tokens (split on white space),
    sorted, each run of digits folded to ``#``: the template key two sibling records share."""
    cdef list tokens
    if not attrs:
        return tag
    if attrs.isascii():
        found = _ascii_signature(tag, attrs)
        if found is not None:
            return found
    tokens = sorted(set(fold_digits(attrs).split()))
    tokens.insert(0, tag)
    return ".".join(tokens)


def template_lists(
    blocks, list candidates, item_list, Py_ssize_t min_items, double min_line_words, prefix_of
):
    """The item lists of ``blockdex.items.find_item_lists`` before they are sorted and grids
    merged: each parent's candidate children (``candidates``: ``[(parent, [(first, last, tag,
    class attribute), …])]``) grouped by :func:`class_signature`; a group of at least
    ``min_items`` is a list (an ``item_list``: parent, depth 1, signature, items, words),
    unless most of its items are one block each and they hold fewer than ``min_line_words``
    words each on average. Words are read from ``prefix_of(blocks)`` (words before each block),
    called once, when the first group needs it."""
    cdef list found = [], prefix = None, items
    cdef dict by_signature, signatures = {}
    cdef Py_ssize_t m, k, s, e, n_words, single
    cdef tuple kid, item
    for parent, kids in candidates:
        by_signature = {}
        for kid in kids:
            key = (kid[2], kid[3])
            signature = signatures.get(key)
            if signature is None:
                signature = signatures[key] = class_signature(kid[2], kid[3])
            item = (kid[0], kid[1])
            items = by_signature.get(signature)
            if items is None:
                by_signature[signature] = [item]
            else:
                items.append(item)
        for signature, items in by_signature.items():
            m = len(items)
            if m < min_items:
                continue
            if prefix is None:
                prefix = prefix_of(blocks)
            n_words = 0
            single = 0
            for k in range(m):
                item = <tuple> items[k]
                s = item[0]
                e = item[1]
                n_words += <Py_ssize_t> prefix[e + 1] - <Py_ssize_t> prefix[s]
                single += s == e
            if single * 2 > m and n_words < min_line_words * m:
                continue
            found.append(tuple.__new__(item_list, (parent, 1, signature, tuple(items), n_words)))
    return found
