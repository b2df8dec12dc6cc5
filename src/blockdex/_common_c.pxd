# cython: language_level=3
"""Helpers shared by several compiled modules that are not about lexbor (declarations of
``blockdex._common_c``): ``__slots__`` fields of blockdex's block classes read and written by
offset, checked C allocation, an open-addressing slot lookup, the dense numbering of the blocks'
scope ids, the per-page table of the blocks' ids (``BlockIds``), and the fused character type
of ``str`` data.
"""

from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from libc.stdlib cimport malloc, calloc

cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object obj, int *overflow) except? -1

ctypedef fused _char_t:
    unsigned char
    unsigned short
    unsigned int

# blockdex.page.Block's slot offsets in _common_c.BLOCK_FIELDS' order, read by _load_block_offsets
cdef Py_ssize_t _block_off[15]

cdef Py_ssize_t _slot_offset(type cls, str name) except -1
cdef int _load_block_offsets(type block_cls) except -1
cdef tuple _blocks_of_class(blocks)
cdef object _tuple_of(object type, tuple items)
cdef Py_ssize_t _number_scopes(
    list scopes, Py_ssize_t total, Py_ssize_t *off, Py_ssize_t *ids
) except -1


cdef class BlockIds:
    cdef object _blocks  # the blocks numbered (a weak reference to a page's lazy blocks)
    cdef readonly Py_ssize_t n  # how many
    cdef readonly Py_ssize_t first  # the first one's index (a slice's start; 0 on a whole page)
    cdef readonly list paths  # the distinct tag paths, first seen first
    cdef readonly list attrs  # the distinct attrs strings, first seen first
    cdef readonly Py_ssize_t n_elements  # distinct scope elements
    cdef Py_ssize_t *path_of  # block i's tag path: paths[path_of[i]]
    cdef Py_ssize_t *attr_of  # block i's attrs string: attrs[attr_of[i]]
    cdef Py_ssize_t *scope_off  # block i's scope elements: scope_ids[scope_off[i]:scope_off[i + 1]]
    cdef Py_ssize_t *scope_ids  # dense element numbers, aligned with Block.scope
    cdef public object block_words  # items.page_block_words' read-only array, once asked for
    # the columns (block i's fields, as the readers read them)
    cdef readonly list texts  # Block.text
    cdef readonly list tags  # the distinct tags: tag_of indexes it
    cdef readonly list sources  # the distinct sources: source_of indexes it
    cdef readonly list owns  # the distinct class/id tokens of scope elements: elem_own indexes it
    cdef int *tag_of  # Block.tag
    cdef int *depth_of  # Block.depth
    cdef long long *link_chars_of  # Block.link_chars
    cdef int *n_links_of  # Block.n_links
    cdef int *split_of  # Block.split as (id, part, total) a block; id -1: None
    cdef unsigned char *source_of  # Block.source
    cdef long long *elem_id  # a dense element's id (Block.scope's values)
    cdef int *elem_own  # a dense element's tokens (Block.scope_attrs' values)
    cdef object owner  # what holds the column arrays above (the walk's rows), if not this object
    cdef bint own_columns  # this object allocated the column arrays (and frees them)
    cdef dict lists  # the columns asked for as Python lists (column), by name

    cdef object _split(self, Py_ssize_t i)


cdef inline PyObject **_slot(object obj, Py_ssize_t offset) noexcept:
    return <PyObject **> ((<char *> <PyObject *> obj) + offset)


cdef inline object _field(object obj, Py_ssize_t offset):
    """The object in the slot at ``offset`` of ``obj`` (AttributeError when unset)."""
    cdef PyObject *v = _slot(obj, offset)[0]
    if v == NULL:
        raise AttributeError(f"{type(obj).__name__} slot at {offset} is not set")
    return <object> v


cdef inline void _put(object obj, Py_ssize_t offset, object value) noexcept:
    cdef PyObject **p = _slot(obj, offset)
    Py_INCREF(value)
    Py_XDECREF(p[0])
    p[0] = <PyObject *> value


cdef inline Py_ssize_t _id_slot(
    const long long *keys, const char *used, Py_ssize_t mask, long long key
) noexcept nogil:
    """The slot of ``key`` in an open-addressing table (its own, or the empty one it goes to)."""
    cdef unsigned long long h = <unsigned long long> key * 0x9E3779B97F4A7C15ULL
    cdef Py_ssize_t k = <Py_ssize_t> ((h >> 17) & <unsigned long long> mask)
    while used[k] and keys[k] != key:
        k = (k + 1) & mask
    return k


cdef inline void *_alloc(size_t size, bint zero) except NULL:
    cdef void *p = calloc(size if size else 1, 1) if zero else malloc(size if size else 1)
    if p == NULL:
        raise MemoryError()
    return p


cdef BlockIds _numbered_ids(
    object blocks, Py_ssize_t n, list paths, list attrs, Py_ssize_t *path_of,
    Py_ssize_t *attr_of, Py_ssize_t *scope_off, Py_ssize_t *scope_ids, Py_ssize_t n_elements,
)


cdef Py_ssize_t _first_seen(dict numbers, object key) except -1
