# cython: language_level=3
"""Compiled twin of ``blockdex/clean.py`` (optional; built by ``pip install``).

* :func:`noise_drop` — ``clean.drop_noise`` in one walk over lexbor's tree.
* :func:`script_elements`, :func:`deep_text` — the scripts the rescue of framework state reads,
  and an element's text.
* :func:`long_string_literals` — the JSON string literals of a script longer than a minimum.
* :func:`interface_candidates` — the elements ``clean.drop_interface`` may drop (hover cards,
  permalink anchors), as :class:`UiNode`\ s, read like selectolax's nodes by its rules.

Each gives what its pure-Python twin gives (tests/test_speedups.py compares them); blockdex uses
the Python code when this module is not built, and ``BLOCKDEX_PURE_PYTHON=1`` forces it.
"""

cimport cython
from libc.stdint cimport uintptr_t
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_KIND, PyUnicode_READ
from blockdex._lexbor_c cimport (
    NODE_ELEMENT, NODE_TEXT, _TagKinds, _all_needles, _ascii_ieq, _attr, _attr_first, _attr_next,
    _attr_qname, _attr_value, _decode, _deep_text, _find_attr, _following, _needle_mask,
    _node_remove, _tag, _text, _text_nodes, bd_chardata, bd_node, memmem,
)

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

def script_elements(uintptr_t root_id, tuple needles):
    """The ``<script>`` elements with text in the subtree at ``root_id`` (a ``mem_id``), in
    document order (as ``tree.css("script")``), each as ``(type, id, mem_id, holds)``: its type
    and id attributes (None when missing), its address for :func:`deep_text`, and which groups
    of ``needles`` (tuples of ASCII bytes, at most 32 groups) its text may hold, as a mask (bit
    ``g``: a needle of ``needles[g]``; every bit when the text is split over several nodes,
    which the caller then searches itself). The text is not decoded here: most scripts
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
                    _all_needles(needles) if parts > 1
                    else _needle_mask(only.data.data, only.data.length, needles),
                ))
        node = _following(node, root)
    return out

def deep_text(uintptr_t node_id):
    """What ``LexborNode.text(deep=True)`` gives for the element at ``node_id`` (a ``mem_id``):
    its descendant text nodes' text, concatenated."""
    return _deep_text(<bd_node *> node_id)


# -- hover cards and permalink anchors (clean.drop_interface) ------------------------------------


@cython.final
cdef class UiNode:
    """A lexbor node read as ``clean.drop_interface``'s rules read selectolax's ``LexborNode``:
    the same names (``tag``, ``attributes``, ``parent``, ``prev``, ``text``, ``text_content``,
    ``traverse``, ``mem_id``) giving the same values, so one set of rules serves both paths."""

    cdef bd_node *node

    @property
    def mem_id(self):
        return <uintptr_t> self.node

    @property
    def tag(self):
        return _tag(self.node)

    @property
    def attributes(self):
        """Every attribute, name → value (None for one without a value), as selectolax's."""
        cdef size_t n = 0, m = 0
        cdef const unsigned char *name
        cdef const unsigned char *value
        cdef void *attr
        out = {}
        if self.node.type != NODE_ELEMENT:
            return out
        attr = _attr_first(<void *> self.node)
        while attr != NULL:
            name = _attr_qname(attr, &n)
            if name != NULL:
                key = _decode(name, n)
                if key not in out:
                    value = _attr_value(attr, &m)
                    out[key] = _decode(value, m) if value != NULL else None
            attr = _attr_next(attr)
        return out

    @property
    def parent(self):
        return _ui_node(self.node.parent)

    @property
    def prev(self):
        return _ui_node(self.node.prev)

    @property
    def text_content(self):
        return _text(self.node)

    def text(self, deep=True):
        """The text of the nodes below, concatenated (``LexborNode.text(deep=True)``)."""
        return _deep_text(self.node)

    def traverse(self, include_text=False):
        """This element and every element below it, in document order."""
        cdef bd_node *n = self.node
        cdef bd_node *top = self.node
        out = []
        while n != NULL:
            if n.type == NODE_ELEMENT or (include_text and n.type == NODE_TEXT):
                out.append(_ui_node(n))
            n = _following(n, top)
        return out

    def decompose(self):
        """Detach the node from the tree, what lies inside with it (as ``noise_drop`` does)."""
        _node_remove(<void *> self.node)


cdef object _ui_node(bd_node *node):
    """A :class:`UiNode` for ``node``; None for no node or the document."""
    cdef UiNode out
    if node == NULL or node.parent == NULL:
        return None
    out = UiNode.__new__(UiNode)
    out.node = node
    return out


cdef bint _ascii_icontains(const unsigned char *hay, size_t n, bytes needle) noexcept:
    """Whether the lower-case ASCII ``needle`` occurs in ``hay``, ASCII case ignored."""
    cdef const unsigned char *ned = needle
    cdef size_t k = len(needle), i, j
    cdef unsigned char c
    if k == 0 or k > n:
        return k == 0
    for i in range(n - k + 1):
        for j in range(k):
            c = hay[i + j]
            if 65 <= c <= 90:
                c += 32
            if c != ned[j]:
                break
        else:
            return True
    return False


cdef bint _attr_holds(bd_node *node, bytes name, tuple needles) noexcept:
    """Whether the element's attribute ``name`` holds one of ``needles`` (ASCII case ignored)."""
    cdef size_t n = 0
    cdef const unsigned char *value
    cdef void *attr = _find_attr(node, name)
    cdef bytes needle
    if attr == NULL:
        return False
    value = _attr_value(attr, &n)
    if value == NULL:
        return False
    for needle in needles:
        if _ascii_icontains(value, n, needle):
            return True
    return False


cdef Py_ssize_t _short_text_chars(bd_node *top, Py_ssize_t most) noexcept:
    """The characters of the text below ``top`` (UTF-8 lead bytes), or ``most + 1`` as soon
    as they are more than ``most``."""
    cdef bd_node *n = _following(top, top)
    cdef bd_chardata *ch
    cdef Py_ssize_t count = 0
    cdef size_t i
    while n != NULL:
        if n.type == NODE_TEXT:
            ch = <bd_chardata *> n
            if ch.data.data != NULL:
                for i in range(ch.data.length):
                    if (ch.data.data[i] & 0xC0) != 0x80:
                        count += 1
                if count > most:
                    return most + 1
        n = _following(n, top)
    return count


cdef bint _text_holds(bd_node *top, bytes needle) except -1:
    """Whether the text below ``top`` (its text nodes' text, joined) holds the lower-case ASCII
    ``needle``, case ignored; read in place when it is one text node."""
    cdef size_t total
    cdef bd_chardata *only
    cdef Py_ssize_t parts = _text_nodes(top, &total, &only)
    if parts == 0 or total < <size_t> len(needle):
        return False
    if parts == 1:
        return _ascii_icontains(only.data.data, only.data.length, needle)
    text = _deep_text(top).encode("utf-8", "surrogatepass")
    return _ascii_icontains(<const unsigned char *> <const char *> text, len(text), needle)


def interface_candidates(uintptr_t root_id, tuple card_needles, tuple link_needles,
                         bytes more_needle, Py_ssize_t max_link_chars):
    """The elements below the root (a ``mem_id``) that ``clean.drop_interface``'s rules may drop
    or start from, in document order, as ``(kind, UiNode)``: ``1`` an element whose class holds
    one of ``card_needles``; ``2`` a link of at most ``max_link_chars`` characters of text whose
    ``href`` starts with ``#``, whose class holds one of ``link_needles``, or whose text holds
    ``more_needle`` (needles: lower-case ASCII bytes, case ignored). Every element the rules
    drop is one of them or holds one. Call only when :func:`lexbor_ready` is True."""
    cdef bd_node *root = <bd_node *> root_id
    cdef bd_node *node = _following(root, root)
    cdef _TagKinds kinds = _TagKinds({"a": 1})
    cdef size_t n = 0
    cdef const unsigned char *href
    cdef void *attr
    cdef bint maybe
    out = []
    while node != NULL:
        if node.type == NODE_ELEMENT:
            if _attr_holds(node, b"class", card_needles):
                out.append((1, _ui_node(node)))
            if kinds.of(node) == 1 and _short_text_chars(node, max_link_chars) <= max_link_chars:
                maybe = False
                attr = _find_attr(node, b"href")
                if attr != NULL:
                    href = _attr_value(attr, &n)
                    maybe = href != NULL and n > 0 and href[0] == 35  # '#'
                if (maybe or _attr_holds(node, b"class", link_needles)
                        or _text_holds(node, more_needle)):
                    out.append((2, _ui_node(node)))
        node = _following(node, root)
    return out


def can_remove():
    """Whether lexbor's remove function was found (:class:`UiNode.decompose` needs it)."""
    return _node_remove != NULL
