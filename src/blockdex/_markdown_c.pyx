# cython: language_level=3
"""What ``blockdex/markdown.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :class:`Node` — ``markdown._Node``: an element of the selection's structure.
* :func:`tree_of` — ``markdown._tree_of``: the kept blocks nested in their elements, from the
  steps of ``assemble.layout``.
* :func:`rechained` — a record's block in another chain (``markdown._item_blocks``);
  :func:`split_count` — ``len(text.split())``, for the record lists' words.
* :func:`inline_markdown` — ``markdown.inline_markdown``: a block's content as inline Markdown
  (emphasis, code spans, line breaks, links); :func:`destination` — a link's address as
  Markdown writes it.
"""

cimport cython
from cpython.tuple cimport PyTuple_Check, PyTuple_GET_SIZE
from blockdex._common_c cimport _block_off, _field, _load_block_offsets, _put

import re
from html import unescape as _html_unescape


cdef class Node:
    """An element of the selection's structure: children are nodes and runs of blocks (a run is
    ``[(joint, block), ...]``)."""

    cdef public str tag
    cdef public list children
    cdef public object rows
    """The table on the page, its rows kept or not (``markdown._Table``), when it spans cells:
    its grid is computed on the whole table (``markdown._table_block``); else None."""

    def __init__(self, str tag):
        self.tag = tag
        self.children = []
        self.rows = None


cdef inline Node _node(str tag):
    cdef Node node = Node.__new__(Node)
    node.tag = tag
    node.children = []
    node.rows = None
    return node


@cython.boundscheck(False)
@cython.wraparound(False)
def tree_of(
    list steps,
    bint images,
    Py_ssize_t max_nesting,
    object tables,
    object image_without_address,
):
    """``markdown._tree_of``: the root :class:`Node` of the ``steps`` (``(block, stay, opened,
    joint)``, ``assemble.layout``), and whether an image was left out (its element may hold
    nothing then).

    Each step closes the open elements past ``stay`` and opens a node for each of ``opened``
    (past ``max_nesting`` open ones, the block goes in the one at that depth); a table's node
    gets its rows from ``tables()`` (the tables that span cells, by element id). An image
    with an element of its own is written in the text around it (its element is never
    entered; it joins the run with a space). Without ``images`` an image block is replaced by
    ``image_without_address(block, stack)``, left out when that is None. A block joins the
    open node's last run when it has a joint, else starts a run."""
    cdef Node root = _node("")
    cdef list stack = [root]
    cdef bint dropped = False, is_image, inline_image
    cdef object spanned = None
    cdef list opened, children
    cdef Py_ssize_t stay, n_open, j, depth
    cdef Node node
    cdef str tag
    for step in steps:
        # a Step is a tuple subclass: indexed as a tuple (as a subclass, each step[i] would call
        # tuple.__getitem__ through the type's Python-level slot, ~750 instructions each)
        if not PyTuple_Check(step) or PyTuple_GET_SIZE(step) != 4:
            raise TypeError(f"a layout step is a Step of 4 fields, not {step!r}")
        block = (<tuple> step)[0]
        stay = (<tuple> step)[1]
        opened = (<tuple> step)[2]
        joint = (<tuple> step)[3]
        depth = len(stack)
        if depth > stay + 1:
            del stack[stay + 1:]
        is_image = block.tag == "img"
        inline_image = is_image and len(opened) > 0
        n_open = len(opened) - 1 if inline_image else len(opened)
        for j in range(n_open):
            tag, nid = opened[j]
            depth = len(stack)
            if depth > max_nesting:  # deeper elements are written in the one at this depth
                stack.append(stack[depth - 1])
                continue
            node = _node(tag)
            if tag == "table":
                if spanned is None:
                    spanned = tables()
                node.rows = spanned.get(nid)
            (<Node> stack[depth - 1]).children.append(node)
            stack.append(node)
        if inline_image:  # an image is written in the text around it, not as its own block
            stack.append(stack[len(stack) - 1])  # stands for the image's element
            joint = "space"
        if is_image and not images:
            block = image_without_address(block, stack)
            if block is None:
                dropped = True
                continue
        children = (<Node> stack[len(stack) - 1]).children
        if joint and children and isinstance(children[len(children) - 1], list):
            (<list> children[len(children) - 1]).append((joint, block))
        else:
            children.append([("", block)])
    return root, dropped


# -- a block's content as inline Markdown ---------------------------------------------------------

_INLINE_RE = re.compile(r"<(/?)(b|i|u|code|br|td|th|a)((?: [^<>]*)?)>")
_HREF_RE = re.compile(r'href="([^"]*)"')
_BACKTICKS_RE = re.compile("`+")
cdef object _inline_split = _INLINE_RE.split
cdef object _href_search = _HREF_RE.search
cdef object _backtick_runs = _BACKTICKS_RE.findall


cdef inline str _unescape(str text):
    """Block HTML escapes only ``& < >`` (``html.escape(quote=False)``)."""
    if "&" not in text:
        return text
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


cdef str _code_span(str code):
    cdef Py_ssize_t longest = 0, n
    if not code:
        return ""
    if "`" not in code:
        return "`" + code + "`"
    for run in _backtick_runs(code):
        n = len(<str> run)
        if n > longest:
            longest = n
    fence = "`" * (longest + 1)
    return f"{fence} {code} {fence}"


cpdef str destination(str url):
    """``markdown._destination``: ``url`` as a Markdown link destination, in ``<…>`` when it
    holds a space or a bracket."""
    if " " in url or "(" in url or ")" in url or "<" in url or ">" in url:
        url = "<" + url.replace("<", "%3C").replace(">", "%3E") + ">"
    return url


cdef void _close_link(list out, Py_ssize_t at, str url) except *:
    """End the link opened at ``out[at]``: ``](url)`` after its text, before the spaces that
    end it; a link without text is dropped."""
    cdef Py_ssize_t j
    cdef str last, body, first, lead
    if not "".join(out[at + 1 :]).strip():
        del out[at]
        return
    j = len(out)
    while j > at + 1 and not (<str> out[j - 1]).strip():
        j -= 1
    last = out[j - 1]
    body = last.rstrip()
    out[j - 1 : j] = [body, f"]({url})", last[len(body) :]]
    if not out[at + 1 : j]:
        return
    first = out[at + 1]
    lead = first[: len(first) - len(first.lstrip())]
    if lead:  # "[ text" → " [text" (one space: none if one is already there)
        out[at + 1] = first.lstrip()
        if not (at and (<str> out[at - 1])[-1:].isspace()):
            out.insert(at, " ")


cdef Py_ssize_t _close_mark(list out, str mark) except -1:
    """Write the closing ``mark`` before the spaces and line breaks that end ``out``; returns
    where it was written."""
    cdef Py_ssize_t j = len(out)
    cdef str last, body
    cdef list tail
    while j and not (<str> out[j - 1]).strip():
        j -= 1
    tail = out[j:]
    if j:
        last = out[j - 1]
        body = last.rstrip()
        if body != last:
            out[j - 1] = body
            tail.insert(0, last[len(body) :])
    out[j:] = [mark, *tail]
    return j


cpdef str inline_markdown(str html, str line_break="  \n"):
    """Markdown for a block's content (text with ``<b> <i> <u> <code> <br>``).

    Emphasis marks go round the text, not its edge spaces (``<b> x </b>`` → `` **x** ``); empty
    emphasis is dropped; nested tags of one kind count once; code is written as it is, with a
    fence longer than any run of backticks inside it. A kept link (``<a href="…">``, see
    :attr:`blockdex.segment.SegmentConfig.links`) is written ``[text](url)``; one without text
    is dropped."""
    cdef list parts, out, pending, shown
    cdef list code = None  # the text of an open <code>
    cdef Py_ssize_t i, n, closed_at = -1  # where the last closing mark was written in ``out``
    cdef Py_ssize_t link_at = -1  # where the open link's "[" is in ``out``
    cdef str link_url = None
    cdef int depth[3]  # open <b>, <i>, <u>
    cdef int kind
    cdef bint closing
    cdef str text, body, tag, mark
    if "<" not in html:
        return _unescape(html)
    parts = _inline_split(html)
    n = len(parts)
    out = []
    pending = []  # opened emphasis marks not yet followed by text
    shown = []  # opened emphasis marks written out, innermost last
    depth[0] = depth[1] = depth[2] = 0
    for i in range(0, n, 4):
        text = parts[i]
        if text:
            text = _unescape(text)
            if (
                code is None and text[0] == " " and out
                and (<str> out[len(out) - 1]).endswith(" ")
            ):
                text = text.lstrip(" ")  # HTML shows one space where a mark moved one out
            if code is not None:
                code.append(text)
            elif pending:
                body = text.lstrip()
                if body:
                    if body != text:
                        out.append(text[: len(text) - len(body)])
                    elif (
                        out and out[len(out) - 1] == pending[0]
                        and closed_at == len(out) - 1
                    ):
                        # <b>a</b><b>b</b>: one emphasis, not "**a****b**"
                        out.pop()
                        shown.append(pending.pop(0))
                    out.extend(pending)
                    shown.extend(pending)
                    pending.clear()
                    out.append(body)
                else:
                    out.append(text)
            else:
                out.append(text)
        if i + 3 >= n:
            break
        closing = parts[i + 1] == "/"
        tag = parts[i + 2]
        if tag == "a":
            if code is not None:
                continue
            if not closing and link_url is None:
                m = _href_search(parts[i + 3])
                if m is not None:
                    out.extend(pending)  # emphasis round the link, not inside its brackets
                    shown.extend(pending)
                    pending.clear()
                    link_at = len(out)
                    link_url = destination(_html_unescape(m.group(1)))
                    out.append("[")
            elif closing and link_url is not None:
                _close_link(out, link_at, link_url)
                link_url = None
            continue
        if tag == "code":
            if not closing and code is None:
                code = []
            elif closing and code is not None:
                out.append(_code_span("".join(code)))
                code = None
        elif tag == "br":
            if code is not None:  # a code span cannot hold a line break: one span a line
                out.append(_code_span("".join(code)))
                code = []
            out.append(line_break)
        elif code is None and (tag == "b" or tag == "i" or tag == "u"):
            kind = 0 if tag == "b" else (1 if tag == "i" else 2)
            mark = "**" if kind == 0 else ("*" if kind == 1 else "")
            if not closing:
                depth[kind] += 1
                if depth[kind] == 1 and mark:
                    pending.append(mark)
            elif depth[kind]:
                depth[kind] -= 1
                if depth[kind] == 0 and mark:
                    if mark in pending:
                        pending.remove(mark)  # nothing inside: no emphasis
                    elif mark in shown:
                        shown.remove(mark)
                        closed_at = _close_mark(out, mark)
    if code is not None:
        out.append(_code_span("".join(code)))
    if link_url is not None:
        _close_link(out, link_at, link_url)
    for k in range(len(shown) - 1, -1, -1):
        _close_mark(out, <str> shown[k])
    return "".join(out)


# -- record lists ---------------------------------------------------------------------------------

def rechained(block, tuple chain, str tag):
    """``dataclasses.replace(block, chain=chain, tag=tag)`` for a ``Block`` (its slots copied
    by offset: ``_common_c.BLOCK_FIELDS``)."""
    cdef type cls = type(block)
    cdef Py_ssize_t i
    _load_block_offsets(cls)
    obj = cls.__new__(cls)
    for i in range(15):
        _put(obj, _block_off[i], _field(block, _block_off[i]))
    _put(obj, _block_off[1], tag)
    _put(obj, _block_off[4], chain)
    return obj


cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)


cpdef Py_ssize_t split_count(str text):
    """``len(text.split())``: the runs of characters that are not whitespace (as ``str.split``
    reads it), counted without making them."""
    cdef Py_ssize_t count = 0, i, n = len(text)
    cdef bint inside = False
    cdef Py_UCS4 ch
    for i in range(n):
        ch = text[i]
        if Py_UNICODE_ISSPACE(ch):
            inside = False
        elif not inside:
            inside = True
            count += 1
    return count
