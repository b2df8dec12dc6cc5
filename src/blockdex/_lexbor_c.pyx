# cython: language_level=3
"""lexbor access shared by the compiled modules (declared in ``_lexbor_c.pxd``).

No Python module's rules: the lookup of lexbor's functions in selectolax's extension module
and the layout check (:func:`lexbor_ready`), and the node helpers that ``_parse_c``, ``_clean_c``,
``_segment_c`` and ``_units_c`` cimport (a tag name, an attribute, a text node's text, the text
below an element, tag kinds by lexbor tag id). Call any walk only when :func:`lexbor_ready` is
True (``blockdex.extensions.require`` checks it when blockdex is imported).
"""

cimport cython
from libc.stdint cimport uintptr_t
from libc.string cimport memset
from cpython.unicode cimport PyUnicode_DecodeUTF8
from posix.dlfcn cimport dlopen, dlsym, RTLD_NOW, RTLD_LOCAL

cdef int _ready = -1  # -1 unchecked, 0 unusable, 1 usable

_TAG_NAMES = {2: "-text", 3: "-document", 4: "-comment", 5: "-doctype"}


cdef str _decode(const unsigned char *data, size_t length):
    if data == NULL:
        return None
    return PyUnicode_DecodeUTF8(<const char *> data, length, "replace")


cdef str _tag(bd_node *node):
    """What ``LexborNode.tag`` gives for ``node``."""
    cdef size_t n = 0
    cdef const unsigned char *name
    found = _TAG_NAMES.get(node.local_name)
    if found is not None:
        return found
    if node.type != NODE_ELEMENT:
        return None
    name = _qualified_name(<void *> node, &n)
    return _decode(name, n) if name != NULL else None

cdef void *_find_attr(bd_node *node, bytes key):
    """The element's first attribute named ``key`` (ASCII case ignored), or NULL."""
    cdef size_t n = 0, k = len(key)
    cdef const unsigned char *ckey = key
    cdef const unsigned char *name
    cdef void *attr = _attr_first(<void *> node)
    while attr != NULL:
        name = _attr_qname(attr, &n)
        if name != NULL and n == k and _ascii_ieq(ckey, name, k):
            return attr
        attr = _attr_next(attr)
    return NULL


cdef str _attr(bd_node *node, bytes key):
    """What ``LexborNode.attrs.get(key)`` gives for an element (same lookup as selectolax's)."""
    cdef size_t n = 0
    cdef const unsigned char *value
    cdef void *attr = _find_attr(node, key)
    if attr == NULL:
        return None
    value = _attr_value(attr, &n)
    return _decode(value, n) if value != NULL else None

cdef str _text(bd_node *node):
    """What ``LexborNode.text_content`` gives for a text node."""
    cdef bd_chardata *ch = <bd_chardata *> node
    if node.type != NODE_TEXT:
        return None
    return _decode(ch.data.data, ch.data.length)

def lexbor_ready():
    """True when the walk can read selectolax's lexbor tree (checked once per process)."""
    global _ready, _qualified_name, _attr_first, _attr_next, _attr_qname, _attr_value
    global _node_remove
    if _ready >= 0:
        return _ready == 1
    _ready = 0
    try:
        import selectolax.lexbor as sl
        from selectolax.lexbor import LexborHTMLParser
    except ImportError:
        return False
    handle = dlopen(sl.__file__.encode(), RTLD_NOW | RTLD_LOCAL)
    if handle == NULL:
        return False
    _qualified_name = <bd_qname_f> dlsym(handle, b"lxb_dom_element_qualified_name")
    _attr_first = <bd_attr_first_f> dlsym(handle, b"lxb_dom_element_first_attribute_noi")
    _attr_next = <bd_attr_next_f> dlsym(handle, b"lxb_dom_element_next_attribute_noi")
    _attr_qname = <bd_attr_str_f> dlsym(handle, b"lxb_dom_attr_qualified_name")
    _attr_value = <bd_attr_str_f> dlsym(handle, b"lxb_dom_attr_value_noi")
    _node_remove = <bd_remove_f> dlsym(handle, b"lxb_dom_node_remove")  # noise_drop's; optional
    if (_qualified_name == NULL or _attr_first == NULL or _attr_next == NULL
            or _attr_qname == NULL or _attr_value == NULL):
        return False
    # The layout check: every node of a small page, read both ways.
    tree = LexborHTMLParser(
        '<div class="a b" id=x>t\u00e9xt<!-- c --><my-el data-k="v">y</my-el><p>z</p></div>'
    )
    todo = [tree.root]
    while todo:
        py = todo.pop()
        c = <bd_node *> <uintptr_t> py.mem_id
        kids = []
        child = py.child
        while child is not None:
            kids.append(child)
            child = child.next
        ckid = c.first_child
        for k in kids:
            if ckid == NULL or <uintptr_t> ckid != <uintptr_t> k.mem_id:
                return False
            if ckid.parent != c:
                return False
            ckid = ckid.next
        if ckid != NULL or _tag(c) != py.tag:
            return False
        if py.tag == "-text" and _text(c) != py.text_content:
            return False
        if c.type == NODE_ELEMENT:
            for key in ("class", "id", "data-k", "missing"):
                if _attr(c, key.encode()) != py.attrs.get(key):
                    return False
        todo.extend(kids)
    _ready = 1
    return True

@cython.final
cdef class _TagKinds:
    """An element's kind by its lower-cased tag name (``kinds``; 0 for other names), looked up
    once per lexbor tag id (elements with a prefix or a large id: every time). ``names``, when
    given, collects every name looked up."""

    def __cinit__(self, dict kinds, set names=None):
        memset(self.state, 0, SMALL_TAG_IDS)
        self.kinds = kinds
        self.names = names

    cdef int of(self, bd_node *node) except -1:
        cdef int kind
        if node.prefix == 0 and node.local_name < SMALL_TAG_IDS:
            kind = self.state[node.local_name]
            if kind:
                return kind - 1
            kind = self.lookup(node)
            self.state[node.local_name] = kind + 1
            return kind
        return self.lookup(node)

    cdef int lookup(self, bd_node *node) except -1:
        name = _tag(node)
        if name is None:
            return 0
        name = name.lower()
        if self.names is not None:
            self.names.add(name)
        return self.kinds.get(name, 0)


cdef Py_ssize_t _text_nodes(bd_node *top, size_t *total, bd_chardata **last) noexcept:
    """How many text nodes with text lie below ``top``; ``total`` gets their UTF-8 bytes and
    ``last`` the last of them (NULL when none)."""
    cdef bd_node *n = _following(top, top)
    cdef Py_ssize_t parts = 0
    total[0] = 0
    last[0] = NULL
    while n != NULL:
        if n.type == NODE_TEXT and (<bd_chardata *> n).data.data != NULL:
            total[0] += (<bd_chardata *> n).data.length
            last[0] = <bd_chardata *> n
            parts += 1
        n = _following(n, top)
    return parts

cdef unsigned int _all_needles(tuple groups) noexcept:
    """The mask with a bit for each of ``groups`` (at most 32)."""
    cdef Py_ssize_t k = len(groups)
    return 0xFFFFFFFFu >> (32 - k) if 0 < k <= 32 else 0

cdef unsigned int _needle_mask(const unsigned char *data, size_t n, tuple groups) except? 0:
    """Bit ``g`` set when one of the needles of ``groups[g]`` (a tuple of bytes; at most 32
    groups) occurs in the ``n`` bytes at ``data``: one ``memmem`` a needle, until one of the
    group is found."""
    cdef unsigned int mask = 0
    cdef Py_ssize_t g
    cdef bytes needle
    if len(groups) > 32:
        raise ValueError("at most 32 groups of needles")
    for g in range(len(groups)):
        for needle in <tuple> groups[g]:
            if memmem(data, n, <const char *> needle, len(needle)) != NULL:
                mask |= 1u << g
                break
    return mask

cdef str _deep_text(bd_node *top):
    """What ``LexborNode.text(deep=True)`` gives for the element ``top``: its descendant text
    nodes' text, concatenated."""
    cdef bd_node *n
    cdef bd_chardata *ch
    cdef bd_chardata *only
    cdef size_t total
    cdef Py_ssize_t parts = _text_nodes(top, &total, &only)
    if parts == 0:
        return ""
    if parts == 1:  # the usual script: one text node, decoded in place
        return _decode(only.data.data, only.data.length)
    chunks = []
    n = _following(top, top)
    while n != NULL:
        ch = <bd_chardata *> n
        if n.type == NODE_TEXT and ch.data.data != NULL:
            chunks.append((<const char *> ch.data.data)[: ch.data.length])
        n = _following(n, top)
    data = b"".join(chunks)
    return _decode(<const unsigned char *> <const char *> data, len(data))
