# cython: language_level=3
"""What ``blockdex/segment.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`walk` — ``segment._walk`` over lexbor's nodes (``_CWalker``): the blocks, their text
  and markup, written as rows of a :class:`BlockRows` (C arrays), with the elements they sit in
  as frame rows from which their chains, paths, class/id strings and scopes are read.
* :class:`BlockRows` — a page's blocks as rows: numbered (long ones split, as
  ``segment._number_blocks`` asks), the readers' numbers (``BlockIds``) read off them, and a
  position's ``Block`` made from them.
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
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM
from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_KIND, PyUnicode_READ,
)
from blockdex._lexbor_c cimport (
    NODE_ELEMENT, NODE_TEXT, SMALL_TAG_IDS, TAG_TEXT, _ascii_ieq, _attr, _attr_first,
    _attr_next, _attr_qname, _attr_value, _decode, _following, _tag, _text, bd_chardata,
    bd_node, bd_node_ns,
)
from blockdex._common_c cimport (
    BlockIds, _alloc, _block_off, _char_t, _first_seen, _load_block_offsets, _numbered_ids, _put,
)
from blockdex._cjk_c cimport _is_cjk
from blockdex._common_c import BLOCK_FIELDS  # noqa (for tests: the fields BlockRows.block sets)
import html as _html_lib
import time as _time
import weakref as _weakref

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


ctypedef struct _FrameRow:
    # One element the walk opened as a frame (or an image it made a block of), in the order
    # opened: what its blocks' chain, tag path, class/id string and scope are made of.
    long long node_id  # the element's id (its node's address, less the walk's offset)
    int parent  # the enclosing frame's row, -1 for a walk's root
    int tag  # its tag name (BlockRows.tag_names)
    int path  # its tag path (BlockRows.path_names)
    int path_levels  # the tags its path joins
    int own  # its class/id/role/itemprop tokens (BlockRows.own_names), -1 until read
    int attrs  # the class/id string of its blocks (BlockRows.attrs_names), -1 until worked out
    int chain_keep  # how many of the parent's chain's entries its chain starts with
    int chain_len  # its chain's length
    int table  # the frame of the table its chain names before its own entry (-1: none)
    unsigned char scoped  # the tokens of all its scope's elements are read


cdef inline int _number(dict ids, list names, str key) except -1:
    """``key``'s number among ``names`` (``ids`` maps each to its place), the next one when it
    is new."""
    v = ids.get(key)
    if v is None:
        v = ids[key] = len(names)
        names.append(key)
    return <int> v


cdef int _PATH_IMAGE = 1  # a path key's flag: an image's path (its parent's, then ">img")


@cython.final
cdef class BlockRows:
    """A page's blocks as the walks write them: rows of C arrays and one text (and markup) per
    block, no object per block or per element (issue 45, "blocks as columns").

    Each block row names the frame it came from: the element the walk opened (or the image it
    made a block of), kept as a row of ``_FrameRow``: its parent frame, tag, tag path, own
    class/id tokens, and how its chain is made from its parent's. A block's chain, tag path,
    class/id string, scope and scope tokens are read off its frame and the frames above it,
    and the strings are kept once a page, each distinct one numbered (``tag_names``,
    ``path_names``, ``own_names``, ``attrs_names``). :meth:`number` numbers the rows as
    ``segment._number_blocks`` did the walk's blocks (long ones split), :meth:`block_ids` gives
    the readers' table (``_common_c.BlockIds``) straight from the rows, and :class:`BlockList`
    makes a position's ``Block``, with the fields the walk used to set, when it is read."""

    cdef _FrameRow *frames
    cdef bd_node **nodes  # each frame's node: read only while its walk runs (then NULL)
    cdef Py_ssize_t n_frames, frame_room
    cdef readonly list tag_names, path_names, own_names, attrs_names, source_names
    cdef dict tag_ids, path_keys, own_ids, attrs_keys, source_ids
    cdef unsigned char *structural  # by tag id: the tag is in segment.STRUCTURAL_TAGS
    cdef Py_ssize_t structural_room
    cdef frozenset structural_tags
    cdef int max_path_levels, max_attr_levels
    # the walks' blocks
    cdef int *b_frame
    cdef int *b_attrs
    cdef int *b_depth
    cdef long long *b_link_chars
    cdef int *b_n_links
    cdef unsigned char *b_source
    cdef Py_ssize_t n_raw, raw_room
    cdef list texts, htmls, attributes
    # the numbered blocks (number): each a raw block, whole or one part of it
    cdef int *r_raw  # the walk's block a numbered block is (whole or a part of); freed once read
    cdef int *r_frame  # the numbered block's frame and class/id string
    cdef int *r_attrs
    cdef readonly list row_attributes  # its Block.attributes
    cdef long long *r_link_chars
    cdef int *r_n_links
    cdef int *r_split  # split id, part, total (-1: not split)
    cdef int *r_tag  # the block's tag (tag_names), depth and source, as the readers read them
    cdef int *r_depth
    cdef unsigned char *r_source
    cdef readonly Py_ssize_t n
    cdef readonly list row_texts, row_htmls
    # made on first use, per frame
    cdef list chains, scopes, scope_tokens
    cdef tuple last_split  # the split of the last split block made (split_of)

    def __cinit__(self):
        self.frames = NULL
        self.nodes = NULL
        self.structural = NULL
        self.b_frame = self.b_attrs = self.b_depth = self.b_n_links = NULL
        self.b_link_chars = NULL
        self.b_source = NULL
        self.r_raw = self.r_n_links = self.r_split = self.r_tag = self.r_depth = NULL
        self.r_frame = self.r_attrs = NULL
        self.r_source = NULL
        self.r_link_chars = NULL

    def __init__(self, cfg):
        c = _consts()
        self.tag_names = []
        self.tag_ids = {}
        self.path_names = []
        self.path_keys = {}
        self.own_names = [u""]  # own id 0: no tokens
        self.own_ids = {u"": 0}
        self.attrs_names = []
        self.attrs_keys = {}
        self.source_names = [u"dom"]  # source 0: the page's DOM (the readers test it so)
        self.source_ids = {u"dom": 0}
        self.structural_tags = c.STRUCTURAL_TAGS
        self.max_path_levels = cfg.max_path_levels
        self.max_attr_levels = cfg.max_attr_levels
        self.texts = []
        self.htmls = []
        self.attributes = []
        self.row_texts = None
        self.row_htmls = None
        self.n = 0

    def __dealloc__(self):
        free(self.frames)
        free(self.nodes)
        free(self.structural)
        free(self.b_frame)
        free(self.b_attrs)
        free(self.b_depth)
        free(self.b_link_chars)
        free(self.b_n_links)
        free(self.b_source)
        free(self.r_raw)
        free(self.r_frame)
        free(self.r_attrs)
        free(self.r_link_chars)
        free(self.r_n_links)
        free(self.r_split)
        free(self.r_tag)
        free(self.r_depth)
        free(self.r_source)

    # -- writing (the walks) ---------------------------------------------------------------
    cdef int tag_id(self, str tag) except -1:
        cdef Py_ssize_t k
        cdef unsigned char *grown
        v = self.tag_ids.get(tag)
        if v is not None:
            return <int> v
        k = len(self.tag_names)
        if k >= self.structural_room:
            self.structural_room = 2 * self.structural_room + 64
            grown = <unsigned char *> realloc(self.structural, self.structural_room)
            if grown == NULL:
                raise MemoryError()
            self.structural = grown
        self.structural[k] = tag in self.structural_tags
        self.tag_names.append(tag)
        self.tag_ids[tag] = k
        return <int> k

    cdef int source_id(self, str source) except -1:
        return _number(self.source_ids, self.source_names, source)

    cdef int new_frame(self, bd_node *node) except -1:
        cdef _FrameRow *grown
        cdef _FrameRow *row
        if self.n_frames == self.frame_room:
            self.frame_room = 2 * self.frame_room + 256
            grown = <_FrameRow *> realloc(self.frames, self.frame_room * sizeof(_FrameRow))
            if grown == NULL:
                raise MemoryError()
            self.frames = grown
            _grow(<void **> &self.nodes, self.frame_room, sizeof(bd_node *))
        row = &self.frames[self.n_frames]
        memset(row, 0, sizeof(_FrameRow))
        row.own = -1
        row.attrs = -1
        row.parent = -1
        row.table = -1
        self.nodes[self.n_frames] = node
        self.n_frames += 1
        return <int> (self.n_frames - 1)

    cdef int path_id(self, int parent, int tag, int image, int *levels) except -1:
        """The tag path of a frame with tag ``tag`` under the frame ``parent`` (-1: none):
        ``segment``'s rule, the last ``max_path_levels`` tags joined by ``>`` (an image's is
        its parent's path and ``>img``, uncut), numbered once a page."""
        cdef Py_ssize_t m = 0, got
        cdef int parent_path = -1
        if parent >= 0:
            parent_path = self.frames[parent].path
            m = self.frames[parent].path_levels
        key = ((<long long> parent_path + 1) << 24) | ((<long long> tag) << 1) | image
        v = self.path_keys.get(key)
        if v is not None:
            if image:
                levels[0] = 0
            elif parent < 0:
                levels[0] = 1
            else:
                levels[0] = m + 1 if m + 1 < self.max_path_levels else self.max_path_levels
            return <int> v
        tag_name = <str> self.tag_names[tag]
        if parent < 0:
            path = tag_name
            got = 1
        elif image:
            path = <str> self.path_names[parent_path] + u">img"
            got = 0
        else:
            path = _path_append(
                <str> self.path_names[parent_path], m, tag_name, self.max_path_levels, &got
            )
        v = len(self.path_names)
        self.path_names.append(path)
        self.path_keys[key] = v
        levels[0] = <int> got
        return <int> v

    cdef int own_of(self, int f) except -1:
        """The frame's own class/id tokens, read off its node the first time (the node must be
        alive: while its walk runs)."""
        cdef _FrameRow *row = &self.frames[f]
        if row.own < 0:
            if self.nodes == NULL or self.nodes[f] == NULL:
                raise RuntimeError("an element's tokens were asked for after its walk")
            row.own = self.own_id(_own_attr_tokens(self.nodes[f]))
        return row.own

    cdef int own_id(self, str tokens) except -1:
        return _number(self.own_ids, self.own_names, tokens)

    cdef int attrs_of(self, int f) except -1:
        """The frame's class/id string (``segment._Frame.ancestry``'s): the non-empty tokens of
        the frame and its nearest ancestors, ``max_attr_levels`` frames at most, outermost
        first, joined with `` | ``; numbered once a page by the tokens it joins."""
        cdef _FrameRow *row = &self.frames[f]
        cdef int g = f, own, k = 0, found = 0
        cdef int levels = self.max_attr_levels
        cdef int limit = levels if levels >= 2 else (-1 if levels == 1 else 1)
        cdef int ids[64]
        if row.attrs >= 0:
            return row.attrs
        while g >= 0 and k != limit:
            own = self.own_of(g)
            if own:
                if found == 64:
                    return self._attrs_slow(f, limit)
                ids[found] = own
                found += 1
            g = self.frames[g].parent
            k += 1
        key = tuple([ids[found - 1 - k] for k in range(found)])
        v = self.attrs_keys.get(key)
        if v is None:
            if found == 0:
                joined = u""
            elif found == 1:
                joined = self.own_names[ids[0]]
            else:
                joined = u" | ".join([self.own_names[x] for x in key])
            v = self.attrs_keys[key] = len(self.attrs_names)
            self.attrs_names.append(joined)
        row = &self.frames[f]
        row.attrs = <int> v
        return row.attrs

    cdef int _attrs_slow(self, int f, int limit) except -1:
        cdef int g = f, own, k = 0
        parts = []
        while g >= 0 and k != limit:
            own = self.own_of(g)
            if own:
                parts.append(own)
            g = self.frames[g].parent
            k += 1
        parts.reverse()
        key = tuple(parts)
        v = self.attrs_keys.get(key)
        if v is None:
            v = self.attrs_keys[key] = len(self.attrs_names)
            self.attrs_names.append(u" | ".join([self.own_names[x] for x in key]))
        self.frames[f].attrs = <int> v
        return <int> v

    cdef int read_scope(self, int f) except -1:
        """Read the tokens of the frame's scope elements (it and its ``max_path_levels - 1``
        nearest ancestors) while their nodes are alive."""
        cdef int g = f, k = 0
        if self.frames[f].scoped:
            return 0
        while g >= 0 and k < self.max_path_levels:
            if self.frames[g].own < 0:
                self.own_of(g)
            g = self.frames[g].parent
            k += 1
        self.frames[f].scoped = 1  # this frame's whole scope is read
        return 0

    cdef int add_block(
        self, int frame, int attrs, Py_ssize_t depth, Py_ssize_t link_chars,
        Py_ssize_t n_links, int source, str text, str html, tuple attributes,
    ) except -1:
        cdef Py_ssize_t k = self.n_raw
        if k == self.raw_room:
            self.raw_room = 2 * self.raw_room + 256
            _grow(<void **> &self.b_frame, self.raw_room, sizeof(int))
            _grow(<void **> &self.b_attrs, self.raw_room, sizeof(int))
            _grow(<void **> &self.b_depth, self.raw_room, sizeof(int))
            _grow(<void **> &self.b_link_chars, self.raw_room, sizeof(long long))
            _grow(<void **> &self.b_n_links, self.raw_room, sizeof(int))
            _grow(<void **> &self.b_source, self.raw_room, 1)
        self.b_frame[k] = frame
        self.b_attrs[k] = attrs
        self.b_depth[k] = <int> depth
        self.b_link_chars[k] = link_chars
        self.b_n_links[k] = <int> n_links
        self.b_source[k] = <unsigned char> source
        self.texts.append(text)
        self.htmls.append(html)
        self.attributes.append(attributes)
        self.n_raw += 1
        return 0

    @property
    def raw_count(self):
        """How many blocks the walks wrote."""
        return self.n_raw

    # -- numbering -------------------------------------------------------------------------
    def number(self, Py_ssize_t max_blocks, double short_chars, split_long):
        """Number the walks' blocks as ``segment._number_blocks`` numbered them: in order, at
        most ``max_blocks`` (of the first ``max_blocks + 1`` written), a block whose text is
        longer than ``short_chars`` (an image's aside) cut by ``split_long(tag, text, html,
        link_chars, room)`` into parts ``[(text, html, link_chars), ...]`` (at most ``room + 1``;
        None or one part: the block stays whole), each part a block of its own with its split
        id, part and total, the block's links counted on its first part. Returns whether every
        block was numbered."""
        cdef Py_ssize_t r, k, total, room, split_id = 0, limit = self.n_raw
        cdef bint complete = True
        cdef str text
        if self.row_texts is not None:
            raise ValueError("the rows are numbered already")
        if limit > max_blocks + 1:
            limit = max_blocks + 1
        cdef Py_ssize_t cap = limit  # grown when a split adds parts
        self.r_raw = <int *> _alloc(cap * sizeof(int), False)
        self.r_link_chars = <long long *> _alloc(cap * sizeof(long long), False)
        self.r_n_links = <int *> _alloc(cap * sizeof(int), False)
        self.r_split = <int *> _alloc(3 * cap * sizeof(int), False)
        texts = self.row_texts = []
        htmls = self.row_htmls = []
        img = self.tag_ids.get(u"img", -1)
        for r in range(limit):
            if self.n >= max_blocks:
                complete = False
                break
            text = <str> self.texts[r]
            if len(text) > short_chars and self.frames[self.b_frame[r]].tag != img:
                room = max_blocks - self.n
                parts = split_long(
                    self.tag_names[self.frames[self.b_frame[r]].tag], text, self.htmls[r],
                    self.b_link_chars[r], room,
                )
                if parts is not None and len(parts) > 1:
                    if len(parts) > room:
                        parts = parts[:room]
                        complete = False
                    total = len(parts)
                    if self.n + total + (limit - r) > cap:  # room for the rest whole
                        cap = self.n + total + (limit - r)
                        _grow(<void **> &self.r_raw, cap, sizeof(int))
                        _grow(<void **> &self.r_link_chars, cap, sizeof(long long))
                        _grow(<void **> &self.r_n_links, cap, sizeof(int))
                        _grow(<void **> &self.r_split, 3 * cap, sizeof(int))
                    for k in range(total):
                        part = parts[k]
                        self.r_raw[self.n] = <int> r
                        self.r_link_chars[self.n] = part[2]
                        self.r_n_links[self.n] = self.b_n_links[r] if k == 0 else 0
                        self.r_split[3 * self.n] = <int> split_id
                        self.r_split[3 * self.n + 1] = <int> (k + 1)
                        self.r_split[3 * self.n + 2] = <int> total
                        texts.append(part[0])
                        htmls.append(part[1])
                        self.n += 1
                    split_id += 1
                    if not complete:
                        break
                    continue
            self.r_raw[self.n] = <int> r
            self.r_link_chars[self.n] = self.b_link_chars[r]
            self.r_n_links[self.n] = self.b_n_links[r]
            self.r_split[3 * self.n] = -1
            texts.append(text)
            htmls.append(self.htmls[r])
            self.n += 1
        # every column a numbered block is read by, in numbered order; the walk's rows are no
        # longer read (a long block's whole text is not kept beside its parts)
        self.r_frame = <int *> _alloc(max(self.n, 1) * sizeof(int), False)
        self.r_attrs = <int *> _alloc(max(self.n, 1) * sizeof(int), False)
        self.r_tag = <int *> _alloc(max(self.n, 1) * sizeof(int), False)
        self.r_depth = <int *> _alloc(max(self.n, 1) * sizeof(int), False)
        self.r_source = <unsigned char *> _alloc(max(self.n, 1), False)
        attributes = self.row_attributes = [None] * self.n
        for k in range(self.n):
            r = self.r_raw[k]
            self.r_frame[k] = self.b_frame[r]
            self.r_attrs[k] = self.b_attrs[r]
            self.r_tag[k] = self.frames[self.b_frame[r]].tag
            self.r_depth[k] = self.b_depth[r]
            self.r_source[k] = self.b_source[r]
            attributes[k] = self.attributes[r]
        self.texts = self.htmls = self.attributes = None
        free(self.b_frame)
        free(self.b_attrs)
        free(self.b_depth)
        free(self.b_n_links)
        free(self.b_link_chars)
        free(self.b_source)
        free(self.r_raw)
        free(self.nodes)  # no walk reads a node again
        self.nodes = NULL
        self.b_frame = self.b_attrs = self.b_depth = self.b_n_links = self.r_raw = NULL
        self.b_link_chars = NULL
        self.b_source = NULL
        return complete

    def block_ids(self, blocks, Py_ssize_t start=0, stop=None):
        """The readers' table of the numbered blocks ``start:stop`` (``_common_c.BlockIds``, for
        ``blocks``, the sequence they are read as): their columns (pointing into the rows), tag
        paths and class/id strings numbered first seen first, scope elements densely in order
        of first appearance, as ``BlockIds`` numbers them from ``Block`` objects, read off the
        rows; None when the rows are kept too deep (``max_path_levels`` over 64)."""
        cdef Py_ssize_t i, k, d, total = 0, n, end = self.n if stop is None else stop
        cdef int f, g, depth
        cdef int *path_dense = NULL
        cdef int *attrs_dense = NULL
        cdef int *frame_dense = NULL
        cdef int chain[64]
        cdef Py_ssize_t *path_of
        cdef Py_ssize_t *attr_of
        cdef Py_ssize_t *scope_off
        cdef Py_ssize_t *scope_ids
        cdef long long *elem_id = NULL
        cdef int *elem_own = NULL
        cdef Py_ssize_t n_elements = 0
        cdef dict path_numbers = {}, attrs_numbers = {}
        cdef int levels = self.max_path_levels
        cdef BlockIds ids
        if not 0 <= start <= end <= self.n:
            raise IndexError("the rows hold no such range")
        if levels > 64:
            return None  # BlockIds numbers such blocks from their objects
        n = end - start
        path_of = <Py_ssize_t *> _alloc(n * sizeof(Py_ssize_t), False)
        attr_of = <Py_ssize_t *> _alloc(n * sizeof(Py_ssize_t), False)
        scope_off = <Py_ssize_t *> _alloc((n + 1) * sizeof(Py_ssize_t), False)
        scope_ids = NULL
        try:
            path_dense = <int *> _alloc(max(len(self.path_names), 1) * sizeof(int), False)
            attrs_dense = <int *> _alloc(max(len(self.attrs_names), 1) * sizeof(int), False)
            frame_dense = <int *> _alloc(max(self.n_frames, 1) * sizeof(int), False)
            memset(path_dense, 0xFF, max(len(self.path_names), 1) * sizeof(int))
            memset(attrs_dense, 0xFF, max(len(self.attrs_names), 1) * sizeof(int))
            memset(frame_dense, 0xFF, max(self.n_frames, 1) * sizeof(int))
            scope_off[0] = 0
            for i in range(n):  # the scopes' lengths: the frames up, at most max_path_levels
                f = self.r_frame[start + i]
                depth = 0
                while f >= 0 and depth < levels:
                    depth += 1
                    f = self.frames[f].parent
                total += depth
                scope_off[i + 1] = total
            scope_ids = <Py_ssize_t *> _alloc(max(total, 1) * sizeof(Py_ssize_t), False)
            elem_id = <long long *> _alloc(max(total, 1) * sizeof(long long), False)
            elem_own = <int *> _alloc(max(total, 1) * sizeof(int), False)
            for i in range(n):
                k = start + i
                f = self.r_frame[k]
                # numbered by their strings, as BlockIds numbers them: two frames' paths may be
                # the same string under other parents (a path keeps its last tags only)
                g = self.frames[f].path
                if path_dense[g] < 0:
                    path_dense[g] = _first_seen(path_numbers, self.path_names[g])
                path_of[i] = path_dense[g]
                g = self.r_attrs[k]
                if attrs_dense[g] < 0:
                    attrs_dense[g] = _first_seen(attrs_numbers, self.attrs_names[g])
                attr_of[i] = attrs_dense[g]
                depth = <int> (scope_off[i + 1] - scope_off[i])
                g = f
                for d in range(depth - 1, -1, -1):
                    chain[d] = g
                    g = self.frames[g].parent
                for d in range(depth):
                    g = chain[d]
                    if frame_dense[g] < 0:
                        frame_dense[g] = <int> n_elements
                        elem_id[n_elements] = self.frames[g].node_id
                        elem_own[n_elements] = self.frames[g].own
                        n_elements += 1
                    scope_ids[scope_off[i] + d] = frame_dense[g]
        except BaseException:
            free(path_of)
            free(attr_of)
            free(scope_off)
            free(scope_ids)
            free(elem_id)
            free(elem_own)
            raise
        finally:
            free(path_dense)
            free(attrs_dense)
            free(frame_dense)
        # the table refers to its blocks weakly: the blocks keep their table (BlockList.table),
        # and a cycle would leave a page to the collector
        ids = _numbered_ids(
            _weakref.ref(blocks), n, list(path_numbers), list(attrs_numbers), path_of, attr_of,
            scope_off, scope_ids, n_elements,
        )
        ids.elem_id = elem_id
        ids.elem_own = elem_own
        ids.first = start
        ids.owner = self
        ids.texts = self.row_texts if start == 0 and end == self.n else self.row_texts[start:end]
        ids.tags = self.tag_names
        ids.sources = self.source_names
        ids.owns = self.own_names
        ids.tag_of = self.r_tag + start
        ids.depth_of = self.r_depth + start
        ids.link_chars_of = self.r_link_chars + start
        ids.n_links_of = self.r_n_links + start
        ids.split_of = self.r_split + 3 * start
        ids.source_of = self.r_source + start
        return ids

    # -- reading: a position's Block -------------------------------------------------------
    cdef tuple chain_of(self, int f):
        """The frame's chain (``Block.chain``), made once."""
        cdef _FrameRow *row
        cdef int g
        cdef list todo
        cdef tuple base
        if self.chains is None:
            self.chains = [None] * self.n_frames
        got = self.chains[f]
        if got is not None:
            return <tuple> got
        todo = []
        g = f
        while g >= 0 and self.chains[g] is None:
            todo.append(g)
            g = self.frames[g].parent
        for k in range(len(todo) - 1, -1, -1):
            g = todo[k]
            row = &self.frames[g]
            base = <tuple> self.chains[row.parent] if row.parent >= 0 else ()
            if row.table >= 0:
                base = bd_tuple_plus(
                    base, 0, row.chain_keep, (u"table", self.frames[row.table].node_id)
                )
                base = bd_tuple_plus(base, 0, len(base), (self.tag_names[row.tag], row.node_id))
            else:
                base = bd_tuple_plus(
                    base, 0, row.chain_keep, (self.tag_names[row.tag], row.node_id)
                )
            self.chains[g] = base
        return <tuple> self.chains[f]

    cdef tuple scope_of(self, int f):
        """The frame's scope (``Block.scope``): its element's id and its nearest
        ``max_path_levels - 1`` ancestors', outermost first, made once (from its parent's)."""
        return self._memo(f, False)

    cdef tuple scope_tokens_of(self, int f):
        """The frame's scope tokens (``Block.scope_attrs``), aligned with its scope."""
        return self._memo(f, True)

    cdef tuple _memo(self, int f, bint tokens):
        cdef int g
        cdef list memo
        cdef list todo
        cdef tuple base
        if tokens:
            if self.scope_tokens is None:
                self.scope_tokens = [None] * self.n_frames
            memo = self.scope_tokens
        else:
            if self.scopes is None:
                self.scopes = [None] * self.n_frames
            memo = self.scopes
        got = memo[f]
        if got is not None:
            return <tuple> got
        todo = []
        g = f
        while g >= 0 and memo[g] is None:
            todo.append(g)
            g = self.frames[g].parent
        for k in range(len(todo) - 1, -1, -1):
            g = todo[k]
            p = self.frames[g].parent
            if tokens:
                # an element no block's scope reaches was not read (None): its tuple is only a
                # base its descendants cut it from
                item = self.own_names[self.frames[g].own] if self.frames[g].own >= 0 else None
            else:
                item = self.frames[g].node_id
            if p < 0:
                memo[g] = (item,)
            else:
                base = <tuple> memo[p]
                memo[g] = _tail_plus(base, 1 - self.max_path_levels, item)
        return <tuple> memo[f]

    cdef tuple split_of(self, Py_ssize_t i):
        """Block ``i``'s ``split``: ``(split id, part, total)``, the id and total the same
        objects as its split's other parts' (a long block's parts are made one after another)."""
        cdef tuple last = self.last_split
        cdef int sid = self.r_split[3 * i], total = self.r_split[3 * i + 2]
        if last is not None and <int> last[0] == sid and <int> last[2] == total:
            got = (last[0], self.r_split[3 * i + 1], last[2])
        else:
            got = (sid, self.r_split[3 * i + 1], total)
        self.last_split = got
        return got

    cdef object _block(self, type cls, Py_ssize_t i):
        cdef int f = self.r_frame[i]
        obj = cls.__new__(cls)
        _put(obj, _block_off[0], i)
        _put(obj, _block_off[1], self.tag_names[self.frames[f].tag])
        _put(obj, _block_off[2], self.row_htmls[i])
        _put(obj, _block_off[3], self.row_texts[i])
        _put(obj, _block_off[4], self.chain_of(f))
        _put(obj, _block_off[5], self.path_names[self.frames[f].path])
        _put(obj, _block_off[6], self.attrs_names[self.r_attrs[i]])
        _put(obj, _block_off[7], self.r_depth[i])
        _put(obj, _block_off[8], self.r_link_chars[i])
        _put(obj, _block_off[9], self.r_n_links[i])
        if self.r_split[3 * i] < 0:
            _put(obj, _block_off[10], None)
        else:
            _put(obj, _block_off[10], self.split_of(i))
        _put(obj, _block_off[11], self.source_names[self.r_source[i]])
        _put(obj, _block_off[12], self.row_attributes[i])
        _put(obj, _block_off[13], self.scope_of(f))
        _put(obj, _block_off[14], self.scope_tokens_of(f))
        return obj



@cython.final
cdef class BlockList:
    """A page's blocks as users read them (``Page.blocks``): a sequence of ``Block`` objects
    made from the walk's rows on first access, one object a position, kept (issue 45: blocks
    that no reader touches are never made). Length, indexing from either end, iteration,
    ``in``, ``index``, ``count``, equality with another sequence of blocks; a slice with step 1
    is a view of the same rows and objects (``Page.slice``), other slices are tuples. Pickled as
    the tuple of its blocks. The compiled readers read the rows' columns through
    :meth:`table` instead."""

    cdef readonly BlockRows rows
    cdef type cls
    cdef Py_ssize_t start, stop
    cdef list made  # the Block made at each of the rows' positions (None: not yet), shared by views
    cdef tuple whole  # every block, once asked for at once (all)
    cdef object ids  # the readers' table of these blocks, once asked for
    cdef object __weakref__

    def __init__(self, BlockRows rows, type cls, Py_ssize_t start=0, stop=None):
        _load_block_offsets(cls)
        self.rows = rows
        self.cls = cls
        self.start = start
        self.stop = rows.n if stop is None else stop
        if not 0 <= self.start <= self.stop <= rows.n:
            raise IndexError("a view of blocks the rows do not hold")
        self.made = None
        self.whole = None
        self.ids = None

    cdef object at(self, Py_ssize_t pos):
        """The block at the rows' position ``pos``, made on first access."""
        cdef list made = self.made
        if made is None:
            made = self.made = [None] * self.rows.n
        got = made[pos]
        if got is None:
            got = self.rows._block(self.cls, pos)
            # another thread may have made it meanwhile (making one can run the collector):
            # the first one kept is the position's block
            if made[pos] is None:
                made[pos] = got
            else:
                got = made[pos]
        return got

    def __len__(self):
        return self.stop - self.start

    def __getitem__(self, key):
        cdef Py_ssize_t i, n = self.stop - self.start, a, b, step
        cdef BlockList view
        if isinstance(key, slice):
            a, b, step = key.indices(n)
            if step != 1:
                return tuple([self.at(self.start + k) for k in range(a, b, step)])
            if b < a:
                b = a
            view = BlockList.__new__(BlockList)
            view.rows = self.rows
            view.cls = self.cls
            view.start = self.start + a
            view.stop = self.start + b
            if self.made is None:
                self.made = [None] * self.rows.n
            view.made = self.made
            return view
        i = key
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("block index out of range")
        return self.at(self.start + i)

    def __iter__(self):
        cdef Py_ssize_t pos
        for pos in range(self.start, self.stop):
            yield self.at(pos)

    def __reversed__(self):
        cdef Py_ssize_t pos
        for pos in range(self.stop - 1, self.start - 1, -1):
            yield self.at(pos)

    def __contains__(self, value):
        cdef Py_ssize_t pos
        for pos in range(self.start, self.stop):
            b = self.at(pos)
            if b is value or b == value:
                return True
        return False

    def index(self, value, Py_ssize_t start=0, stop=None):
        cdef Py_ssize_t k, n = self.stop - self.start
        a, b, _ = slice(start, stop).indices(n)
        for k in range(a, b):
            got = self.at(self.start + k)
            if got is value or got == value:
                return k
        raise ValueError("the block is not in the page")

    def count(self, value):
        return sum(1 for b in self if b is value or b == value)

    def all(self):
        """Every block, as a tuple (made once)."""
        cdef Py_ssize_t pos, n = self.stop - self.start
        cdef tuple out
        if self.whole is None:
            out = PyTuple_New(n)
            for pos in range(n):
                obj = self.at(self.start + pos)
                Py_INCREF(obj)
                PyTuple_SET_ITEM(out, pos, obj)
            self.whole = out
        return self.whole

    def table(self):
        """The readers' table of these blocks (``_common_c.BlockIds``), read off the rows once."""
        if self.ids is None:
            self.ids = self.rows.block_ids(self, self.start, self.stop)
        return self.ids

    @property
    def first(self):
        """The rows' position of the first block (its index)."""
        return self.start

    def made_count(self):
        """How many of these blocks were made (for tests: a reader of the columns makes none)."""
        if self.made is None:
            return 0
        return sum(1 for k in range(self.start, self.stop) if self.made[k] is not None)

    def __eq__(self, other):
        if isinstance(other, (BlockList, tuple)):
            return len(self) == len(other) and all(
                a is b or a == b for a, b in zip(self, other)
            )
        return NotImplemented

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self.all())

    def __add__(self, other):
        return tuple(self) + tuple(other)

    def __radd__(self, other):
        return tuple(other) + tuple(self)

    def __repr__(self):
        return repr(self.all())

    def __reduce__(self):
        return (tuple, (self.all(),))


cdef int _grow(void **p, Py_ssize_t count, size_t size) except -1:
    cdef void *grown = realloc(p[0], (count if count else 1) * size)
    if grown == NULL:
        raise MemoryError()
    p[0] = grown
    return 0


@cython.final
cdef class _Run:
    """An open frame's run: the text and markup since the frame (or its last block child)
    began, and what the run's block records. One object per open depth, reused."""
    cdef int frame  # the frame's row
    cdef str tag
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
    cdef object deadline
    cdef BlockRows rows
    cdef int source
    cdef long long id_offset
    cdef Py_ssize_t first_raw  # the rows' block count when this walk began
    cdef Py_ssize_t first_frame  # and their frame count
    cdef list runs  # the open frames' runs (runs[:n_open]) and spare ones after them
    cdef Py_ssize_t n_open
    cdef list exit_tags, table_ids
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
    cdef frozenset block_tags, cell_tags, pre_tags, row_inner_tags
    cdef frozenset nested_table_tags
    cdef dict kept_inline
    cdef object code_language, link_open, squash_breaks
    cdef int max_language_levels
    cdef str break_mark  # segment.BREAK_MARK
    cdef frozenset heading_tags
    cdef list origin  # [segment._origin(base)] once an image needs it ([_NOT_READ] before)
    cdef bint markup  # SegmentConfig.markup
    cdef str link_base, base
    cdef int img_tag  # the rows' tag id of "img"

    def __init__(self, cfg, str source, long long id_offset, deadline, BlockRows rows,
                 str base=""):
        c = _consts()
        self.base = base
        self.markup = cfg.markup
        self.link_base = base if cfg.links else None
        self.link_open = c.link_open
        self.origin = [_NOT_READ]
        self.rows = rows
        self.first_raw = rows.n_raw
        self.first_frame = rows.n_frames
        self.deadline = deadline
        self.source = rows.source_id(source)
        self.id_offset = id_offset
        self.runs = []
        self.n_open = 0
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
        self.img_tag = rows.tag_id(u"img")

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

    cdef inline _Run top(self):
        return <_Run> self.runs[self.n_open - 1] if self.n_open else None

    # -- emitting ----------------------------------------------------------------------------
    cdef void flush(self, _Run frame, bint last=False) except *:
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
            self.rows.read_scope(frame.frame)
            self.rows.add_block(
                frame.frame,
                self.rows.attrs_of(frame.frame),
                self.depth,
                frame.link_chars,
                frame.n_links,
                self.source,
                text,
                html,
                (
                    (("language", frame.language),)
                    if frame.language
                    else _HEADER_ROW
                    if frame.head == 1
                    else ()
                ),
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
        cdef _Run parent
        cdef bd_node *up
        cdef bd_node *sib
        cdef bint from_figure
        cdef int f, levels
        cdef BlockRows rows = self.rows
        cdef _FrameRow *row
        caption = (_attr(node, b"alt") or _attr(node, b"title") or "").strip()
        if not self.n_open:
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
        parent = self.top()
        self.flush(parent)
        # the image is a frame of its own under its parent's: its chain is the parent's and
        # ("img", id), its path the parent's and ">img", its scope the parent's and its id
        f = rows.new_frame(node)
        row = &rows.frames[f]
        row.node_id = self.node_id(node)
        row.parent = parent.frame
        row.tag = self.img_tag
        row.chain_keep = rows.frames[parent.frame].chain_len
        row.chain_len = row.chain_keep + 1
        row.path = rows.path_id(parent.frame, self.img_tag, _PATH_IMAGE, &levels)
        row = &rows.frames[f]
        row.path_levels = levels
        rows.own_of(f)
        rows.read_scope(f)
        rows.add_block(
            f,
            rows.attrs_of(parent.frame),
            self.depth + 1,
            len(caption) if self.link_depth else 0,
            1 if self.link_depth else 0,
            self.source,
            caption,
            _escape(f"image: {src}, caption: {caption}") if self.markup else "",
            _image_attributes(src, caption, from_figure, width),
        )

    cdef void push_frame(self, bd_node *node, str tag, int mode) except *:
        cdef _Run parent = self.top()
        cdef _Run frame
        cdef BlockRows rows = self.rows
        cdef int f = rows.new_frame(node), tag_id = rows.tag_id(tag), levels, keep, p
        cdef _FrameRow *row
        cdef _FrameRow *prow
        if parent is not None:
            self.flush(parent)
            p = parent.frame
            prow = &rows.frames[p]
            # the parent's chain, without its own entry if it is not structural
            keep = prow.chain_len
            if (keep and not rows.structural[prow.tag]
                    and parent.mode != MODE_GRID and parent.mode != MODE_CELL):
                keep -= 1
            if parent.mode == MODE_PRE:
                mode = MODE_PRE
            elif parent.mode == MODE_GRID and tag in self.cell_tags:
                mode = MODE_CELL
        else:
            p = -1
            keep = 0
        row = &rows.frames[f]
        row.path = rows.path_id(p, tag_id, 0, &levels)
        row = &rows.frames[f]
        row.path_levels = levels
        row.node_id = self.node_id(node)
        row.parent = p
        row.tag = tag_id
        row.chain_keep = keep
        if (mode == MODE_ROW or mode == MODE_GRID or tag == "caption") and self.table_ids:
            row.table = <int> self.table_ids[-1]
        row.chain_len = keep + (row.table >= 0) + 1
        if self.n_open < len(self.runs):
            frame = <_Run> self.runs[self.n_open]
        else:
            frame = _Run.__new__(_Run)
            self.runs.append(frame)
        self.n_open += 1
        frame.frame = f
        frame.tag = tag
        frame.mode = mode
        frame.inline_stack = None
        frame.markup = self.markup
        frame.language = ""
        frame.head = 0
        if mode == MODE_PRE:
            if parent is not None and parent.mode == MODE_PRE:
                frame.language = parent.language
            else:
                frame.language = self.pre_language(node)
        frame.reset_run()

    cdef _Run pop_frame(self):
        self.n_open -= 1
        return <_Run> self.runs[self.n_open]

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
        cdef _Run frame
        cdef str s, tag
        if node.local_name == TAG_TEXT:
            if not self.n_open:
                return False
            frame = self.top()
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
        frame = self.top()
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
            self.push_frame(node, tag, MODE_FLOW)
            self.table_ids.append(self.top().frame)  # the table's frame: its chain entry
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
        cdef _Run frame
        cdef int kind
        self.n_exits -= 1
        kind = self.exit_kinds[self.n_exits]
        tag = self.exit_tags.pop() if kind == EXIT_CELL or kind == EXIT_KEPT else None
        if kind == EXIT_NONE:
            return
        if kind == EXIT_FRAME or kind == EXIT_TABLE:
            frame = self.pop_frame()
            self.flush(frame, True)
            if kind == EXIT_TABLE:
                self.table_ids.pop()
            return
        if kind == EXIT_LINK:
            self.link_depth -= 1
            return
        if kind == EXIT_HREF:
            self.link_depth -= 1
            if self.n_open:
                self.top().add_html("</a>")
            return
        if not self.n_open:
            return
        frame = self.top()
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
        cdef BlockRows rows = self.rows
        if root.type == NODE_ELEMENT:
            self.small_ns = (<bd_node_ns *> root).ns
        self.push_frame(root, self.tag_of(root) or "body", MODE_FLOW)
        node = root.first_child
        deadline = self.deadline
        perf_counter = _time.perf_counter
        while node != NULL:
            if rows.n_raw - self.first_raw > self.max_blocks:
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
        while self.n_open:
            self.flush(self.pop_frame(), True)
        # the nodes die with their tree: no frame of this walk is read through them again
        cdef Py_ssize_t f
        for f in range(self.first_frame, rows.n_frames):
            rows.nodes[f] = NULL


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


def walk(root_id, cfg, source, id_offset, deadline, BlockRows rows, base=""):
    """The segmentation walk (``blockdex.segment``'s rules 1–6) for the node at ``root_id`` (a
    ``mem_id``): its blocks are written to ``rows`` (after those of the page's earlier walks);
    returns whether the deadline ended it. Call only when :func:`lexbor_ready` is True."""
    w = _CWalker(cfg, source, id_offset, deadline, rows, base)
    w.walk(root_id)
    return w.timed_out


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
