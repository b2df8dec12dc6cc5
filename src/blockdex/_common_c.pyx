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
    cdef tuple seq = blocks if type(blocks) is tuple else tuple(blocks)
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


cdef inline Py_ssize_t _first_seen(dict numbers, object key) except -1:
    """``key``'s number in ``numbers``; a key not seen yet is numbered next."""
    cdef PyObject *v = PyDict_GetItem(numbers, key)
    if v != NULL:
        return <Py_ssize_t> <object> v
    cdef Py_ssize_t k = len(numbers)
    numbers[key] = k
    return k


@cython.final
cdef class BlockIds:
    """A page's blocks as integer ids, numbered once (``blockdex.ids.page_ids`` keeps it on
    the page): each block's tag path and attrs string as a number of the distinct ones (first
    seen, first numbered: ``paths``, ``attrs``), and each element of its scope as a dense
    number (:func:`_number_scopes`). Every compiled reader that groups blocks by these strings
    or elements reads the numbers here instead of hashing the strings and ids again. Holds C
    arrays only, no object per block; ``blocks`` is the tuple numbered (a reader checks it was
    handed the same one). An element id past 64 bits raises OverflowError.

    ``word_prefix`` keeps the words before each block (``blockdex.items._word_prefix``) once a
    reader has counted them (the item lists, the page-kind rules), and ``block_words`` each
    block's words as the read-only float array ``blockdex.items.page_block_words`` gives: None
    until then."""

    def __cinit__(self, tuple blocks):
        cdef Py_ssize_t i, n = len(blocks), total = 0, o_path = 0, o_attrs = 0, o_scope = 0
        cdef object cls = None
        cdef dict paths = {}, attrs = {}
        cdef list scopes = []
        self.blocks = blocks
        self.path_of = <Py_ssize_t *> _alloc(n * sizeof(Py_ssize_t), False)
        self.attr_of = <Py_ssize_t *> _alloc(n * sizeof(Py_ssize_t), False)
        self.scope_off = <Py_ssize_t *> _alloc((n + 1) * sizeof(Py_ssize_t), False)
        for i in range(n):
            b = blocks[i]
            if type(b) is not cls:
                cls = type(b)
                o_path = _slot_offset(cls, "path")
                o_attrs = _slot_offset(cls, "attrs")
                o_scope = _slot_offset(cls, "scope")
            self.path_of[i] = _first_seen(paths, _field(b, o_path))
            self.attr_of[i] = _first_seen(attrs, _field(b, o_attrs))
            sc = <tuple> _field(b, o_scope)
            scopes.append(sc)
            total += len(sc)
        self.scope_ids = <Py_ssize_t *> _alloc(total * sizeof(Py_ssize_t), False)
        self.n_elements = _number_scopes(scopes, total, self.scope_off, self.scope_ids)
        self.paths = list(paths)
        self.attrs = list(attrs)

    def __dealloc__(self):
        free(self.path_of)
        free(self.attr_of)
        free(self.scope_off)
        free(self.scope_ids)

    def path_ids(self) -> list:
        """Each block's tag-path number (for tests)."""
        return [self.path_of[i] for i in range(len(self.blocks))]

    def attr_ids(self) -> list:
        """Each block's attrs-string number (for tests)."""
        return [self.attr_of[i] for i in range(len(self.blocks))]

    def scope_numbers(self) -> list:
        """Each block's scope element numbers, as tuples (for tests)."""
        return [tuple(self.scope_ids[k] for k in range(self.scope_off[i], self.scope_off[i + 1]))
                for i in range(len(self.blocks))]


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
