# cython: language_level=3
"""Compiled twins of blockdex's two hottest loops (optional; built by ``pip install``).

* :func:`forest_raw` — the content model's tree evaluation (``blockdex.predict.content.Forest``).

Each function gives what its pure-Python twin gives (tests compare the two); blockdex uses the
Python code when this module was not built. ``BLOCKDEX_PURE_PYTHON=1`` forces the Python code.
"""

cimport cython


cdef extern from *:
    """
    typedef struct { float threshold; unsigned short feature; unsigned short right; } bd_tree_node;

    /* Sixteen rows at a time: their walks are independent, so the CPU overlaps the loads that
       one walk alone would wait for in turn (~2x faster than row by row; 16 measured 13% faster
       than 8, 32 no faster than 16). Trees are in preorder: the left child (x <= threshold) is
       the next node, the right one ``right`` nodes on; a leaf has right = 0 and a NaN
       threshold, so it keeps the walk. 8-byte nodes and float32 leaf values: a third of the
       memory of 16-byte nodes with float64 values, which other work between pages evicts. */
    /* Add tree ``root``'s leaf value for rows i .. i + k - 1 to ``out``. */
    static inline void bd_forest_group(const float *X, Py_ssize_t i, int k, Py_ssize_t stride,
                                       const bd_tree_node *nodes, const float *value, int root,
                                       int depth, double *out) {
        int node[16];
        const float *row[16];
        for (int j = 0; j < k; j++) { node[j] = root; row[j] = X + (i + j) * stride; }
        for (int level = 0; level < depth; level++)
            for (int j = 0; j < k; j++) {
                const bd_tree_node *p = nodes + node[j];
                /* branch-free (a mispredicted branch per node would cost more than the walk):
                   all ones when the row goes left */
                int left = -(int) (row[j][p->feature] <= p->threshold);
                node[j] += (left & 1) | (~left & (int) p->right);
            }
        for (int j = 0; j < k; j++) out[i + j] += (double) value[node[j]];
    }

    static void bd_forest_raw(const float *X, Py_ssize_t n, Py_ssize_t stride,
                              const bd_tree_node *nodes, const float *value, const int *roots,
                              Py_ssize_t n_trees, int depth, double *out) {
        for (Py_ssize_t t = 0; t < n_trees; t++) {
            Py_ssize_t i = 0;
            if (t + 1 < n_trees) {
                /* the next tree's nodes, which other work between pages has likely pushed out
                   of the caches: fetched while this tree is walked, not level by level */
                const char *a = (const char *) (nodes + roots[t + 1]);
                const char *b = t + 2 < n_trees ? (const char *) (nodes + roots[t + 2]) : a + 64;
                for (; a < b; a += 64) __builtin_prefetch(a);
                a = (const char *) (value + roots[t + 1]);  /* and its leaf values */
                b = t + 2 < n_trees ? (const char *) (value + roots[t + 2]) : a + 64;
                for (; a < b; a += 64) __builtin_prefetch(a);
            }
            for (; i + 16 <= n; i += 16)  /* k a constant 16 here: the compiler unrolls */
                bd_forest_group(X, i, 16, stride, nodes, value, roots[t], depth, out);
            if (i < n)  /* the last rows, fewer than 16: walked together too */
                bd_forest_group(X, i, (int) (n - i), stride, nodes, value, roots[t], depth, out);
        }
    }
    """
    void bd_forest_raw(const float *X, Py_ssize_t n, Py_ssize_t stride, const void *nodes,
                       const float *value, const int *roots, Py_ssize_t n_trees, int depth,
                       double *out) nogil

FOREST_NODE_BYTES = 8  # float threshold, uint16 feature, uint16 offset to the right child


@cython.boundscheck(False)
@cython.wraparound(False)
def forest_raw(
    const float[:, ::1] X,
    const unsigned char[::1] nodes,
    const float[::1] value,
    const int[::1] roots,
    int depth,
    double[::1] out,
):
    """Add each tree's leaf value for each row of ``X`` to ``out`` (trees in order).

    ``nodes`` holds 8 bytes a node, trees in preorder (see ``blockdex.predict.content.Forest``):
    the float32 threshold, the feature (uint16) and the offset to the right child (uint16; 0 in
    a leaf, whose threshold is NaN). ``value`` holds each node's float32 leaf value. Every tree
    is walked exactly ``depth`` steps. The caller checks that features, offsets and roots are in
    range (``Forest._pack`` builds them from a checked model; ``Forest.raw`` checks the rows).
    """
    cdef Py_ssize_t n = X.shape[0], n_nodes = value.shape[0]
    if out.shape[0] != n or n_nodes * FOREST_NODE_BYTES != nodes.shape[0]:
        raise ValueError("arrays of the wrong length")
    if n == 0 or roots.shape[0] == 0:
        return
    with nogil:
        bd_forest_raw(&X[0, 0], n, X.shape[1], &nodes[0], &value[0], &roots[0], roots.shape[0],
                      depth, &out[0])


# -- the segmentation walk over lexbor's tree -----------------------------------------------------
#
# selectolax parses with lexbor and exposes each node's address (``LexborNode.mem_id``). The walk
# below reads lexbor's nodes directly: the node and character-data layouts are lexbor's public
# structs (as selectolax's own lexbor.pxd declares them), and names and attributes come from
# lexbor functions that selectolax's extension module exports, looked up once with dlsym.
# ``lexbor_ready()`` checks the layout against selectolax on a small page before the walk is used.

from libc.stdint cimport uintptr_t
from posix.dlfcn cimport dlopen, dlsym, RTLD_NOW, RTLD_LOCAL
from cpython.unicode cimport PyUnicode_DecodeUTF8
import html as _html_lib
import time as _time

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

cdef bd_qname_f _qualified_name = NULL
cdef bd_attr_first_f _attr_first = NULL
cdef bd_attr_next_f _attr_next = NULL
cdef bd_attr_str_f _attr_qname = NULL
cdef bd_attr_str_f _attr_value = NULL
ctypedef void (*bd_remove_f)(void *node) noexcept nogil
cdef bd_remove_f _node_remove = NULL
cdef int _ready = -1  # -1 unchecked, 0 unusable, 1 usable

cdef enum:
    NODE_ELEMENT = 1
    NODE_TEXT = 3
    TAG_TEXT = 2

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


cdef int MAX_SPAN = 50  # blockdex.segment.MAX_SPAN


cdef int _cell_span(str value):
    """``blockdex.segment.cell_span``."""
    cdef Py_ssize_t i = 0, n, start
    cdef long v = 0
    if not value:
        return 1
    n = len(value)
    while i < n and value[i] in " \t\n\f\r":
        i += 1
    start = i
    while i < n and i - start < 6 and "0" <= value[i] <= "9":
        v = v * 10 + (ord(value[i]) - 48)
        i += 1
    if i == start:
        return 1
    if v < 1:
        return 1
    return MAX_SPAN if v > MAX_SPAN else <int> v


cdef str _cell_open(str tag, str colspan, str rowspan):
    """``blockdex.segment.cell_open``."""
    cdef int c = _cell_span(colspan), r = _cell_span(rowspan)
    if c == 1 and r == 1:
        return f"<{tag}>"
    return f"<{tag}{f' colspan={c}' if c > 1 else ''}{f' rowspan={r}' if r > 1 else ''}>"


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


cdef extern from *:
    """
    #define bd_prefetch(p) __builtin_prefetch((const void *) (p))
    """
    void _prefetch "bd_prefetch"(const void *p) noexcept nogil


cdef inline bd_node *_following(bd_node *node, bd_node *root) noexcept:
    """The node after ``node`` in document order inside ``root``'s subtree, or NULL."""
    if node.first_child != NULL:
        return node.first_child
    while node != NULL and node != root:
        if node.next != NULL:
            return node.next
        node = node.parent
    return NULL


cdef enum:
    SMALL_TAG_IDS = 1024

cdef enum:
    MODE_FLOW = 0
    MODE_PRE = 1
    MODE_ROW = 2
    MODE_GRID = 3  # a grid row (segment.NESTED_TABLE_TAGS): stays in its cells' chains
    MODE_CELL = 4  # a grid row's cell: stays in its children's chains
    EXIT_NONE = 0
    EXIT_FRAME = 1
    EXIT_CELL = 2
    EXIT_TABLE = 3
    EXIT_KEPT = 4
    EXIT_LINK = 5
    EXIT_HREF = 6

cdef enum:  # what the walk does with an element, by its tag (see _CWalker.code_of)
    TAG_KIND = 15
    TAG_BLOCK = 1
    TAG_FIGCAPTION = 2
    TAG_TABLE = 3
    TAG_TR = 4
    TAG_BR = 5
    TAG_IMG = 6
    TAG_KEPT = 7
    TAG_A = 8
    TAG_SKIP = 9
    TAG_CELL = 16
    TAG_PRE = 32

cdef object _C = None  # blockdex.segment's tables, read on first use (it imports this module)
cdef Py_ssize_t _SQUASH_WINDOW = 1 << 18  # longer texts: segment._squash_ws (windowed)


cdef inline bint _ascii_blank(bd_node *node) noexcept:
    """Whether a text node holds only ASCII whitespace (``str.split``'s, at least one
    character)."""
    cdef bd_chardata *ch = <bd_chardata *> node
    cdef size_t i
    if node.type != NODE_TEXT or ch.data.data == NULL or ch.data.length == 0:
        return False
    for i in range(ch.data.length):
        if not _ascii_space(ch.data.data[i]):
            return False
    return True


cdef _consts():
    global _C
    if _C is None:
        import importlib

        _C = importlib.import_module("blockdex.segment")
    return _C


cdef str _escape(str s):
    if "<" in s or ">" in s or "&" in s:
        return _html_lib.escape(s, quote=False)
    return s


cdef str _own_attr_tokens(bd_node *node):
    """Lower-cased class, id, role and itemprop values of an element (as segment.py), read in
    one pass over its attributes."""
    cdef const unsigned char *vals[4]
    cdef size_t lens[4]
    cdef size_t n = 0
    cdef const unsigned char *name
    cdef int k
    cdef void *attr = _attr_first(<void *> node)
    vals[0] = vals[1] = vals[2] = vals[3] = NULL
    while attr != NULL:
        name = _attr_qname(attr, &n)
        k = -1
        if name != NULL:
            if n == 5 and _ascii_ieq(<const unsigned char *> b"class", name, 5):
                k = 0
            elif n == 2 and _ascii_ieq(<const unsigned char *> b"id", name, 2):
                k = 1
            elif n == 4 and _ascii_ieq(<const unsigned char *> b"role", name, 4):
                k = 2
            elif n == 8 and _ascii_ieq(<const unsigned char *> b"itemprop", name, 8):
                k = 3
        if k >= 0 and vals[k] == NULL:  # the first such attribute, as _attr finds
            vals[k] = _attr_value(attr, &lens[k])
            if vals[k] == NULL:
                vals[k] = <const unsigned char *> b""  # no value: as None, skipped below
                lens[k] = 0
        attr = _attr_next(attr)
    parts = []
    for k in range(4):
        if vals[k] != NULL and lens[k]:
            parts.append(_decode(vals[k], lens[k]))
    if not parts:
        return ""
    joined = " ".join(parts) if len(parts) > 1 else parts[0]
    return joined[:200].lower()


cdef str _path_append(str parent, Py_ssize_t m, str tag, Py_ssize_t max_levels, Py_ssize_t *levels):
    """``">".join((*parent_tags[1 - max_levels :], tag))`` for the ``m`` tags ``parent`` joins
    (tag names hold no ``>``); sets ``levels`` to the number of tags joined."""
    cdef Py_ssize_t start = 1 - max_levels, first, k, pos = -1
    if start < 0:  # the slice keeps the last max_levels - 1 tags
        first = m + start if m + start > 0 else 0
    else:
        first = start if start < m else m
    levels[0] = m - first + 1
    if first == 0:
        return parent + ">" + tag
    if first == m:
        return tag
    for k in range(first):
        pos = parent.find(">", pos + 1)
    return parent[pos + 1 :] + ">" + tag


cdef extern from *:
    """
    /* t[start:stop] + (item,), 0 <= start <= stop <= len(t): no temporary list */
    static PyObject *bd_tuple_plus(PyObject *t, Py_ssize_t start, Py_ssize_t stop,
                                   PyObject *item) {
        PyObject *out = PyTuple_New(stop - start + 1);
        if (out == NULL)
            return NULL;
        for (Py_ssize_t k = start; k < stop; k++) {
            PyObject *v = PyTuple_GET_ITEM(t, k);
            Py_INCREF(v);
            PyTuple_SET_ITEM(out, k - start, v);
        }
        Py_INCREF(item);
        PyTuple_SET_ITEM(out, stop - start, item);
        return out;
    }
    """
    tuple bd_tuple_plus(tuple t, Py_ssize_t start, Py_ssize_t stop, object item)


cdef inline tuple _tail_plus(tuple t, Py_ssize_t start, object item):
    """``(*t[start:], item)`` (``start`` as a Python slice bound, negative from the end)."""
    cdef Py_ssize_t n = len(t)
    if start < 0:
        start += n
        if start < 0:
            start = 0
    elif start > n:
        start = n
    return bd_tuple_plus(t, start, n, item)


@cython.trashcan(True)  # a deep chain of parent frames is freed without deep C recursion
@cython.no_gc  # holds strings, tuples of strings and ints, lists of strings and its parent: no cycle
cdef class _CFrame:
    cdef str tag
    cdef tuple chain, scope
    cdef str own  # the element's class/id/role/itemprop tokens (None: not read yet)
    cdef tuple scope_own  # scope_attrs' value (None: not computed yet)
    cdef str joined  # attrs_joined's value (None: not computed yet)
    cdef str path  # the tag path, '>'-joined (at most max_path_levels tags)
    cdef Py_ssize_t path_levels  # how many tags it joins
    cdef int mode
    cdef list html, text, inline_stack
    cdef Py_ssize_t link_chars, n_links
    cdef bd_node *node
    cdef _CFrame parent

    cdef str attrs_joined(self, int levels):
        """``segment._Frame.ancestry``'s class/id string: the non-empty own tokens of this frame
        and its nearest ancestors, outermost first, joined with `` | ``. As there, the frames
        are the last ``levels`` of the chain (every one at ``levels`` 1, only this one below
        1); tokens are read once per frame, when first needed."""
        cdef _CFrame f = self
        cdef Py_ssize_t k = 0, limit = levels if levels >= 2 else (-1 if levels == 1 else 1)
        if self.joined is None:
            parts = []
            while f is not None and k != limit:
                if f.own_tokens():
                    parts.append(f.own)
                f = f.parent
                k += 1
            if not parts:
                self.joined = ""
            elif len(parts) == 1:
                self.joined = parts[0]
            else:
                parts.reverse()
                self.joined = " | ".join(parts)
        return self.joined

    cdef inline str own_tokens(self):
        """The element's class/id tokens, read once (``segment._Frame.own``)."""
        if self.own is None:
            self.own = _own_attr_tokens(self.node)
        return self.own

    cdef tuple scope_attrs(self, Py_ssize_t levels):
        """``segment._Frame.scope_attrs``: the own tokens of the ``scope`` elements, built as
        ``scope`` is (``levels``: the path levels), once per frame; iterative."""
        cdef _CFrame f = self, g
        cdef tuple base
        cdef Py_ssize_t k
        if self.scope_own is None:
            todo = []
            while f is not None and f.scope_own is None:
                todo.append(f)
                f = f.parent
            base = f.scope_own if f is not None else None
            for k in range(len(todo) - 1, -1, -1):
                g = <_CFrame> todo[k]
                base = (g.own_tokens(),) if base is None else _tail_plus(
                    base, 1 - levels, g.own_tokens()
                )
                g.scope_own = base
        return self.scope_own

    cdef void reset_run(self):
        self.html = [f"<{t}>" for t in self.inline_stack] if self.inline_stack else []
        self.text = []
        self.link_chars = 0
        self.n_links = 0


cdef class _CWalker:
    cdef object block_cls, deadline
    cdef str source
    cdef long long id_offset
    cdef public list out
    cdef list frames, exit_tags, table_ids
    cdef unsigned char *exit_kinds  # a stack: what leaving each open element does
    cdef Py_ssize_t n_exits, exit_room
    cdef set absorbed
    cdef dict names
    cdef list small_names  # tag name by lexbor tag id, for ids below SMALL_TAG_IDS in small_ns
    cdef int small_codes[SMALL_TAG_IDS]  # the tag's TAG_* code by the same ids (-1: not yet)
    cdef dict codes  # the TAG_* code of other tags, by name
    cdef uintptr_t small_ns
    cdef Py_ssize_t link_depth, depth, max_blocks, check_every
    cdef int max_attr_levels, max_path_levels, max_caption_chars, max_figure_levels
    cdef public bint timed_out
    cdef frozenset block_tags, structural_tags, cell_tags, pre_tags, row_inner_tags
    cdef frozenset nested_table_tags
    cdef dict kept_inline
    cdef object lang_re, link_open
    cdef str link_base, base

    def __init__(self, cfg, str source, long long id_offset, deadline, block_cls,
                 str base=""):
        c = _consts()
        self.base = base
        self.link_base = base if cfg.links else None
        self.link_open = c.link_open
        _load_block_offsets(block_cls)
        self.block_cls = block_cls
        self.deadline = deadline
        self.source = source
        self.id_offset = id_offset
        self.out = []
        self.frames = []
        self.exit_tags = []  # the tag of each open EXIT_CELL and EXIT_KEPT element
        self.table_ids = []
        self.absorbed = set()
        self.names = {}
        self.small_names = [None] * SMALL_TAG_IDS
        memset(self.small_codes, 0xFF, sizeof(self.small_codes))
        self.codes = {}
        self.small_ns = <uintptr_t> -1  # set from the walk's root element
        self.link_depth = 0
        self.depth = 0
        self.timed_out = False
        self.max_blocks = cfg.max_blocks
        self.check_every = cfg.check_time_every
        self.max_attr_levels = cfg.max_attr_levels
        self.max_path_levels = cfg.max_path_levels
        self.max_caption_chars = cfg.max_caption_chars
        self.max_figure_levels = cfg.max_figure_levels
        self.block_tags = c.BLOCK_TAGS
        self.structural_tags = c.STRUCTURAL_TAGS
        self.cell_tags = c.CELL_TAGS
        self.pre_tags = c._PRE_TAGS
        self.row_inner_tags = c.ROW_INNER_TAGS
        self.nested_table_tags = c.NESTED_TABLE_TAGS
        self.kept_inline = c.KEPT_INLINE
        self.lang_re = c._LANG_RE

    cdef str tag_of(self, bd_node *node):
        cdef uintptr_t key
        cdef str t
        if node.type == NODE_ELEMENT and node.prefix == 0:
            if node.local_name < SMALL_TAG_IDS and (<bd_node_ns *> node).ns == self.small_ns:
                # lexbor's own tag ids are small: a list slot instead of a dict lookup
                t = self.small_names[<Py_ssize_t> node.local_name]
                if t is None:
                    t = _tag(node)
                    self.small_names[<Py_ssize_t> node.local_name] = t
                return t
            key = node.local_name ^ ((<bd_node_ns *> node).ns << 56)
            t = self.names.get(key)
            if t is None:
                t = _tag(node)
                self.names[key] = t
            return t
        return _tag(node)

    cdef int code_of(self, str tag) except -1:
        """What ``enter`` does with an element named ``tag``: TAG_SKIP, or TAG_CELL (a cell
        tag) and TAG_PRE (a block tag among the pre tags) plus one of TAG_BLOCK, TAG_FIGCAPTION,
        TAG_TABLE, TAG_TR (block tags), TAG_BR, TAG_IMG, TAG_KEPT, TAG_A or 0."""
        cdef int code
        if tag is None or tag[0] in "-_!#":
            return TAG_SKIP
        code = TAG_CELL if tag in self.cell_tags else 0
        if tag in self.block_tags:
            code |= TAG_PRE if tag in self.pre_tags else 0
            if tag == "figcaption":
                return code | TAG_FIGCAPTION
            if tag == "table":
                return code | TAG_TABLE
            if tag == "tr":
                return code | TAG_TR
            return code | TAG_BLOCK
        if tag == "br":
            return code | TAG_BR
        if tag == "img":
            return code | TAG_IMG
        if tag in self.kept_inline:
            return code | TAG_KEPT
        if tag == "a":
            return code | TAG_A
        return code

    cdef str tag_and_code(self, bd_node *node, int *code):
        """:meth:`tag_of` and the tag's :meth:`code_of`, worked out once per tag id (small ids)
        or per name."""
        cdef str t = self.tag_of(node)
        cdef int c
        if (node.type == NODE_ELEMENT and node.prefix == 0 and node.local_name < SMALL_TAG_IDS
                and (<bd_node_ns *> node).ns == self.small_ns):
            c = self.small_codes[<Py_ssize_t> node.local_name]
            if c < 0:
                c = self.small_codes[<Py_ssize_t> node.local_name] = self.code_of(t)
            code[0] = c
            return t
        v = self.codes.get(t)
        if v is None:
            v = self.codes[t] = self.code_of(t)
        code[0] = v
        return t

    cdef long long node_id(self, bd_node *node):
        return <long long> <uintptr_t> node - self.id_offset

    # -- emitting ----------------------------------------------------------------------------
    cdef object new_block(
        self, str tag, str html, str text, tuple chain, str path, str attrs, Py_ssize_t depth,
        Py_ssize_t link_chars, Py_ssize_t n_links, tuple attributes, str source, tuple scope,
        tuple scope_attrs,
    ):
        """A ``Block`` with every field but ``index`` set (split None): the numbering sets the
        index (:func:`number_run`) or builds new blocks from it (a long block is split)."""
        cdef type cls = self.block_cls
        obj = cls.__new__(cls)
        _put(obj, _block_off[1], tag)
        _put(obj, _block_off[2], html)
        _put(obj, _block_off[3], text)
        _put(obj, _block_off[4], chain)
        _put(obj, _block_off[5], path)
        _put(obj, _block_off[6], attrs)
        _put(obj, _block_off[7], depth)
        _put(obj, _block_off[8], link_chars)
        _put(obj, _block_off[9], n_links)
        _put(obj, _block_off[10], None)
        _put(obj, _block_off[11], source)
        _put(obj, _block_off[12], attributes)
        _put(obj, _block_off[13], scope)
        _put(obj, _block_off[14], scope_attrs)
        return obj

    cdef void flush(self, _CFrame frame) except *:
        cdef bint has_text
        if not frame.text:
            if frame.html:
                frame.reset_run()
            return
        text_raw = "".join(frame.text)
        if frame.mode == MODE_PRE:
            text = text_raw.strip("\n")
            has_text = bool(text.strip())
        else:
            text = _squash(text_raw)
            has_text = bool(text)
        if has_text:
            for t in reversed(frame.inline_stack):
                frame.html.append(f"</{t}>")
            html = "".join(frame.html)
            if frame.mode != MODE_PRE:
                html = _squash(html)
            path = frame.path
            attrs = frame.attrs_joined(self.max_attr_levels)
            self.out.append(
                self.new_block(
                    frame.tag,
                    html,
                    text,
                    frame.chain,
                    path,
                    attrs,
                    self.depth,
                    frame.link_chars,
                    frame.n_links,
                    (),
                    self.source,
                    frame.scope,
                    frame.scope_attrs(self.max_path_levels),
                )
            )
        frame.reset_run()

    cdef str figcaption(self, bd_node *node):
        cdef bd_node *figure = node.parent
        cdef bd_node *cap
        cdef bd_node *n
        cdef int i
        for i in range(self.max_figure_levels):
            if figure == NULL or self.tag_of(figure) == "figure":
                break
            figure = figure.parent
        if figure == NULL or self.tag_of(figure) != "figure":
            return ""
        cap = _following(figure, figure)
        while cap != NULL and not (cap.type == NODE_ELEMENT and self.tag_of(cap) == "figcaption"):
            cap = _following(cap, figure)
        if cap == NULL or <uintptr_t> cap in self.absorbed:
            return ""
        self.absorbed.add(<uintptr_t> cap)
        parts = []
        n = _following(cap, cap)
        while n != NULL:
            if n.local_name == TAG_TEXT:
                s = _text(n)
                if s is not None:
                    parts.append(s)
            n = _following(n, cap)
        return " ".join(" ".join(parts).split())

    cdef void image(self, bd_node *node) except *:
        cdef _CFrame parent
        cdef bd_node *up
        cdef bd_node *sib
        cdef bint from_figure
        caption = (_attr(node, b"alt") or _attr(node, b"title") or "").strip()
        if not self.frames:
            return
        from_figure = not caption
        if from_figure:
            caption = self.figcaption(node)
        if not caption:
            return
        caption = _squash(caption)[: self.max_caption_chars]  # caption is stripped
        c = _consts()
        sources = []
        up = node.parent
        if up != NULL and self.tag_of(up) == "picture":
            sib = up.first_child
            while sib != NULL:
                if sib.type == NODE_ELEMENT and self.tag_of(sib) == "source":
                    sources.append(_attr(sib, b"srcset") or _attr(sib, b"data-srcset") or "")
                sib = sib.next
        src = c.image_source(
            {k: _attr(node, k.encode()) for k in c.IMAGE_ATTRIBUTES}, sources, self.base
        )
        if src is None:
            return
        parent = self.frames[-1]
        self.flush(parent)
        node_id = self.node_id(node)
        path = parent.path
        ancestor_attrs = parent.attrs_joined(self.max_attr_levels)
        self.out.append(
            self.new_block(
                "img",
                _html_lib.escape(f"image: {src}, caption: {caption}", quote=False),
                caption,
                _tail_plus(parent.chain, 0, ("img", node_id)),
                f"{path}>img",
                ancestor_attrs,
                self.depth + 1,
                len(caption) if self.link_depth else 0,
                1 if self.link_depth else 0,
                c._image_attributes(src, caption, from_figure),
                self.source,
                _tail_plus(parent.scope, 1 - self.max_path_levels, node_id),
                _tail_plus(
                    parent.scope_attrs(self.max_path_levels), 1 - self.max_path_levels,
                    _own_attr_tokens(node),
                ),
            )
        )

    cdef void push_frame(self, bd_node *node, str tag, int mode) except *:
        cdef _CFrame parent = self.frames[-1] if self.frames else None
        cdef Py_ssize_t levels, keep
        cdef str path
        cdef tuple chain, scope
        cdef _CFrame frame = _CFrame.__new__(_CFrame)
        node_id = self.node_id(node)
        if parent is not None:
            self.flush(parent)
            chain = parent.chain
            path = _path_append(parent.path, parent.path_levels, tag, self.max_path_levels, &levels)
            scope = _tail_plus(parent.scope, 1 - self.max_path_levels, node_id)
            keep = len(chain)  # the parent's chain, without its own element if not structural
            if (keep and (<tuple> chain[keep - 1])[0] not in self.structural_tags
                    and parent.mode != MODE_GRID and parent.mode != MODE_CELL):
                keep -= 1
            if parent.mode == MODE_PRE:
                mode = MODE_PRE
            elif parent.mode == MODE_GRID and tag in self.cell_tags:
                mode = MODE_CELL
        else:
            chain = ()
            keep = 0
            path = tag
            levels = 1
            scope = (node_id,)
        if (mode == MODE_ROW or mode == MODE_GRID or tag == "caption") and self.table_ids:
            chain = bd_tuple_plus(chain, 0, keep, ("table", self.table_ids[-1]))
            keep = len(chain)
        frame.tag = tag
        frame.chain = bd_tuple_plus(chain, 0, keep, (tag, node_id))
        frame.mode = mode
        frame.path = path
        frame.path_levels = levels
        frame.node = node
        frame.parent = parent
        frame.scope = scope
        frame.own = None
        frame.scope_own = None
        frame.joined = None
        frame.html = []
        frame.text = []
        frame.inline_stack = []
        frame.link_chars = 0
        frame.n_links = 0
        self.frames.append(frame)

    cdef int row_mode(self, bd_node *row) except -2:
        """``segment._row_mode``: MODE_ROW, MODE_GRID or -1 (a layout row), in one pass."""
        cdef bd_node *n = _following(row, row)
        cdef int mode = MODE_ROW
        cdef str t
        while n != NULL:
            if n.type == NODE_ELEMENT:
                t = self.tag_of(n)
                if t in self.row_inner_tags:
                    if t not in self.nested_table_tags:
                        return -1
                    mode = MODE_GRID
            n = _following(n, row)
        return mode

    def __dealloc__(self):
        free(self.exit_kinds)

    cdef inline int push_exit(self, int kind, str tag) except -1:
        cdef unsigned char *grown
        if self.n_exits == self.exit_room:
            self.exit_room = 2 * self.exit_room + 64
            grown = <unsigned char *> realloc(self.exit_kinds, self.exit_room)
            if grown == NULL:
                raise MemoryError()
            self.exit_kinds = grown
        self.exit_kinds[self.n_exits] = kind
        self.n_exits += 1
        if kind == EXIT_CELL or kind == EXIT_KEPT:
            self.exit_tags.append(tag)
        return 0

    # -- walking -----------------------------------------------------------------------------
    cdef bint enter(self, bd_node *node) except -1:
        cdef _CFrame frame
        cdef str s, tag
        if node.local_name == TAG_TEXT:
            if not self.frames:
                return False
            frame = self.frames[-1]
            if frame.mode != MODE_PRE and _ascii_blank(node):
                # Outside <pre> whitespace runs are squashed to one space at flush time, so a
                # blank node adds one space (no decoding, escaping or link characters).
                frame.text.append(" ")
                frame.html.append(" ")
                return False
            s = _text(node)
            if s:
                frame.text.append(s)
                frame.html.append(_escape(s))
                if self.link_depth:
                    frame.link_chars += len(s.strip())
            return False
        cdef int code, kind, mode
        tag = self.tag_and_code(node, &code)
        if code == TAG_SKIP:
            return False
        kind = code & TAG_KIND
        frame = self.frames[-1] if self.frames else None
        if frame is not None and frame.mode == MODE_ROW and code & TAG_CELL:
            frame.html.append(_cell_open(tag, _attr(node, b"colspan"), _attr(node, b"rowspan")))
            if frame.text:
                frame.text.append(" | ")
            self.push_exit(EXIT_CELL, tag)
            return True
        if kind == TAG_FIGCAPTION:
            if <uintptr_t> node in self.absorbed:
                return False
            self.absorbed.add(<uintptr_t> node)
        elif kind == TAG_TABLE:
            self.table_ids.append(self.node_id(node))
            self.push_frame(node, tag, MODE_FLOW)
            self.push_exit(EXIT_TABLE, tag)
            return True
        elif kind == TAG_TR:
            if frame is not None and frame.mode == MODE_ROW:
                self.push_exit(EXIT_NONE, tag)
                return True
            mode = self.row_mode(node)
            if mode >= 0:
                self.push_frame(node, "tr", mode)
                self.push_exit(EXIT_FRAME, tag)
                return True
        if kind == TAG_BLOCK or kind == TAG_FIGCAPTION or kind == TAG_TR:
            self.push_frame(node, tag, MODE_PRE if code & TAG_PRE else MODE_FLOW)
            self.push_exit(EXIT_FRAME, tag)
            return True
        if kind == TAG_BR:
            if frame is not None:
                frame.text.append("\n")
                frame.html.append("<br>")
            return False
        if kind == TAG_IMG:
            self.image(node)
            return False
        if frame is None:
            self.push_exit(EXIT_NONE, tag)
            return True
        if kind == TAG_KEPT:
            kept = self.kept_inline[tag]
            lang = ""
            if kept == "code" and frame.mode == MODE_PRE:
                m = self.lang_re.search(_attr(node, b"class") or "")
                lang = m.group(1).lower() if m else ""
            frame.html.append(f'<code class="language-{lang}">' if lang else f"<{kept}>")
            frame.inline_stack.append(kept)
            self.push_exit(EXIT_KEPT, kept)
            return True
        if kind == TAG_A:
            self.link_depth += 1
            frame.n_links += 1
            marker = None
            if self.link_base is not None:
                marker = self.link_open(_attr(node, b"href"), self.link_base)
            if marker is not None:
                frame.html.append(marker)
                self.push_exit(EXIT_HREF, tag)
            else:
                self.push_exit(EXIT_LINK, tag)
            return True
        self.push_exit(EXIT_NONE, tag)
        return True

    cdef void exit(self) except *:
        cdef _CFrame frame
        cdef int kind
        self.n_exits -= 1
        kind = self.exit_kinds[self.n_exits]
        tag = self.exit_tags.pop() if kind == EXIT_CELL or kind == EXIT_KEPT else None
        if kind == EXIT_NONE:
            return
        if kind == EXIT_FRAME or kind == EXIT_TABLE:
            frame = self.frames.pop()
            self.flush(frame)
            if kind == EXIT_TABLE:
                self.table_ids.pop()
            return
        if kind == EXIT_LINK:
            self.link_depth -= 1
            return
        if kind == EXIT_HREF:
            self.link_depth -= 1
            if self.frames:
                (<_CFrame> self.frames[-1]).html.append("</a>")
            return
        if not self.frames:
            return
        frame = self.frames[-1]
        if kind == EXIT_CELL:
            frame.html.append(f"</{tag}>")
        elif kind == EXIT_KEPT and frame.inline_stack and frame.inline_stack[-1] == tag:
            frame.inline_stack.pop()
            frame.html.append(f"</{tag}>")

    def walk(self, uintptr_t root_id):
        cdef bd_node *root = <bd_node *> root_id
        cdef bd_node *node
        cdef bd_node *child
        cdef bd_node *nxt
        cdef bd_node *parent
        cdef Py_ssize_t visited = 0
        if root.type == NODE_ELEMENT:
            self.small_ns = (<bd_node_ns *> root).ns
        self.push_frame(root, self.tag_of(root) or "body", MODE_FLOW)
        node = root.first_child
        deadline = self.deadline
        perf_counter = _time.perf_counter
        while node != NULL:
            if len(self.out) > self.max_blocks:
                break
            visited += 1
            if deadline is not None and visited % self.check_every == 0 and perf_counter() > deadline:
                self.timed_out = True
                break
            # The walk waits on memory for each node it reaches; ask for the two it may go to
            # next while this one is handled.
            _prefetch(node.first_child)
            _prefetch(node.next)
            if self.enter(node):
                self.depth += 1
                child = node.first_child
                if child != NULL:
                    node = child
                    continue
                self.depth -= 1
                self.exit()
            while node != NULL:
                nxt = node.next
                if nxt != NULL:
                    node = nxt
                    break
                parent = node.parent
                if parent == NULL or parent == root:
                    node = NULL
                    break
                self.depth -= 1
                self.exit()
                node = parent
        while self.n_exits:
            self.exit()
        while self.frames:
            self.flush(self.frames.pop())


cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)
    bint Py_UNICODE_ISUPPER(Py_UCS4 ch)
    object PyUnicode_FromKindAndData(int kind, const void *buffer, Py_ssize_t size)

from libc.stdlib cimport malloc, calloc, free, realloc


cdef str _squash(str s):
    """``" ".join(s.split())``: runs of whitespace (``str.split``'s definition) as one space, ends
    stripped; ``s`` itself when it is already so."""
    cdef int kind = PyUnicode_KIND(s)
    cdef void *data = PyUnicode_DATA(s)
    cdef Py_ssize_t n = len(s), i, k = 0
    cdef Py_UCS4 c
    cdef bint space = True  # at the start, or after a whitespace run
    cdef bint clean = True
    cdef Py_UCS4 *buf
    if n > _SQUASH_WINDOW:  # huge texts: segment._squash_ws works window by window (memory)
        return _consts()._squash_ws(s)
    for i in range(n):
        c = PyUnicode_READ(kind, data, i)
        if Py_UNICODE_ISSPACE(c):
            if space or c != 32:
                clean = False
                break
            space = True
        else:
            space = False
    if clean and not space:
        return s
    if clean and n == 0:
        return s
    buf = <Py_UCS4 *> malloc(n * sizeof(Py_UCS4) + 1)
    if buf == NULL:
        raise MemoryError()
    try:
        space = True
        for i in range(n):
            c = PyUnicode_READ(kind, data, i)
            if Py_UNICODE_ISSPACE(c):
                space = True
                continue
            if space and k:
                buf[k] = 32
                k += 1
            space = False
            buf[k] = c
            k += 1
        return PyUnicode_FromKindAndData(4, buf, k)
    finally:
        free(buf)


def walk(root_id, cfg, source, id_offset, deadline, block_cls, base=""):
    """``blockdex.segment._Walker(...).walk(...)`` for the node at ``root_id`` (a ``mem_id``):
    returns ``(raw blocks, timed_out)``, the raw blocks as ``block_cls`` (``Block``) objects
    whose ``index`` is not set yet (see ``_CWalker.new_block``). Call only when
    :func:`lexbor_ready` is True."""
    w = _CWalker(cfg, source, id_offset, deadline, block_cls, base)
    w.walk(root_id)
    return w.out, w.timed_out


# -- the parse limits' pre-check -------------------------------------------------------------------

from cpython.unicode cimport PyUnicode_KIND, PyUnicode_DATA, PyUnicode_READ


from libc.string cimport memchr, memset, memcpy, memcmp

cdef extern from "string.h":
    void *memmem(const void *haystack, size_t haystack_len, const void *needle, size_t needle_len) nogil
from cpython.unicode cimport PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND


cdef list _long_tags_1byte(const char *p, Py_ssize_t n, Py_ssize_t min_chars, Py_ssize_t *lt):
    """:func:`long_tags` for one-byte text, jumping between ``<`` and ``>`` with memchr; adds
    the number of ``<`` before the last character to ``lt[0]`` (every one is landed on once)."""
    cdef Py_ssize_t i = 0, j, end
    cdef const char *q
    cdef unsigned char c
    out = []
    while i < n - 1:
        q = <const char *> memchr(p + i, 60, n - 1 - i)  # '<' with a character after it
        if q == NULL:
            break
        i = q - p
        lt[0] += 1
        c = <unsigned char> p[i + 1]
        if not ((65 <= c <= 90) or (97 <= c <= 122)):
            i += 1
            continue
        q = <const char *> memchr(p + i + 2, 62, n - (i + 2)) if i + 2 < n else NULL  # '>'
        end = (q - p) if q != NULL else n
        q = <const char *> memchr(p + i + 2, 60, end - (i + 2)) if i + 2 < end else NULL
        j = (q - p) if q != NULL else end
        if j - (i + 2) >= min_chars:
            out.append((i, j))
        i = j
    return out


cdef inline Py_ssize_t _find16(
    const unsigned short *p, Py_ssize_t i, Py_ssize_t end, unsigned char ch
) noexcept:
    """The first index in ``[i, end)`` of two-byte text ``p`` holding ``ch`` (not 0), else
    ``end``: memchr finds the byte, then the character is checked (either byte order: only
    ``ch`` itself has a byte equal to ``ch`` and the other zero)."""
    cdef const unsigned char *base = <const unsigned char *> p
    cdef const unsigned char *q
    cdef Py_ssize_t b = 2 * i
    while b < 2 * end:
        q = <const unsigned char *> memchr(base + b, ch, 2 * end - b)
        if q == NULL:
            return end
        b = q - base
        if p[b // 2] == ch:
            return b // 2
        b += 1
    return end


@cython.boundscheck(False)
@cython.wraparound(False)
cdef list _long_tags_2byte(
    const unsigned short *p, Py_ssize_t n, Py_ssize_t min_chars, Py_ssize_t *lt
):
    """:func:`long_tags` for two-byte text (most pages: one character beyond Latin-1 is
    enough): :func:`_long_tags_1byte`'s jumps, with :func:`_find16` for memchr."""
    cdef Py_ssize_t i = 0, j, end
    cdef unsigned short c
    out = []
    while i < n - 1:
        i = _find16(p, i, n - 1, 60)  # '<' with a character after it
        if i >= n - 1:
            break
        lt[0] += 1
        c = p[i + 1]
        if not ((65 <= c <= 90) or (97 <= c <= 122)):
            i += 1
            continue
        end = _find16(p, i + 2, n, 62)  # '>'
        j = _find16(p, i + 2, end, 60)
        if j - (i + 2) >= min_chars:
            out.append((i, j))
        i = j
    return out


def long_tags(str text, Py_ssize_t min_chars):
    """``(start, end)`` of every ``<`` + ASCII letter followed by at least ``min_chars``
    characters other than ``<`` and ``>`` (what ``<[A-Za-z][^<>]{min_chars,}`` matches with
    ``finditer``; ``end`` is where the run of such characters stops)."""
    cdef Py_ssize_t lt = 0
    return _long_tags(text, min_chars, &lt)


def tag_scan(str text, Py_ssize_t max_attributes):
    """``(text.count("<"), spans)`` in one pass: ``spans`` are those of :func:`long_tags`
    (``max_attributes`` characters or more) holding more than ``max_attributes`` runs of
    attribute-name characters — the only tags that can carry more than ``max_attributes``
    attributes (the caller counts them exactly)."""
    cdef Py_ssize_t lt = 0
    spans = [
        (i, j) for i, j in _long_tags(text, max_attributes, &lt)
        if name_runs(text, i, j) > max_attributes
    ]
    return lt, spans


cdef list _long_tags(str text, Py_ssize_t min_chars, Py_ssize_t *lt):
    """:func:`long_tags`; ``lt[0]`` gets the number of ``<`` in ``text``."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text), i = 0, j
    cdef Py_UCS4 c
    if n and PyUnicode_READ(kind, data, n - 1) == 60:  # the loops stop before the last one
        lt[0] += 1
    if kind == PyUnicode_1BYTE_KIND:
        return _long_tags_1byte(<const char *> data, n, min_chars, lt)
    if kind == PyUnicode_2BYTE_KIND:
        return _long_tags_2byte(<const unsigned short *> data, n, min_chars, lt)
    out = []
    while i < n - 1:
        if PyUnicode_READ(kind, data, i) != 60:  # '<'
            i += 1
            continue
        lt[0] += 1
        c = PyUnicode_READ(kind, data, i + 1)
        if not ((65 <= c <= 90) or (97 <= c <= 122)):
            i += 1
            continue
        j = i + 2
        while j < n:
            c = PyUnicode_READ(kind, data, j)
            if c == 60 or c == 62:
                break
            j += 1
        if j - (i + 2) >= min_chars:
            out.append((i, j))
        i = j  # no '<' before j: the next match cannot start earlier
    return out


cdef inline bint _name_char(Py_UCS4 c) noexcept:
    """A character of ``[^\\s"'>/=]`` (an attribute name's, in ``blockdex.parse._ATTR_RE``)."""
    return not (c == 34 or c == 39 or c == 62 or c == 47 or c == 61 or Py_UNICODE_ISSPACE(c))


def name_runs(str text, Py_ssize_t start, Py_ssize_t end):
    """How many maximal runs of attribute-name characters ``text[start:end]`` holds: at least as
    many as ``_ATTR_RE.findall(text, start, end)`` finds (each match starts such a run)."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t i, runs = 0
    cdef bint inside = False, now
    if start < 0 or end > len(text):
        raise IndexError("span outside the text")
    for i in range(start, end):
        now = _name_char(PyUnicode_READ(kind, data, i))
        if now and not inside:
            runs += 1
        inside = now
    return runs


# -- per-block feature columns ---------------------------------------------------------------------

from cpython.set cimport PySet_Contains

cdef enum:
    WORD_MAX = 64  # longer ASCII words are looked up the slow way (none is a stop word)


cdef inline unsigned long long _fnv(const unsigned char *w, Py_ssize_t n) noexcept:
    cdef unsigned long long h = 14695981039346656037ULL
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ w[i]) * 1099511628211ULL
    return h


@cython.final
cdef class _AsciiWordSet:
    """The ASCII members of a set of strings, for lookups of lower-cased ASCII words without
    making Python strings (open addressing over FNV-1a hashes; C arrays)."""
    cdef bytes pool
    cdef const unsigned char *chars
    cdef Py_ssize_t mask
    cdef Py_ssize_t *start  # pool offset of the word in each slot, -1: empty
    cdef Py_ssize_t *length
    cdef Py_ssize_t max_len

    def __cinit__(self):
        self.start = NULL
        self.length = NULL

    def __init__(self, words):
        members = sorted({w for w in words if w.isascii() and 0 < len(w) <= WORD_MAX})
        cdef Py_ssize_t size = 8, at = 0, k, n, j
        while size < 2 * len(members) + 2:
            size *= 2
        self.mask = size - 1
        free(self.start)
        free(self.length)
        self.start = <Py_ssize_t *> malloc(size * sizeof(Py_ssize_t))
        self.length = <Py_ssize_t *> malloc(size * sizeof(Py_ssize_t))
        if self.start == NULL or self.length == NULL:
            raise MemoryError()
        for j in range(size):
            self.start[j] = -1
            self.length[j] = 0
        self.pool = "".join(members).encode("ascii")
        self.chars = self.pool
        self.max_len = max((len(w) for w in members), default=0)
        for w in members:
            n = len(w)
            k = _fnv(self.chars + at, n) & self.mask
            while self.start[k] >= 0:
                k = (k + 1) & self.mask
            self.start[k] = at
            self.length[k] = n
            at += n

    def __dealloc__(self):
        free(self.start)
        free(self.length)

    cdef inline bint contains(self, const unsigned char *w, Py_ssize_t n) noexcept:
        if n > self.max_len:
            return False
        return self.contains_hashed(w, n, _fnv(w, n))

    cdef bint contains_hashed(
        self, const unsigned char *w, Py_ssize_t n, unsigned long long h
    ) noexcept:
        """:meth:`contains` with ``h`` the FNV-1a hash of the ``n`` bytes at ``w``."""
        cdef Py_ssize_t k, j, at
        if n > self.max_len:
            return False
        k = h & self.mask
        while self.start[k] >= 0:
            if self.length[k] == n:
                at = self.start[k]
                for j in range(n):
                    if self.chars[at + j] != w[j]:
                        break
                else:
                    return True
            k = (k + 1) & self.mask
        return False


cdef _AsciiWordSet _stop_set = None
cdef object _stop_set_of = None  # the frozenset _stop_set was built from


cdef inline bint _ascii_space(unsigned char c) noexcept:
    """``str.split``'s whitespace among ASCII characters."""
    return c == 32 or 9 <= c <= 13 or 28 <= c <= 31


ctypedef fused _char_t:
    unsigned char
    unsigned short
    unsigned int


# Code point ranges of scripts written without spaces between words (blockdex.cjk.CJK_RANGES,
# loaded by set_cjk_ranges): each of their characters counts as one word.
cdef Py_UCS4 _cjk_lo[16]
cdef Py_UCS4 _cjk_hi[16]
cdef int _n_cjk = 0
cdef Py_UCS4 _cjk_min = 0x110000


def set_cjk_ranges(list ranges):
    """Load the ``(first, last)`` code point ranges whose characters count as words."""
    global _n_cjk, _cjk_min
    if len(ranges) > 16:
        raise ValueError("at most 16 ranges")
    _n_cjk = 0
    _cjk_min = 0x110000
    for lo, hi in ranges:
        _cjk_lo[_n_cjk] = lo
        _cjk_hi[_n_cjk] = hi
        _cjk_min = min(_cjk_min, <Py_UCS4> lo)
        _n_cjk += 1


cdef inline bint _is_cjk(Py_UCS4 c) noexcept:
    cdef int r
    if c < _cjk_min:
        return False
    for r in range(_n_cjk):
        if _cjk_lo[r] <= c <= _cjk_hi[r]:
            return True
    return False


cdef Py_ssize_t _word_scan(
    const _char_t *d, Py_ssize_t n, str text, _AsciiWordSet stops_ascii,
    _AsciiWordSet title_ascii, frozenset stops, set title, long *n_stop, long *n_title,
) except -1:
    """:func:`_word_counts` on ``text``'s characters ``d`` (one loop per width)."""
    cdef Py_ssize_t i = 0, s, words = 0
    cdef unsigned char buf[WORD_MAX]
    cdef Py_UCS4 c
    cdef unsigned int lc
    cdef unsigned long long h
    cdef bint ascii, in_run
    while i < n:
        while i < n and Py_UNICODE_ISSPACE(d[i]):
            i += 1
        if i >= n:
            break
        s = i
        ascii = True
        in_run = False  # inside a run of characters that are not CJK
        h = 14695981039346656037ULL  # FNV-1a of the lower-cased word, as _fnv (ASCII words)
        while i < n:
            c = d[i]
            if c < 128:
                if Py_UNICODE_ISSPACE(c):
                    break
                if i - s < WORD_MAX:  # lower-cased into buf and hashed on the way
                    lc = (<unsigned int> c) + 32 if 65 <= c <= 90 else <unsigned int> c
                    buf[i - s] = <unsigned char> lc
                    h = (h ^ lc) * 1099511628211ULL
            else:
                if Py_UNICODE_ISSPACE(c):
                    break
                ascii = False
                if _is_cjk(c):
                    words += 1
                    in_run = False
                    i += 1
                    continue
            if not in_run:
                words += 1
                in_run = True
            i += 1
        if ascii and i - s <= WORD_MAX:
            if stops_ascii.contains_hashed(buf, i - s, h):
                n_stop[0] += 1
            if title is not None and title_ascii.contains_hashed(buf, i - s, h):
                n_title[0] += 1
        else:
            w = text[s:i].lower()
            if PySet_Contains(stops, w):
                n_stop[0] += 1
            if title is not None and PySet_Contains(title, w):
                n_title[0] += 1
    return words


cdef Py_ssize_t _word_counts(
    str text, _AsciiWordSet stops_ascii, _AsciiWordSet title_ascii, frozenset stops, set title,
    long *n_stop, long *n_title,
) except -1:
    """The words of ``text`` (:func:`blockdex.features.word_count`: ``text.split()``'s words,
    with each CJK character a word of its own) and how many of ``text.lower().split()``'s words
    are in ``stops`` and in ``title`` (None: not counted). Lower-casing neither makes nor
    removes whitespace, so those are ``text.split()``'s words, lowered one by one: ASCII words
    (at most WORD_MAX long) in the ASCII sets without a Python string, others as
    ``word.lower()`` in the sets."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text)
    n_stop[0] = n_title[0] = 0
    if kind == PyUnicode_1BYTE_KIND:
        return _word_scan(<const unsigned char *> data, n, text, stops_ascii, title_ascii,
                          stops, title, n_stop, n_title)
    if kind == PyUnicode_2BYTE_KIND:
        return _word_scan(<const unsigned short *> data, n, text, stops_ascii, title_ascii,
                          stops, title, n_stop, n_title)
    return _word_scan(<const unsigned int *> data, n, text, stops_ascii, title_ascii, stops,
                      title, n_stop, n_title)


cdef inline void _count_marks(
    const _char_t *data, Py_ssize_t n, const unsigned char *table, Py_ssize_t table_size,
    Py_ssize_t *digits, Py_ssize_t *marks,
) noexcept:
    """ASCII digits, and characters marked in ``table`` (below ``table_size``), in ``data``."""
    cdef Py_ssize_t j
    cdef Py_UCS4 c
    for j in range(n):
        c = data[j]
        if 48 <= c <= 57:
            digits[0] += 1
        elif c < <Py_UCS4> table_size and table[c]:
            marks[0] += 1


@cython.boundscheck(False)
@cython.wraparound(False)
def block_columns(
    tuple blocks,
    frozenset stops,
    set title_words,
    dict tag_groups,
    dict tag_index,
    frozenset heading_tags,
    tuple sent_end,
    const unsigned char[::1] punct_table,
    double[:, ::1] out,
):
    """The per-block columns ``blockdex.features.block_features`` reads from blocks, in one pass.

    Columns: 0 characters, 1 words, 2 stop words, 3 title words, 4 link characters, 5 links,
    6 heading, 7 tag group index, 8 ends a sentence, 9 starts upper-case, 10 split part,
    11 from a script, 12 depth (clipped at 60, over 60), 13 punctuation marks (code points
    below U+10000 marked in ``punct_table``), 14 ASCII digits.
    """
    cdef Py_ssize_t i, n = len(blocks), n_chars, marks, digits, end
    cdef Py_ssize_t table_size = punct_table.shape[0]
    cdef const unsigned char *table = &punct_table[0] if table_size else NULL
    cdef long n_stop, n_title, depth
    cdef str text
    cdef bint use_title = bool(title_words)
    cdef int kind
    cdef void *data
    cdef Py_UCS4 c
    cdef Py_ssize_t n_words
    cdef _AsciiWordSet title_set = _AsciiWordSet(title_words) if use_title else None
    cdef _AsciiWordSet stop_set
    global _stop_set, _stop_set_of
    if out.shape[0] != n or out.shape[1] != 15:
        raise ValueError("out has the wrong shape")
    if _stop_set_of is not stops:
        _stop_set = _AsciiWordSet(stops)
        _stop_set_of = stops
    stop_set = _stop_set
    cdef object block_cls = None
    cdef Py_ssize_t o_text = 0, o_tag = 0, o_depth = 0, o_link_chars = 0, o_n_links = 0
    cdef Py_ssize_t o_split = 0, o_source = 0
    for i in range(n):
        b = blocks[i]
        if type(b) is not block_cls:  # fields read by slot offset (Block has __slots__)
            block_cls = type(b)
            o_text = _slot_offset(block_cls, "text")
            o_tag = _slot_offset(block_cls, "tag")
            o_depth = _slot_offset(block_cls, "depth")
            o_link_chars = _slot_offset(block_cls, "link_chars")
            o_n_links = _slot_offset(block_cls, "n_links")
            o_split = _slot_offset(block_cls, "split")
            o_source = _slot_offset(block_cls, "source")
        text = _field(b, o_text)
        n_words = _word_counts(
            text, stop_set, title_set, stops, title_words if use_title else None,
            &n_stop, &n_title,
        )
        tag = _field(b, o_tag)
        depth = _field(b, o_depth)
        out[i, 0] = len(text)
        out[i, 1] = n_words
        out[i, 2] = n_stop
        out[i, 3] = n_title
        out[i, 4] = _field(b, o_link_chars)
        out[i, 5] = _field(b, o_n_links)
        out[i, 6] = 1.0 if tag in heading_tags else 0.0
        out[i, 7] = tag_index[tag_groups.get(tag, "other")]
        kind = PyUnicode_KIND(text)
        data = PyUnicode_DATA(text)
        n_chars = len(text)
        end = n_chars  # text.rstrip() is text[:end]
        while end > 0 and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, end - 1)):
            end -= 1
        out[i, 8] = 1.0 if end and text.endswith(sent_end, 0, end) else 0.0
        out[i, 9] = 1.0 if n_chars and Py_UNICODE_ISUPPER(PyUnicode_READ(kind, data, 0)) else 0.0
        out[i, 10] = 1.0 if _field(b, o_split) is not None else 0.0
        out[i, 11] = 1.0 if _field(b, o_source) != "dom" else 0.0
        out[i, 12] = (depth if depth < 60 else 60) / 60.0
        marks = digits = 0
        if kind == PyUnicode_1BYTE_KIND:  # one loop per width: the kind test leaves the loop
            _count_marks(<const unsigned char *> data, n_chars, table, table_size, &digits, &marks)
        elif kind == PyUnicode_2BYTE_KIND:
            _count_marks(<const unsigned short *> data, n_chars, table, table_size, &digits, &marks)
        else:
            _count_marks(<const unsigned int *> data, n_chars, table, table_size, &digits, &marks)
        out[i, 13] = marks
        out[i, 14] = digits


# -- script rescue: JSON string literals in framework state -------------------------------------

def long_string_literals(str code, Py_ssize_t min_chars):
    """``(start, end)`` of the contents of the closed double-quoted literals of ``code`` that are
    at least ``min_chars`` long, scanning as ``blockdex.clean._STRING_LITERAL_RE`` does with
    ``finditer``: a literal runs to its closing quote, or stays unclosed at a line end (an
    optional backslash before it) or at the end of the text; ``\\`` + any character but a newline
    is an escape."""
    cdef int kind = PyUnicode_KIND(code)
    cdef void *data = PyUnicode_DATA(code)
    cdef Py_ssize_t n = len(code), i = 0, start
    cdef Py_UCS4 c
    out = []
    while i < n:
        if PyUnicode_READ(kind, data, i) != 34:  # '"'
            i += 1
            continue
        i += 1
        start = i
        while i < n:
            c = PyUnicode_READ(kind, data, i)
            if c == 34 or c == 10:
                break
            if c == 92:  # backslash: escapes the next character unless it is a newline
                if i + 1 < n and PyUnicode_READ(kind, data, i + 1) != 10:
                    i += 2
                    continue
                break
            i += 1
        if i < n and PyUnicode_READ(kind, data, i) == 34:
            if i - start >= min_chars:
                out.append((start, i))
            i += 1  # past the closing quote
        elif i < n and PyUnicode_READ(kind, data, i) == 92:
            i += 1  # an unclosed literal ends after its trailing backslash
    return out


# -- numbering: Block objects ----------------------------------------------------------------------


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

from cpython.ref cimport PyObject, Py_INCREF, Py_XDECREF
from cpython.unicode cimport PyUnicode_GET_LENGTH
import types as _types

cdef enum:
    T_OBJECT_EX = 16  # structmember.h: an object slot; NULL reads as AttributeError

RAW_FIELDS = (
    "tag", "html", "text", "chain", "path", "attrs", "depth", "link_chars", "n_links",
    "source", "attributes", "scope", "scope_attrs",
)
"""The fields of ``blockdex.segment._RawBlock`` that :func:`block_from_raw` copies."""
cdef Py_ssize_t _block_off[15]
cdef Py_ssize_t _raw_off[13]
cdef object _block_offsets_for = None  # the Block class _block_off was read from
cdef object _raw_offsets_for = None  # the raw block class _raw_off was read from


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
    if _block_offsets_for is block_cls:
        return 0
    for i in range(15):
        _block_off[i] = _slot_offset(block_cls, BLOCK_FIELDS[i])
    _block_offsets_for = block_cls
    return 0


cdef int _load_offsets(type block_cls, type raw_cls) except -1:
    """Read both classes' slot offsets, unless they are the ones already read."""
    global _raw_offsets_for
    cdef Py_ssize_t i
    _load_block_offsets(block_cls)
    if _raw_offsets_for is raw_cls:
        return 0
    for i in range(13):
        _raw_off[i] = _slot_offset(raw_cls, RAW_FIELDS[i])
    _raw_offsets_for = raw_cls
    return 0


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


def block_from_raw(type cls, index, rb):
    """``cls(index=index, tag=rb.tag, …, split=None, …)`` for a raw block ``rb`` of the walk.

    ``Block`` is a frozen dataclass: its ``__init__`` sets each field through
    ``object.__setattr__`` (~3 µs a block); this copies the slots directly (both classes' slot
    offsets read once from their member descriptors).
    """
    cdef Py_ssize_t i
    cdef PyObject *v
    _load_offsets(cls, type(rb))
    obj = cls.__new__(cls)
    _put(obj, _block_off[0], index)
    for i in range(13):
        v = _slot(rb, _raw_off[i])[0]
        if v == NULL:
            raise AttributeError(RAW_FIELDS[i])
        # Block's order: tag … n_links (1-9), split (10), source (11), attributes (12), scope (13),
        # scope_attrs (14)
        _put(obj, _block_off[i + 1 if i < 9 else i + 2], <object> v)
    _put(obj, _block_off[10], None)
    return obj


def number_run(
    type cls, list raw, Py_ssize_t start, double short_chars, Py_ssize_t max_blocks,
    list blocks,
):
    """Append a Block for each raw block from ``raw[start]`` on (index = its place in
    ``blocks``; a raw block that is already a ``cls`` object, from the compiled walk, gets its
    index set in place) until one whose text is longer than ``short_chars`` and whose tag is not
    ``img`` (it may need splitting: the caller decides) or until ``blocks`` holds
    ``max_blocks``. Returns the index of the raw block it stopped at."""
    cdef Py_ssize_t i = start, n = len(raw)
    while i < n and len(blocks) < max_blocks:
        rb = raw[i]
        if type(rb) is cls:  # the compiled walk's block, index not set yet: set it in place
            _load_block_offsets(cls)  # BLOCK_FIELDS: 1 tag, 3 text
            if (
                len(<str> _field(rb, _block_off[3])) > short_chars
                and _field(rb, _block_off[1]) != "img"
            ):
                return i
            _put(rb, _block_off[0], len(blocks))
            blocks.append(rb)
        else:
            _load_offsets(cls, type(rb))  # RAW_FIELDS: 0 tag, 2 text
            if (
                len(<str> _field(rb, _raw_off[2])) > short_chars
                and _field(rb, _raw_off[0]) != "img"
            ):
                return i
            blocks.append(block_from_raw(cls, len(blocks), rb))
        i += 1
    return i


# -- per-block feature columns from the blocks' scopes ---------------------------------------------

cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object obj, int *overflow) except? -1


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


@cython.boundscheck(False)
@cython.wraparound(False)
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


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _scope_fill(
    tuple blocks,
    const Py_ssize_t *path_of,
    const double *good_words,
    double total_good,
    tuple repeat_levels,
    tuple scope_levels,
    double main_share,
    double *repeat_counts,
    float *scope_share,
    float *in_main,
    Py_ssize_t **off_out=NULL,
    Py_ssize_t **ids_out=NULL,
    Py_ssize_t *n_ids_out=NULL,
) except -1:
    """``blockdex.features._scope_columns``'s loops on C arrays (row-major), filling its three
    outputs. The scopes' element ids are numbered densely (:func:`_number_scopes`), so the
    per-container sums and the distinct-container counts are array work, not Python dicts and
    sets; the sums are the same additions in the same order; the temporaries are malloc'd. An
    id beyond 64 bits (never, for node addresses) raises OverflowError before any output is
    written. With ``off_out``/``ids_out``/``n_ids_out`` those numbers (block i's are
    ``ids[off[i]:off[i + 1]]``) are handed to the caller, who frees them."""
    cdef Py_ssize_t i, n = len(blocks), total = 0, pair_size, n_ids
    cdef Py_ssize_t n_paths = 0, n_rep = len(repeat_levels), n_lv = len(scope_levels)
    cdef Py_ssize_t *off = NULL
    cdef Py_ssize_t *ids = NULL
    cdef long long *pair_keys = NULL
    cdef signed char *pair_used = NULL
    cdef Py_ssize_t *counts = NULL
    cdef double *words = NULL
    for i in range(n):
        if path_of[i] < 0:
            raise ValueError("negative path id")
        if path_of[i] >= n_paths:
            n_paths = path_of[i] + 1
    scopes = [b.scope for b in blocks]
    for i in range(n):
        total += len(<tuple> scopes[i])
    pair_size = 8
    while pair_size < 2 * n + 2:
        pair_size *= 2
    try:
        off = <Py_ssize_t *> _alloc((n + 1) * sizeof(Py_ssize_t), True)
        ids = <Py_ssize_t *> _alloc(max(total, 1) * sizeof(Py_ssize_t), False)
        pair_keys = <long long *> _alloc(pair_size * sizeof(long long), False)
        pair_used = <signed char *> _alloc(pair_size, False)
        counts = <Py_ssize_t *> _alloc(max(n_paths, 1) * sizeof(Py_ssize_t), False)
        n_ids = _number_scopes(scopes, total, off, ids)  # before anything is written
        _scope_loops(
            path_of, good_words, total_good, repeat_levels, scope_levels, main_share,
            repeat_counts, scope_share, in_main, n, n_paths, n_rep, n_lv, n_ids, pair_size, off,
            ids, pair_keys, pair_used, counts, &words,
        )
        if off_out != NULL:
            off_out[0] = off
            ids_out[0] = ids
            n_ids_out[0] = n_ids
            off = ids = NULL
    finally:
        free(off)
        free(ids)
        free(pair_keys)
        free(pair_used)
        free(counts)
        free(words)
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _scope_loops(
    const Py_ssize_t *path_of, const double *good_words, double total_good,
    tuple repeat_levels, tuple scope_levels, double main_share, double *repeat_counts,
    float *scope_share, float *in_main, Py_ssize_t n, Py_ssize_t n_paths, Py_ssize_t n_rep,
    Py_ssize_t n_lv, Py_ssize_t n_ids, Py_ssize_t pair_size, const Py_ssize_t *off,
    const Py_ssize_t *ids, long long *pair_keys, signed char *pair_used, Py_ssize_t *counts,
    double **words_out,
) except -1:
    """The loops of :func:`_scope_fill` on the scope numbers of :func:`_number_scopes`."""
    cdef Py_ssize_t i, j, k, slot, d, n_sc, depth, best_depth = -1, key_id, main = -1
    cdef double threshold
    cdef double *words
    # 1. distinct containers k levels up per tag-path group (-1: the block has none so high)
    cdef Py_ssize_t pmask = pair_size - 1
    cdef long long pair
    for j in range(n_rep):
        k = repeat_levels[j]
        memset(pair_used, 0, pair_size)
        memset(counts, 0, max(n_paths, 1) * sizeof(Py_ssize_t))
        for i in range(n):
            n_sc = off[i + 1] - off[i]
            key_id = ids[off[i + 1] - 1 - k] if n_sc > k else -1
            pair = <long long> path_of[i] * (n_ids + 1) + (key_id + 1)
            slot = _id_slot(&pair_keys[0], <const char *> &pair_used[0], pmask, pair)
            if not pair_used[slot]:
                pair_used[slot] = 1
                pair_keys[slot] = pair
                counts[path_of[i]] += 1
        for i in range(n):
            repeat_counts[i * n_rep + j] = counts[path_of[i]]
    # 2. prose words per container, summed block by block in page order
    words = words_out[0] = <double *> _alloc(max(n_ids, 1) * sizeof(double), True)
    for i in range(n):
        if good_words[i]:
            for d in range(off[i], off[i + 1]):
                words[ids[d]] = words[ids[d]] + good_words[i]
    # 3. the main container: the deepest holding main_share of the prose (first such)
    threshold = main_share * total_good
    for i in range(n):
        if good_words[i] == 0:
            continue
        depth = 0
        for d in range(off[i], off[i + 1]):
            if depth > best_depth and words[ids[d]] >= threshold:
                best_depth = depth
                main = ids[d]
            depth += 1
    for i in range(n):
        n_sc = off[i + 1] - off[i]
        for j in range(n_lv):
            k = scope_levels[j]
            if n_sc > k:
                scope_share[i * n_lv + j] = words[ids[off[i + 1] - 1 - k]] / total_good
        if main >= 0:
            for d in range(off[i], off[i + 1]):
                if ids[d] == main:
                    in_main[i] = 1.0
                    break
    return 0


# -- readability's decision as feature columns (blockdex.candidates) -----------------------------

cdef str _path_tag_from_end(str path, Py_ssize_t m):
    """The ``m``-th tag of a '>'-joined tag path counted from its end (0: the last), or ''."""
    cdef Py_ssize_t end = len(path), pos, k
    for k in range(m):
        pos = path.rfind(">", 0, end)
        if pos < 0:
            return ""
        end = pos
    return path[path.rfind(">", 0, end) + 1 : end]


cdef enum:
    MAX_CLASS_NEEDLES = 128

cdef extern from *:
    """
    static inline void *bd_tuple_item(PyObject *t, Py_ssize_t i) {
        return (void *) PyTuple_GET_ITEM(t, i);
    }
    """
    void *bd_tuple_item(object t, Py_ssize_t i)

cdef object _needles_for = None  # the word lists the table below was built from
cdef list _needle_keep = []  # the bytes objects _nd_ptr points into
cdef const unsigned char *_nd_ptr[MAX_CLASS_NEEDLES]
cdef Py_ssize_t _nd_len[MAX_CLASS_NEEDLES]
cdef int _nd_list[MAX_CLASS_NEEDLES]
cdef int _nd_first[257]  # the needles starting with byte c are _nd_first[c] .. _nd_first[c + 1]
cdef unsigned char _nd_pairs[8192]  # bit (c0 << 8 | c1): some word starts with bytes c0 c1
cdef int _n_lists = 0


cdef int _load_needles(tuple lists) except -1:
    """Index the ASCII words of ``lists`` by their first byte (once per ``lists`` object)."""
    global _needles_for, _n_lists
    cdef Py_ssize_t e, c
    if _needles_for is lists:
        return 0
    entries = sorted(
        ((<str> w).encode("ascii"), k) for k, words in enumerate(lists) for w in words if w
    )
    if len(entries) > MAX_CLASS_NEEDLES or len(lists) > 30:
        raise ValueError("too many class words")
    if any(len(b) < 2 for b, _ in entries):
        raise ValueError("class words need two characters or more")
    _needle_keep[:] = [b for b, _ in entries]
    memset(_nd_pairs, 0, sizeof(_nd_pairs))
    for b, _ in entries:
        c = (<const unsigned char *> (<char *> b))[0] << 8 | (<const unsigned char *> (<char *> b))[1]
        _nd_pairs[c >> 3] |= 1 << (c & 7)
    c = 0
    for e in range(len(entries)):
        b = <bytes> _needle_keep[e]
        _nd_ptr[e] = <const unsigned char *> (<char *> b)
        _nd_len[e] = len(b)
        _nd_list[e] = entries[e][1]
        while c <= (<const unsigned char *> (<char *> b))[0]:
            _nd_first[c] = e
            c += 1
    while c <= 256:
        _nd_first[c] = len(entries)
        c += 1
    _n_lists = len(lists)
    _needles_for = lists
    return 0


cdef int _needle_mask(str s) except -2:
    """Bit k set when a word of list k occurs in ``s`` (as the lists' regex alternations
    search); -1 for a string past one byte per character (the caller uses the regexes)."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(s), i, e, j, m
    cdef const unsigned char *data
    cdef const unsigned char *w
    cdef int mask = 0, full = (1 << _n_lists) - 1, bit, pair
    if n == 0:
        return 0
    if PyUnicode_KIND(s) != PyUnicode_1BYTE_KIND:
        return -1
    data = <const unsigned char *> PyUnicode_DATA(s)
    for i in range(n - 1):  # every word has two bytes or more
        pair = data[i] << 8 | data[i + 1]
        if not (_nd_pairs[pair >> 3] & (1 << (pair & 7))):
            continue  # no word starts here (most places: one bit test)
        for e in range(_nd_first[data[i]], _nd_first[data[i] + 1]):
            w = _nd_ptr[e]
            m = _nd_len[e]
            bit = 1 << _nd_list[e]
            if mask & bit or data[i + 1] != w[1] or i + m > n:
                continue
            j = 2
            while j < m and data[i + j] == w[j]:
                j += 1
            if j == m:
                mask |= bit
                if mask == full:
                    return mask
    return mask


@cython.boundscheck(False)
@cython.wraparound(False)
def readability_columns(tuple blocks, tuple params, float[:, ::1] out, Py_ssize_t col0=0):
    """``blockdex.candidates.readability_columns``: its columns written into
    ``out[:, col0:col0 + 6]`` (:func:`_readability_fill` on :func:`_number_scopes`' numbers).
    An element id past 64 bits raises OverflowError before anything is written."""
    cdef Py_ssize_t n = len(blocks), i, total = 0, n_ids
    cdef Py_ssize_t *off = NULL
    cdef Py_ssize_t *ids = NULL
    if n == 0:
        return
    if out.shape[0] != n or col0 < 0 or out.shape[1] < col0 + 6:
        raise ValueError("arrays have the wrong shape")
    scopes = [b.scope for b in blocks]
    for i in range(n):
        total += len(<tuple> scopes[i])
    try:
        off = <Py_ssize_t *> _alloc((n + 1) * sizeof(Py_ssize_t), False)
        ids = <Py_ssize_t *> _alloc(max(total, 1) * sizeof(Py_ssize_t), False)
        n_ids = _number_scopes(scopes, total, off, ids)
        _readability_fill(blocks, off, ids, n_ids, params, out, col0)
    finally:
        free(off)
        free(ids)


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int _readability_fill(
    tuple blocks, const Py_ssize_t *off, const Py_ssize_t *ids, Py_ssize_t n_ids, tuple params,
    float[:, ::1] out, Py_ssize_t col0,
) except -1:
    """``blockdex.candidates.readability_columns``'s loops on the dense scope numbers (block
    i's scope is ``ids[off[i]:off[i + 1]]``): the same additions in the same order, so the
    same floats, written into ``out[:, col0:col0 + 6]`` (every cell). ``params`` is
    ``candidates.COMPILED_PARAMS``: ``class_code``, the unlikely/maybe/positive/negative word
    lists (searched in C; ``class_code`` answers for strings past one byte a character), the
    tag weights, the paragraph tags, the minimum paragraph characters, the sibling minimum
    score and share, the class weight and the number of elements whose weights are summed."""
    cdef Py_ssize_t n = len(blocks), i, j, k, d, m
    cdef Py_ssize_t a, n_cand = 0, top = -1, top_parent, nch
    cdef int bits
    cdef double score, density, best, top_score, limit
    cdef bint have, kept_block
    cdef long long total_chars = 0, kept_chars = 0, weight_sum, lc
    cdef tuple sa
    cdef str text, tokens
    cdef Py_ssize_t *first_block = NULL  # per id: the block and scope position it first shows in
    cdef Py_ssize_t *first_pos = NULL
    cdef Py_ssize_t *parent = NULL
    cdef long long *in_chars = NULL
    cdef long long *in_links = NULL
    cdef signed char *unlikely = NULL
    cdef int *weight = NULL
    cdef double *cand = NULL
    cdef signed char *is_cand = NULL
    cdef Py_ssize_t *cand_order = NULL
    cdef signed char *keep = NULL
    cdef signed char *removed = NULL
    cdef Py_ssize_t *chars = NULL
    cdef Py_ssize_t min_chars = params[4], weight_levels = params[8]
    cdef double sibling_min = params[5], sibling_share = params[6]
    cdef int class_weight = params[7]
    class_code, class_words, tag_weights, paragraph_tags = params[:4]
    if n == 0:
        return 0
    for i in range(n):
        for k in range(6):
            out[i, col0 + k] = 0.0
    cls = type(blocks[0])
    for b in blocks:
        if type(b) is not cls:
            raise TypeError("blocks of more than one class")
    _load_block_offsets(cls)  # BLOCK_FIELDS: 1 tag, 3 text, 5 path, 8 link_chars, 14 scope_attrs
    _load_needles(<tuple> class_words)
    seen = {}
    try:
        a = max(n_ids, 1)
        first_block = <Py_ssize_t *> _alloc(a * sizeof(Py_ssize_t), False)
        first_pos = <Py_ssize_t *> _alloc(a * sizeof(Py_ssize_t), False)
        parent = <Py_ssize_t *> _alloc(a * sizeof(Py_ssize_t), False)
        in_chars = <long long *> _alloc(a * sizeof(long long), True)
        in_links = <long long *> _alloc(a * sizeof(long long), True)
        unlikely = <signed char *> _alloc(a, False)
        weight = <int *> _alloc(a * sizeof(int), False)
        cand = <double *> _alloc(a * sizeof(double), True)
        is_cand = <signed char *> _alloc(a, True)
        cand_order = <Py_ssize_t *> _alloc(a * sizeof(Py_ssize_t), False)
        keep = <signed char *> _alloc(a, True)
        removed = <signed char *> _alloc(n, True)
        chars = <Py_ssize_t *> _alloc(n * sizeof(Py_ssize_t), False)
        for d in range(n_ids):
            first_block[d] = -1
            parent[d] = -1
        # 1. containers' characters and link characters, parents, class codes; removal
        for i in range(n):
            b = blocks[i]
            nch = PyUnicode_GET_LENGTH(<str> _field(b, _block_off[3]))
            chars[i] = nch
            total_chars += nch
            lc = <long long> _field(b, _block_off[8])
            sa = <tuple> _field(b, _block_off[14])
            m = off[i + 1] - off[i]
            for j in range(m):
                d = ids[off[i] + j]
                in_chars[d] += nch
                in_links[d] += lc
                if j:
                    parent[d] = ids[off[i] + j - 1]
                if first_block[d] < 0:
                    first_block[d] = i
                    first_pos[d] = m - 1 - j  # counted from the nearest element
                    tokens = <str> sa[j] if j < len(sa) else ""
                    if PyUnicode_GET_LENGTH(tokens) == 0:
                        bits = 0
                    else:  # each distinct string scanned once
                        known = seen.get(tokens)
                        if known is None:
                            bits = _needle_mask(tokens)
                            seen[tokens] = bits
                        else:
                            bits = <int> known
                    if bits >= 0:
                        unlikely[d] = (bits & 1) != 0 and (bits & 2) == 0
                        weight[d] = (class_weight if bits & 4 else 0) - (
                            class_weight if bits & 8 else 0
                        )
                    else:
                        code = class_code(tokens)
                        unlikely[d] = 1 if code[0] else 0
                        weight[d] = <int> code[1]
            for j in range(m - 1 if m > 1 else m):
                d = ids[off[i] + j]
                if unlikely[d]:
                    tag = _path_tag_from_end(
                        <str> _field(blocks[first_block[d]], _block_off[5]), first_pos[d]
                    )
                    if tag != "html" and tag != "body":
                        removed[i] = 1
                        break
        # 2. paragraph scores into the parent (in full) and the grandparent (at half)
        for i in range(n):
            m = off[i + 1] - off[i]
            if removed[i] or chars[i] < min_chars or m < 2:
                continue
            b = blocks[i]
            if _field(b, _block_off[1]) not in paragraph_tags:
                continue
            text = <str> _field(b, _block_off[3])
            score = <double> (1 + text.count(",") + text.count("\uff0c") + min(chars[i] // 100, 3))
            for k in range(2 if m >= 3 else 1):
                d = ids[off[i + 1] - 2 - k]
                if not is_cand[d]:
                    is_cand[d] = 1
                    cand_order[n_cand] = d
                    n_cand += 1
                    tag = _path_tag_from_end(
                        <str> _field(blocks[first_block[d]], _block_off[5]), first_pos[d]
                    )
                    cand[d] = <double> (<int> tag_weights.get(tag, 0) + weight[d])
                cand[d] += score * (1.0 if k == 0 else 0.5)
        # 3. link-density discount, the top candidate and its scoring siblings
        for k in range(n_cand):
            d = cand_order[k]
            density = <double> in_links[d] / <double> (in_chars[d] if in_chars[d] > 1 else 1)
            cand[d] *= 1.0 - (density if density < 1.0 else 1.0)
        for i in range(n):
            out[i, col0 + 3] = removed[i]
        if n_cand == 0:
            return 0
        top = cand_order[0]
        for k in range(1, n_cand):
            if cand[cand_order[k]] > cand[top]:
                top = cand_order[k]
        top_score = cand[top]
        top_parent = parent[top]
        keep[top] = 1
        if top_parent >= 0:
            limit = top_score * sibling_share
            if limit < sibling_min:
                limit = sibling_min
            for k in range(n_cand):
                d = cand_order[k]
                if d != top and parent[d] == top_parent and cand[d] >= limit:
                    keep[d] = 1
        # 4. the columns
        for i in range(n):
            m = off[i + 1] - off[i]
            kept_block = False
            for j in range(m):
                if keep[ids[off[i] + j]]:
                    kept_block = True
                    break
            if not kept_block and top_parent >= 0 and m >= 2 and ids[off[i + 1] - 2] == top_parent:
                b = blocks[i]
                if _field(b, _block_off[1]) == "p":
                    nch = chars[i]
                    lc = <long long> _field(b, _block_off[8])
                    density = <double> lc / <double> (nch if nch > 1 else 1)
                    if nch > 80:
                        kept_block = density < 0.25
                    else:
                        kept_block = (
                            density == 0.0 and (<str> _field(b, _block_off[3])).rstrip()[-1:] == "."
                        )
            if kept_block and not removed[i]:
                out[i, col0] = 1.0
                kept_chars += chars[i]
            if top_score > 0:
                have = False
                best = 0.0
                for j in range(m):
                    d = ids[off[i] + j]
                    score = cand[d] if is_cand[d] else 0.0
                    if not have or score > best:
                        best = score
                        have = True
                out[i, col0 + 1] = <float> (best / top_score)
                if m >= 2:
                    d = ids[off[i + 1] - 2]
                    out[i, col0 + 2] = <float> ((cand[d] if is_cand[d] else 0.0) / top_score)
            weight_sum = 0
            for j in range(m - weight_levels if m > weight_levels else 0, m):
                weight_sum += weight[ids[off[i] + j]]
            out[i, col0 + 5] = <float> (<double> weight_sum / <double> class_weight)
        density = <double> kept_chars / <double> (total_chars if total_chars > 1 else 1)
        for i in range(n):
            out[i, col0 + 4] = <float> density
    finally:
        free(first_block)
        free(first_pos)
        free(parent)
        free(in_chars)
        free(in_links)
        free(unlikely)
        free(weight)
        free(cand)
        free(is_cand)
        free(cand_order)
        free(keep)
        free(removed)
        free(chars)
    return 0


def squash(str s):
    """The walk's whitespace squashing (for tests): ``" ".join(s.split())``."""
    return _squash(s)


def has_deep_element(uintptr_t root_id, Py_ssize_t max_depth):
    """Whether an element below the element at ``root_id`` (a ``mem_id``) has ``max_depth``
    element ancestors within the subtree — what ``tree.css_first("*" + " > *" * max_depth)``
    finds from the root element. Call only when :func:`lexbor_ready` is True."""
    cdef bd_node *root = <bd_node *> root_id
    cdef bd_node *node = root
    cdef Py_ssize_t depth = 0
    if root == NULL:
        return False
    while True:
        if node.type == NODE_ELEMENT and depth >= max_depth:
            return True
        if node.first_child != NULL:
            node = node.first_child
            depth += 1
            continue
        while node != root and node.next == NULL:
            node = node.parent
            depth -= 1
        if node == root:
            return False
        node = node.next


def block_groups(tuple blocks, tuple levels, int[:, ::1] out):
    """``blockdex.features.block_groups``' partition into ``out`` (one column per group kind, as
    :func:`stage2_rows` numbers it: only which blocks share an id means anything). Returns True,
    or False when an element id does not fit 64 bits (``out`` is then unusable)."""
    if out.shape[0] != len(blocks) or out.shape[1] != 1 + len(levels):
        raise ValueError("out has the wrong shape")
    if out.shape[0] == 0:
        return True
    return _group_ids(blocks, levels, &out[0, 0]) == 1


# -- class/id token families -----------------------------------------------------------------------

cdef enum:
    FAM_WHOLE = 0   # the whole token is the word
    FAM_PREFIX = 1  # the token starts with the word
    FAM_ANYWHERE = 2  # the word occurs in the token
    FAM_MAX_WORD = 32

cdef struct FamWord:
    int family
    int mode
    Py_ssize_t length
    Py_UCS4 chars[FAM_MAX_WORD]

cdef FamWord *_fam_words = NULL
cdef Py_ssize_t _n_fam_words = 0
# the words by first character: _fam_by_first[_fam_first[c] : _fam_first[c + 1]] (indices)
cdef Py_ssize_t _fam_first[129]
cdef Py_ssize_t *_fam_by_first = NULL


def set_family_words(list rows):
    """Load the word table ``(family, mode, word)`` that :func:`attr_family_rows` matches
    tokens against (``blockdex.features._family_word_table``: mode 0 the whole token, 1 a
    prefix, 2 anywhere; words of ASCII letters and digits)."""
    global _fam_words, _n_fam_words, _fam_by_first
    cdef Py_ssize_t n = len(rows)
    cdef FamWord *table = <FamWord *> malloc(max(n, 1) * sizeof(FamWord))
    cdef Py_ssize_t *by_first = <Py_ssize_t *> malloc(max(n, 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t i, j, c
    if table == NULL or by_first == NULL:
        free(table)
        free(by_first)
        raise MemoryError()
    for i, (family, mode, word) in enumerate(rows):
        if (not 0 <= family < 62 or mode not in (0, 1, 2) or not 0 < len(word) <= FAM_MAX_WORD
                or not word.isascii()):
            free(table)
            free(by_first)
            raise ValueError(f"bad family word row {(family, mode, word)!r}")
        table[i].family = family
        table[i].mode = mode
        table[i].length = len(word)
        for j in range(len(word)):
            table[i].chars[j] = ord(word[j])
    free(_fam_words)
    free(_fam_by_first)
    _fam_words = table
    _n_fam_words = n
    order = sorted(range(n), key=lambda k: (table[k].chars[0], k))
    for j in range(n):
        by_first[j] = order[j]
    _fam_by_first = by_first
    j = 0
    for c in range(129):
        while j < n and table[by_first[j]].chars[0] < c:
            j += 1
        _fam_first[c] = j


cdef inline bint _fam_eq(
    int kind, void *data, Py_ssize_t at, const FamWord *w
) noexcept:
    cdef Py_ssize_t j
    for j in range(w.length):
        if PyUnicode_READ(kind, data, at + j) != w.chars[j]:
            return False
    return True


cdef unsigned long long _token_mask(
    int kind, void *data, Py_ssize_t start, Py_ssize_t end
) noexcept:
    """The families of the words matching ``data[start:end]``: the token is a ``whole`` word,
    starts with a ``prefix`` word or holds an ``anywhere`` word. At each position only the words
    beginning with its character are tried (all words are ASCII)."""
    cdef unsigned long long mask = 0, bit
    cdef Py_ssize_t k, p, c, n = end - start
    cdef const FamWord *w
    for p in range(start, end):
        c = <Py_ssize_t> PyUnicode_READ(kind, data, p)
        if c >= 128:
            continue
        for k in range(_fam_first[c], _fam_first[c + 1]):
            w = &_fam_words[_fam_by_first[k]]
            bit = 1ULL << w.family
            if mask & bit or w.length > end - p:
                continue
            if w.mode != FAM_ANYWHERE and (p != start or (w.mode == FAM_WHOLE and w.length != n)):
                continue
            if _fam_eq(kind, data, p, w):
                mask |= bit
    return mask


cdef unsigned long long _level_mask(str level):
    """``blockdex.features._level_mask``: the families of the tokens (runs between whitespace,
    ``_`` and ``-``) of at least two characters."""
    cdef int kind = PyUnicode_KIND(level)
    cdef void *data = PyUnicode_DATA(level)
    cdef Py_ssize_t i, start = 0, n = len(level)
    cdef Py_UCS4 c
    cdef unsigned long long mask = 0
    for i in range(n + 1):
        if i < n:
            c = PyUnicode_READ(kind, data, i)
            if not (c == 95 or c == 45 or Py_UNICODE_ISSPACE(c)):  # '_', '-'
                continue
        if i - start >= 2:
            mask |= _token_mask(kind, data, start, i)
        start = i + 1
    return mask


def level_mask(str level):
    """The compiled ``_level_mask`` (for tests)."""
    return _level_mask(level)


cdef struct _LevelEntry:
    unsigned long long h  # 0: an empty slot
    PyObject *level  # the level (a one-byte str, owned)
    unsigned long long mask

cdef enum:
    LEVEL_SLOTS = 1 << 17  # the one-byte level cache: slots, and entries kept before a clear
    LEVEL_KEEP = 1 << 16  # (as many as features._LEVEL_MASKS keeps)

cdef _LevelEntry *_levels = NULL
cdef Py_ssize_t _n_levels = 0


cdef void _levels_clear() noexcept:
    global _n_levels
    cdef Py_ssize_t k
    if _levels == NULL:
        return
    for k in range(LEVEL_SLOTS):
        if _levels[k].h:
            Py_XDECREF(_levels[k].level)
            _levels[k].h = 0
            _levels[k].level = NULL
    _n_levels = 0


cdef inline unsigned long long _bytes_hash(const unsigned char *p, Py_ssize_t n) noexcept:
    cdef unsigned long long h = <unsigned long long> n * 0x9E3779B97F4A7C15ULL, w
    cdef Py_ssize_t i = 0
    while i + 8 <= n:
        memcpy(&w, p + i, 8)
        h = (h ^ w) * 0xFF51AFD7ED558CCDULL
        h ^= h >> 32
        i += 8
    w = 0
    if i < n:
        memcpy(&w, p + i, n - i)
        h = (h ^ w) * 0xC4CEB9FE1A85EC53ULL
        h ^= h >> 29
    return h | 1


cdef unsigned long long _level_mask_1byte(str a, Py_ssize_t start, Py_ssize_t end) except? 0:
    """:func:`_level_mask` of ``a[start:end]`` for a one-byte ``a``, through a C table of the
    levels seen (their text compared byte for byte: a hit is the same level)."""
    global _levels, _n_levels
    cdef const unsigned char *p = <const unsigned char *> PyUnicode_DATA(a) + start
    cdef Py_ssize_t n = end - start, k
    cdef unsigned long long h = _bytes_hash(p, n), m
    cdef PyObject *lv
    if _levels == NULL:
        _levels = <_LevelEntry *> calloc(LEVEL_SLOTS, sizeof(_LevelEntry))
        if _levels == NULL:
            raise MemoryError()
    k = <Py_ssize_t> (h & (LEVEL_SLOTS - 1))
    while _levels[k].h:
        if _levels[k].h == h:
            lv = _levels[k].level
            if PyUnicode_GET_LENGTH(<object> lv) == n and \
                    memcmp(PyUnicode_DATA(<object> lv), p, n) == 0:
                return _levels[k].mask
        k = (k + 1) & (LEVEL_SLOTS - 1)
    level = a[start:end]
    m = _level_mask(level)
    if _n_levels >= LEVEL_KEEP:  # full: start over (the level is found again next time)
        _levels_clear()
        k = <Py_ssize_t> (h & (LEVEL_SLOTS - 1))
    Py_INCREF(level)
    _levels[k].h = h
    _levels[k].level = <PyObject *> level
    _levels[k].mask = m
    _n_levels += 1
    return m


@cython.boundscheck(False)
@cython.wraparound(False)
def attr_family_rows(list attr_strings, dict level_cache, float[:, ::1] out):
    """``blockdex.features._attr_matrix``: per attrs string (levels joined by ``" | "``), its
    families' bits over all levels, then over the nearest two, as 0/1 in ``out``'s row.
    ``level_cache`` maps a level to its mask (filled here) for strings of two- and four-byte
    characters; one-byte strings (nearly all) are split and looked up in C, no level string
    made unless it is new."""
    cdef Py_ssize_t i, j, f, n_levels, n_fam = out.shape[1] // 2, n, pos, start
    cdef unsigned long long far, near, m, last, before
    cdef const unsigned char *d
    cdef list levels
    cdef str a
    if out.shape[0] != len(attr_strings) or n_fam * 2 != out.shape[1]:
        raise ValueError("out has the wrong shape")
    for i in range(len(attr_strings)):
        a = attr_strings[i]
        far = near = 0
        if a and PyUnicode_KIND(a) == PyUnicode_1BYTE_KIND:
            # a.split(" | "): leftmost separators, not overlapping; near is the last two levels
            d = <const unsigned char *> PyUnicode_DATA(a)
            n = len(a)
            start = pos = 0
            last = before = 0
            while True:
                while pos + 3 <= n and not (d[pos] == 32 and d[pos + 1] == 124
                                            and d[pos + 2] == 32):
                    pos += 1
                if pos + 3 > n:
                    pos = n
                m = _level_mask_1byte(a, start, pos)
                far |= m
                before = last
                last = m
                if pos >= n:
                    break
                pos += 3
                start = pos
            near = last | before
        elif a:
            levels = a.split(" | ")
            n_levels = len(levels)
            for j in range(n_levels):
                lv = levels[j]
                v = level_cache.get(lv)
                if v is None:
                    m = _level_mask(lv)
                    level_cache[lv] = m
                else:
                    m = v
                far |= m
                if j >= n_levels - 2:
                    near |= m
        for f in range(n_fam):
            out[i, f] = (far >> f) & 1
            out[i, n_fam + f] = (near >> f) & 1


def clear_level_cache():
    """Forget the levels :func:`attr_family_rows` has seen (for tests)."""
    _levels_clear()


# -- the numeric feature columns -------------------------------------------------------------------

from libc.math cimport log1p
import numpy as np

cdef enum:
    N_LOCAL = 18
    N_CONTEXT = 23


def feature_matrix(
    const double[:, ::1] cols,
    const Py_ssize_t[::1] path_of,
    const Py_ssize_t[::1] attr_of,
    const float[:, ::1] path_rows,
    const float[:, ::1] attr_rows,
    const float[::1] page_feats,
    Py_ssize_t n_title,
    const double[:, ::1] repeat_counts,
    const float[:, ::1] scope_share,
    const float[::1] in_main,
    double chars_per_word,
    double good_min_words,
    double good_max_link,
    Py_ssize_t window,
    float[:, ::1] out,
):
    """``blockdex.features.block_features``' numeric part (``_local_columns``, the one-hot and
    looked-up rows, ``_context_columns``) written into ``out``: the same operations on the same
    float64 values in the same order, so the same float32 results."""
    cdef Py_ssize_t n = cols.shape[0]
    if n == 0:
        return
    if (path_of.shape[0] != n or attr_of.shape[0] != n or repeat_counts.shape[0] != n
            or repeat_counts.shape[1] != 2 or scope_share.shape[0] != n
            or scope_share.shape[1] != 4 or in_main.shape[0] != n):
        raise ValueError("arrays have the wrong shape")
    _feature_fill(cols, path_of, attr_of, path_rows, attr_rows, &page_feats[0],
                  page_feats.shape[0], n_title, &repeat_counts[0, 0], &scope_share[0, 0],
                  &in_main[0], chars_per_word, good_min_words, good_max_link, window, out)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def block_feature_matrix(
    tuple blocks,
    const double[:, ::1] cols,
    const Py_ssize_t[::1] path_of,
    const Py_ssize_t[::1] attr_of,
    const float[:, ::1] path_rows,
    const float[:, ::1] attr_rows,
    double html_bytes,
    Py_ssize_t n_title,
    tuple repeat_levels,
    tuple scope_levels,
    double main_share,
    double chars_per_word,
    double good_min_words,
    double good_max_link,
    Py_ssize_t window,
    float[:, ::1] out,
    tuple readability=None,
):
    """``blockdex.features.block_features`` from the per-block columns and the path/attrs rows
    on: the page features, the prose ("good") words, the scope columns (:func:`_scope_fill`)
    and :func:`feature_matrix` in one call, with no numpy array in between (the same operations
    on the same float64 values: the sums are of integers, exact in any order). With
    ``readability`` (``candidates.COMPILED_PARAMS``) the last six columns of ``out`` are
    readability's (:func:`_readability_fill`, on the scope numbers of :func:`_scope_fill`). An
    element id past 64 bits raises OverflowError, as :func:`_scope_fill` does, before ``out``
    is written."""
    cdef Py_ssize_t n = cols.shape[0], i, n_rep = len(repeat_levels), n_lv = len(scope_levels)
    cdef double chars, link, total_chars = 0.0, total_words = 0.0, total_good = 0.0
    cdef float page_feats[3]
    cdef double *good_words = NULL
    cdef double *repeat_counts = NULL
    cdef float *scope_share = NULL
    cdef float *in_main = NULL
    cdef Py_ssize_t *off = NULL
    cdef Py_ssize_t *ids = NULL
    cdef Py_ssize_t n_ids = 0, n_extra = 6 if readability is not None else 0
    if n == 0:
        return
    if (cols.shape[1] != 15 or len(blocks) != n or path_of.shape[0] != n
            or attr_of.shape[0] != n or n_rep != 2 or n_lv != 4):
        raise ValueError("arrays have the wrong shape")
    for i in range(n):
        chars = cols[i, 0] if cols[i, 0] > 1.0 else 1.0
        total_chars += chars
        total_words += cols[i, 1]
    if total_chars == 0:
        total_chars = 1.0
    if total_words == 0:
        total_words = 1.0
    page_feats[0] = <float> log1p(<double> n)
    page_feats[1] = <float> log1p(total_words)
    page_feats[2] = <float> log1p(html_bytes / total_chars) if html_bytes else 0.0
    try:
        good_words = <double *> _alloc(n * sizeof(double), False)
        repeat_counts = <double *> _alloc(n * n_rep * sizeof(double), True)
        scope_share = <float *> _alloc(n * n_lv * sizeof(float), True)
        in_main = <float *> _alloc(n * sizeof(float), True)
        for i in range(n):
            chars = cols[i, 0] if cols[i, 0] > 1.0 else 1.0
            link = cols[i, 4] / chars
            if link > 1.0:
                link = 1.0
            good_words[i] = cols[i, 1] if cols[i, 1] >= good_min_words and link < good_max_link \
                else 0.0
            total_good += good_words[i]
        if total_good == 0:
            total_good = 1.0
        if readability is None:
            _scope_fill(blocks, &path_of[0], good_words, total_good, repeat_levels,
                        scope_levels, main_share, repeat_counts, scope_share, in_main)
        else:
            _scope_fill(blocks, &path_of[0], good_words, total_good, repeat_levels,
                        scope_levels, main_share, repeat_counts, scope_share, in_main, &off,
                        &ids, &n_ids)
        _feature_fill(cols, path_of, attr_of, path_rows, attr_rows, page_feats, 3, n_title,
                      repeat_counts, scope_share, in_main, chars_per_word, good_min_words,
                      good_max_link, window, out, n_extra)
        if readability is not None:
            _readability_fill(blocks, off, ids, n_ids, readability, out, out.shape[1] - 6)
    finally:
        free(off)
        free(ids)
        free(good_words)
        free(repeat_counts)
        free(scope_share)
        free(in_main)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef int _feature_fill(
    const double[:, ::1] cols,
    const Py_ssize_t[::1] path_of,
    const Py_ssize_t[::1] attr_of,
    const float[:, ::1] path_rows,
    const float[:, ::1] attr_rows,
    const float *page_feats,
    Py_ssize_t n_page,
    Py_ssize_t n_title,
    const double *repeat_counts,
    const float *scope_share,
    const float *in_main,
    double chars_per_word,
    double good_min_words,
    double good_max_link,
    Py_ssize_t window,
    float[:, ::1] out,
    Py_ssize_t n_extra=0,
) except -1:
    """:func:`feature_matrix` with the page features and the scope columns as C arrays
    (row-major: ``repeat_counts`` n x 2, ``scope_share`` n x 4); the last ``n_extra`` columns
    of ``out`` are left alone."""
    cdef Py_ssize_t n = cols.shape[0]
    cdef Py_ssize_t n_tag, n_path = path_rows.shape[1], n_attr = attr_rows.shape[1]
    cdef Py_ssize_t o_tag, o_path, o_attr, o_page, o_ctx
    cdef Py_ssize_t n_paths = path_rows.shape[0]
    cdef double *link_arr
    cdef double *psum
    cdef double *c_logw
    cdef double *c_link
    cdef double *c_good
    cdef Py_ssize_t *pcount
    cdef Py_ssize_t *prev_good
    cdef float *log_words
    cdef unsigned char *good
    cdef double *bv = NULL
    cdef Py_ssize_t *iv = NULL
    if n == 0:
        return 0
    n_tag = out.shape[1] - N_LOCAL - n_path - n_attr - n_page - N_CONTEXT - n_extra
    if n_tag <= 0 or cols.shape[1] != 15 or out.shape[0] != n:
        raise ValueError("arrays have the wrong shape")
    o_tag = N_LOCAL
    o_path = o_tag + n_tag
    o_attr = o_path + n_path
    o_page = o_attr + n_attr
    o_ctx = o_page + n_page
    try:
        bv = <double *> _alloc((6 * (n + 1) + n_paths) * sizeof(double), False)
        iv = <Py_ssize_t *> _alloc((n_paths + n + 1) * sizeof(Py_ssize_t), True)
        link_arr = &bv[0]
        c_logw = &bv[n + 1]
        c_link = &bv[2 * (n + 1)]
        c_good = &bv[3 * (n + 1)]
        psum = &bv[4 * (n + 1)]
        log_words = <float *> &bv[4 * (n + 1) + n_paths]  # n floats + n bytes: in 2n doubles
        good = <unsigned char *> (log_words + n)
        pcount = &iv[0]
        prev_good = &iv[n_paths]
        _feature_loops(cols, path_of, attr_of, path_rows, attr_rows, page_feats, n_page,
                       n_title, repeat_counts, scope_share, in_main, chars_per_word,
                       good_min_words, good_max_link, window, out, n_tag, o_tag, o_path,
                       o_attr, o_page, o_ctx, link_arr, c_logw, c_link, c_good, psum, log_words,
                       good, pcount, prev_good)
    finally:
        free(bv)
        free(iv)
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef void _feature_loops(
    const double[:, ::1] cols, const Py_ssize_t[::1] path_of, const Py_ssize_t[::1] attr_of,
    const float[:, ::1] path_rows, const float[:, ::1] attr_rows, const float *page_feats,
    Py_ssize_t n_page, Py_ssize_t n_title, const double *repeat_counts,
    const float *scope_share, const float *in_main, double chars_per_word,
    double good_min_words, double good_max_link, Py_ssize_t window, float[:, ::1] out,
    Py_ssize_t n_tag, Py_ssize_t o_tag, Py_ssize_t o_path, Py_ssize_t o_attr, Py_ssize_t o_page,
    Py_ssize_t o_ctx, double *link_arr, double *c_logw, double *c_link, double *c_good,
    double *psum, float *log_words, unsigned char *good, Py_ssize_t *pcount,
    Py_ssize_t *prev_good,
) noexcept:
    cdef Py_ssize_t n = cols.shape[0], i, j, lo, hi, k, left, right, d1, d2
    cdef Py_ssize_t n_path = path_rows.shape[1], n_attr = attr_rows.shape[1]
    cdef Py_ssize_t n_paths = path_rows.shape[0], first_good = -1, last_good = -1
    cdef double chars, words, link, nonlinked, v, total_chars = 0, total_words = 0
    cdef double punct_sum = 0, vmax = 0, run = 0, no_good, nw
    for j in range(n_paths):
        psum[j] = 0.0
    # Page sums (integers in float64: exact in any order).
    for i in range(n):
        chars = cols[i, 0] if cols[i, 0] > 1.0 else 1.0
        total_chars += chars
        total_words += cols[i, 1]
        punct_sum += cols[i, 13]
    if total_chars == 0:
        total_chars = 1.0
    if total_words == 0:
        total_words = 1.0
    if punct_sum < 1.0:
        punct_sum = 1.0
    for i in range(n):  # vvtc's maximum first: the column is divided by it
        chars = cols[i, 0] if cols[i, 0] > 1.0 else 1.0
        v = (chars / total_chars) * (cols[i, 13] / punct_sum)
        if v > vmax:
            vmax = v
    if vmax < 1e-12:
        vmax = 1e-12
    # Local columns, cumulative sums for the windows, tag-path group sums.
    c_logw[0] = c_link[0] = c_good[0] = 0.0
    for i in range(n):
        chars = cols[i, 0] if cols[i, 0] > 1.0 else 1.0
        words = cols[i, 1]
        nw = words if words > 1.0 else 1.0
        link = cols[i, 4] / chars
        if link > 1.0:
            link = 1.0
        link_arr[i] = link
        nonlinked = chars - cols[i, 4]
        if nonlinked < 0.0:
            nonlinked = 0.0
        nonlinked = nonlinked / chars_per_word
        log_words[i] = <float> log1p(words)
        out[i, 0] = <float> log1p(chars)
        out[i, 1] = log_words[i]
        out[i, 2] = <float> link
        v = cols[i, 5] / (nonlinked if nonlinked > 1.0 else 1.0)
        out[i, 3] = <float> (v if v < 10.0 else 10.0)
        out[i, 4] = <float> (cols[i, 13] / nw)
        out[i, 5] = <float> cols[i, 8]
        out[i, 6] = <float> cols[i, 9]
        out[i, 7] = <float> (cols[i, 14] / chars)
        out[i, 8] = <float> (cols[i, 2] / nw)
        out[i, 9] = <float> (cols[i, 3] / nw)
        v = cols[i, 3] / <double> n_title
        out[i, 10] = <float> (v if v < 1.0 else 1.0)
        out[i, 11] = <float> cols[i, 10]
        out[i, 12] = <float> cols[i, 11]
        out[i, 13] = <float> cols[i, 12]
        out[i, 14] = (<float> i) / (<float> n)
        run += chars
        out[i, 15] = <float> ((run - chars) / total_chars)
        out[i, 16] = <float> (((chars / total_chars) * (cols[i, 13] / punct_sum)) / vmax)
        out[i, 17] = <float> log1p(cols[i, 5])
        for j in range(n_tag):
            out[i, o_tag + j] = 0.0
        out[i, o_tag + <Py_ssize_t> cols[i, 7]] = 1.0
        for j in range(n_path):
            out[i, o_path + j] = path_rows[path_of[i], j]
        for j in range(n_attr):
            out[i, o_attr + j] = attr_rows[attr_of[i], j]
        for j in range(n_page):
            out[i, o_page + j] = page_feats[j]
        good[i] = words >= good_min_words and link < good_max_link
        if good[i]:
            if first_good < 0:
                first_good = i
            last_good = i
        prev_good[i] = last_good  # the last good block at or before i
        c_logw[i + 1] = c_logw[i] + <double> log_words[i]
        c_link[i + 1] = c_link[i] + link
        c_good[i + 1] = c_good[i] + (1.0 if good[i] else 0.0)
        psum[path_of[i]] += words
        pcount[path_of[i]] += 1
    no_good = log1p(<double> n)
    right = -1  # the first good block at or after i, found walking backwards
    for i in range(n - 1, -1, -1):
        if good[i]:
            right = i
        k = o_ctx
        out[i, k] = <float> (psum[path_of[i]] / total_words)
        out[i, k + 1] = <float> log1p(<double> pcount[path_of[i]])
        out[i, k + 2] = <float> log1p(repeat_counts[2 * i])
        out[i, k + 3] = <float> log1p(repeat_counts[2 * i + 1])
        for j in range(4):
            out[i, k + 4 + j] = scope_share[4 * i + j]
        out[i, k + 8] = in_main[i]
        out[i, k + 9] = log_words[i - 1] if i >= 1 else 0.0
        out[i, k + 10] = log_words[i - 2] if i >= 2 else 0.0
        out[i, k + 11] = log_words[i + 1] if i + 1 < n else 0.0
        out[i, k + 12] = log_words[i + 2] if i + 2 < n else 0.0
        out[i, k + 13] = <float> (link_arr[i - 1] if i >= 1 else 0.0)
        out[i, k + 14] = <float> (link_arr[i - 2] if i >= 2 else 0.0)
        out[i, k + 15] = <float> (link_arr[i + 1] if i + 1 < n else 0.0)
        out[i, k + 16] = <float> (link_arr[i + 2] if i + 2 < n else 0.0)
        out[i, k + 17] = (1.0 if cols[i - 1, 6] > 0 else 0.0) if i >= 1 else 0.0
        out[i, k + 18] = (1.0 if cols[i + 1, 6] > 0 else 0.0) if i + 1 < n else 0.0
        lo = i - window if i - window > 0 else 0
        hi = i + window + 1 if i + window + 1 < n else n
        out[i, k + 19] = <float> ((c_logw[hi] - c_logw[lo]) / <double> (hi - lo))
        out[i, k + 20] = <float> ((c_link[hi] - c_link[lo]) / <double> (hi - lo))
        out[i, k + 21] = <float> ((c_good[hi] - c_good[lo]) / <double> (hi - lo))
        if first_good < 0:
            out[i, k + 22] = <float> no_good
        else:
            # numpy's searchsorted: left is the last good block before i (else the first good
            # block), right the first at or after i (else the last good block).
            left = prev_good[i - 1] if i >= 1 and prev_good[i - 1] >= 0 else first_good
            d1 = i - left if i >= left else left - i
            d2 = (right - i if right >= 0 else i - last_good)
            if d2 < 0:
                d2 = -d2
            out[i, k + 22] = <float> log1p(<double> (d1 if d1 < d2 else d2))


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def context_matrix(
    const double[::1] p,
    const int[:, ::1] groups,
    tuple windows,
    double mean,
    const Py_ssize_t[::1] order,
    float[:, ::1] out,
):
    """``blockdex.features.context_features`` written into ``out``; ``mean`` is ``p.mean()``
    and ``order`` is ``np.argsort(-p, kind="stable")`` (numpy's, so they are the same)."""
    cdef Py_ssize_t n = p.shape[0], i, j, n_groups = groups.shape[1]
    if n == 0:
        return
    if out.shape[0] != n or out.shape[1] != 7 + len(windows) + n_groups + 5 \
            or groups.shape[0] != n or order.shape[0] != n:
        raise ValueError("arrays have the wrong shape")
    for i in range(n):
        for j in range(n_groups):
            if groups[i, j] < 0:
                raise ValueError("negative group id")
    _context_fill(&p[0], n, &groups[0, 0], n_groups, windows, mean, &order[0], &out[0, 0],
                  out.shape[1])


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef int _context_fill(
    const double *p, Py_ssize_t n, const int *groups, Py_ssize_t n_groups, tuple windows,
    double mean, const Py_ssize_t *order, float *out, Py_ssize_t stride,
) except -1:
    """:func:`context_matrix` on C arrays (row-major; ``out`` rows ``stride`` floats apart;
    group ids non-negative)."""
    cdef Py_ssize_t i, j, k, w, lo, hi, col, size = 0, n_win = len(windows), g
    cdef double run, pmax
    cdef double *c = NULL
    cdef double *sums
    cdef Py_ssize_t *counts = NULL
    for i in range(n * n_groups):
        if groups[i] >= size:
            size = groups[i] + 1
    try:
        c = <double *> _alloc((n + 1 + size) * sizeof(double), False)
        sums = c + n + 1
        counts = <Py_ssize_t *> _alloc(size * sizeof(Py_ssize_t), False)
        c[0] = 0.0
        pmax = p[0]
        for i in range(n):
            c[i + 1] = c[i] + p[i]
            if p[i] > pmax:
                pmax = p[i]
            out[i * stride + 0] = <float> p[i]
            for k in range(1, 4):
                out[i * stride + k] = <float> (p[i - k] if i >= k else 0.0)
                out[i * stride + 3 + k] = <float> (p[i + k] if i + k < n else 0.0)
        col = 7
        for j in range(n_win):
            w = windows[j]
            for i in range(n):
                lo = i - w if i - w > 0 else 0
                hi = i + w + 1 if i + w + 1 < n else n
                out[i * stride + col] = <float> ((c[hi] - c[lo]) / <double> (hi - lo))
            col += 1
        for k in range(n_groups):  # scope levels, then the path group (column 0)
            j = k + 1 if k + 1 < n_groups else 0
            for g in range(size):
                sums[g] = 0.0
                counts[g] = 0
            for i in range(n):
                sums[groups[i * n_groups + j]] += p[i]
                counts[groups[i * n_groups + j]] += 1
            for i in range(n):
                g = groups[i * n_groups + j]
                out[i * stride + col] = <float> (sums[g] / <double> counts[g])
            col += 1
        run = 0.0
        for i in range(n):  # the largest probability before each block (0 for the first)
            out[i * stride + col] = <float> run
            if i == 0 or p[i] > run:
                run = p[i]
        run = 0.0
        for i in range(n - 1, -1, -1):  # and after it (0 for the last)
            out[i * stride + col + 1] = <float> run
            if i == n - 1 or p[i] > run:
                run = p[i]
        for i in range(n):
            out[i * stride + col + 2] = <float> mean
            out[i * stride + col + 3] = <float> pmax
        for k in range(n):
            out[order[k] * stride + col + 4] = <float> (<double> k / <double> n)
    finally:
        free(c)
        free(counts)
    return 0


cdef void _order_desc(const double *p, Py_ssize_t n, Py_ssize_t *order, Py_ssize_t *tmp) noexcept:
    """``np.argsort(-p, kind="stable")`` for ``p`` without NaN: positions by falling ``p``,
    equal values in position order (a stable sort's order is the only one). Bottom-up merge
    sort: a right element goes first only when strictly larger."""
    cdef Py_ssize_t i, width, lo, mid, hi, a, b, k
    cdef Py_ssize_t *src = order
    cdef Py_ssize_t *dst = tmp
    cdef Py_ssize_t *t
    for i in range(n):
        order[i] = i
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            a, b, k = lo, mid, lo
            while a < mid and b < hi:
                if p[src[b]] > p[src[a]]:
                    dst[k] = src[b]
                    b += 1
                else:
                    dst[k] = src[a]
                    a += 1
                k += 1
            while a < mid:
                dst[k] = src[a]
                a += 1
                k += 1
            while b < hi:
                dst[k] = src[b]
                b += 1
                k += 1
            lo = hi
        t = src
        src = dst
        dst = t
        width *= 2
    if src != order:
        memcpy(order, src, n * sizeof(Py_ssize_t))


cdef int _group_ids(tuple blocks, tuple levels, int *groups) except -1:
    """``blockdex.features.block_groups``' partition: per block, an id for its tag path
    (column 0) and for its ancestor at each of ``levels`` (or its outermost one, or itself
    alone when it has none), one numbering per column. Only which blocks share an id matters
    to the context columns, so the ids may differ from the pure-Python ``block_groups``' own.
    Returns 1, or 0 when an element id does not fit 64 bits (nothing usable is written then)."""
    cdef Py_ssize_t i, j, k, n = len(blocks), n_g = 1 + len(levels), n_sc, size = 8, mask, slot
    cdef Py_ssize_t o_path = 0, o_scope = 0
    cdef int next_id
    cdef int overflow = 0
    cdef long long v
    cdef tuple sc
    cdef dict paths = {}
    cdef object cls = None
    cdef long long *keys = NULL
    cdef char *used = NULL
    cdef int *ids = NULL
    while size < 2 * n + 2:
        size *= 2
    mask = size - 1
    scopes = []
    for i in range(n):
        b = blocks[i]
        if type(b) is not cls:
            cls = type(b)
            o_path = _slot_offset(cls, "path")
            o_scope = _slot_offset(cls, "scope")
        key = _field(b, o_path)
        got = paths.get(key)
        if got is None:
            got = paths[key] = len(paths)
        groups[i * n_g] = <int> got
        scopes.append(_field(b, o_scope))
    try:
        keys = <long long *> _alloc(size * sizeof(long long), False)
        used = <char *> _alloc(size, False)
        ids = <int *> _alloc(size * sizeof(int), False)
        for j in range(1, n_g):
            k = levels[j - 1]
            memset(used, 0, size)
            next_id = 0
            for i in range(n):
                sc = <tuple> scopes[i]
                n_sc = len(sc)
                if n_sc == 0:  # ("self", i): a group of its own
                    groups[i * n_g + j] = next_id
                    next_id += 1
                    continue
                v = PyLong_AsLongLongAndOverflow(sc[n_sc - 1 - k] if n_sc > k else sc[0],
                                                 &overflow)
                if overflow:
                    return 0
                slot = _id_slot(keys, used, mask, v)
                if not used[slot]:
                    used[slot] = 1
                    keys[slot] = v
                    ids[slot] = next_id
                    next_id += 1
                groups[i * n_g + j] = ids[slot]
    finally:
        free(keys)
        free(used)
        free(ids)
    return 1


@cython.boundscheck(False)
@cython.wraparound(False)
def stage2_rows(
    tuple blocks,
    const double[::1] p,
    double mean,
    tuple levels,
    tuple windows,
    double lo,
    double hi,
    const float[:, ::1] X,
):
    """The second stage's input in one call: the positions of the blocks whose first-stage
    probability ``p`` is within ``[lo, hi]``, and their rows of ``X`` followed by their
    :func:`context_matrix` columns (groups as ``blockdex.features.block_groups``, ``mean`` is
    ``p.mean()``, the rank by a stable sort) as one float32 matrix: what
    ``np.hstack([X[unsure], context_features(p, block_groups(page))[unsure]])`` gives.
    Returns ``(positions, rows)``, or None when it cannot (an element id past 64 bits, a NaN
    probability): the caller then takes the numpy route."""
    cdef Py_ssize_t n = p.shape[0], i, j, m = 0, r = 0, n_g = 1 + len(levels)
    cdef Py_ssize_t n_x = X.shape[1], n_ctx = 7 + len(windows) + n_g + 5
    cdef int *groups = NULL
    cdef Py_ssize_t *order = NULL
    cdef float *ctx = NULL
    if len(blocks) != n or X.shape[0] != n:
        raise ValueError("arrays have the wrong shape")
    for i in range(n):
        if p[i] != p[i]:
            return None
        if p[i] >= lo and p[i] <= hi:
            m += 1
    positions = np.empty(m, dtype=np.intp)
    rows = np.empty((m, n_x + n_ctx), dtype=np.float32)
    if m == 0:
        return positions, rows
    cdef Py_ssize_t[::1] pos = positions
    cdef float[:, ::1] out = rows
    try:
        groups = <int *> _alloc(n * n_g * sizeof(int), False)
        if not _group_ids(blocks, levels, groups):
            return None
        order = <Py_ssize_t *> _alloc(2 * n * sizeof(Py_ssize_t), False)
        _order_desc(&p[0], n, order, order + n)
        ctx = <float *> _alloc(n * n_ctx * sizeof(float), False)
        _context_fill(&p[0], n, groups, n_g, windows, mean, order, ctx, n_ctx)
        for i in range(n):
            if p[i] >= lo and p[i] <= hi:
                pos[r] = i
                memcpy(&out[r, 0], &X[i, 0], n_x * sizeof(float))
                memcpy(&out[r, n_x], ctx + i * n_ctx, n_ctx * sizeof(float))
                r += 1
    finally:
        free(groups)
        free(order)
        free(ctx)
    return positions, rows


# -- noise removal: which tags a page has ----------------------------------------------------------

@cython.final
cdef class _TagKinds:
    """An element's kind by its lower-cased tag name (``kinds``; 0 for other names), looked up
    once per lexbor tag id (elements with a prefix or a large id: every time). ``names``, when
    given, collects every name looked up."""
    cdef unsigned char state[SMALL_TAG_IDS]  # kind + 1 by tag id; 0: not looked up yet
    cdef dict kinds
    cdef set names

    def __cinit__(self, dict kinds, set names=None):
        memset(self.state, 0, SMALL_TAG_IDS)
        self.kinds = kinds
        self.names = names

    cdef inline int of(self, bd_node *node) except -1:
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


cdef bint _holds_text(bd_node *top, Py_ssize_t min_chars):
    """Whether ``top``'s subtree may hold ``min_chars`` characters of text joined with one
    separator between text nodes (UTF-8 bytes plus one per text node: never fewer)."""
    cdef size_t total
    cdef bd_chardata *last
    cdef Py_ssize_t parts = _text_nodes(top, &total, &last)
    return <Py_ssize_t> total + parts >= min_chars


cdef bint _is_hidden(bd_node *node) noexcept:
    """Whether the element matches ``blockdex.clean.HIDDEN_SELECTOR`` but for its
    ``input[type="hidden"]`` part (inputs are noise elements anyway): a ``hidden`` attribute, or a
    ``style`` holding ``display:none``, ``display: none``, ``visibility:hidden`` or
    ``visibility: hidden`` (case kept, as lexbor's ``*=`` compares)."""
    cdef size_t n = 0
    cdef const unsigned char *name
    cdef const unsigned char *v
    cdef void *attr = _attr_first(<void *> node)
    while attr != NULL:
        name = _attr_qname(attr, &n)
        if name != NULL:
            if n == 6 and _ascii_ieq(<const unsigned char *> b"hidden", name, 6):
                return True
            if n == 5 and _ascii_ieq(<const unsigned char *> b"style", name, 5):
                v = _attr_value(attr, &n)
                if v != NULL and (
                    memmem(v, n, b"display:none", 12) != NULL
                    or memmem(v, n, b"display: none", 13) != NULL
                    or memmem(v, n, b"visibility:hidden", 17) != NULL
                    or memmem(v, n, b"visibility: hidden", 18) != NULL
                ):
                    return True
        attr = _attr_next(attr)
    return False


cdef inline bd_node *_after(bd_node *node, bd_node *root) noexcept:
    """The node after ``node``'s subtree in document order inside ``root``'s, or NULL."""
    while node != NULL and node != root:
        if node.next != NULL:
            return node.next
        node = node.parent
    return NULL


def noise_drop(uintptr_t root_id, frozenset noise_names, Py_ssize_t noscript_min_chars,
               uintptr_t head_id, uintptr_t body_id, bint drop_hidden=True):
    """``blockdex.clean.drop_noise`` in one walk when no ``<noscript>`` may hold content: detach
    every element below the root (a ``mem_id``) whose lower-cased name is in ``noise_names`` or
    that is hidden (:func:`_is_hidden`; never the ``body_id`` element; only when
    ``drop_hidden``), outermost first (what lies inside goes with it).

    Returns None, having changed nothing, when a noscript that would be removed may hold
    ``noscript_min_chars`` characters (:func:`_holds_text`: the caller's exact check decides)
    or lexbor's remove function is missing. Otherwise ``(removed, head)``: how many elements
    were detached, and whether the ``head_id`` element is to be removed too (the caller does
    that through selectolax, which then resets its cached head). Call only when
    :func:`lexbor_ready` is True."""
    cdef bd_node *root = <bd_node *> root_id
    cdef bd_node *node
    cdef dict names = dict.fromkeys(noise_names, 1)
    cdef _TagKinds kinds
    cdef int kind
    cdef bint head = False
    cdef list doomed = []
    if _node_remove == NULL:
        return None
    if "noscript" in names:
        names["noscript"] = 2  # a noise element that may be the page's content
    kinds = _TagKinds(names)
    node = _following(root, root)
    while node != NULL:
        if node.type == NODE_ELEMENT:
            kind = kinds.of(node)
            if kind == 2 and noscript_min_chars > 0 and _holds_text(node, noscript_min_chars):
                return None
            if kind or (drop_hidden and <uintptr_t> node != body_id and _is_hidden(node)):
                if <uintptr_t> node == head_id:
                    head = True
                else:
                    doomed.append(<uintptr_t> node)
                node = _after(node, root)
                continue
        node = _following(node, root)
    for node_id in doomed:
        _node_remove(<void *> <uintptr_t> node_id)
    return len(doomed), head


def swallow_suspects(uintptr_t root_id, frozenset names, Py_ssize_t min_bytes):
    """Whether the subtree at ``root_id`` (a ``mem_id``) has an element whose lower-cased name is
    in ``names`` with at least ``min_bytes`` bytes of text below it (UTF-8 bytes: at least as
    many as characters, so False means no such element has ``min_bytes`` characters either).
    Call only when :func:`lexbor_ready` is True."""
    cdef bd_node *root = <bd_node *> root_id
    cdef bd_node *node = root
    cdef _TagKinds kinds = _TagKinds(dict.fromkeys(names, 1))
    cdef size_t total
    cdef bd_chardata *last
    while node != NULL:
        if node.type == NODE_ELEMENT and kinds.of(node) == 1:
            _text_nodes(node, &total, &last)
            if total >= <size_t> min_bytes:
                return True
        node = _following(node, root)
    return False


# -- tag-path and class/id ids per block ------------------------------------------------------------

@cython.boundscheck(False)
@cython.wraparound(False)
def path_attr_ids(tuple blocks, Py_ssize_t[::1] path_of, Py_ssize_t[::1] attr_of):
    """``blockdex.features.block_features``' numbering of distinct tag paths and attrs strings
    (first seen, first numbered): fills ``path_of``/``attr_of``, returns the two dicts."""
    cdef dict path_ids = {}, attr_ids = {}
    cdef Py_ssize_t i, n = len(blocks), o_path = 0, o_attrs = 0
    cdef object block_cls = None
    if path_of.shape[0] != n or attr_of.shape[0] != n:
        raise ValueError("arrays have the wrong length")
    for i in range(n):
        b = blocks[i]
        if type(b) is not block_cls:
            block_cls = type(b)
            o_path = _slot_offset(block_cls, "path")
            o_attrs = _slot_offset(block_cls, "attrs")
        key = _field(b, o_path)
        v = path_ids.get(key)
        if v is None:
            v = path_ids[key] = len(path_ids)
        path_of[i] = v
        key = _field(b, o_attrs)
        v = attr_ids.get(key)
        if v is None:
            v = attr_ids[key] = len(attr_ids)
        attr_of[i] = v
    return path_ids, attr_ids


@cython.boundscheck(False)
@cython.wraparound(False)
def path_rows(list paths, tuple path_tags, float[:, ::1] out):
    """``blockdex.features._path_vector`` for each path (``out[k, j]`` is 1 when
    ``path_tags[j]`` is one of the path's ``>``-separated tags other than the last)."""
    cdef Py_ssize_t k, j, m = len(path_tags)
    cdef list tags
    if out.shape[0] != len(paths) or out.shape[1] != m:
        raise ValueError("out has the wrong shape")
    for k in range(len(paths)):
        tags = (<str> paths[k]).split(">")
        present = set(tags[: len(tags) - 1])
        for j in range(m):
            out[k, j] = 1.0 if path_tags[j] in present else 0.0


# -- metadata: the page's meta and link elements ----------------------------------------------------

cdef bint _has_attr(bd_node *node, bytes key):
    return _find_attr(node, key) != NULL


cdef bint _attr_is(bd_node *node, bytes key, bytes value):
    """Whether the element's ``key`` attribute equals ``value`` ignoring ASCII case (how
    lexbor's CSS matches ``[key="value"]`` on an HTML element)."""
    cdef size_t n = 0, m = len(value)
    cdef const unsigned char *v
    cdef void *attr = _find_attr(node, key)
    if attr == NULL:
        return False
    v = _attr_value(attr, &n)
    return v != NULL and n == m and _ascii_ieq(<const unsigned char *> value, v, m)


def meta_elements(uintptr_t root_id):
    """What ``tree.css('meta, link[rel], script[type="application/ld+json"], title, html')``
    finds in the subtree at ``root_id`` (a ``mem_id``), the root included, in document order, as
    what ``blockdex.parse.read_metadata`` reads: ``("meta", property, name, itemprop,
    http-equiv, content)``, ``("link", rel, href)`` (None for a missing attribute),
    ``("ld+json", text)``, and for the first title and the first html element only
    ``("title", text)`` and ``("html", lang, xml:lang)``, and ``("base", href)`` for the first
    ``<base>`` with an href: :func:`page_survey`'s rows. Call only
    when :func:`lexbor_ready` is True."""
    return page_survey(root_id, frozenset(), 0, (), frozenset())[1]


# -- script rescue: which scripts to read -----------------------------------------------------------



cdef bint _holds_any(const unsigned char *data, size_t n, tuple needles):
    cdef bytes needle
    for needle in needles:
        if memmem(data, n, <const char *> needle, len(needle)) != NULL:
            return True
    return False


def script_elements(uintptr_t root_id, tuple needles):
    """The ``<script>`` elements with text in the subtree at ``root_id`` (a ``mem_id``), in
    document order (as ``tree.css("script")``), each as ``(type, id, mem_id, holds)``: its type
    and id attributes (None when missing), its address for :func:`deep_text`, and whether its
    text may hold one of ``needles`` (ASCII bytes; True when the text is split over several
    nodes, which the caller then searches itself). The text is not decoded here: most scripts
    hold none of the needles and are never read. Call only when :func:`lexbor_ready` is True."""
    cdef bd_node *root = <bd_node *> root_id
    cdef bd_node *node = root
    cdef bd_chardata *only
    cdef _TagKinds kinds = _TagKinds({"script": 1})
    cdef size_t total
    cdef Py_ssize_t parts
    out = []
    while node != NULL:
        if node.type == NODE_ELEMENT and kinds.of(node) == 1:
            parts = _text_nodes(node, &total, &only)
            if total:
                out.append((
                    _attr(node, b"type"),
                    _attr(node, b"id"),
                    <uintptr_t> node,
                    parts > 1 or _holds_any(only.data.data, only.data.length, needles),
                ))
        node = _following(node, root)
    return out


cdef enum:  # what page_survey does with an element, as bits (an element may be two kinds)
    SURVEY_META = 1
    SURVEY_LINK = 2
    SURVEY_BASE = 4
    SURVEY_TITLE = 8
    SURVEY_HTML = 16
    SURVEY_SWALLOW = 32
    SURVEY_SCRIPT = 64
    SURVEY_MATH = 128


cdef bint _type_has_json(bd_node *node):
    """Whether the element's type attribute holds "json" in any case."""
    cdef size_t n = 0, i
    cdef const unsigned char *v
    cdef void *attr = _find_attr(node, b"type")
    if attr == NULL:
        return False
    v = _attr_value(attr, &n)
    if v == NULL or n < 4:
        return False
    for i in range(n - 3):
        if _ascii_ieq(v + i, <const unsigned char *> b"json", 4):
            return True
    return False


def page_survey(uintptr_t root_id, frozenset swallowing, Py_ssize_t min_bytes, tuple needles,
                frozenset read_ids, Py_ssize_t max_depth=-1):
    """:func:`swallow_suspects`, :func:`meta_elements` and :func:`script_elements` in one walk
    over the subtree at ``root_id`` (a ``mem_id``): ``(suspect, meta_rows, scripts, math)``,
    where ``math`` says whether a ``<math>`` or ``<mjx-container>`` element lies in it.

    ``scripts`` holds ``(type, id, code, holds)`` per script with text, where ``code`` is the
    decoded text when the cleaner may read it (it holds a needle, its type mentions json, or
    its id is in ``read_ids``) and None otherwise: the list keeps no node address, so it stays
    safe to read after the tree is edited or freed. With ``max_depth`` >= 0 the walk also does
    :func:`has_deep_element`'s check and returns None as soon as an element has ``max_depth``
    element ancestors in the subtree. Call only when :func:`lexbor_ready` is True."""
    cdef bd_node *root = <bd_node *> root_id
    cdef bd_node *node = root
    cdef Py_ssize_t depth = 0  # ancestors of node inside the subtree
    cdef dict kinds_of = {"meta": SURVEY_META, "link": SURVEY_LINK, "title": SURVEY_TITLE,
                          "html": SURVEY_HTML, "script": SURVEY_SCRIPT,
                          "math": SURVEY_MATH, "mjx-container": SURVEY_MATH,
                          "base": SURVEY_BASE}
    for name in swallowing:
        kinds_of[name] = kinds_of.get(name, 0) | SURVEY_SWALLOW
    cdef _TagKinds kinds = _TagKinds(kinds_of)
    cdef int kind
    cdef bint title = False, html = False, suspect = False, holds, math = False, base = False
    cdef size_t total
    cdef bd_chardata *only
    cdef Py_ssize_t parts
    meta = []
    scripts = []
    while node != NULL:
        if node.type == NODE_ELEMENT:
            if depth >= max_depth >= 0:
                return None
            kind = kinds.of(node)
            if kind:
                if kind & SURVEY_MATH:
                    math = True
                if kind & SURVEY_SWALLOW and not suspect:
                    _text_nodes(node, &total, &only)
                    suspect = total >= <size_t> min_bytes
                if kind & SURVEY_META:
                    meta.append((
                        "meta", _attr(node, b"property"), _attr(node, b"name"),
                        _attr(node, b"itemprop"), _attr(node, b"http-equiv"),
                        _attr(node, b"content"),
                    ))
                elif kind & SURVEY_LINK:
                    if _has_attr(node, b"rel"):
                        meta.append(("link", _attr(node, b"rel"), _attr(node, b"href")))
                elif kind & SURVEY_SCRIPT:
                    code = None
                    if _attr_is(node, b"type", b"application/ld+json"):
                        code = deep_text(<uintptr_t> node)
                        meta.append(("ld+json", code))
                    parts = _text_nodes(node, &total, &only)
                    if total:
                        holds = parts > 1 or _holds_any(only.data.data, only.data.length, needles)
                        stype = _attr(node, b"type")
                        sid = _attr(node, b"id")
                        if code is None and (holds or _type_has_json(node) or sid in read_ids):
                            code = deep_text(<uintptr_t> node)
                        scripts.append((stype, sid, code, holds))
                elif kind & SURVEY_TITLE:
                    if not title:
                        meta.append(("title", deep_text(<uintptr_t> node)))
                        title = True
                elif kind & SURVEY_BASE:
                    if not base and _has_attr(node, b"href"):
                        meta.append(("base", _attr(node, b"href")))
                        base = True
                elif kind & SURVEY_HTML and not html:
                    meta.append(("html", _attr(node, b"lang"), _attr(node, b"xml:lang")))
                    html = True
        # _following(node, root), keeping the depth
        if node.first_child != NULL:
            node = node.first_child
            depth += 1
            continue
        while node != NULL and node != root:
            if node.next != NULL:
                node = node.next
                break
            node = node.parent
            depth -= 1
        else:
            node = NULL
    return suspect, meta, scripts, math


def deep_text(uintptr_t node_id):
    """What ``LexborNode.text(deep=True)`` gives for the element at ``node_id`` (a ``mem_id``):
    its descendant text nodes' text, concatenated."""
    cdef bd_node *top = <bd_node *> node_id
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


# -- units: which blocks each marked element holds ------------------------------------------------


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
    cdef uintptr_t *sorted_marks
    cdef Py_ssize_t *first
    cdef Py_ssize_t *last
    cdef bd_node *node
    out = {}
    if n_marks == 0:
        return out
    sorted_marks = <uintptr_t *> malloc(n_marks * sizeof(uintptr_t))
    first = <Py_ssize_t *> malloc(n_marks * sizeof(Py_ssize_t))
    last = <Py_ssize_t *> malloc(n_marks * sizeof(Py_ssize_t))
    if sorted_marks == NULL or first == NULL or last == NULL:
        free(sorted_marks)
        free(first)
        free(last)
        raise MemoryError()
    try:
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
    """``blockdex.units._survey`` and ``blockdex.units._big_elements`` in one walk below the
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
    cdef bd_node **open_nodes
    cdef size_t *acc
    cdef Py_ssize_t *opened
    cdef bd_node **grown_nodes
    cdef size_t *grown_acc
    cdef Py_ssize_t *grown_opened
    candidates = []
    found = []
    threshold = <size_t> (min_share * total) if total else 0
    open_nodes = <bd_node **> malloc(room * sizeof(bd_node *))
    acc = <size_t *> malloc(room * sizeof(size_t))
    opened = <Py_ssize_t *> malloc(room * sizeof(Py_ssize_t))
    if open_nodes == NULL or acc == NULL or opened == NULL:
        free(open_nodes)
        free(acc)
        free(opened)
        raise MemoryError()
    try:
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


# -- segmentation: token counts of long blocks -----------------------------------------------------

cdef extern from "Python.h":
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch)


def count_tokens_upto(str text, Py_ssize_t limit):
    """``len(_TOKEN_RE.findall(text))`` (``blockdex.segment.count_tokens``), but
    ``limit + 1`` as soon as the count passes ``limit``: runs of word characters (``\\w`` is
    ``str.isalnum()`` or ``_``, as the regex engine has it) and single characters that are
    neither word characters nor whitespace; a character of the CJK ranges (``set_cjk_ranges``)
    is a token of its own."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t i = 0, n = len(text), count = 0
    cdef Py_UCS4 c
    while i < n:
        c = PyUnicode_READ(kind, data, i)
        if _is_cjk(c):
            i += 1
        elif c == 95 or Py_UNICODE_ISALNUM(c):
            i += 1
            while i < n:
                c = PyUnicode_READ(kind, data, i)
                if not (c == 95 or Py_UNICODE_ISALNUM(c)) or _is_cjk(c):
                    break
                i += 1
        elif Py_UNICODE_ISSPACE(c):
            i += 1
            continue
        else:
            i += 1
        count += 1
        if count > limit:
            return limit + 1
    return count


# -- parse: NUL characters -------------------------------------------------------------------------

@cython.boundscheck(False)
@cython.wraparound(False)
cdef bint _has_zero(const _char_t *p, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i = 0, j, end
    cdef unsigned int acc
    while i < n:
        end = i + 4096 if i + 4096 < n else n
        acc = 0
        for j in range(i, end):  # no early exit inside a chunk: the compiler vectorises it
            acc |= p[j] == 0
        if acc:
            return True
        i = end
    return False


def has_nul(str text):
    """``"\\x00" in text``. CPython finds a character in two-byte text with memchr on its low
    byte, and NUL is the high byte of every ASCII character: ~60x slower than in one-byte
    text (244 µs for 300,000 characters here); this checks each character, in chunks."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text)
    if kind == PyUnicode_1BYTE_KIND:
        return memchr(data, 0, n) != NULL
    if kind == PyUnicode_2BYTE_KIND:
        return _has_zero(<const unsigned short *> data, n)
    return _has_zero(<const unsigned int *> data, n)


cdef inline Py_ssize_t _count_controls(const _char_t *data, Py_ssize_t n) noexcept:
    cdef Py_ssize_t i, count = 0
    cdef Py_UCS4 c
    for i in range(n):
        c = data[i]
        if c <= 0x08 or c == 0x0B or (0x0E <= c <= 0x1F) or c == 0x7F:
            count += 1
    return count


def count_controls(str text, Py_ssize_t end):
    """``len(blockdex.parse._CONTROL_RE.findall(text[:end]))``: characters U+0000-U+0008,
    U+000B, U+000E-U+001F and U+007F among the first ``end``, without the list of matches."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = len(text)
    if end < n:
        n = end if end > 0 else 0
    if kind == PyUnicode_1BYTE_KIND:
        return _count_controls(<const unsigned char *> data, n)
    if kind == PyUnicode_2BYTE_KIND:
        return _count_controls(<const unsigned short *> data, n)
    return _count_controls(<const unsigned int *> data, n)


# -- parse: the UTF-8 bytes lexbor reads ------------------------------------------------------------

cdef extern from *:
    """
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif

    /* One code point below U+10000 as UTF-8; lone surrogates are dropped (errors="ignore"). */
    #define BD_PUT_BMP(o, c) do { \\
        if ((c) < 0x80) *(o)++ = (unsigned char) (c); \\
        else if ((c) < 0x800) { \\
            *(o)++ = (unsigned char) (0xC0 | ((c) >> 6)); \\
            *(o)++ = (unsigned char) (0x80 | ((c) & 0x3F)); \\
        } else if ((c) < 0xD800 || (c) > 0xDFFF) { \\
            *(o)++ = (unsigned char) (0xE0 | ((c) >> 12)); \\
            *(o)++ = (unsigned char) (0x80 | (((c) >> 6) & 0x3F)); \\
            *(o)++ = (unsigned char) (0x80 | ((c) & 0x3F)); \\
        } \\
    } while (0)

    static Py_ssize_t bd_utf8_1(const unsigned char *s, Py_ssize_t n, unsigned char *out) {
        unsigned char *o = out;
        Py_ssize_t i = 0;
    #if defined(__SSE2__)
        while (i + 16 <= n) {  /* sixteen ASCII characters are their own bytes */
            __m128i v = _mm_loadu_si128((const __m128i *) (s + i));
            if (_mm_movemask_epi8(v) == 0) {
                _mm_storeu_si128((__m128i *) o, v);
                o += 16;
                i += 16;
                continue;
            }
            for (Py_ssize_t end = i + 16; i < end; i++) BD_PUT_BMP(o, (unsigned int) s[i]);
        }
    #endif
        for (; i < n; i++) BD_PUT_BMP(o, (unsigned int) s[i]);
        return o - out;
    }

    static Py_ssize_t bd_utf8_2(const Py_UCS2 *s, Py_ssize_t n, unsigned char *out) {
        unsigned char *o = out;
        Py_ssize_t i = 0;
    #if defined(__SSE2__)
        const __m128i high = _mm_set1_epi16((short) 0xFF80);
        const __m128i zero = _mm_setzero_si128();
        while (i + 16 <= n) {  /* sixteen ASCII characters: packed to their bytes */
            __m128i a = _mm_loadu_si128((const __m128i *) (s + i));
            __m128i b = _mm_loadu_si128((const __m128i *) (s + i + 8));
            __m128i any = _mm_and_si128(_mm_or_si128(a, b), high);
            if (_mm_movemask_epi8(_mm_cmpeq_epi16(any, zero)) == 0xFFFF) {
                _mm_storeu_si128((__m128i *) o, _mm_packus_epi16(a, b));
                o += 16;
                i += 16;
                continue;
            }
            for (Py_ssize_t end = i + 16; i < end; i++) BD_PUT_BMP(o, (unsigned int) s[i]);
        }
    #endif
        for (; i < n; i++) BD_PUT_BMP(o, (unsigned int) s[i]);
        return o - out;
    }

    static Py_ssize_t bd_utf8_4(const Py_UCS4 *s, Py_ssize_t n, unsigned char *out) {
        unsigned char *o = out;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 c = s[i];
            if (c < 0x10000) BD_PUT_BMP(o, c);
            else {
                *o++ = (unsigned char) (0xF0 | (c >> 18));
                *o++ = (unsigned char) (0x80 | ((c >> 12) & 0x3F));
                *o++ = (unsigned char) (0x80 | ((c >> 6) & 0x3F));
                *o++ = (unsigned char) (0x80 | (c & 0x3F));
            }
        }
        return o - out;
    }

    /* text.encode("utf-8", "ignore") */
    static PyObject *bd_utf8_ignore(PyObject *text) {
        Py_ssize_t n = PyUnicode_GET_LENGTH(text), len;
        int kind = PyUnicode_KIND(text);
        const void *data = PyUnicode_DATA(text);
        PyObject *out;
        if (PyUnicode_IS_ASCII(text))
            return PyBytes_FromStringAndSize((const char *) data, n);
        if (n > PY_SSIZE_T_MAX / 4)
            return PyErr_NoMemory();
        out = PyBytes_FromStringAndSize(NULL, n * (kind == PyUnicode_1BYTE_KIND ? 2 : kind == PyUnicode_2BYTE_KIND ? 3 : 4));
        if (out == NULL)
            return NULL;
        if (kind == PyUnicode_1BYTE_KIND)
            len = bd_utf8_1((const unsigned char *) data, n, (unsigned char *) PyBytes_AS_STRING(out));
        else if (kind == PyUnicode_2BYTE_KIND)
            len = bd_utf8_2((const Py_UCS2 *) data, n, (unsigned char *) PyBytes_AS_STRING(out));
        else
            len = bd_utf8_4((const Py_UCS4 *) data, n, (unsigned char *) PyBytes_AS_STRING(out));
        if (_PyBytes_Resize(&out, len) < 0)
            return NULL;
        return out;
    }
    """
    bytes bd_utf8_ignore(str text)


def utf8_ignore(str text):
    """``text.encode("utf-8", "ignore")`` (what selectolax does to text before lexbor parses it:
    lone surrogates are dropped), ASCII runs sixteen characters at a time. CPython's encoder
    goes character by character through two-byte text, the common kind of page (a curly quote
    is enough): 0.5 ns a character here."""
    return bd_utf8_ignore(text)
