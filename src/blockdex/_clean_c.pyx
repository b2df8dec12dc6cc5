# cython: language_level=3
"""What ``blockdex/clean.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`noise_drop` — ``clean.drop_noise`` in one walk over lexbor's tree.
* :func:`script_elements`, :func:`deep_text` — the scripts the rescue of framework state reads,
  and an element's text.
* :func:`long_string_literals` — the JSON string literals of a script longer than a minimum.
* :func:`interface_candidates` — the elements ``clean.drop_interface`` may drop (hover cards,
  permalink anchors), as :class:`UiNode`\ s, read like selectolax's nodes by its rules.
* :func:`probe_words` — the words of a rescued fragment the cleaner looks for on the page.
* :func:`words_found` — how many of those words stand in the page's text, found in one pass
  over it.
"""

cimport cython
from libc.stdint cimport uint64_t, uintptr_t
from libc.stdlib cimport free, realloc
from libc.string cimport memchr, memcpy
from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH,
    PyUnicode_KIND, PyUnicode_READ,
)
from blockdex._common_c cimport _char_t
from blockdex._lexbor_c cimport (
    NODE_ELEMENT, NODE_TEXT, _TagKinds, _after, _all_needles, _ascii_ieq, _attr, _attr_first,
    _attr_next, _attr_qname, _attr_value, _decode, _deep_text, _find_attr, _following,
    _needle_mask, _node_remove, _tag, _text, _text_nodes, bd_chardata, bd_node, memmem,
)

cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)


cdef inline bint _one_of(Py_UCS4 c, int kind, void *data, Py_ssize_t n) noexcept:
    """Whether ``c`` is one of the ``n`` characters of a string (its kind and data)."""
    cdef Py_ssize_t k
    for k in range(n):
        if PyUnicode_READ(kind, data, k) == c:
            return True
    return False


@cython.boundscheck(False)
@cython.wraparound(False)
def probe_words(str text, Py_ssize_t min_len, str strip):
    """``[w for t in text.split() if len(t) >= min_len and len(w := t.strip(strip)) >= min_len]``
    (``clean._probe_words`` of an already lower-cased text): no token or stripped copy is made
    for a word that is too short."""
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef int skind = PyUnicode_KIND(strip)
    cdef void *sdata = PyUnicode_DATA(strip)
    cdef Py_ssize_t n = len(text), n_strip = len(strip), i = 0, start, end, a, b
    out = []
    while i < n:
        while i < n and Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
            i += 1
        if i >= n:
            break
        start = i
        while i < n and not Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i)):
            i += 1
        end = i
        if end - start < min_len:
            continue
        a, b = start, end
        # str.strip: from the left, then from the right
        while a < b and _one_of(PyUnicode_READ(kind, data, a), skind, sdata, n_strip):
            a += 1
        while b > a and _one_of(PyUnicode_READ(kind, data, b - 1), skind, sdata, n_strip):
            b -= 1
        if b - a >= min_len:
            out.append(text[a:b])
    return out


cdef enum:
    GRAM = 4  # the words of at least this many characters are found by their first GRAM
    GRAM_BITS = 10  # bd_gram_hash's buckets: 1 << GRAM_BITS
    BATCH = 64  # words found in one pass (one bit each)


cdef extern from *:
    """
    /* a place's first four characters (code points) to one of 1 << 10 buckets */
    static inline unsigned int bd_gram_hash(unsigned int a, unsigned int b, unsigned int c,
                                            unsigned int d) {
        return ((a * 2654435761u) ^ (b * 40503u) ^ (c * 2246822519u) ^ (d * 3266489917u)) >> 22;
    }
    """
    unsigned int _gram_hash "bd_gram_hash" (unsigned int a, unsigned int b, unsigned int c,
                                             unsigned int d) noexcept nogil
    int __builtin_ctzll(unsigned long long x) nogil


cdef Py_ssize_t _find_batch(
    const _char_t *text, Py_ssize_t n, list words, Py_ssize_t *times, Py_ssize_t enough,
) noexcept:
    """How many of ``words`` (at most BATCH, each GRAM characters or more, ``times[k]`` the
    times word ``k`` counts) occur in ``text``, counted until ``enough``: one pass over the text,
    each place's first GRAM characters looked up among the words' first GRAM, a word compared
    whole where they match."""
    cdef uint64_t table[1 << GRAM_BITS]
    cdef uint64_t left = 0, m
    cdef Py_ssize_t k, i, j, hits = 0, shortest = n + 1
    cdef Py_ssize_t length[BATCH]
    cdef int kinds[BATCH]
    cdef void *datas[BATCH]
    cdef int bit
    cdef object w
    for k in range(1 << GRAM_BITS):
        table[k] = 0
    for k in range(len(words)):
        w = words[k]
        kinds[k] = PyUnicode_KIND(w)
        datas[k] = PyUnicode_DATA(w)
        length[k] = PyUnicode_GET_LENGTH(w)
        if length[k] < shortest:
            shortest = length[k]
        table[_gram_hash(
            <unsigned int> PyUnicode_READ(kinds[k], datas[k], 0),
            <unsigned int> PyUnicode_READ(kinds[k], datas[k], 1),
            <unsigned int> PyUnicode_READ(kinds[k], datas[k], 2),
            <unsigned int> PyUnicode_READ(kinds[k], datas[k], 3),
        )] |= (<uint64_t> 1) << k
        left |= (<uint64_t> 1) << k
    for i in range(n - shortest + 1):
        m = table[_gram_hash(text[i], text[i + 1], text[i + 2], text[i + 3])] & left
        while m:
            bit = __builtin_ctzll(m)
            m &= m - 1
            if i + length[bit] > n:
                continue
            for j in range(length[bit]):
                if <unsigned int> text[i + j] != \
                        <unsigned int> PyUnicode_READ(kinds[bit], datas[bit], j):
                    break
            else:
                left &= ~((<uint64_t> 1) << bit)
                hits += times[bit]
                if hits >= enough or not left:
                    return hits
    return hits


def words_found(list words, str text, Py_ssize_t enough):
    """How many of ``words`` occur in ``text`` (a word listed twice counts twice), counted until
    ``enough`` are found (then at least ``enough``; 0 when ``enough`` is 0 or less): the words
    shorter than GRAM characters searched one by one, the others in passes of up to BATCH
    distinct words over the text (``clean._mostly_known``'s probes)."""
    cdef Py_ssize_t hits = 0
    cdef Py_ssize_t times[BATCH]
    cdef int kind = PyUnicode_KIND(text)
    cdef void *data = PyUnicode_DATA(text)
    cdef Py_ssize_t length = PyUnicode_GET_LENGTH(text)
    cdef dict counts = {}
    cdef list batch = []
    if enough <= 0:
        return 0
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    for w, c in counts.items():
        if len(<str> w) < GRAM:
            if w in text:
                hits += c
        else:
            times[len(batch)] = c
            batch.append(w)
            if len(batch) == BATCH:
                hits += _pass(kind, data, length, batch, times, enough - hits)
                batch = []
        if hits >= enough:
            return hits
    if batch:
        hits += _pass(kind, data, length, batch, times, enough - hits)
    return hits


cdef Py_ssize_t _pass(
    int kind, void *data, Py_ssize_t n, list words, Py_ssize_t *times, Py_ssize_t enough,
) noexcept:
    if kind == PyUnicode_1BYTE_KIND:
        return _find_batch(<const unsigned char *> data, n, words, times, enough)
    if kind == PyUnicode_2BYTE_KIND:
        return _find_batch(<const unsigned short *> data, n, words, times, enough)
    return _find_batch(<const unsigned int *> data, n, words, times, enough)


cdef list _literals(const _char_t *d, Py_ssize_t n, Py_ssize_t min_chars):
    cdef Py_ssize_t i = 0, start
    cdef const void *q
    cdef _char_t c
    out = []
    while i < n:
        if sizeof(_char_t) == 1:
            # the next quote, found by memchr (the code, numbers and punctuation between literals)
            q = memchr(<const unsigned char *> d + i, 34, n - i)
            if q == NULL:
                break
            i = <const unsigned char *> q - <const unsigned char *> d
        elif d[i] != 34:  # '"'
            i += 1
            continue
        i += 1
        start = i
        while i < n:
            c = d[i]
            if c == 34 or c == 10:
                break
            if c == 92:  # backslash: escapes the next character unless it is a newline
                if i + 1 < n and d[i + 1] != 10:
                    i += 2
                    continue
                break
            i += 1
        if i < n and d[i] == 34:
            if i - start >= min_chars:
                out.append((start, i))
            i += 1  # past the closing quote
        elif i < n and d[i] == 92:
            i += 1  # an unclosed literal ends after its trailing backslash
    return out


def long_string_literals(str code, Py_ssize_t min_chars):
    """``(start, end)`` of the contents of the closed double-quoted literals of ``code`` that are
    at least ``min_chars`` long, scanning as ``blockdex.clean._STRING_LITERAL_RE`` does with
    ``finditer``: a literal runs to its closing quote, or stays unclosed at a line end (an
    optional backslash before it) or at the end of the text; ``\\`` + any character but a newline
    is an escape. One loop per string kind; a one-byte text's next quote outside a literal is
    found with ``memchr`` (inside one, where literals are short, a loop is faster)."""
    cdef int kind = PyUnicode_KIND(code)
    cdef void *data = PyUnicode_DATA(code)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(code)
    if kind == PyUnicode_1BYTE_KIND:
        return _literals(<const unsigned char *> data, n, min_chars)
    if kind == PyUnicode_2BYTE_KIND:
        return _literals(<const unsigned short *> data, n, min_chars)
    return _literals(<const unsigned int *> data, n, min_chars)


cdef bint _holds_text(bd_node *top, Py_ssize_t min_chars):
    """Whether ``top``'s subtree may hold ``min_chars`` characters of text joined with one
    separator between text nodes (UTF-8 bytes plus one per text node: never fewer)."""
    cdef size_t total
    cdef bd_chardata *last
    cdef Py_ssize_t parts = _text_nodes(top, &total, &last)
    return <Py_ssize_t> total + parts >= min_chars


cdef struct _Attrs:
    # what one pass over an element's attributes found (``_read_attrs``)
    bint hidden
    const unsigned char *cls  # the first class value (NULL: none)
    size_t class_len
    const unsigned char *href  # the first href value (NULL: none; read only when asked)
    size_t href_len


cdef inline const unsigned char *_value_or_empty(void *attr, size_t *n) noexcept:
    """The attribute's value, ``b""`` (length 0) when it has none."""
    cdef const unsigned char *v = _attr_value(attr, n)
    if v == NULL:
        n[0] = 0
        return <const unsigned char *> b""
    return v


cdef void _read_attrs(bd_node *node, _Attrs *found, bint classes, bint href) noexcept:
    """One pass over the element's attributes: whether it is hidden (it matches
    ``blockdex.clean.HIDDEN_SELECTOR`` but for its ``input[type="hidden"]`` part, inputs being
    noise anyway: a ``hidden`` attribute, or a ``style`` holding ``display:none``, ``display:
    none``, ``visibility:hidden`` or ``visibility: hidden``, case kept as lexbor's ``*=``
    compares), and
    when asked its first ``class`` and ``href`` values (as ``_attr`` finds them; ``b""`` for
    one without a value)."""
    cdef size_t n = 0
    cdef const unsigned char *name
    cdef const unsigned char *v
    cdef void *attr = _attr_first(<void *> node)
    found.hidden = False
    found.cls = found.href = NULL
    found.class_len = found.href_len = 0
    while attr != NULL:
        name = _attr_qname(attr, &n)
        if name != NULL:
            if n == 6 and _ascii_ieq(<const unsigned char *> b"hidden", name, 6):
                found.hidden = True
            elif n == 5 and _ascii_ieq(<const unsigned char *> b"style", name, 5):
                v = _attr_value(attr, &n)
                if v != NULL and (
                    memmem(v, n, b"display:none", 12) != NULL
                    or memmem(v, n, b"display: none", 13) != NULL
                    or memmem(v, n, b"visibility:hidden", 17) != NULL
                    or memmem(v, n, b"visibility: hidden", 18) != NULL
                ):
                    found.hidden = True
            elif (classes and found.cls == NULL and n == 5
                  and _ascii_ieq(<const unsigned char *> b"class", name, 5)):
                found.cls = _value_or_empty(attr, &found.class_len)
            elif (href and found.href == NULL and n == 4
                  and _ascii_ieq(<const unsigned char *> b"href", name, 4)):
                found.href = _value_or_empty(attr, &found.href_len)
        attr = _attr_next(attr)


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


DEF MAX_NEEDLES = 16


@cython.final
cdef class _Needles:
    """At most ``MAX_NEEDLES`` lower-case ASCII needles, found in a text with ASCII case ignored
    in one pass: at each byte only the needles that start with it (either case) are tried. When
    every needle has one letter second (``o`` in ``tooltip``, ``popover``, ``hovercard``), only
    the places of that letter are visited (``memchr``)."""

    cdef tuple keep  # the needles' bytes, alive as long as the pointers below
    cdef const unsigned char *ptr[MAX_NEEDLES]
    cdef size_t size[MAX_NEEDLES]
    cdef unsigned short starts[256]  # bit k: needle k starts with this byte
    cdef int second  # the second byte all needles share (lower case), or -1
    cdef size_t shortest  # the shortest needle's length

    def __cinit__(self, tuple needles):
        cdef bytes needle
        cdef unsigned char c
        cdef int k
        if len(needles) > MAX_NEEDLES:
            raise ValueError(f"at most {MAX_NEEDLES} needles")
        self.keep = needles
        self.second = -1
        self.shortest = min([len(x) for x in needles], default=0)
        for k in range(len(needles)):
            needle = needles[k]
            self.ptr[k] = needle
            self.size[k] = len(needle)
            if len(needle):
                c = needle[0]
                self.starts[c] |= 1 << k
                if 97 <= c <= 122:
                    self.starts[c - 32] |= 1 << k
        if len(needles) and all(len(x) >= 2 and x[1] == needles[0][1] for x in needles):
            c = needles[0][1]
            if 97 <= c <= 122:  # a letter: its upper case is looked for too
                self.second = c

    cdef bint found(self, const unsigned char *hay, size_t n) noexcept:
        cdef const unsigned char *at
        cdef size_t i
        if n < self.shortest:  # most class values are shorter than "tooltip"
            return False
        if self.second < 0:
            for i in range(n):
                if self.starts[hay[i]] and self.found_at(hay, n, i):
                    return True
            return False
        for c in (self.second, self.second - 32):
            at = <const unsigned char *> memchr(hay + 1, c, n - 1) if n > 1 else NULL
            while at != NULL:
                i = at - hay - 1
                if self.starts[hay[i]] and self.found_at(hay, n, i):
                    return True
                at = <const unsigned char *> memchr(at + 1, c, n - (at + 1 - hay))
        return False

    cdef inline bint found_at(self, const unsigned char *hay, size_t n, size_t i) noexcept:
        """Whether a needle starts at ``hay[i]``."""
        cdef unsigned short bits = self.starts[hay[i]]
        cdef size_t j, k_len
        cdef unsigned char c
        cdef int k = 0
        cdef const unsigned char *ned
        while bits:
            if bits & 1:
                ned = self.ptr[k]
                k_len = self.size[k]
                if k_len <= n - i:
                    for j in range(1, k_len):
                        c = hay[i + j]
                        if 65 <= c <= 90:
                            c += 32
                        if c != ned[j]:
                            break
                    else:
                        return True
            bits >>= 1
            k += 1
        return False


DEF TEXT_BUFFER = 1024


cdef inline bint _ascii_space(unsigned char c) noexcept:
    return c == 32 or 9 <= c <= 13


cdef bint _link_candidate(bd_node *link, bint flagged, _LinkTests tests) noexcept:
    """Whether a link is one of :func:`interface_candidates`' kind ``2``: at most
    ``tests.most`` characters of text (UTF-8 lead bytes), and either its text (its text nodes'
    text, joined) holds ``tests.more`` ("more": it may end a card), or it is ``flagged`` (a
    ``#`` address or a permalink class) and its text may be a glyph (at most
    ``tests.glyph`` ASCII characters besides spaces) or holds one of ``tests.words`` (what
    each permalink phrase holds). One walk of the link's text, joined in a buffer as it goes."""
    cdef bd_node *n = _following(link, link)
    cdef bd_chardata *ch
    cdef Py_ssize_t count = 0, ascii = 0
    cdef size_t i, at = 0
    cdef unsigned char buffer[TEXT_BUFFER]
    cdef const unsigned char *data
    cdef unsigned char c
    cdef bint joined = True  # the whole text is in the buffer
    while n != NULL:
        if n.type == NODE_TEXT:
            ch = <bd_chardata *> n
            data = ch.data.data
            if data != NULL:
                for i in range(ch.data.length):
                    c = data[i]
                    if (c & 0xC0) != 0x80:
                        count += 1
                        if count > tests.most:
                            return False
                        if c < 128 and not _ascii_space(c):
                            ascii += 1
                if at + ch.data.length > TEXT_BUFFER:
                    joined = False
                elif joined:
                    memcpy(buffer + at, data, ch.data.length)
                    at += ch.data.length
        n = _following(n, link)
    if not joined:
        return True  # too long to join here: a candidate (the rules decide)
    if tests.more.found(buffer, at):
        return True
    return flagged and (ascii <= tests.glyph or tests.words.found(buffer, at))


@cython.final
cdef class _LinkTests:
    """What :func:`_link_candidate` tests a link's text with."""

    cdef Py_ssize_t most, glyph
    cdef _Needles more, words

    def __cinit__(self, bytes more, tuple words, Py_ssize_t most, Py_ssize_t glyph):
        self.more = _Needles((more,))
        self.words = _Needles(words)
        self.most = most
        self.glyph = glyph


def interface_candidates(uintptr_t root_id, tuple card_needles, tuple link_needles,
                         bytes more_needle, tuple word_needles, Py_ssize_t max_link_chars,
                         Py_ssize_t max_glyph_chars):
    """The elements below the root (a ``mem_id``) that ``clean.drop_interface``'s rules may drop
    or start from, in document order, as ``(kind, UiNode)``: ``1`` an element whose class holds
    one of ``card_needles``; ``2`` a link that :func:`_link_candidate` keeps, flagged when its
    ``href`` starts with ``#`` or its class holds one of ``link_needles`` (needles: lower-case
    ASCII bytes, case ignored). Every element the rules drop is one of them or holds one. One
    read of each element's attributes. Call only when :func:`lexbor_ready` is True."""
    cdef bd_node *root = <bd_node *> root_id
    cdef bd_node *node = _following(root, root)
    cdef _TagKinds kinds = _TagKinds({"a": 1})
    cdef _Needles cards = _Needles(card_needles)
    cdef _Needles links = _Needles(link_needles)
    cdef _LinkTests tests = _LinkTests(more_needle, word_needles, max_link_chars, max_glyph_chars)
    cdef _Attrs found
    cdef bint link
    out = []
    while node != NULL:
        if node.type == NODE_ELEMENT:
            link = kinds.of(node) == 1
            _read_attrs(node, &found, True, link)
            if found.cls != NULL and found.class_len and cards.found(found.cls, found.class_len):
                out.append((1, _ui_node(node)))
            if link and _link_candidate(
                node,
                (found.href != NULL and found.href_len > 0 and found.href[0] == 35)  # '#'
                or (found.cls != NULL and found.class_len > 0
                    and links.found(found.cls, found.class_len)),
                tests,
            ):
                out.append((2, _ui_node(node)))
        node = _following(node, root)
    return out


cdef enum:
    UI_CARD = 1
    UI_LINK = 2
    UI_FLAGGED_LINK = 3


cdef uintptr_t *_push(uintptr_t *items, Py_ssize_t *n, Py_ssize_t *room,
                      uintptr_t item) except NULL:
    """``items`` with ``item`` appended (grown with ``realloc`` when full)."""
    cdef uintptr_t *grown
    if n[0] == room[0]:
        room[0] = 2 * room[0] + 64
        grown = <uintptr_t *> realloc(items, room[0] * sizeof(uintptr_t))
        if grown == NULL:
            free(items)
            raise MemoryError()
        items = grown
    items[n[0]] = item
    n[0] += 1
    return items


def noise_drop(uintptr_t root_id, frozenset noise_names, Py_ssize_t noscript_min_chars,
               uintptr_t head_id, uintptr_t body_id, bint drop_hidden=True, tuple interface=None):
    """``blockdex.clean.drop_noise`` in one walk when no ``<noscript>`` may hold content: detach
    every element below the root (a ``mem_id``) whose lower-cased name is in ``noise_names`` or
    that is hidden (:func:`_read_attrs`; never the ``body_id`` element; only when
    ``drop_hidden``), outermost first (what lies inside goes with it).

    Returns None, having changed nothing, when a noscript that would be removed may hold
    ``noscript_min_chars`` characters (:func:`_holds_text`: the caller's exact check decides)
    or lexbor's remove function is missing. Otherwise ``(removed, head)``: how many elements
    were detached, and whether the ``head_id`` element is to be removed too (the caller does
    that through selectolax, which then resets its cached head); with ``interface`` (the
    arguments of :func:`interface_candidates` after the root: its needles, then the arguments of
    :class:`_LinkTests`), ``(removed, head,
    candidates)``: what :func:`interface_candidates` finds in the tree left, read in the same
    walk. Call only when :func:`lexbor_ready` is True."""
    cdef bd_node *root = <bd_node *> root_id
    cdef bd_node *node
    cdef dict names = dict.fromkeys(noise_names, 1)
    cdef _TagKinds kinds
    cdef int kind
    cdef bint head = False, ui = interface is not None, link
    cdef list doomed = []
    cdef uintptr_t *found_ui = NULL  # element ids with their kind in the low bits (below)
    cdef Py_ssize_t n_found = 0, room = 0
    cdef uintptr_t entry
    cdef _Attrs found
    cdef _Needles card_needles = None, link_needles = None
    cdef Py_ssize_t i
    cdef _LinkTests tests = None
    if _node_remove == NULL:
        return None
    if "noscript" in names:
        names["noscript"] = 2  # a noise element that may be the page's content
    if ui:
        names.setdefault("a", 3)  # not noise: a link the interface rules may read
        card_needles = _Needles(interface[0])
        link_needles = _Needles(interface[1])
        tests = _LinkTests(*interface[2:])
    kinds = _TagKinds(names)
    node = _following(root, root)
    while node != NULL:
        if node.type == NODE_ELEMENT:
            kind = kinds.of(node)
            if kind == 2 and noscript_min_chars > 0 and _holds_text(node, noscript_min_chars):
                free(found_ui)
                return None
            link = kind == 3
            if link:
                kind = 0
            if kind:
                found.hidden = False
            else:
                _read_attrs(node, &found, ui, link)
            if kind or (drop_hidden and <uintptr_t> node != body_id and found.hidden):
                if <uintptr_t> node == head_id:
                    head = True
                else:
                    doomed.append(<uintptr_t> node)
                node = _after(node, root)
                continue
            if ui:
                # an entry: the element's address (aligned: its two low bits are free) and
                # UI_CARD, UI_LINK or UI_FLAGGED_LINK (a '#' address or a permalink class)
                if found.cls != NULL and found.class_len and card_needles.found(
                    found.cls, found.class_len
                ):
                    found_ui = _push(found_ui, &n_found, &room, <uintptr_t> node | UI_CARD)
                if link:
                    entry = <uintptr_t> node | UI_LINK
                    if (found.href != NULL and found.href_len > 0 and found.href[0] == 35) or (
                        found.cls != NULL and found.class_len > 0
                        and link_needles.found(found.cls, found.class_len)
                    ):
                        entry = <uintptr_t> node | UI_FLAGGED_LINK
                    found_ui = _push(found_ui, &n_found, &room, entry)
        node = _following(node, root)
    for node_id in doomed:
        _node_remove(<void *> <uintptr_t> node_id)
    if not ui:
        return len(doomed), head
    # the cards and links in document order, read now that the noise inside them is gone
    out = []
    try:
        for i in range(n_found):
            entry = found_ui[i]
            node = <bd_node *> (entry & ~(<uintptr_t> 3))
            if entry & 3 == UI_CARD:
                out.append((1, _ui_node(node)))
            elif _link_candidate(node, entry & 3 == UI_FLAGGED_LINK, tests):
                out.append((2, _ui_node(node)))
    finally:
        free(found_ui)
    return len(doomed), head, out


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


def can_remove():
    """Whether lexbor's remove function was found (:class:`UiNode.decompose` needs it)."""
    return _node_remove != NULL
