# cython: language_level=3
"""Helpers shared by several compiled modules that are not about lexbor (declared in
``_common_c.pxd``; no Python module's rules): ``blockdex.page.Block``'s slot offsets
(``BLOCK_FIELDS``), the slot offset of any ``__slots__`` field, and the dense numbering of the
blocks' scope ids (``_number_scopes``), and :class:`BlockIds`: a page's tag-path, class/id and
scope-element numbers, worked out once and read by the compiled readers of the blocks (features,
readability, item lists, the second stage's groups).
"""

cimport cython
from libc.stdlib cimport free
from cpython.dict cimport PyDict_GetItem
from cpython.ref cimport PyObject
from blockdex._common_c cimport _alloc, _id_slot, PyLong_AsLongLongAndOverflow
import types as _types
import weakref as _weakref

_weakref_type = _weakref.ref

BLOCK_FIELDS = (
    "index", "tag", "html", "text", "chain", "path", "attrs", "depth", "link_chars", "n_links",
    "split", "source", "attributes", "scope", "scope_attrs",
)
"""The fields of ``blockdex.page.Block`` that :func:`block_from_raw` sets (a test compares)."""


cdef extern from "structmember.h":
    ctypedef struct PyMemberDef:
        int type
        Py_ssize_t offset

cdef extern from "Python.h":
    ctypedef struct PyMemberDescrObject:
        PyMemberDef *d_member

cdef enum:
    T_OBJECT_EX = 16  # structmember.h: an object slot; NULL reads as AttributeError

cdef extern from *:
    """
    static inline void *bd_tuple_item(PyObject *t, Py_ssize_t i) {
        return (void *) PyTuple_GET_ITEM(t, i);
    }
    """
    void *bd_tuple_item(object t, Py_ssize_t i)

cdef object _block_offsets_for = None  # the Block class _block_off was read from

cdef Py_ssize_t _slot_offset(type cls, str name) except -1:
    """Where ``cls``'s ``__slots__`` attribute ``name`` sits in its instances."""
    d = cls.__dict__.get(name)
    if type(d) is not _types.MemberDescriptorType:
        raise TypeError(f"{cls.__name__}.{name} is not a slot")
    cdef PyMemberDef *m = (<PyMemberDescrObject *> d).d_member
    if m.type != T_OBJECT_EX:
        raise TypeError(f"{cls.__name__}.{name} is not an object slot")
    return m.offset


cdef int _load_block_offsets(type block_cls) except -1:
    """Read the block class's slot offsets, unless they are the ones already read."""
    global _block_offsets_for
    cdef Py_ssize_t i
    cdef Py_ssize_t found[15]
    if _block_offsets_for is block_cls:
        return 0
    for i in range(15):  # all read before any is kept: a class without them changes nothing
        found[i] = _slot_offset(block_cls, BLOCK_FIELDS[i])
    for i in range(15):
        _block_off[i] = found[i]
    _block_offsets_for = block_cls
    return 0

@cython.boundscheck(False)
@cython.wraparound(False)
cdef tuple _blocks_of_class(blocks):
    """``blocks`` as a tuple when every one is of one class with ``Block``'s slots (their
    offsets loaded), else None: the caller then reads them as Python objects."""
    cdef tuple seq
    if type(blocks) is tuple:
        seq = blocks
    else:
        whole = getattr(blocks, "all", None)  # a page's lazy blocks (_segment_c.BlockList)
        seq = whole() if whole is not None else tuple(blocks)
    if not seq:
        return seq
    cls = type(seq[0])
    for b in seq:
        if type(b) is not cls:
            return None
    try:
        _load_block_offsets(cls)
    except TypeError:  # not a class with Block's slots
        return None
    return seq


cdef Py_ssize_t _number_scopes(
    list scopes, Py_ssize_t total, Py_ssize_t *off, Py_ssize_t *ids
) except -1:
    """Dense numbers of the blocks' scope elements in order of first appearance, through a C
    hash table: block i's are ``ids[off[i]:off[i + 1]]`` (``off``: one entry more than there
    are blocks; ``ids``: ``total`` entries, the scopes' lengths summed). An id object that the
    previous block's scope holds at the same place takes that block's number without a lookup.
    Returns how many elements there are. An id past 64 bits (never, for node addresses) raises
    OverflowError."""
    cdef Py_ssize_t n = len(scopes), i, k, d, slot, n_ids = 0, size = 8, mask
    cdef int overflow = 0
    cdef long long v
    cdef tuple sc, prev = ()
    cdef long long *keys = NULL
    cdef signed char *used = NULL
    cdef Py_ssize_t *slot_id = NULL
    while size < 2 * total + 2:
        size *= 2
    mask = size - 1
    try:
        keys = <long long *> _alloc(size * sizeof(long long), False)
        used = <signed char *> _alloc(size, True)
        slot_id = <Py_ssize_t *> _alloc(size * sizeof(Py_ssize_t), False)
        off[0] = 0
        for i in range(n):
            sc = <tuple> scopes[i]
            d = off[i]
            for k in range(len(sc)):
                if k < len(prev) and bd_tuple_item(sc, k) == bd_tuple_item(prev, k):
                    ids[d] = ids[off[i - 1] + k]
                    d += 1
                    continue
                v = PyLong_AsLongLongAndOverflow(sc[k], &overflow)
                if overflow:
                    raise OverflowError("a scope element id does not fit 64 bits")
                slot = _id_slot(keys, <const char *> used, mask, v)
                if not used[slot]:
                    used[slot] = 1
                    keys[slot] = v
                    slot_id[slot] = n_ids
                    n_ids += 1
                ids[d] = slot_id[slot]
                d += 1
            off[i + 1] = d
            prev = sc
    finally:
        free(keys)
        free(used)
        free(slot_id)
    return n_ids


cdef Py_ssize_t _first_seen(dict numbers, object key) except -1:
    """``key``'s number in ``numbers``; a key not seen yet is numbered next."""
    cdef PyObject *v = PyDict_GetItem(numbers, key)
    if v != NULL:
        return <Py_ssize_t> <object> v
    cdef Py_ssize_t k = len(numbers)
    numbers[key] = k
    return k


@cython.final
cdef class BlockIds:
    """A page's blocks as a table, worked out once (``blockdex.ids.page_ids`` keeps it on the
    page): the columns the compiled readers read (each block's text, tag, depth, link
    characters, links, split and source), each block's tag path and attrs string as a number
    of the distinct ones (first seen, first numbered: ``paths``, ``attrs``), and each element
    of its scope as a dense number (:func:`_number_scopes`) with that element's id and class/id
    tokens. Every compiled reader reads the numbers and columns here instead of the ``Block``
    objects, hashing no string or id again. Holds C arrays and one text a block;
    ``blocks`` is the sequence numbered (a reader checks it was handed the same one).

    Made from ``Block`` objects (``BlockIds(blocks)``: a hand-made page, a page of other
    blocks), or read straight off the walk's rows (``_segment_c.BlockRows.block_ids``: no
    ``Block`` is made). An element id past 64 bits raises OverflowError.

    ``block_words`` keeps each block's words as the read-only float array
    ``blockdex.items.page_block_words`` gives, once a reader has counted them: None until
    then."""

    def __cinit__(self, blocks, bint number=True):
        cdef Py_ssize_t i, k, e, n, total = 0, o_path = 0, o_attrs = 0, o_scope = 0
        cdef Py_ssize_t o_text = 0, o_tag = 0, o_depth = 0, o_lc = 0, o_nl = 0, o_split = 0
        cdef Py_ssize_t o_source = 0, o_sattrs = 0
        cdef object cls = None
        cdef dict paths = {}, attrs = {}, tags = {}, sources = {u"dom": 0}, owns = {}
        cdef list scopes = [], texts = []
        cdef tuple sc, sa
        cdef int overflow = 0
        self._blocks = blocks
        self.owner = None
        self.own_columns = False
        if not number:  # _numbered_ids sets the numbers, its caller the columns
            return
        self.own_columns = True
        n = self.n = len(blocks)
        self.path_of = <Py_ssize_t *> _alloc(n * sizeof(Py_ssize_t), False)
        self.attr_of = <Py_ssize_t *> _alloc(n * sizeof(Py_ssize_t), False)
        self.scope_off = <Py_ssize_t *> _alloc((n + 1) * sizeof(Py_ssize_t), False)
        self.tag_of = <int *> _alloc(n * sizeof(int), False)
        self.depth_of = <int *> _alloc(n * sizeof(int), False)
        self.link_chars_of = <long long *> _alloc(n * sizeof(long long), False)
        self.n_links_of = <int *> _alloc(n * sizeof(int), False)
        self.split_of = <int *> _alloc(3 * n * sizeof(int), False)
        self.source_of = <unsigned char *> _alloc(n, False)
        for i in range(n):
            b = blocks[i]
            if type(b) is not cls:
                cls = type(b)
                o_path = _slot_offset(cls, "path")
                o_attrs = _slot_offset(cls, "attrs")
                o_scope = _slot_offset(cls, "scope")
                o_text = _slot_offset(cls, "text")
                o_tag = _slot_offset(cls, "tag")
                o_depth = _slot_offset(cls, "depth")
                o_lc = _slot_offset(cls, "link_chars")
                o_nl = _slot_offset(cls, "n_links")
                o_split = _slot_offset(cls, "split")
                o_source = _slot_offset(cls, "source")
                o_sattrs = _slot_offset(cls, "scope_attrs")
            self.path_of[i] = _first_seen(paths, _field(b, o_path))
            self.attr_of[i] = _first_seen(attrs, _field(b, o_attrs))
            sc = <tuple> _field(b, o_scope)
            scopes.append(sc)
            total += len(sc)
            texts.append(<str> _field(b, o_text))
            self.tag_of[i] = <int> _first_seen(tags, _field(b, o_tag))
            self.depth_of[i] = <int> _field(b, o_depth)
            self.link_chars_of[i] = <long long> _field(b, o_lc)
            self.n_links_of[i] = <int> _field(b, o_nl)
            split = _field(b, o_split)
            if split is None:
                self.split_of[3 * i] = -1
            else:
                self.split_of[3 * i] = <int> split[0]
                self.split_of[3 * i + 1] = <int> split[1]
                self.split_of[3 * i + 2] = <int> split[2]
            self.source_of[i] = <unsigned char> _first_seen(sources, _field(b, o_source))
        self.first = blocks[0].index if n else 0  # (the blocks' class is checked by now)
        self.scope_ids = <Py_ssize_t *> _alloc(total * sizeof(Py_ssize_t), False)
        self.n_elements = _number_scopes(scopes, total, self.scope_off, self.scope_ids)
        self.elem_id = <long long *> _alloc(self.n_elements * sizeof(long long), False)
        self.elem_own = <int *> _alloc(self.n_elements * sizeof(int), False)
        for e in range(self.n_elements):
            self.elem_own[e] = -1
        for i in range(n):
            sc = <tuple> scopes[i]
            sa = <tuple> _field(blocks[i], o_sattrs)
            for k in range(len(sc)):
                e = self.scope_ids[self.scope_off[i] + k]
                if self.elem_own[e] < 0:
                    self.elem_id[e] = PyLong_AsLongLongAndOverflow(sc[k], &overflow)
                    self.elem_own[e] = <int> _first_seen(owns, sa[k] if k < len(sa) else u"")
        self.paths = list(paths)
        self.attrs = list(attrs)
        self.texts = texts
        self.tags = list(tags)
        self.sources = list(sources)
        self.owns = list(owns)

    def __dealloc__(self):
        free(self.path_of)
        free(self.attr_of)
        free(self.scope_off)
        free(self.scope_ids)
        free(self.elem_id)
        free(self.elem_own)
        if self.own_columns:
            free(self.tag_of)
            free(self.depth_of)
            free(self.link_chars_of)
            free(self.n_links_of)
            free(self.split_of)
            free(self.source_of)

    @property
    def blocks(self):
        """The blocks numbered (a reader checks it was given these); None once a page's lazy
        blocks, which the table only refers to weakly, are gone."""
        if type(self._blocks) is _weakref_type:
            return self._blocks()
        return self._blocks

    def column(self, str name) -> list:
        """One column as a list, one value a block, made once: ``text``, ``tag``, ``path``,
        ``attrs``, ``depth``, ``link_chars``, ``n_links``, ``source`` or ``split`` (what the
        Python readers of many blocks read, instead of the ``Block`` objects)."""
        cdef Py_ssize_t i, n = self.n
        cdef list out
        if self.lists is None:
            self.lists = {}
        got = self.lists.get(name)
        if got is not None:
            return got
        if name == "text":
            out = self.texts
        elif name == "tag":
            out = [self.tags[self.tag_of[i]] for i in range(n)]
        elif name == "path":
            out = [self.paths[self.path_of[i]] for i in range(n)]
        elif name == "attrs":
            out = [self.attrs[self.attr_of[i]] for i in range(n)]
        elif name == "depth":
            out = [self.depth_of[i] for i in range(n)]
        elif name == "link_chars":
            out = [self.link_chars_of[i] for i in range(n)]
        elif name == "n_links":
            out = [self.n_links_of[i] for i in range(n)]
        elif name == "source":
            out = [self.sources[self.source_of[i]] for i in range(n)]
        elif name == "split":
            out = [self._split(i) for i in range(n)]
        else:
            raise ValueError(f"no column {name!r}")
        self.lists[name] = out
        return out

    cdef object _split(self, Py_ssize_t i):
        """``blocks[i].split``: ``(split id, part, total)``, or None."""
        if self.split_of[3 * i] < 0:
            return None
        return (self.split_of[3 * i], self.split_of[3 * i + 1], self.split_of[3 * i + 2])

    def positions_from(self, str source) -> list:
        """The positions of the blocks whose ``source`` is ``source``."""
        cdef Py_ssize_t i
        if source not in self.sources:
            return []
        cdef unsigned char s = <unsigned char> self.sources.index(source)
        return [i for i in range(self.n) if self.source_of[i] == s]

    def scope(self, Py_ssize_t i) -> tuple:
        """``blocks[i].scope``: the ids of the block's scope elements, outermost first."""
        return tuple([self.elem_id[self.scope_ids[k]]
                      for k in range(self.scope_off[i], self.scope_off[i + 1])])

    def scope_tokens(self, Py_ssize_t i) -> tuple:
        """``blocks[i].scope_attrs``: the class/id tokens of the block's scope elements."""
        return tuple([self.owns[self.elem_own[self.scope_ids[k]]]
                      for k in range(self.scope_off[i], self.scope_off[i + 1])])

    def path_ids(self) -> list:
        """Each block's tag-path number (for tests)."""
        return [self.path_of[i] for i in range(self.n)]

    def attr_ids(self) -> list:
        """Each block's attrs-string number (for tests)."""
        return [self.attr_of[i] for i in range(self.n)]

    def scope_numbers(self) -> list:
        """Each block's scope element numbers, as tuples (for tests)."""
        return [tuple(self.scope_ids[k] for k in range(self.scope_off[i], self.scope_off[i + 1]))
                for i in range(self.n)]

    def columns(self) -> list:
        """Each block's fields as the table holds them (for tests): ``(text, tag, depth,
        link_chars, n_links, split, source, scope, scope_attrs)``."""
        cdef Py_ssize_t i
        return [(
            self.texts[i], self.tags[self.tag_of[i]], self.depth_of[i], self.link_chars_of[i],
            self.n_links_of[i], self._split(i), self.sources[self.source_of[i]], self.scope(i),
            self.scope_tokens(i),
        ) for i in range(self.n)]


cdef BlockIds _numbered_ids(
    object blocks, Py_ssize_t n, list paths, list attrs, Py_ssize_t *path_of,
    Py_ssize_t *attr_of, Py_ssize_t *scope_off, Py_ssize_t *scope_ids, Py_ssize_t n_elements,
):
    """A :class:`BlockIds` of ``blocks`` whose numbers were worked out already (by the walk's
    rows, ``_segment_c.BlockRows.block_ids``): it takes over the arrays (malloc'd; it frees
    them). The caller sets the columns."""
    cdef BlockIds ids = BlockIds.__new__(BlockIds, blocks, False)
    ids.n = n
    ids.paths = paths
    ids.attrs = attrs
    ids.path_of = path_of
    ids.attr_of = attr_of
    ids.scope_off = scope_off
    ids.scope_ids = scope_ids
    ids.n_elements = n_elements
    return ids


cdef extern from *:
    """
    static PyObject *bd_tuple_of(PyObject *type, PyObject *items) {
        /* what tuple.__new__(type, items) makes of a tuple ``items`` (tuple_subtype_new) */
        Py_ssize_t n = PyTuple_GET_SIZE(items), k;
        PyObject *obj = ((PyTypeObject *) type)->tp_alloc((PyTypeObject *) type, n);
        if (obj == NULL) return NULL;
        for (k = 0; k < n; k++) {
            PyObject *v = PyTuple_GET_ITEM(items, k);
            Py_INCREF(v);
            PyTuple_SET_ITEM(obj, k, v);
        }
        return obj;
    }
    """
    object bd_tuple_of(object type, tuple items)


cdef object _tuple_of(object type, tuple items):
    """What ``tuple.__new__(type, items)`` makes (a named tuple's ``__new__`` without its Python
    method lookup): the item lists' and the units' records."""
    return bd_tuple_of(type, items)
