# cython: language_level=3
"""What ``blockdex/assemble.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`common_prefix` — ``assemble._common_prefix``: how many elements two chains share.
* :func:`layout_steps` — ``assemble.layout_blocks``: each block with the elements to close and
  open before it, the walk both the HTML and the Markdown writers follow.
"""

cimport cython
from cpython.ref cimport PyObject, Py_DECREF, Py_INCREF
from blockdex._common_c cimport _block_off, _blocks_of_class, _field

cdef extern from "Python.h":
    ctypedef struct _Type "PyTypeObject":
        PyObject *(*tp_alloc)(_Type *, Py_ssize_t)
    void _set_item "PyTuple_SET_ITEM"(PyObject *, Py_ssize_t, PyObject *)


cdef inline object _put_item(PyObject *t, Py_ssize_t i, object value):
    Py_INCREF(value)  # the tuple takes this reference
    _set_item(t, i, <PyObject *> value)


cdef object _step(type cls, object block, Py_ssize_t stay, list opened, str joint):
    """``cls(block, stay, opened, joint)`` for a tuple class (``assemble.Step``), made as
    ``tuple.__new__`` makes it (the class's allocation, the four items set), without a call."""
    cdef PyObject *p = (<_Type *> cls).tp_alloc(<_Type *> cls, 4)
    if p == NULL:
        raise MemoryError()
    step = <object> p
    Py_DECREF(step)  # ``step`` holds the reference the allocation gave
    _put_item(p, 0, block)
    _put_item(p, 1, stay)
    _put_item(p, 2, opened)
    _put_item(p, 3, joint)
    return step


cpdef Py_ssize_t common_prefix(list a, list b):
    """``assemble._common_prefix``: the length of the common prefix of ``a`` and ``b``
    (elements compared with ``==``), one comparison an element in C."""
    cdef Py_ssize_t n = min(len(a), len(b)), k
    for k in range(n):
        x = a[k]
        y = b[k]
        if x is not y and x != y:
            return k
    return n


@cython.boundscheck(False)
@cython.wraparound(False)
def layout_steps(
    list selected,
    type step_cls,
    dict implied_parent,
    dict parent_tags,
    frozenset keep_tags,
    frozenset cells,
):
    """``assemble.layout_blocks``: a step ``(block, stay, opened, joint)`` for each of the
    ``selected`` blocks (``Block``\ s: their slots are read by offset), in order, each a
    ``step_cls`` (a tuple class).

    A block's chain (``((tag, -1 - index),)`` when it has none) is written with its own element
    last as its written tag (``img`` as ``span``, a tag outside ``keep_tags`` as ``p``; a cell
    of a grid row, one of ``cells`` right under a ``tr``, as it is), after the parent
    ``implied_parent`` gives its tag when none of its elements is one of ``parent_tags`` of it
    (numbered ``-(10**15) - id``). ``stay``: how many of the open elements it shares (by
    ``==``); ``opened``: the rest of its written elements. ``joint`` when it continues the open
    element: ``"newline"`` for code, ``"space"`` after the previous part of its split block or
    after an image, else ``"break"``; '' otherwise."""
    cdef list steps = []
    cdef list open_stack = []
    cdef list written
    cdef tuple chain, own, element
    cdef Py_ssize_t n, k, i
    cdef object prev_split = None
    cdef bint prev_img = False
    cdef bint found
    cdef str own_tag, tag, joint
    cdef tuple blocks = _blocks_of_class(selected)
    if blocks is None:
        raise TypeError("layout steps are of blockdex.page.Block objects of one class")
    for block in blocks:
        chain = _field(block, _block_off[4])
        tag = _field(block, _block_off[1])
        if not chain:
            chain = ((tag, -1 - _field(block, _block_off[0])),)
        n = len(chain)
        own = chain[n - 1]
        own_tag = own[0]
        written = list(chain[: n - 1])
        parent_needed = implied_parent.get(own_tag)
        if parent_needed is not None:
            tags = parent_tags[parent_needed]
            found = False
            for i in range(n - 2, -1, -1):  # from the block up: the parent is nearly always next
                element = chain[i]
                if element[0] in tags:
                    found = True
                    break
            if not found:
                written.append((parent_needed, -(10**15) - own[1]))
        if own_tag in cells and written and (<tuple> written[len(written) - 1])[0] == "tr":
            written.append(own)  # a grid row's cell (segment.NESTED_TABLE_TAGS)
        elif own_tag == "img":
            written.append(("span", own[1]))  # an image may sit inside a paragraph
        elif own_tag in keep_tags:
            written.append((own_tag, own[1]))
        else:
            written.append(("p", own[1]))
        k = common_prefix(open_stack, written)
        del open_stack[k:]
        split = _field(block, _block_off[10])
        split_key = split[0] if split else None
        joint = ""
        if k == len(written) and k:  # continuing inside an element that already holds content
            if tag == "pre":
                joint = "newline"
            elif (split_key is not None and split_key == prev_split) or prev_img:
                joint = "space"
            else:
                joint = "break"
        opened = written[k:]
        open_stack.extend(opened)
        steps.append(_step(step_cls, block, k, opened, joint))
        prev_split = split_key
        prev_img = tag == "img"
    return steps
