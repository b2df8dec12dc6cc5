# cython: language_level=3
"""What ``blockdex/units.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`unit_walk` — ``units._survey``: the elements that may declare an article, the
  headings' ancestor chains and the elements holding a large share of the text, in one walk
  over lexbor's tree.
* :func:`mark_ranges` — ``units._mark_ranges``: the blocks each marked element holds, through
  lexbor's parent pointers.
* :func:`title_candidates` — the blocks ``units.title_block`` scores.
* :func:`heading_positions` — ``units.heading_positions``; :func:`unit_rows` — the element ids
  and text-length prefix sums ``units.find_units`` reads of every block.
"""

cimport cython
from cpython.unicode cimport (
    PyUnicode_DATA, PyUnicode_GET_LENGTH, PyUnicode_KIND, PyUnicode_READ, PyUnicode_READ_CHAR,
)
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free, realloc
from blockdex._common_c cimport _alloc, _block_off, _blocks_of_class, _field
from blockdex._lexbor_c cimport (
    NODE_ELEMENT, NODE_TEXT, _TagKinds, _ascii_ieq, _attr, _attr_first, _attr_next, _attr_qname,
    _attr_value, _decode, _following, _tag, _text_nodes, bd_chardata, bd_node,
)

@cython.boundscheck(False)
@cython.wraparound(False)
def mark_ranges(list element_ids, list marks):
    """``blockdex.units._mark_ranges``: for each element id of ``marks`` (sorted ``mem_id``\ s of
    a live tree), ``[first, last]`` positions in ``element_ids`` (``mem_id``\ s of the same tree,
    or None) whose element is that element or lies inside it. Each element's ancestors are
    walked up through lexbor's parent pointers, marks found by binary search: no Python object
    per ancestor. Call only when :func:`lexbor_ready` is True."""
    cdef Py_ssize_t n_marks = len(marks), n = len(element_ids), i, lo, hi, mid
    cdef uintptr_t key
    cdef uintptr_t *sorted_marks = NULL
    cdef Py_ssize_t *first = NULL
    cdef Py_ssize_t *last = NULL
    cdef bd_node *node
    out = {}
    if n_marks == 0:
        return out
    try:
        sorted_marks = <uintptr_t *> _alloc(n_marks * sizeof(uintptr_t), False)
        first = <Py_ssize_t *> _alloc(n_marks * sizeof(Py_ssize_t), False)
        last = <Py_ssize_t *> _alloc(n_marks * sizeof(Py_ssize_t), False)
        for i in range(n_marks):
            sorted_marks[i] = <uintptr_t> marks[i]
            first[i] = -1
            last[i] = -1
            if i and sorted_marks[i] <= sorted_marks[i - 1]:
                raise ValueError("marks must be sorted and distinct")
        for i in range(n):
            eid = element_ids[i]
            if eid is None:
                continue
            node = <bd_node *> <uintptr_t> eid
            while node != NULL:
                key = <uintptr_t> node
                lo = 0
                hi = n_marks
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if sorted_marks[mid] < key:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo < n_marks and sorted_marks[lo] == key:
                    if first[lo] < 0:
                        first[lo] = i
                    last[lo] = i
                node = node.parent
        for i in range(n_marks):
            if first[i] >= 0:
                out[marks[i]] = [first[i], last[i]]
    finally:
        free(sorted_marks)
        free(first)
        free(last)
    return out


cdef void _role_and_itemtype(bd_node *node, void **role, void **itemtype) noexcept:
    """The element's ``role`` and ``itemtype`` attributes (NULL when absent), in one pass over
    its attributes (ASCII case ignored, the first of each name, as selectolax reads them)."""
    cdef size_t n = 0
    cdef const unsigned char *name
    cdef void *attr = _attr_first(<void *> node)
    role[0] = NULL
    itemtype[0] = NULL
    while attr != NULL:
        name = _attr_qname(attr, &n)
        if name != NULL:
            if n == 4 and role[0] == NULL and _ascii_ieq(<const unsigned char *> b"role", name, 4):
                role[0] = attr
            elif n == 8 and itemtype[0] == NULL and _ascii_ieq(
                <const unsigned char *> b"itemtype", name, 8
            ):
                itemtype[0] = attr
        attr = _attr_next(attr)


cdef str _attr_text(void *attr):
    cdef size_t n = 0
    cdef const unsigned char *value
    if attr == NULL:
        return None
    value = _attr_value(attr, &n)
    return _decode(value, n) if value != NULL else None


def unit_walk(uintptr_t root_id, list heading_ids, double min_share):
    """``blockdex.units._survey``: one walk below the
    root (a ``mem_id``): ``(candidates, chains, big)``.

    ``candidates``: the elements that may declare an article, in document order, as ``(mem_id,
    tag, role, itemtype)`` (``article``/``main`` elements and any element with a ``role`` or
    ``itemtype`` attribute; None for a missing attribute). ``chains``: for each element of
    ``heading_ids``, the ids from the root down to it. ``big``: the elements holding at least
    ``min_share`` of the root's text (UTF-8 bytes of text nodes), in document order, as
    ``(mem_id, parent mem_id, tag, class)``; open elements sit on a C stack and add their text
    to their parent's when they close. Call only when :func:`lexbor_ready` is True."""
    cdef bd_node *root = <bd_node *> root_id
    cdef bd_node *node
    cdef bd_node *only
    cdef _TagKinds kinds = _TagKinds({"article": 1, "main": 2})
    cdef int kind
    cdef void *role_attr
    cdef void *type_attr
    cdef size_t total = 0, threshold
    cdef Py_ssize_t parts = _text_nodes(root, &total, <bd_chardata **> &only)
    cdef Py_ssize_t top = 0, room = 64, order = 0
    cdef bd_node **open_nodes = NULL
    cdef size_t *acc = NULL
    cdef Py_ssize_t *opened = NULL
    cdef bd_node **grown_nodes
    cdef size_t *grown_acc
    cdef Py_ssize_t *grown_opened
    candidates = []
    found = []
    threshold = <size_t> (min_share * total) if total else 0
    try:
        open_nodes = <bd_node **> _alloc(room * sizeof(bd_node *), False)
        acc = <size_t *> _alloc(room * sizeof(size_t), False)
        opened = <Py_ssize_t *> _alloc(room * sizeof(Py_ssize_t), False)
        open_nodes[0] = root
        acc[0] = 0
        opened[0] = -1
        node = _following(root, root)
        while True:
            # close the open elements that are not the next node's ancestors
            while top > 0 and (node == NULL or open_nodes[top] != node.parent):
                acc[top - 1] += acc[top]
                if total and acc[top] >= threshold:
                    found.append((
                        opened[top], <uintptr_t> open_nodes[top],
                        <uintptr_t> open_nodes[top].parent, _tag(open_nodes[top]),
                        _attr(open_nodes[top], b"class"),
                    ))
                top -= 1
            if node == NULL:
                break
            if node.type == NODE_TEXT and (<bd_chardata *> node).data.data != NULL:
                acc[top] += (<bd_chardata *> node).data.length
            elif node.type == NODE_ELEMENT:
                kind = kinds.of(node)
                _role_and_itemtype(node, &role_attr, &type_attr)
                if kind or role_attr != NULL or type_attr != NULL:
                    candidates.append((
                        <uintptr_t> node,
                        "article" if kind == 1 else ("main" if kind == 2 else ""),
                        _attr_text(role_attr), _attr_text(type_attr),
                    ))
                if node.first_child != NULL:
                    top += 1
                    if top == room:
                        room *= 2
                        grown_nodes = <bd_node **> realloc(open_nodes, room * sizeof(bd_node *))
                        if grown_nodes == NULL:
                            raise MemoryError()
                        open_nodes = grown_nodes
                        grown_acc = <size_t *> realloc(acc, room * sizeof(size_t))
                        if grown_acc == NULL:
                            raise MemoryError()
                        acc = grown_acc
                        grown_opened = <Py_ssize_t *> realloc(opened, room * sizeof(Py_ssize_t))
                        if grown_opened == NULL:
                            raise MemoryError()
                        opened = grown_opened
                    open_nodes[top] = node
                    acc[top] = 0
                    opened[top] = order
                order += 1
            node = _following(node, root)
    finally:
        free(open_nodes)
        free(acc)
        free(opened)
    found.sort()
    chains = []
    for hid in heading_ids:
        chain = []
        node = <bd_node *> <uintptr_t> hid
        while node != NULL:
            chain.append(<uintptr_t> node)
            if node == root:
                break
            node = node.parent
        chain.reverse()
        chains.append(chain)
    return candidates, chains, [row[1:] for row in found]


cdef inline Py_ssize_t _spaces_below(str text, Py_ssize_t limit) noexcept:
    """``min(text.count(" "), limit)``: the count stops at ``limit``."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, n = PyUnicode_GET_LENGTH(text), count = 0
    for i in range(n):
        if PyUnicode_READ(kind, data, i) == 32:
            count += 1
            if count >= limit:
                break
    return count


@cython.boundscheck(False)
@cython.wraparound(False)
def title_candidates(blocks, double shortest, double longest, Py_ssize_t max_spaces,
                     tuple probe, Py_ssize_t need, tuple needs):
    """Positions of the blocks ``blockdex.units.title_block`` scores
    (length, spaces, not an image, and enough of the title's words in the lower-cased text),
    without a Python step per block."""
    cdef tuple seq = tuple(blocks), ws
    cdef Py_ssize_t pos, n, count, k
    cdef str text, lower
    cdef bint ok
    out = []
    for pos in range(len(seq)):
        b = seq[pos]
        text = b.text
        n = PyUnicode_GET_LENGTH(text)
        if not (shortest <= n <= longest):
            continue
        if _spaces_below(text, max_spaces) >= max_spaces:
            continue
        if b.tag == "img":
            continue
        lower = text.lower()
        count = 0
        for w in probe:
            if w in lower:
                count += 1
        if count < need:
            continue
        ok = False
        for item in needs:
            ws = item[0]
            k = item[1]
            count = 0
            for w in ws:
                if w in lower:
                    count += 1
            if count >= k:
                ok = True
                break
        if ok:
            out.append(pos)
    return out


cdef inline Py_ssize_t _heading_level(str tag) noexcept:
    """``units.HEADING_LEVELS.get(tag, 0)``: 1 … 6 for ``h1`` … ``h6``, else 0."""
    cdef Py_ssize_t c
    if PyUnicode_GET_LENGTH(tag) != 2 or <Py_ssize_t> PyUnicode_READ_CHAR(tag, 0) != 104:  # h
        return 0
    c = <Py_ssize_t> PyUnicode_READ_CHAR(tag, 1)
    return c - 48 if 49 <= c <= 54 else 0  # '1' … '6'


def heading_positions(blocks):
    """``blockdex.units.heading_positions``: ``(position, level)`` of the heading blocks, in
    order, reading each block's tag from its slot. None when the blocks are not all of one class
    with ``Block``'s slots (the caller then reads them as Python objects)."""
    cdef tuple seq = _blocks_of_class(blocks)
    cdef Py_ssize_t pos, level
    if seq is None:
        return None
    out = []
    for pos in range(len(seq)):
        tag = _field(seq[pos], _block_off[1])
        level = _heading_level(tag) if type(tag) is str else 0
        if level:
            out.append((pos, level))
    return out


def unit_rows(blocks):
    """What ``blockdex.units.find_units`` reads of every block, in one pass over their slots:
    ``(element_ids, prefix)``, each block's element (``scope[-1]`` of a block from the page's
    tree, else None) and the running sum of the blocks' text lengths (``n + 1`` entries from 0).
    None when the blocks are not all of one class with ``Block``'s slots."""
    cdef tuple seq = _blocks_of_class(blocks)
    cdef Py_ssize_t pos, total = 0
    if seq is None:
        return None
    element_ids = []
    prefix = [0]
    for pos in range(len(seq)):
        b = seq[pos]
        scope = _field(b, _block_off[13])
        if scope and _field(b, _block_off[11]) == "dom":
            element_ids.append(scope[-1])
        else:
            element_ids.append(None)
        total += len(_field(b, _block_off[3]))
        prefix.append(total)
    return element_ids, prefix
