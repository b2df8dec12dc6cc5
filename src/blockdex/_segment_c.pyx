# cython: language_level=3
"""What ``blockdex/segment.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`walk` — ``segment._walk`` over lexbor's nodes (``_CWalker``, ``_CFrame``): the blocks,
  their chains, paths, scopes and markup, built as ``Block`` objects directly.
* :func:`block_from_raw`, :func:`number_run` — a walk's block copied with its index and no
  split, and the numbering of runs of short blocks in ``segment._number_blocks``.
* :func:`count_tokens_upto` — ``segment.count_tokens`` stopped past a limit.
* :func:`squash` — ``" ".join(s.split())``, the walk's whitespace squashing (texts longer
  than a window: ``segment._squash_ws``).
* :func:`resolved_url`, :func:`image_source` — ``segment.resolved_url`` and
  ``segment.image_source``: the walk calls their C cores for each image with the ``<img>``'s
  attributes read off the node (``src``, then ``data-src``, ``data-lazy-src``,
  ``data-original``, then the largest ``srcset``/``data-srcset`` candidate).
"""

cimport cython
from libc.stdint cimport uintptr_t
from libc.stdlib cimport malloc, free, realloc
from libc.string cimport memcpy, memset
from cpython.ref cimport PyObject, Py_INCREF
from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_KIND, PyUnicode_READ,
)
from blockdex._lexbor_c cimport (
    NODE_ELEMENT, NODE_TEXT, SMALL_TAG_IDS, TAG_TEXT, _ascii_ieq, _attr, _attr_first,
    _attr_next, _attr_qname, _attr_value, _decode, _following, _tag, _text, bd_chardata,
    bd_node, bd_node_ns,
)
from blockdex._common_c cimport (
    _block_off, _char_t, _field, _load_block_offsets, _put, _slot, _slot_offset,
)
from blockdex._cjk_c cimport _is_cjk
from blockdex._common_c import BLOCK_FIELDS  # noqa (for tests: the fields block_from_raw sets)
import html as _html_lib
import time as _time

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

cdef extern from *:
    """
    #define bd_prefetch(p) __builtin_prefetch((const void *) (p))
    """
    void _prefetch "bd_prefetch"(const void *p) noexcept nogil

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

cdef tuple _HEADER_ROW = (("row", "header"),)  # segment.HEADER_ROW
cdef object _C = None  # blockdex.segment's tables, read on first use (it imports this module)
cdef list _MARKED = [""]  # a run's markup list when markup is off: not None and truthy, as the
# pieces would be, but never read
cdef Py_ssize_t _SQUASH_WINDOW = 1 << 18  # longer texts: segment._squash_ws (windowed)

cdef inline bint _ascii_space(unsigned char c) noexcept:
    """``str.split``'s whitespace among ASCII characters."""
    return c == 32 or 9 <= c <= 13 or 28 <= c <= 31

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


cdef object _NOT_READ = object()  # an image's base origin not yet worked out


cdef bint _plain(str href):
    """Whether ``urljoin`` leaves ``href``'s path, query and fragment as they are: no space or
    control character at its ends, no empty query, parameters or fragment to drop (``?#``,
    ``;?``, ``;#``), no dot segment to resolve, no tab or newline."""
    cdef Py_ssize_t n = len(href)
    cdef Py_UCS4 last
    if n == 0:
        return False
    last = href[n - 1]
    if href[0] <= u" " or last <= u" " or last == u"?" or last == u"#" or last == u";":
        return False
    if u"?#" in href or u";?" in href or u";#" in href:
        return False
    if u"\t" in href or u"\r" in href or u"\n" in href:
        return False
    if u"." not in href:
        return True
    path = href.partition(u"#")[0].partition(u"?")[0]
    if u"/." not in path and not path.startswith(u"."):
        return True
    for seg in path.split(u"/"):
        seg = seg.partition(u";")[0]
        if seg == u"." or seg == u"..":
            return False
    return True


cdef tuple _origin_of(str base, list origin):
    """``segment._origin(base)``, worked out on first use and kept in ``origin[0]``."""
    if origin[0] is _NOT_READ:
        origin[0] = _consts()._origin(base)
    return origin[0]


cdef str _resolved(str base, str href, list origin):
    """``urljoin(base, href)`` (raises ValueError as it does), at once for the usual addresses
    (``urljoin`` takes ~8 µs, a page has dozens of images): an absolute ``http(s)`` one it would
    give back unchanged, and, against an ``http(s)`` base, one from the host's root (``/a.png``),
    the scheme's (``//cdn.example/a.png``) or the base's folder (``img/a.png``). ``origin[0]``
    holds ``segment._origin(base)`` once worked out (``_NOT_READ`` before)."""
    cdef Py_ssize_t host, cut
    cdef tuple o
    if href.startswith((u"http://", u"https://")):
        host = href.find(u"//") + 2
        if href[host : host + 1] not in (u"/", u"?", u"#", u"") and _plain(href):
            return href
    elif href[:1] == u"/" and _plain(href):
        o = _origin_of(base, origin)
        if o is not None:
            if href[1:2] != u"/":
                return o[1] + href
            if href[2:3] not in (u"/", u"?", u"#", u""):
                return f"{o[0]}:{href}"
    elif href[:1] not in (u"", u"?", u"#") and u"//" not in href:
        # a scheme (mailto:, data:) names no file: no ':' before the first of '/', '?', '#'
        cut = len(href)
        for sep in (u"/", u"?", u"#"):
            host = href.find(sep, 0, cut)
            if host >= 0:
                cut = host
        if href.find(u":", 0, cut) < 0 and _plain(href):
            o = _origin_of(base, origin)
            if o is not None:
                return o[2] + href
    return _consts().urljoin(base, href)


def resolved_url(str base, str href):
    """``blockdex.segment.resolved_url``: :func:`_resolved`."""
    return _resolved(base, href, [_NOT_READ])


cdef inline str _stripped(object value):
    """``(value or "").strip()`` of an attribute's value (None when absent)."""
    return (<str> value).strip() if value else u""


cdef bint _placeholder(str src):
    """Whether ``src`` is a placeholder image's address: ``segment._PLACEHOLDER_RE`` finds it
    (``data:`` at the start, or one of ``segment._PLACEHOLDER_WORDS`` case-blind). An ASCII
    address (nearly all) is tested on its lower-cased text; others (where case folding has
    Unicode cases such as the Kelvin sign) by the expression."""
    if not src.isascii():
        return _consts()._PLACEHOLDER_RE.search(src) is not None
    low = src.lower()
    return (
        low.startswith(u"data:")
        or u"blank." in low
        or u"spacer." in low
        or u"pixel." in low
        or u"placeholder" in low
        or u"transparent." in low
    )


def placeholder(str src):
    """:func:`_placeholder` (for the tests)."""
    return _placeholder(src)


cdef object _image_source(
    object width, object height, object src, tuple lazy, object srcset, object data_srcset,
    list sources, str base, list origin,
):
    """The address an image shows (``blockdex.segment.image_source``, whose arguments are the
    ``<img>``'s attributes of those names, None when absent; ``lazy`` the values of
    ``data-src``, ``data-lazy-src``, ``data-original`` in order)."""
    cdef str found
    w = _stripped(width)
    if w == u"0" or w == u"1":
        w = _stripped(height)
        if w == u"0" or w == u"1":
            return None
    found = _stripped(src)
    if not found or _placeholder(found):
        found = u""
        for value in lazy:
            w = _stripped(value)
            if w:
                found = w
                break
        if found.startswith(u"data:"):
            found = u""
    if not found:
        found = _consts()._largest_candidate(srcset if srcset else data_srcset)
    if not found:
        for value in sources:
            w = _consts()._largest_candidate(value)
            if w:
                found = w
                break
    if found and base and not found.startswith(u"data:"):
        try:
            found = _resolved(base, found, origin)
        except ValueError:
            pass
    return found


def image_source(attrs, list sources, str base):
    """``blockdex.segment.image_source``: :func:`_image_source` of an attribute mapping."""
    return _image_source(
        attrs.get("width"), attrs.get("height"), attrs.get("src"),
        (attrs.get("data-src"), attrs.get("data-lazy-src"), attrs.get("data-original")),
        attrs.get("srcset"), attrs.get("data-srcset"), sources, base, [_NOT_READ],
    )


cdef tuple _image_attributes(str src, str caption, bint from_figure, object width):
    """An image block's attributes: its address, its caption as ``alt``, ``("caption",
    "figcaption")`` when the caption is its figure's ``<figcaption>`` (absorbed: no block of its
    own), which Markdown keeps when it leaves images out (``SegmentConfig.images``), and the
    ``width`` it declares in pixels, when it does (of an image's variants, the writers keep the
    largest: ``blockdex.assemble.image_variants``)."""
    cdef tuple out = ((u"src", src), (u"alt", caption))
    cdef str w
    if from_figure:
        out += ((u"caption", u"figcaption"),)
    w = _stripped(width)
    if w.isdigit() and w.isascii():
        out += ((u"width", w),)
    return out


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
    return _joined_lower(vals, lens)


cdef str _joined_lower(const unsigned char **vals, size_t *lens):
    """``" ".join(the non-empty values, decoded)[:200].lower()``; ASCII values are written
    lower-cased straight into the result, without the decoded, joined and cut copies."""
    cdef Py_ssize_t total = 0, w = 0, parts = 0
    cdef size_t i
    cdef int k
    cdef unsigned char c
    cdef unsigned char *out
    cdef bint ascii = True
    for k in range(4):
        if vals[k] != NULL and lens[k]:
            total += <Py_ssize_t> lens[k] + (1 if parts else 0)
            parts += 1
            for i in range(lens[k]):
                if vals[k][i] >= 128:
                    ascii = False
                    break
    if parts == 0:
        return ""
    if not ascii:
        joined = " ".join([_decode(vals[k], lens[k]) for k in range(4)
                           if vals[k] != NULL and lens[k]])
        return joined[:200].lower()
    if total > 200:
        total = 200
    result = PyUnicode_New(total, 127)
    out = <unsigned char *> PyUnicode_DATA(result)
    for k in range(4):
        if vals[k] == NULL or not lens[k]:
            continue
        if w and w < total:
            out[w] = 32
            w += 1
        for i in range(lens[k]):
            if w >= total:
                break
            c = vals[k][i]
            out[w] = c + 32 if 65 <= c <= 90 else c
            w += 1
    return result


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
    cdef list html, text  # the run's markup and text pieces (None: none yet; _MARKED: some,
    # but markup is off)
    cdef bint markup  # SegmentConfig.markup: build the blocks' HTML
    cdef list inline_stack  # the kept inline elements open in the run (None: none yet)
    cdef bint solid  # the run's text holds more than the blank nodes' spaces and <br>'s newlines
    cdef bint blank  # a blank node was left out at the start of the run (see enter)
    cdef Py_ssize_t link_chars, n_links
    cdef str language  # a <pre> frame's code language (segment._Frame.language)
    cdef int head  # a row's cells so far: 1 all <th>, -1 some <td>, 0 none (segment._Frame.head)
    cdef bint breaks  # the run's text holds a segment.BREAK_MARK
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

    cdef inline void add(self, str text, str html) except *:
        """Append a piece of text to the run, and its markup."""
        if self.text is None:
            self.text = [text]
        else:
            self.text.append(text)
        self.add_html(html)

    cdef inline void add_html(self, str html) except *:
        """Append a piece of markup (when markup is off, only note that the run has some)."""
        if not self.markup:
            self.html = _MARKED
        elif self.html is None:
            self.html = [html]
        else:
            self.html.append(html)

    cdef void reset_run(self):
        if not self.inline_stack:
            self.html = None
        elif self.markup:
            self.html = [f"<{t}>" for t in self.inline_stack]
        else:
            self.html = _MARKED
        self.text = None
        self.solid = False
        self.blank = False
        self.breaks = False
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
    cdef object code_language, link_open, squash_breaks
    cdef int max_language_levels
    cdef str break_mark  # segment.BREAK_MARK
    cdef frozenset heading_tags
    cdef list origin  # [segment._origin(base)] once an image needs it ([_NOT_READ] before)
    cdef bint markup  # SegmentConfig.markup
    cdef str link_base, base

    def __init__(self, cfg, str source, long long id_offset, deadline, block_cls,
                 str base=""):
        c = _consts()
        self.base = base
        self.markup = cfg.markup
        self.link_base = base if cfg.links else None
        self.link_open = c.link_open
        self.origin = [_NOT_READ]
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
        self.code_language = c.code_language
        self.max_language_levels = cfg.max_language_levels
        self.break_mark = c.BREAK_MARK
        self.squash_breaks = c.squash_breaks
        self.heading_tags = c.HEADING_TAGS

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

    cdef void flush(self, _CFrame frame, bint last=False) except *:
        """Emit the frame's run as a block (when it holds text) and start a new run, unless
        this is the frame's ``last`` run (it is being closed: no new run is needed)."""
        cdef bint has_text
        if not frame.solid:
            # nothing but spaces and newlines: no block (squashed or stripped, the text is
            # empty), so the run's text is not joined
            if (frame.text or frame.html or frame.blank) and not last:
                frame.reset_run()
            return
        text_raw = "".join(frame.text)
        if frame.mode == MODE_PRE:
            text = text_raw.strip("\n")
            has_text = bool(text.strip())
        else:
            text = self.squash_breaks(text_raw) if frame.breaks else _squash(text_raw)
            has_text = bool(text)
        if has_text:
            if not frame.markup:
                html = ""
            else:
                if frame.inline_stack:
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
                    (
                        (("language", frame.language),)
                        if frame.language
                        else _HEADER_ROW
                        if frame.head == 1
                        else ()
                    ),
                    self.source,
                    frame.scope,
                    frame.scope_attrs(self.max_path_levels),
                )
            )
        if not last:
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
        sources = []
        up = node.parent
        if up != NULL and self.tag_of(up) == "picture":
            sib = up.first_child
            while sib != NULL:
                if sib.type == NODE_ELEMENT and self.tag_of(sib) == "source":
                    sources.append(_attr(sib, b"srcset") or _attr(sib, b"data-srcset") or "")
                sib = sib.next
        width = _attr(node, b"width")
        src = _image_source(
            width, _attr(node, b"height"), _attr(node, b"src"),
            (_attr(node, b"data-src"), _attr(node, b"data-lazy-src"),
             _attr(node, b"data-original")),
            _attr(node, b"srcset"), _attr(node, b"data-srcset"), sources, self.base,
            self.origin,
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
                _escape(f"image: {src}, caption: {caption}")
                if self.markup else "",
                caption,
                _tail_plus(parent.chain, 0, ("img", node_id)),
                f"{path}>img",
                ancestor_attrs,
                self.depth + 1,
                len(caption) if self.link_depth else 0,
                1 if self.link_depth else 0,
                _image_attributes(src, caption, from_figure, width),
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
        frame.inline_stack = None
        frame.markup = self.markup
        frame.language = ""
        if mode == MODE_PRE:
            if parent is not None and parent.mode == MODE_PRE:
                frame.language = parent.language
            else:
                frame.language = self.pre_language(node)
        frame.reset_run()
        self.frames.append(frame)

    cdef str element_language(self, bd_node *node):
        """``segment._element_language``."""
        return self.code_language(
            _attr(node, b"class"), _attr(node, b"data-lang") or _attr(node, b"data-language")
        )

    cdef str pre_language(self, bd_node *node):
        """``segment._pre_language``: the ``<pre>``'s language, else its nearest wrapper's."""
        cdef int k
        cdef str lang
        for k in range(self.max_language_levels + 1):
            if node == NULL or node.type != NODE_ELEMENT:
                break
            lang = self.element_language(node)
            if lang:
                return lang
            node = node.parent
        return ""

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
                # blank node adds one space (no decoding, escaping or link characters), and
                # none at the start of a run with no markup yet: squashing strips it there
                # (except in a row, whose next cell is set apart from any text before it)
                if frame.text is not None or frame.html is not None or frame.mode == MODE_ROW:
                    frame.add(" ", " ")
                else:
                    frame.blank = True  # the run is not empty: flushing it starts a new one
                return False
            s = _text(node)
            if s:
                frame.add(s, _escape(s) if frame.markup else None)
                frame.solid = True
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
            frame.head = 1 if tag == "th" and frame.head >= 0 else -1
            frame.add_html(
                _cell_open(tag, _attr(node, b"colspan"), _attr(node, b"rowspan"))
                if frame.markup else None
            )
            if frame.text:
                frame.text.append(" | ")
                frame.solid = True
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
                # segment._keeps_breaks: flow and grid-cell frames but headings keep the break
                if (
                    (frame.mode == MODE_FLOW or frame.mode == MODE_CELL)
                    and frame.tag not in self.heading_tags
                ):
                    frame.add(self.break_mark, "<br>")
                    frame.breaks = True
                else:
                    frame.add("\n", "<br>")
            return False
        if kind == TAG_IMG:
            self.image(node)
            return False
        if frame is None:
            self.push_exit(EXIT_NONE, tag)
            return True
        if kind == TAG_KEPT:
            kept = self.kept_inline[tag]
            if kept == "code" and frame.mode == MODE_PRE:
                frame.language = self.element_language(node) or frame.language
            frame.add_html(f"<{kept}>" if frame.markup else None)
            if frame.inline_stack is None:
                frame.inline_stack = [kept]
            else:
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
                frame.add_html(marker)
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
            self.flush(frame, True)
            if kind == EXIT_TABLE:
                self.table_ids.pop()
            return
        if kind == EXIT_LINK:
            self.link_depth -= 1
            return
        if kind == EXIT_HREF:
            self.link_depth -= 1
            if self.frames:
                (<_CFrame> self.frames[-1]).add_html("</a>")
            return
        if not self.frames:
            return
        frame = self.frames[-1]
        if kind == EXIT_CELL:
            frame.add_html(f"</{tag}>" if frame.markup else None)
        elif kind == EXIT_KEPT and frame.inline_stack and frame.inline_stack[-1] == tag:
            frame.inline_stack.pop()
            frame.add_html(f"</{tag}>" if frame.markup else None)

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
            self.flush(self.frames.pop(), True)


cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)
    bint Py_UNICODE_ISUPPER(Py_UCS4 ch)
    object PyUnicode_FromKindAndData(int kind, const void *buffer, Py_ssize_t size)
    object PyUnicode_New(Py_ssize_t size, Py_UCS4 maxchar)

cdef Py_ssize_t _squash_rest(const _char_t *src, Py_ssize_t n, Py_ssize_t start,
                             _char_t *buf) noexcept:
    """Write ``src`` squashed into ``buf`` (as ``" ".join(src.split())``) and return its length,
    where ``src[:start]`` is already squashed but may end with one space: it is copied."""
    cdef Py_ssize_t i, k = start
    cdef Py_UCS4 c
    cdef bint space = True  # a space is due before the next word (none at the start)
    memcpy(buf, src, start * sizeof(_char_t))
    if k and buf[k - 1] == 32:
        k -= 1
    for i in range(start, n):
        c = src[i]
        if Py_UNICODE_ISSPACE(c):
            space = True
            continue
        if space and k:
            buf[k] = 32
            k += 1
        space = False
        buf[k] = <_char_t> c
        k += 1
    return k


cdef Py_ssize_t _squash_scan(const _char_t *src, Py_ssize_t n) noexcept:
    """The index of the first character of ``src`` that squashing changes (a whitespace
    character other than one space between two others, or a last character that is a space),
    or ``n`` when there is none."""
    cdef Py_ssize_t i
    cdef Py_UCS4 c
    cdef bint space = True  # at the start, or after a space
    for i in range(n):
        c = src[i]
        if c > 32 and c < 128:  # the usual character: neither whitespace nor non-ASCII
            space = False
        elif Py_UNICODE_ISSPACE(c):
            if space or c != 32:
                return i
            space = True
        else:
            space = False
    if space and n:  # ends with a space
        return n - 1
    return n


cdef str _squash(str s):
    """``" ".join(s.split())``: runs of whitespace (``str.split``'s definition) as one space, ends
    stripped; ``s`` itself when it is already so. The squashed copy is built in ``s``'s own
    character width, from the first character that needs a change on."""
    cdef int kind = PyUnicode_KIND(s)
    cdef void *data = PyUnicode_DATA(s)
    cdef Py_ssize_t n = len(s), i, k = 0
    cdef void *buf
    if n > _SQUASH_WINDOW:  # huge texts: segment._squash_ws works window by window (memory)
        return _consts()._squash_ws(s)
    if kind == PyUnicode_1BYTE_KIND:
        i = _squash_scan(<const unsigned char *> data, n)
    elif kind == PyUnicode_2BYTE_KIND:
        i = _squash_scan(<const unsigned short *> data, n)
    else:
        i = _squash_scan(<const unsigned int *> data, n)
    if i == n:
        return s
    buf = malloc(n * kind + 1)
    if buf == NULL:
        raise MemoryError()
    try:
        if kind == PyUnicode_1BYTE_KIND:
            k = _squash_rest(<const unsigned char *> data, n, i, <unsigned char *> buf)
        elif kind == PyUnicode_2BYTE_KIND:
            k = _squash_rest(<const unsigned short *> data, n, i, <unsigned short *> buf)
        else:
            k = _squash_rest(<const unsigned int *> data, n, i, <unsigned int *> buf)
        return PyUnicode_FromKindAndData(kind, buf, k)
    finally:
        free(buf)


def walk(root_id, cfg, source, id_offset, deadline, block_cls, base=""):
    """The segmentation walk (``blockdex.segment``'s rules 1–6) for the node at ``root_id`` (a
    ``mem_id``):
    returns ``(raw blocks, timed_out)``, the raw blocks as ``block_cls`` (``Block``) objects
    whose ``index`` is not set yet (see ``_CWalker.new_block``). Call only when
    :func:`lexbor_ready` is True."""
    w = _CWalker(cfg, source, id_offset, deadline, block_cls, base)
    w.walk(root_id)
    return w.out, w.timed_out

RAW_FIELDS = (
    "tag", "html", "text", "chain", "path", "attrs", "depth", "link_chars", "n_links",
    "source", "attributes", "scope", "scope_attrs",
)
"""The fields of a walk's block that :func:`block_from_raw` copies."""

cdef Py_ssize_t _raw_off[13]

cdef object _raw_offsets_for = None  # the raw block class _raw_off was read from

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

def squash(str s):
    """The walk's whitespace squashing (for tests): ``" ".join(s.split())``."""
    return _squash(s)

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
