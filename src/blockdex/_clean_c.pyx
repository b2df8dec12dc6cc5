# cython: language_level=3
"""Compiled twin of ``blockdex/clean.py`` (optional; built by ``pip install``).

* :func:`noise_drop` — ``clean.drop_noise`` in one walk over lexbor's tree.
* :func:`script_elements`, :func:`deep_text` — the scripts the rescue of framework state reads,
  and an element's text.
* :func:`long_string_literals` — the JSON string literals of a script longer than a minimum.

Each gives what its pure-Python twin gives (tests/test_speedups.py compares them); blockdex uses
the Python code when this module is not built, and ``BLOCKDEX_PURE_PYTHON=1`` forces it.
"""

cimport cython
from libc.stdint cimport uintptr_t
from cpython.unicode cimport PyUnicode_DATA, PyUnicode_KIND, PyUnicode_READ
from blockdex._lexbor_c cimport (
    NODE_ELEMENT, _TagKinds, _all_needles, _ascii_ieq, _attr, _attr_first, _attr_next,
    _attr_qname, _attr_value, _deep_text, _following, _needle_mask, _node_remove, _text_nodes,
    bd_chardata, bd_node, memmem,
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
