# cython: language_level=3
"""What ``blockdex/items.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`item_lists` — ``items.find_item_lists`` up to the sort: every parent element with its
  children, from where consecutive blocks part, on the page's dense scope numbers
  (``_common_c.BlockIds``: the deepest shared element of two blocks found by comparing
  integers, parents and children kept in C arrays), the children of parents with enough of
  them, and those grouped by their template key into item lists.
* :func:`word_counts` — ``items.word_count`` of each block, counted in C.
* :func:`class_signature` — the template key of an element (tag and class/id tokens).
"""

cimport cython
from libc.stdlib cimport free
import numpy as np
from blockdex._common_c cimport BlockIds, _alloc, _tuple_of

cdef inline bint _holds(const Py_ssize_t *ids, Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t e) noexcept:
    cdef Py_ssize_t k
    for k in range(lo, hi):
        if ids[k] == e:
            return True
    return False


ctypedef struct _Kids:
    # the children found so far, in the order found, as parallel C arrays (a child's entries at
    # one index); each parent's as a linked list through ``next``
    Py_ssize_t *elem  # the child's dense element number
    Py_ssize_t *first  # its first block
    Py_ssize_t *at  # a block inside it
    Py_ssize_t *depth  # its place in that block's scope
    Py_ssize_t *next  # the parent's next child (-1: the last)


@cython.boundscheck(False)
@cython.wraparound(False)
def item_lists(BlockIds numbers, frozenset excluded, item_list, Py_ssize_t min_items,
               double min_line_words):
    """The item lists of ``blockdex.items.find_item_lists`` before they are sorted and grids
    merged, from ``blocks`` and their numbers (``numbers``, of these ``blocks``), in one call:

    1. *children*: where two consecutive blocks from the page's DOM part, the deepest element
       of this block's scope that the previous one holds is a parent and the elements just
       below it in the two scopes are two of its children, each with its first block (the
       previous one's walked back to the first block holding it). Elements are the page's
       dense scope numbers: a stamp per number finds the shared element by comparing
       integers; parents and children are kept in C arrays, in the order found.
    2. *candidates*: each parent with at least ``min_items`` children, its children in order of
       first block as ``(first, last, tag)`` with the class attribute of the child's element
       (``Block.scope_attrs``), a child whose tag (read from ``Block.path``, whose end holds the
       scope's tags) is in ``excluded`` left out; a child ends before the next one starts, the
       last where its element leaves the blocks' scopes.
    3. *templates*: a parent's candidates grouped by :func:`class_signature`; a group of at
       least ``min_items`` is a list (an ``item_list``: parent, depth 1, signature, items,
       words), unless most of its items are one block each and they hold fewer than
       ``min_line_words`` words each on average. Words are counted (:func:`_word_prefix`)
       when the first group needs them.

    Everything is read from the blocks' table ``numbers``."""
    cdef Py_ssize_t n, pos, j, i, k, m, prev = -1, start, lo, hi, plo, child_id, n_ids
    cdef Py_ssize_t p, c, e, n_par = 0, n_kids = 0, first, last, at, depth, r, s, t
    cdef Py_ssize_t n_words, single
    cdef const Py_ssize_t *off
    cdef const Py_ssize_t *ids
    cdef Py_ssize_t *end = NULL  # a block's scope ends here: off[pos + 1], or off[pos] (none)
    cdef Py_ssize_t *stamp = NULL
    cdef Py_ssize_t *first_at = NULL
    cdef Py_ssize_t *parent_of = NULL  # element number -> its entry as a parent, or -1
    cdef Py_ssize_t *child_of = NULL  # element number -> the parent it was first a child of
    cdef Py_ssize_t *par_block = NULL  # a parent's element: scope[par_place] of this block
    cdef Py_ssize_t *par_place = NULL
    cdef Py_ssize_t *par_head = NULL
    cdef Py_ssize_t *par_tail = NULL
    cdef Py_ssize_t *par_count = NULL
    cdef Py_ssize_t *order = NULL
    cdef _Kids kids
    cdef list found = [], path_tags, tags, items
    cdef long long *prefix = NULL
    cdef dict by_signature, signatures = {}
    cdef tuple item
    cdef str tag
    n = numbers.n
    off = numbers.scope_off
    ids = numbers.scope_ids
    n_ids = numbers.n_elements
    kids.elem = kids.first = kids.at = kids.depth = kids.next = NULL
    try:
        end = <Py_ssize_t *> _alloc(max(n, 1) * sizeof(Py_ssize_t), False)
        for pos in range(n):
            good = off[pos + 1] > off[pos] and numbers.source_of[pos] == 0
            end[pos] = off[pos + 1] if good else off[pos]
        # stamp[e] == prev: element e is in the previous block's scope, first at first_at[e]
        stamp = <Py_ssize_t *> _alloc(max(n_ids, 1) * sizeof(Py_ssize_t), False)
        first_at = <Py_ssize_t *> _alloc(max(n_ids, 1) * sizeof(Py_ssize_t), False)
        parent_of = <Py_ssize_t *> _alloc(max(n_ids, 1) * sizeof(Py_ssize_t), False)
        child_of = <Py_ssize_t *> _alloc(max(n_ids, 1) * sizeof(Py_ssize_t), False)
        for k in range(n_ids):
            stamp[k] = -1
            parent_of[k] = -1
            child_of[k] = -1
        # each pair of blocks adds at most one parent and two children
        par_block = <Py_ssize_t *> _alloc(max(n, 1) * sizeof(Py_ssize_t), False)
        par_place = <Py_ssize_t *> _alloc(max(n, 1) * sizeof(Py_ssize_t), False)
        par_head = <Py_ssize_t *> _alloc(max(n, 1) * sizeof(Py_ssize_t), False)
        par_tail = <Py_ssize_t *> _alloc(max(n, 1) * sizeof(Py_ssize_t), False)
        par_count = <Py_ssize_t *> _alloc(max(n, 1) * sizeof(Py_ssize_t), False)
        kids.elem = <Py_ssize_t *> _alloc(2 * max(n, 1) * sizeof(Py_ssize_t), False)
        kids.first = <Py_ssize_t *> _alloc(2 * max(n, 1) * sizeof(Py_ssize_t), False)
        kids.at = <Py_ssize_t *> _alloc(2 * max(n, 1) * sizeof(Py_ssize_t), False)
        kids.depth = <Py_ssize_t *> _alloc(2 * max(n, 1) * sizeof(Py_ssize_t), False)
        kids.next = <Py_ssize_t *> _alloc(2 * max(n, 1) * sizeof(Py_ssize_t), False)
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
                    p = parent_of[ids[lo + j]]
                    if p < 0:
                        p = parent_of[ids[lo + j]] = n_par
                        n_par += 1
                        par_block[p] = pos
                        par_place[p] = j
                        par_head[p] = par_tail[p] = -1
                        par_count[p] = 0
                        if i + 1 < end[prev] - plo:  # the previous block's child: the first seen
                            child_id = ids[plo + i + 1]
                            start = prev
                            while start > 0 and _holds(ids, off[start - 1], end[start - 1],
                                                       child_id):
                                start -= 1
                            _add_kid(&kids, n_kids, p, child_id, start, prev, i + 1, par_head,
                                     par_tail, par_count, child_of)
                            n_kids += 1
                    e = ids[lo + j + 1]
                    if not _has_kid(&kids, p, e, par_head, child_of):
                        _add_kid(&kids, n_kids, p, e, pos, pos, j + 1, par_head, par_tail,
                                 par_count, child_of)
                        n_kids += 1
            prev = pos
            lo, hi = off[pos], end[pos]
            for k in range(hi - lo - 1, -1, -1):  # from the end: the first place wins
                stamp[ids[lo + k]] = pos
                first_at[ids[lo + k]] = k
        # the parents with enough children, in the order found: their children in order of
        # first block (as found, but for a stable sort should they not be), grouped by template
        order = <Py_ssize_t *> _alloc(max(n_kids, 1) * sizeof(Py_ssize_t), False)
        path_tags = [None] * len(numbers.paths)  # each tag path's tags, split once a page
        for p in range(n_par):
            m = par_count[p]
            if m < min_items:
                continue
            c = par_head[p]
            for k in range(m):
                order[k] = c
                c = kids.next[c]
            for k in range(1, m):  # insertion sort by first block: none to do when in order
                c = order[k]
                t = k
                while t > 0 and kids.first[order[t - 1]] > kids.first[c]:
                    order[t] = order[t - 1]
                    t -= 1
                order[t] = c
            by_signature = {}
            s = 0  # the children kept
            for k in range(m):
                c = order[k]
                at = kids.at[c]
                depth = kids.depth[c]
                # the tag of scope[depth]: Block.path's segment as far from its end as that
                # element is from the scope's
                r = off[at + 1] - off[at] - depth - 1
                tags = <list> path_tags[numbers.path_of[at]]
                if tags is None:
                    tags = path_tags[numbers.path_of[at]] = (
                        <str> numbers.paths[numbers.path_of[at]]
                    ).split(">")
                tag = <str> tags[len(tags) - 1 - r] if r < len(tags) else ""
                if tag in excluded:
                    continue
                first = kids.first[c]
                if k + 1 < m:
                    last = kids.first[order[k + 1]] - 1
                else:
                    last = _child_end(ids, off, n, first, kids.elem[c], depth)
                cls = <str> numbers.owns[numbers.elem_own[ids[off[at] + depth]]]
                key = (tag, cls)
                signature = signatures.get(key)
                if signature is None:
                    signature = signatures[key] = _class_signature(tag, cls)
                item = (first, last)
                items = by_signature.get(signature)
                if items is None:
                    by_signature[signature] = [item]
                else:
                    items.append(item)
                s += 1
            if s < min_items:
                continue
            parent = None
            for signature, items in by_signature.items():
                m = len(items)
                if m < min_items:
                    continue
                if prefix == NULL:
                    prefix = _word_prefix(numbers)
                n_words = 0
                single = 0
                for k in range(m):
                    item = <tuple> items[k]
                    first = item[0]
                    last = item[1]
                    n_words += <Py_ssize_t> (prefix[last + 1] - prefix[first])
                    single += first == last
                if single * 2 > m and n_words < min_line_words * m:
                    continue
                if parent is None:
                    parent = numbers.elem_id[ids[off[par_block[p]] + par_place[p]]]
                found.append(_tuple_of(item_list, (parent, 1, signature, tuple(items), n_words)))
    finally:
        free(end)
        free(stamp)
        free(first_at)
        free(parent_of)
        free(child_of)
        free(par_block)
        free(par_place)
        free(par_head)
        free(par_tail)
        free(par_count)
        free(order)
        free(kids.elem)
        free(kids.first)
        free(kids.at)
        free(kids.depth)
        free(kids.next)
        free(prefix)
    return found


cdef inline void _add_kid(_Kids *kids, Py_ssize_t c, Py_ssize_t p, Py_ssize_t e, Py_ssize_t first,
                          Py_ssize_t at, Py_ssize_t depth, Py_ssize_t *par_head,
                          Py_ssize_t *par_tail, Py_ssize_t *par_count,
                          Py_ssize_t *child_of) noexcept:
    """Element ``e`` as parent ``p``'s next child (entry ``c``)."""
    kids.elem[c] = e
    kids.first[c] = first
    kids.at[c] = at
    kids.depth[c] = depth
    kids.next[c] = -1
    if par_tail[p] < 0:
        par_head[p] = c
    else:
        kids.next[par_tail[p]] = c
    par_tail[p] = c
    par_count[p] += 1
    if child_of[e] < 0:
        child_of[e] = p


cdef inline bint _has_kid(const _Kids *kids, Py_ssize_t p, Py_ssize_t e,
                          const Py_ssize_t *par_head, const Py_ssize_t *child_of) noexcept:
    """Whether element ``e`` is one of parent ``p``'s children: the parent an element was first
    a child of answers at once (an element's parent in the scopes is its nearest block-level
    ancestor, always the same); another parent's children are read through."""
    cdef Py_ssize_t c
    if child_of[e] == p:
        return True
    if child_of[e] < 0:
        return False
    c = par_head[p]
    while c >= 0:
        if kids.elem[c] == e:
            return True
        c = kids.next[c]
    return False


cdef Py_ssize_t _child_end(const Py_ssize_t *ids, const Py_ssize_t *off, Py_ssize_t n,
                           Py_ssize_t first, Py_ssize_t child, Py_ssize_t at) noexcept:
    """The last of the blocks from ``first`` on whose scopes (their dense numbers) hold element
    ``child`` (``first``'s own too, unread), looking first at the place the previous block held
    it (``at`` to begin with: scopes that keep the same ancestors hold it there), then at every
    place."""
    cdef Py_ssize_t last = first, k, lo, m
    while last + 1 < n:
        lo = off[last + 1]
        m = off[last + 2] - lo
        if not (at < m and ids[lo + at] == child):
            k = 0
            while k < m and ids[lo + k] != child:
                k += 1
            if k == m:
                break
            at = k
        last += 1
    return last


@cython.boundscheck(False)
@cython.wraparound(False)
def word_counts(BlockIds table):
    """``blockdex.items.word_count`` of each block of the table (its spaces plus one, 0 for an
    empty text), as a float64 array."""
    cdef Py_ssize_t pos, n = table.n
    cdef list texts = table.texts
    cdef str text
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    for pos in range(n):
        text = <str> texts[pos]
        o[pos] = <double> (text.count(" ") + 1) if text else 0.0
    return out


cdef long long *_word_prefix(BlockIds table) except NULL:
    """The words before each block of the table and in all (``n + 1`` entries from 0, each
    block's words counted as :func:`word_counts` does), in a malloc'd array."""
    cdef Py_ssize_t pos, n = table.n
    cdef long long total = 0
    cdef list texts = table.texts
    cdef str text
    cdef long long *out = <long long *> _alloc((n + 1) * sizeof(long long), False)
    out[0] = 0
    for pos in range(n):
        text = <str> texts[pos]
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
    return _class_signature(tag, attrs)


cdef str _class_signature(str tag, str attrs):
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


@cython.boundscheck(False)
@cython.wraparound(False)
def slot_groups(BlockIds table, list lists, among, slot_of):
    """``blockdex.items._slot_groups`` on the blocks' table: ``lists`` are ``(parent, depth,
    items)`` (the parent's element id, the items' depth, their ``(first, last)`` positions);
    ``among`` the positions whose lists are read (None: all); ``slot_of(tag, path, scope,
    tokens, parent, depth)`` is ``items._slot``, called once per distinct place (a template's
    cards share it). Returns ``(groups, inner_of, slot_items)`` as ``_slot_groups`` does.

    A block's place is keyed by its list, where the list's parent stands in its scope, its
    scope's length, its tag path and its scope's tokens (``_slot``'s inputs), as numbers of the
    table (each equal exactly when the strings are): no tuple of the scope, of its tokens, or of
    a key's strings is made a block."""
    cdef Py_ssize_t n = table.n, li, k, p, s, e, size, n_lists = len(lists), place, m, d, g
    cdef Py_ssize_t *inner_size = NULL
    cdef Py_ssize_t *inner_of_c = NULL
    cdef Py_ssize_t *inner_item = NULL
    cdef char *wanted = NULL
    cdef long long parent
    cdef const Py_ssize_t *off = table.scope_off
    cdef const Py_ssize_t *ids = table.scope_ids
    cdef dict seen = {}, slot_ids = {}, slot_items = {}
    cdef list inner_of
    cdef tuple lst
    groups = np.arange(n, dtype=np.int32)
    cdef int[::1] gv = groups
    try:
        inner_size = <Py_ssize_t *> _alloc(max(n, 1) * sizeof(Py_ssize_t), False)
        inner_of_c = <Py_ssize_t *> _alloc(max(n, 1) * sizeof(Py_ssize_t), False)
        inner_item = <Py_ssize_t *> _alloc(max(n, 1) * sizeof(Py_ssize_t), False)
        wanted = <char *> _alloc(max(n_lists, 1), True)
        for p in range(n):
            inner_size[p] = n + 1
            inner_of_c[p] = -1
            inner_item[p] = -1
        # each block's smallest item (the first list's on a tie)
        for li in range(n_lists):
            lst = <tuple> lists[li]
            k = 0
            for item in <list> lst[2]:
                s, e = item
                size = e - s
                for p in range(s if s > 0 else 0, (e if e < n - 1 else n - 1) + 1):
                    if inner_size[p] > size:
                        inner_size[p] = size
                        inner_of_c[p] = li
                        inner_item[p] = k
                k += 1
        if among is None:
            for li in range(n_lists):
                wanted[li] = 1
        else:
            for p in among:
                if inner_of_c[<Py_ssize_t> p] >= 0:
                    wanted[inner_of_c[<Py_ssize_t> p]] = 1
        for p in range(n):
            li = inner_of_c[p]
            if li < 0 or not wanted[li]:
                continue
            lst = <tuple> lists[li]
            parent = <long long> lst[0]
            m = off[p + 1] - off[p]
            place = -1
            for d in range(m):
                if table.elem_id[ids[off[p] + d]] == parent:
                    place = d
                    break
            if place >= 0:
                raw = (li, place, m, table.path_of[p],
                       *[table.elem_own[ids[off[p] + d]] for d in range(m)])
            else:
                raw = (li, -1 - table.tag_of[p])
            got = seen.get(raw)
            if got is None:
                key = (li, slot_of(
                    table.tags[table.tag_of[p]], table.paths[table.path_of[p]],
                    table.scope(p), table.scope_tokens(p), lst[0], lst[1],
                ))
                got = slot_ids.get(key)
                if got is None:
                    got = slot_ids[key] = n + len(slot_ids)
                seen[raw] = got
            g = <Py_ssize_t> got
            gv[p] = <int> g
            members = slot_items.get(got)
            if members is None:
                slot_items[got] = {inner_item[p]}
            else:
                (<set> members).add(inner_item[p])
        inner_of = [inner_of_c[p] for p in range(n)]
    finally:
        free(inner_size)
        free(inner_of_c)
        free(inner_item)
        free(wanted)
    return groups, inner_of, slot_items
