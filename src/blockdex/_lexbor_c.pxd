# cython: language_level=3
"""lexbor's tree as the compiled modules read it (declarations of ``blockdex._lexbor_c``).

selectolax parses with lexbor and exposes each node's address (``LexborNode.mem_id``). The
compiled walks read lexbor's nodes directly: the node and character-data layouts are lexbor's
public structs (as selectolax's own lexbor.pxd declares them), and names and attributes come from
lexbor functions that selectolax's extension module exports, looked up once with dlsym by
``blockdex._lexbor_c.lexbor_ready()``, which also checks the layout against selectolax on a small
page. Every walk over lexbor's nodes may run only after it returned True.
"""

cimport cython
from libc.stdint cimport uintptr_t

cdef extern from *:
    """
    typedef struct bd_node_s bd_node;
    struct bd_node_s {
        void *events;
        uintptr_t local_name;
        uintptr_t prefix;
        uintptr_t ns;
        void *owner_document;
        bd_node *next;
        bd_node *prev;
        bd_node *parent;
        bd_node *first_child;
        bd_node *last_child;
        void *user;
        int type;
    };
    typedef bd_node bd_node_ns;
    typedef struct { const unsigned char *data; size_t length; } bd_str;
    typedef struct { bd_node node; bd_str data; } bd_chardata;
    typedef const unsigned char *(*bd_qname_f)(void *element, size_t *len);
    typedef void *(*bd_attr_first_f)(void *element);
    typedef void *(*bd_attr_next_f)(void *attr);
    typedef const unsigned char *(*bd_attr_str_f)(void *attr, size_t *len);
    """
    ctypedef struct bd_node:
        uintptr_t local_name
        uintptr_t prefix
        bd_node *next
        bd_node *prev
        bd_node *parent
        bd_node *first_child
        int type
    ctypedef struct bd_node_ns:
        uintptr_t ns
    ctypedef struct bd_str:
        const unsigned char *data
        size_t length
    ctypedef struct bd_chardata:
        bd_str data
    ctypedef const unsigned char *(*bd_qname_f)(void *element, size_t *len) noexcept nogil
    ctypedef void *(*bd_attr_first_f)(void *element) noexcept nogil
    ctypedef void *(*bd_attr_next_f)(void *attr) noexcept nogil
    ctypedef const unsigned char *(*bd_attr_str_f)(void *attr, size_t *len) noexcept nogil

cdef extern from "string.h":
    void *memmem(const void *haystack, size_t haystack_len, const void *needle, size_t needle_len) nogil

ctypedef void (*bd_remove_f)(void *node) noexcept nogil

# lexbor's functions, looked up by lexbor_ready() (NULL before; _node_remove may stay NULL)
cdef bd_qname_f _qualified_name
cdef bd_attr_first_f _attr_first
cdef bd_attr_next_f _attr_next
cdef bd_attr_str_f _attr_qname
cdef bd_attr_str_f _attr_value
cdef bd_remove_f _node_remove

cdef enum:
    NODE_ELEMENT = 1
    NODE_TEXT = 3
    TAG_TEXT = 2

cdef enum:
    SMALL_TAG_IDS = 1024

cdef str _decode(const unsigned char *data, size_t length)
cdef str _tag(bd_node *node)
cdef void *_find_attr(bd_node *node, bytes key)
cdef str _attr(bd_node *node, bytes key)
cdef str _text(bd_node *node)
cdef Py_ssize_t _text_nodes(bd_node *top, size_t *total, bd_chardata **last) noexcept
cdef unsigned int _all_needles(tuple groups) noexcept
cdef unsigned int _needle_mask(const unsigned char *data, size_t n, tuple groups) except? 0
cdef str _deep_text(bd_node *top)


cdef inline bint _ascii_ieq(const unsigned char *a, const unsigned char *b, size_t n) noexcept:
    cdef size_t i
    cdef unsigned char x, y
    for i in range(n):
        x = a[i]
        y = b[i]
        if 65 <= x <= 90:
            x += 32
        if 65 <= y <= 90:
            y += 32
        if x != y:
            return False
    return True


cdef inline bd_node *_after(bd_node *node, bd_node *root) noexcept:
    """The node after ``node``'s subtree in document order inside ``root``'s, or NULL."""
    while node != NULL and node != root:
        if node.next != NULL:
            return node.next
        node = node.parent
    return NULL


cdef inline bd_node *_following(bd_node *node, bd_node *root) noexcept:
    """The node after ``node`` in document order inside ``root``'s subtree, or NULL."""
    if node.first_child != NULL:
        return node.first_child
    return _after(node, root)


@cython.final
cdef class _TagKinds:
    cdef unsigned char state[SMALL_TAG_IDS]  # kind + 1 by tag id; 0: not looked up yet
    cdef dict kinds
    cdef set names

    cdef inline int of(self, bd_node *node) except -1
    cdef int lookup(self, bd_node *node) except -1
