# cython: language_level=3
"""What ``blockdex/units.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`unit_walk` — ``units._survey``: the elements that may declare an article and the
  elements holding a large share of the text, in one walk over lexbor's tree.
* :func:`story_children` — the repeated story containers ``units.find_units`` finds from the
  headlines' ancestor chains (their elements counted level by level in C arrays).
* :func:`mark_ranges` — ``units._mark_ranges``: the blocks each marked element holds, through
  lexbor's parent pointers.
* :func:`title_candidates` — the blocks ``units.title_block`` scores.
* :func:`heading_positions` — ``units.heading_positions``; :func:`text_prefix` — the
  text-length prefix sums ``units.find_units`` reads of every block.
* :func:`build_units` — ``units.build_units``: the page's units from their spans, sorted, with
  headlines, titles and parents.
* :func:`title_words_held` — how many of the title's words ``units._holds_title_share`` finds
  standing in the kept texts.
* :func:`word_runs` — the words ``units.content_words`` and ``units.content_counts`` read:
  the runs of two or more word characters, listed or counted.
"""

cimport cython
from cpython cimport array
from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH,
    PyUnicode_KIND, PyUnicode_READ, PyUnicode_READ_CHAR,
)
from libc.stdint cimport uint64_t, uintptr_t
from libc.stdlib cimport calloc, free, realloc
from blockdex._common_c cimport BlockIds, _alloc, _char_t, _tuple_of
from blockdex._lexbor_c cimport (
    NODE_ELEMENT, NODE_TEXT, _TagKinds, _ascii_ieq, _attr, _attr_first, _attr_next, _attr_qname,
    _attr_value, _decode, _following, _tag, bd_chardata, bd_node, memmem,
)
import array

cdef inline Py_ssize_t _lower_bound(const uintptr_t *a, Py_ssize_t n, uintptr_t key) noexcept nogil:
    """The first place in the sorted ``a[:n]`` whose value is not below ``key``."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef extern from "stdlib.h":
    void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *) noexcept nogil) nogil

cdef inline bd_node *_element_of(BlockIds table, Py_ssize_t i) noexcept:
    """Block ``i``'s element (``scope[-1]``, a ``mem_id`` of the page's live tree) when it
    comes from the page's DOM, else NULL."""
    cdef Py_ssize_t end = table.scope_off[i + 1]
    if end > table.scope_off[i] and table.source_of[i] == 0:
        return <bd_node *> <uintptr_t> table.elem_id[table.scope_ids[end - 1]]
    return NULL


cdef inline uintptr_t _mark_bit(uintptr_t key) noexcept:
    """Which of 256 bits stands for a node address (its Fibonacci hash's top byte)."""
    return <uintptr_t> ((<uint64_t> key * <uint64_t> 0x9E3779B97F4A7C15ULL) >> 56)


@cython.boundscheck(False)
@cython.wraparound(False)
def mark_ranges(BlockIds table, list marks):
    """``blockdex.units._mark_ranges``: for each element id of ``marks`` (sorted ``mem_id``\ s of
    a live tree), ``[first, last]`` positions of the blocks (``scope[-1]`` of a block from the
    page's DOM, read from its slot) whose element is that element or lies inside it. Each
    element's ancestors are walked up through lexbor's parent pointers, marks found by binary
    search (only for an ancestor whose bit of a 256-bit filter of the marks is set): no Python
    object per ancestor. The blocks are read from their table. Call only when
    :func:`lexbor_ready` is True."""
    cdef Py_ssize_t n_marks = len(marks), n, i, lo
    cdef uintptr_t key, h
    cdef uint64_t seen[4]  # a bit for each mark (256 bits, by _mark_bit): most ancestors skip
    cdef uintptr_t *sorted_marks = NULL
    cdef Py_ssize_t *first = NULL
    cdef Py_ssize_t *last = NULL
    cdef bd_node *node
    n = table.n
    out = {}
    if n_marks == 0:
        return out
    try:
        sorted_marks = <uintptr_t *> _alloc(n_marks * sizeof(uintptr_t), False)
        first = <Py_ssize_t *> _alloc(n_marks * sizeof(Py_ssize_t), False)
        last = <Py_ssize_t *> _alloc(n_marks * sizeof(Py_ssize_t), False)
        seen[0] = seen[1] = seen[2] = seen[3] = 0
        for i in range(n_marks):
            sorted_marks[i] = <uintptr_t> marks[i]
            first[i] = -1
            last[i] = -1
            if i and sorted_marks[i] <= sorted_marks[i - 1]:
                raise ValueError("marks must be sorted and distinct")
            h = _mark_bit(sorted_marks[i])
            seen[h >> 6] |= (<uint64_t> 1) << (h & 63)
        for i in range(n):
            node = _element_of(table, i)
            while node != NULL:
                key = <uintptr_t> node
                h = _mark_bit(key)
                if not (seen[h >> 6] >> (h & 63)) & 1:  # no mark has this bit: not a mark
                    node = node.parent
                    continue
                lo = _lower_bound(sorted_marks, n_marks, key)
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


def unit_walk(uintptr_t root_id, double min_share):
    """``blockdex.units._survey``: one walk below the root (a ``mem_id``): ``(candidates,
    big)``.

    ``candidates``: the elements that may declare an article, in document order, as ``(mem_id,
    tag, role, itemtype)`` (``article``/``main`` elements and any element with a ``role`` or
    ``itemtype`` attribute; None for a missing attribute). ``big``: the elements holding at least
    ``min_share`` of the root's text (UTF-8 bytes of text nodes), in document order, as
    ``(mem_id, parent mem_id, tag, class)``; open elements sit on a C stack and add their text
    to their parent's when they close, and each closed element's text is kept in a C array
    until the root's total is known (one walk of the tree, not a first one to count the text).
    Call only when :func:`lexbor_ready` is True."""
    cdef bd_node *root = <bd_node *> root_id
    cdef bd_node *node
    cdef _TagKinds kinds = _TagKinds({"article": 1, "main": 2})
    cdef int kind
    cdef void *role_attr
    cdef void *type_attr
    cdef size_t total, threshold
    cdef Py_ssize_t top = 0, room = 64, order = 0, n_closed = 0, closed_room = 256, k
    cdef bd_node **open_nodes = NULL
    cdef size_t *acc = NULL
    cdef Py_ssize_t *opened = NULL
    cdef bd_node **closed_nodes = NULL  # the elements closed, with their text and order
    cdef size_t *closed_acc = NULL
    cdef Py_ssize_t *closed_order = NULL
    candidates = []
    found = []
    try:
        open_nodes = <bd_node **> _alloc(room * sizeof(bd_node *), False)
        acc = <size_t *> _alloc(room * sizeof(size_t), False)
        opened = <Py_ssize_t *> _alloc(room * sizeof(Py_ssize_t), False)
        closed_nodes = <bd_node **> _alloc(closed_room * sizeof(bd_node *), False)
        closed_acc = <size_t *> _alloc(closed_room * sizeof(size_t), False)
        closed_order = <Py_ssize_t *> _alloc(closed_room * sizeof(Py_ssize_t), False)
        open_nodes[0] = root
        acc[0] = 0
        opened[0] = -1
        node = _following(root, root)
        while True:
            # close the open elements that are not the next node's ancestors
            while top > 0 and (node == NULL or open_nodes[top] != node.parent):
                acc[top - 1] += acc[top]
                if n_closed == closed_room:
                    closed_room *= 2
                    closed_nodes = <bd_node **> _grow(closed_nodes, closed_room * sizeof(bd_node *))
                    closed_acc = <size_t *> _grow(closed_acc, closed_room * sizeof(size_t))
                    closed_order = <Py_ssize_t *> _grow(closed_order,
                                                        closed_room * sizeof(Py_ssize_t))
                closed_nodes[n_closed] = open_nodes[top]
                closed_acc[n_closed] = acc[top]
                closed_order[n_closed] = opened[top]
                n_closed += 1
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
                        open_nodes = <bd_node **> _grow(open_nodes, room * sizeof(bd_node *))
                        acc = <size_t *> _grow(acc, room * sizeof(size_t))
                        opened = <Py_ssize_t *> _grow(opened, room * sizeof(Py_ssize_t))
                    open_nodes[top] = node
                    acc[top] = 0
                    opened[top] = order
                order += 1
            node = _following(node, root)
        total = acc[0]  # the text of every text node below the root
        if total:
            threshold = <size_t> (min_share * total)
            for k in range(n_closed):
                if closed_acc[k] >= threshold:
                    node = closed_nodes[k]
                    found.append((
                        closed_order[k], <uintptr_t> node, <uintptr_t> node.parent, _tag(node),
                        _attr(node, b"class"),
                    ))
    finally:
        free(open_nodes)
        free(acc)
        free(opened)
        free(closed_nodes)
        free(closed_acc)
        free(closed_order)
    found.sort()
    return candidates, [row[1:] for row in found]


cdef void *_grow(void *p, size_t size) except NULL:
    """``realloc``, raising MemoryError (``p`` is then left to the caller to free)."""
    cdef void *grown = realloc(p, size)
    if grown == NULL:
        raise MemoryError()
    return grown


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


cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)


cdef class _Probe:
    """One word looked for in the blocks' lower-cased texts: the word, and its bytes when it
    is ASCII (then an ASCII text is searched without a lower-cased copy; a word that is not
    ASCII cannot stand in one)."""
    cdef str word
    cdef bytes ascii

    def __cinit__(self, str word):
        self.word = word
        self.ascii = word.encode("ascii") if PyUnicode_IS_ASCII(word) else None


cdef inline bint _probe_in(_Probe p, str lower, const char *buf, Py_ssize_t n) except -1:
    """Whether ``p``'s word is in the text: in ``lower`` (its lower-cased copy) when there is
    one, else in ``buf`` (its ``n`` ASCII characters lower-cased)."""
    if lower is not None:
        return p.word in lower
    if p.ascii is None:
        return False
    return memmem(buf, <size_t> n, <const char *> p.ascii, <size_t> len(p.ascii)) != NULL


cdef bint _holds(list probes, Py_ssize_t need, str lower, const char *buf, Py_ssize_t n) except -1:
    """Whether ``need`` of ``probes`` are in the text (as :func:`_probe_in` reads it), counted
    until there are enough."""
    cdef Py_ssize_t count = 0
    if need <= 0:
        return True
    for p in probes:
        if _probe_in(<_Probe> p, lower, buf, n):
            count += 1
            if count >= need:
                return True
    return False


@cython.boundscheck(False)
@cython.wraparound(False)
def title_candidates(BlockIds table, positions, double shortest, double longest,
                     Py_ssize_t max_spaces, tuple probe, Py_ssize_t need, tuple needs):
    """The blocks ``blockdex.units.title_block`` scores (length, spaces, not an image, and
    enough of the title's words in the lower-cased text), without a Python step per block:
    text and tag read from the blocks' table, each count of words stopped once it has enough.
    ``positions``: the blocks to test (None: all), the places in it of those that pass are
    returned (with None, their positions). An ASCII text is lower-cased into a C buffer (what
    ``str.lower`` gives it: A-Z to a-z), others with ``str.lower``."""
    cdef Py_ssize_t pos, n, i, room = 0, k, m, at
    cdef str text, lower
    cdef char *buf = NULL
    cdef const unsigned char *src
    cdef unsigned char c
    cdef list texts = table.texts
    m = table.n if positions is None else len(positions)
    cdef list probes = [_Probe(w) for w in probe]
    cdef list need_probes = [([_Probe(w) for w in item[0]], item[1]) for item in needs]
    out = []
    try:
        for k in range(m):
            at = k if positions is None else <Py_ssize_t> positions[k]
            pos = k
            text = <str> texts[at]
            n = PyUnicode_GET_LENGTH(text)
            if not (shortest <= n <= longest):
                continue
            if _spaces_below(text, max_spaces) >= max_spaces:
                continue
            if <str> table.tags[table.tag_of[at]] == "img":
                continue
            lower = None
            if PyUnicode_IS_ASCII(text):
                if n > room:
                    room = n
                    free(buf)
                    buf = NULL
                    buf = <char *> _alloc(<size_t> room, False)
                src = <const unsigned char *> PyUnicode_DATA(text)
                for i in range(n):
                    c = src[i]
                    buf[i] = <char> (c + 32 if 65 <= c <= 90 else c)
            else:
                lower = text.lower()
            if not _holds(probes, need, lower, buf, n):
                continue
            for item in need_probes:
                if _holds(<list> item[0], item[1], lower, buf, n):
                    out.append(pos)
                    break
    finally:
        free(buf)
    return out


cdef inline Py_ssize_t _heading_level(str tag) noexcept:
    """``units.HEADING_LEVELS.get(tag, 0)``: 1 … 6 for ``h1`` … ``h6``, else 0."""
    cdef Py_ssize_t c
    if PyUnicode_GET_LENGTH(tag) != 2 or <Py_ssize_t> PyUnicode_READ_CHAR(tag, 0) != 104:  # h
        return 0
    c = <Py_ssize_t> PyUnicode_READ_CHAR(tag, 1)
    return c - 48 if 49 <= c <= 54 else 0  # '1' … '6'


def heading_positions(BlockIds table):
    """``blockdex.units.heading_positions``: ``(position, level)`` of the heading blocks, in
    order, reading each block's tag from the blocks' table (each distinct tag's level once)."""
    cdef Py_ssize_t pos, level, t, n_tags = len(table.tags)
    cdef Py_ssize_t *levels = NULL
    out = []
    try:
        levels = <Py_ssize_t *> _alloc(max(n_tags, 1) * sizeof(Py_ssize_t), False)
        for t in range(n_tags):
            tag = table.tags[t]
            levels[t] = _heading_level(tag) if type(tag) is str else 0
        for pos in range(table.n):
            level = levels[table.tag_of[pos]]
            if level:
                out.append((pos, level))
    finally:
        free(levels)
    return out


def text_prefix(BlockIds table):
    """The running sum of the blocks' text lengths (``n + 1`` entries from 0), read from their
    table into an ``array('q')`` (no ``int`` object a block), for
    ``blockdex.units.find_units``' sums over ranges of blocks."""
    cdef Py_ssize_t pos, n = table.n
    cdef long long total = 0
    cdef array.array out
    cdef long long *data
    cdef list texts = table.texts
    out = array.clone(_PREFIX_TEMPLATE, n + 1, False)
    data = out.data.as_longlongs
    data[0] = 0
    for pos in range(n):
        total += PyUnicode_GET_LENGTH(<str> texts[pos])
        data[pos + 1] = total
    return out


cdef array.array _PREFIX_TEMPLATE = array.array("q")


cdef Py_ssize_t _count_in(const uintptr_t *sorted_nodes, Py_ssize_t n, uintptr_t key) noexcept:
    """How many times ``key`` stands in the ``n`` sorted ``sorted_nodes``."""
    cdef Py_ssize_t start = _lower_bound(sorted_nodes, n, key), lo = start, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if sorted_nodes[mid] <= key:
            lo = mid + 1
        else:
            hi = mid
    return lo - start


cdef int _cmp_node(const void *a, const void *b) noexcept nogil:
    cdef uintptr_t x = (<const uintptr_t *> a)[0]
    cdef uintptr_t y = (<const uintptr_t *> b)[0]
    return (x > y) - (x < y)


@cython.boundscheck(False)
@cython.wraparound(False)
def story_children(uintptr_t root_id, BlockIds table, heads, Py_ssize_t story_levels,
                   Py_ssize_t max_headings):
    """The repeated story containers of ``blockdex.units.find_units``: ``{child: (parent,
    level)}`` (``mem_id``\ s of the live tree under the root, a ``mem_id``), in the order found.

    The headlines are the heading blocks of ``heads`` (``(position, level)``, in order) of a
    level up to ``story_levels``; the story elements are the elements (``scope[-1]`` of a block
    from the page's DOM) of the first ``max_headings`` headlines, each once, in order; each
    takes the level of the last headline whose element it is. With two or more of them, for
    each level (in the order the story elements first have it) that two or more have: of each
    one's chain of elements from the root down to it, the first element below the root that
    the level's other chains do not hold is the child, the element above it the parent — when
    the child is not the headline itself (a bare heading is a section, not a story); a child
    found twice keeps its first parent and level. The blocks are read from their table. Call
    only when :func:`lexbor_ready` is True."""
    cdef bd_node *root = <bd_node *> root_id
    cdef bd_node *node
    cdef Py_ssize_t n_heads = len(heads), k, j, d, pos, level, n_story = 0, n_sorted
    cdef Py_ssize_t total, n_level, at, depth, lo, length
    cdef uintptr_t e
    cdef uintptr_t *story = NULL  # the story elements, in order
    cdef Py_ssize_t *story_level = NULL
    cdef uintptr_t *by_node = NULL  # the story elements sorted, with their places in story
    cdef Py_ssize_t *by_place = NULL
    cdef Py_ssize_t *chain_off = NULL  # story element k's chain: chains[chain_off[k]:…[k + 1]]
    cdef uintptr_t *chains = NULL
    cdef uintptr_t *pool = NULL  # one level's chains' elements, sorted
    cdef Py_ssize_t *levels_seen = NULL
    cdef Py_ssize_t n_levels = 0
    cdef tuple head
    out = {}
    try:
        story = <uintptr_t *> _alloc(max(n_heads, 1) * sizeof(uintptr_t), False)
        story_level = <Py_ssize_t *> _alloc(max(n_heads, 1) * sizeof(Py_ssize_t), False)
        # the first max_headings headlines' elements, each once (few: a quadratic test)
        k = 0
        for j in range(n_heads):
            if k >= max_headings:
                break
            head = <tuple> heads[j]
            if <Py_ssize_t> head[1] > story_levels:
                continue
            k += 1
            node = _element_of(table, <Py_ssize_t> head[0])
            if node == NULL:
                continue
            e = <uintptr_t> node
            for d in range(n_story):
                if story[d] == e:
                    break
            else:
                story[n_story] = e
                story_level[n_story] = 0
                n_story += 1
        if n_story < 2:
            return out
        # each takes the level of the last headline whose element it is
        by_node = <uintptr_t *> _alloc(n_story * sizeof(uintptr_t), False)
        by_place = <Py_ssize_t *> _alloc(n_story * sizeof(Py_ssize_t), False)
        for k in range(n_story):  # insertion sort (at most max_headings)
            j = k
            while j > 0 and by_node[j - 1] > story[k]:
                by_node[j] = by_node[j - 1]
                by_place[j] = by_place[j - 1]
                j -= 1
            by_node[j] = story[k]
            by_place[j] = k
        for j in range(n_heads):
            head = <tuple> heads[j]
            level = <Py_ssize_t> head[1]
            if level > story_levels:
                continue
            node = _element_of(table, <Py_ssize_t> head[0])
            if node == NULL:
                continue
            e = <uintptr_t> node
            lo = _lower_bound(by_node, n_story, e)
            if lo < n_story and by_node[lo] == e:
                story_level[by_place[lo]] = level
        # the chains, from the root down
        chain_off = <Py_ssize_t *> _alloc((n_story + 1) * sizeof(Py_ssize_t), False)
        total = 0
        for k in range(n_story):
            node = <bd_node *> story[k]
            while node != NULL:
                total += 1
                if node == root:
                    break
                node = node.parent
        chains = <uintptr_t *> _alloc(max(total, 1) * sizeof(uintptr_t), False)
        pool = <uintptr_t *> _alloc(max(total, 1) * sizeof(uintptr_t), False)
        levels_seen = <Py_ssize_t *> _alloc(n_story * sizeof(Py_ssize_t), False)
        at = 0
        for k in range(n_story):
            chain_off[k] = at
            length = 0
            node = <bd_node *> story[k]
            while node != NULL:
                length += 1
                if node == root:
                    break
                node = node.parent
            node = <bd_node *> story[k]
            for d in range(length - 1, -1, -1):
                chains[at + d] = <uintptr_t> node
                node = node.parent
            at += length
        chain_off[n_story] = at
        for k in range(n_story):  # the levels, in the order the story elements first have them
            for j in range(n_levels):
                if levels_seen[j] == story_level[k]:
                    break
            else:
                levels_seen[n_levels] = story_level[k]
                n_levels += 1
        for j in range(n_levels):
            level = levels_seen[j]
            n_level = 0
            n_sorted = 0
            for k in range(n_story):
                if story_level[k] == level:
                    n_level += 1
                    for d in range(chain_off[k], chain_off[k + 1]):
                        pool[n_sorted] = chains[d]
                        n_sorted += 1
            if n_level < 2:
                continue
            qsort(pool, n_sorted, sizeof(uintptr_t), _cmp_node)
            for k in range(n_story):
                if story_level[k] != level:
                    continue
                lo = chain_off[k]
                length = chain_off[k + 1] - lo
                depth = length
                for d in range(1, length):
                    if _count_in(pool, n_sorted, chains[lo + d]) == 1:
                        depth = d
                        break
                if depth < length - 1:  # a bare heading is a section, not a story
                    child = <uintptr_t> chains[lo + depth]
                    if child not in out:
                        out[child] = (<uintptr_t> chains[lo + depth - 1], level)
    finally:
        free(story)
        free(story_level)
        free(by_node)
        free(by_place)
        free(chain_off)
        free(chains)
        free(pool)
        free(levels_seen)
    return out


# -- the page's units from their spans (``units.build_units``) ---------------------------------


ctypedef struct _UnitKey:
    Py_ssize_t start
    Py_ssize_t neg_end
    Py_ssize_t rank
    Py_ssize_t seq

cdef int _unit_key_cmp(const void *a, const void *b) noexcept nogil:
    cdef const _UnitKey *x = <const _UnitKey *> a
    cdef const _UnitKey *y = <const _UnitKey *> b
    if x.start != y.start:
        return -1 if x.start < y.start else 1
    if x.neg_end != y.neg_end:
        return -1 if x.neg_end < y.neg_end else 1
    if x.rank != y.rank:
        return -1 if x.rank < y.rank else 1
    return (x.seq > y.seq) - (x.seq < y.seq)  # equal keys keep their order (a stable sort)


cdef dict _KIND_RANK = {"items": 0, "item": 1, "article": 2, "section": 3}


@cython.boundscheck(False)
@cython.wraparound(False)
def build_units(spans, BlockIds table, heads, Py_ssize_t headline_levels, items, unit_cls):
    """``blockdex.units.build_units``: the article units (``spans`` deduplicated, the first
    reason kept, each headed by its first heading of the highest level up to
    ``headline_levels``), the item lists and items (``items``) and the section units (each
    heading to the next of its level or above, never past the end of the innermost declared
    article or item around it nor into an article that starts inside it and ends after it),
    sorted by start, outer first, as ``unit_cls`` named tuples with their ids, titles and
    parents. ``heads``: ``(position, level)`` of the heading blocks, in order."""
    cdef Py_ssize_t n = table.n, n_heads = len(heads), first, k, j, lo, hi, mid
    cdef Py_ssize_t start, end, at, level, best, best_level, begun, n_art, n_raw, top, g
    cdef Py_ssize_t a_lo, a_hi, v
    cdef Py_ssize_t *hpos = NULL
    cdef Py_ssize_t *hlev = NULL
    cdef Py_ssize_t *hend = NULL
    cdef Py_ssize_t *astart = NULL
    cdef Py_ssize_t *aend = NULL
    cdef Py_ssize_t *around = NULL
    cdef Py_ssize_t *stack_start = NULL
    cdef Py_ssize_t *stack_end = NULL
    cdef Py_ssize_t *stack_id = NULL
    cdef Py_ssize_t *unit_id = NULL
    cdef _UnitKey *keys = NULL
    cdef list raw = [], articles, units = []
    cdef dict seen = {}
    cdef tuple r
    cdef list texts = table.texts
    first = table.first
    for s in spans:
        key = (s.start, s.end)
        if key not in seen:
            seen[key] = s.source  # the first reason found is kept
    try:
        hpos = <Py_ssize_t *> _alloc(n_heads * sizeof(Py_ssize_t), False)
        hlev = <Py_ssize_t *> _alloc(n_heads * sizeof(Py_ssize_t), False)
        hend = <Py_ssize_t *> _alloc(n_heads * sizeof(Py_ssize_t), False)
        for k in range(n_heads):
            hpos[k], hlev[k] = heads[k]
        for key, source in seen.items():
            start, end = key
            # the headline: the first heading of the highest level in [start, end]
            lo, hi = 0, n_heads
            while lo < hi:
                mid = (lo + hi) // 2
                if hpos[mid] < start:
                    lo = mid + 1
                else:
                    hi = mid
            best = -1
            best_level = 0
            k = lo
            while k < n_heads and hpos[k] <= end:
                if hlev[k] <= headline_levels and (best < 0 or hlev[k] < best_level):
                    best = hpos[k]
                    best_level = hlev[k]
                    if best_level == 1:
                        break
                k += 1
            raw.append((start, end, "article", source, None if best < 0 else best, best_level))
        # sections stop at the end of a declared article only, nor past the end of the item
        # they sit in
        articles = sorted([(r[0], r[1]) for r in raw if r[3] not in ("repeated", "headlines")])
        articles = sorted([*articles, *[(r[0], r[1]) for r in items if r[2] == "item"]])
        n_art = len(articles)
        astart = <Py_ssize_t *> _alloc(n_art * sizeof(Py_ssize_t), False)
        aend = <Py_ssize_t *> _alloc(n_art * sizeof(Py_ssize_t), False)
        around = <Py_ssize_t *> _alloc(n_art * sizeof(Py_ssize_t), False)
        for k in range(n_art):
            astart[k], aend[k] = articles[k]
        # each heading's section ends before the next heading of its level or above
        top = 0  # open headings: their indices in hend's place, kept as a stack in stack_id
        stack_id = <Py_ssize_t *> _alloc((n_heads + 1) * sizeof(Py_ssize_t), False)
        for k in range(n_heads):
            while top and hlev[stack_id[top - 1]] >= hlev[k]:
                top -= 1
                hend[stack_id[top]] = hpos[k] - 1
            stack_id[top] = k
            top += 1
        for j in range(top):
            hend[stack_id[j]] = n - 1
        # ends of the articles begun at or before the heading that have not ended before it,
        # sorted: around[a_lo:a_hi]
        a_lo = a_hi = 0
        begun = 0
        for k in range(n_heads):
            at = hpos[k]
            end = hend[k]
            while begun < n_art and astart[begun] <= at:
                v = aend[begun]  # insort: after the equal ones
                j = a_hi
                while j > a_lo and around[j - 1] > v:
                    around[j] = around[j - 1]
                    j -= 1
                around[j] = v
                a_hi += 1
                begun += 1
            while a_lo < a_hi and around[a_lo] < at:
                a_lo += 1
            if a_lo < a_hi and around[a_lo] < end:
                end = around[a_lo]
            # nor into an article that starts inside the section and ends after it
            lo, hi = 0, n_art
            while lo < hi:  # the first article starting after the heading
                mid = (lo + hi) // 2
                if astart[mid] <= at:
                    lo = mid + 1
                else:
                    hi = mid
            for j in range(lo, n_art):
                if astart[j] > end:
                    break
                if aend[j] > end:
                    end = astart[j] - 1
                    break
            raw.append((at, end, "section", "heading", at, hlev[k]))
        for r in items:
            raw.append((r[0], r[1], r[2], "template", r[3], r[4]))
        # sorted by start, outer first, then by kind; equal keys in the order found
        n_raw = len(raw)
        keys = <_UnitKey *> _alloc(n_raw * sizeof(_UnitKey), False)
        for k in range(n_raw):
            r = <tuple> raw[k]
            keys[k].start = r[0]
            keys[k].neg_end = -<Py_ssize_t> r[1]
            keys[k].rank = _KIND_RANK[r[2]]
            keys[k].seq = k
        qsort(keys, n_raw, sizeof(_UnitKey), _unit_key_cmp)
        # the units around the one made: their starts and ends as units hold them (page indices,
        # compared with the positions as blockdex.units always has: the same on a whole page)
        stack_start = <Py_ssize_t *> _alloc((n_raw + 1) * sizeof(Py_ssize_t), False)
        stack_end = <Py_ssize_t *> _alloc((n_raw + 1) * sizeof(Py_ssize_t), False)
        unit_id = <Py_ssize_t *> _alloc((n_raw + 1) * sizeof(Py_ssize_t), False)
        top = 0
        for k in range(n_raw):
            r = <tuple> raw[keys[k].seq]
            start = r[0]
            end = r[1]
            kind = r[2]
            head = r[4]
            while top and not (stack_start[top - 1] <= start and end <= stack_end[top - 1]):
                top -= 1
            if head is not None:
                title = (<str> texts[<Py_ssize_t> head])[:300]
            elif kind == "item":  # an item without a heading is named by its first line
                title = (<str> texts[start])[:120]
            else:
                title = ""
            g = len(units)
            units.append(_tuple_of(unit_cls, (
                g, kind, first + start, first + end,
                None if head is None else first + <Py_ssize_t> head,
                title, r[5], unit_id[top - 1] if top else None, r[3],
            )))
            stack_start[top] = first + start
            stack_end[top] = first + end
            unit_id[top] = g
            top += 1
    finally:
        free(hpos)
        free(hlev)
        free(hend)
        free(astart)
        free(aend)
        free(around)
        free(stack_start)
        free(stack_end)
        free(stack_id)
        free(unit_id)
        free(keys)
    return tuple(units)


cdef extern from "Python.h":
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch)
    Py_ssize_t PyUnicode_Find(object text, object sub, Py_ssize_t start, Py_ssize_t end,
                              int direction) except -2


cdef unsigned char _ascii_word[128]  # _is_word_char of the ASCII characters
for _c in range(128):
    _ascii_word[_c] = _c == 95 or Py_UNICODE_ISALNUM(_c)


cdef inline bint _is_word_char(Py_UCS4 c) noexcept:
    """A word character as ``\\w`` reads one: a letter or digit by ``str.isalnum``, or ``_``."""
    if c < 128:
        return _ascii_word[c]
    return Py_UNICODE_ISALNUM(c)


cdef inline bint _word_char(str text, Py_ssize_t i) noexcept:
    """Whether ``text[i]`` is a word character (:func:`_is_word_char`)."""
    return _is_word_char(PyUnicode_READ_CHAR(text, i))


cdef bint _stands_in(str word, str text) except -1:
    """Whether ``word`` stands in ``text`` between non-word characters, as
    ``(?<!\\w)word(?!\\w)`` would find it, without compiling a pattern per word."""
    cdef Py_ssize_t n = len(word), length = len(text), at, end
    at = PyUnicode_Find(text, word, 0, length, 1)
    while at >= 0:
        end = at + n
        if (at == 0 or not _word_char(text, at - 1)) and (
            end == length or not _word_char(text, end)
        ):
            return True
        at = PyUnicode_Find(text, word, at + 1, length, 1)
    return False


@cython.boundscheck(False)
@cython.wraparound(False)
def title_words_held(list texts, tuple title_words, Py_ssize_t enough):
    """How many of ``title_words`` (word characters only) stand in the lower-cased ``texts``
    (:func:`_stands_in` in each text on its own), counted until ``enough`` are found (then at
    least ``enough``): ``units._holds_title_share``'s count."""
    cdef Py_ssize_t found = 0, k, n_left = len(title_words)
    cdef list left = list(title_words)
    cdef str lower
    if enough <= 0:
        return found
    for text in texts:
        if n_left == 0:
            break
        lower = (<str> text).lower()
        k = 0
        while k < n_left:
            if _stands_in(<str> left[k], lower):
                found += 1
                n_left -= 1
                left[k] = left[n_left]
            else:
                k += 1
        if found >= enough:
            break
    return found


cdef struct _Run:
    Py_ssize_t start, length, count  # a distinct run: where it first stands, how often


cdef struct _RunSlot:
    uint64_t hash
    Py_ssize_t run  # 1 + its run's position in first-seen order (0: an empty slot)


cdef object _word_runs(const _char_t *d, Py_ssize_t n, str text, object counts):
    cdef Py_ssize_t i = 0, start, k, cap = 0, n_runs = 0, j, m
    cdef uint64_t h, mask = 0
    cdef _RunSlot *table = NULL
    cdef _RunSlot *grown
    cdef _Run *runs = NULL
    cdef _Run *r
    cdef list out = [] if counts is None else None
    cdef bint same
    try:
        while i < n:
            if not _is_word_char(d[i]):
                i += 1
                continue
            start = i
            h = 14695981039346656037ULL
            while i < n and _is_word_char(d[i]):
                h = (h ^ <uint64_t> d[i]) * 1099511628211ULL
                i += 1
            if i - start < 2:
                continue
            if out is not None:
                out.append(text[start:i])
                continue
            if 2 * (n_runs + 1) > cap:  # keep the table at most half full
                k = cap * 2 if cap else 256
                grown = <_RunSlot *> calloc(k, sizeof(_RunSlot))
                if grown == NULL:
                    raise MemoryError()
                for j in range(cap):
                    if table[j].run:
                        m = table[j].hash & (k - 1)
                        while grown[m].run:
                            m = (m + 1) & (k - 1)
                        grown[m] = table[j]
                free(table)
                table = grown
                cap = k
                mask = k - 1
                runs = <_Run *> _grow(runs, cap * sizeof(_Run))
            m = h & mask
            while True:
                if not table[m].run:
                    table[m].hash = h
                    n_runs += 1
                    table[m].run = n_runs
                    r = &runs[n_runs - 1]
                    r.start = start
                    r.length = i - start
                    r.count = 1
                    break
                r = &runs[table[m].run - 1]
                if table[m].hash == h and r.length == i - start:
                    same = True
                    for j in range(r.length):
                        if d[r.start + j] != d[start + j]:
                            same = False
                            break
                    if same:
                        r.count += 1
                        break
                m = (m + 1) & mask
        if out is not None:
            return out
        # the words in the order they first stand in the text, as Counter(list) inserts them
        for k in range(n_runs):
            counts[text[runs[k].start : runs[k].start + runs[k].length]] = runs[k].count
        return counts
    finally:
        free(table)
        free(runs)


def word_runs(str text, counts=None):
    """The runs of two or more word characters of ``text`` (what ``\\w{2,}`` finds: a letter
    or digit by ``str.isalnum``, or ``_``), in order, as a list; with ``counts`` (an empty
    ``Counter``), each distinct run's count put in it, in the order the runs first stand in
    the text (as ``Counter`` of the list would), each distinct run made into a string once."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    if kind == PyUnicode_1BYTE_KIND:
        return _word_runs(<const unsigned char *> data, n, text, counts)
    if kind == PyUnicode_2BYTE_KIND:
        return _word_runs(<const unsigned short *> data, n, text, counts)
    return _word_runs(<const unsigned int *> data, n, text, counts)
