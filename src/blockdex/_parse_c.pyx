# cython: language_level=3
"""What ``blockdex/parse.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`tag_scan`, :func:`long_tags`, :func:`name_runs` — the parse limits' pre-check over the
  raw text (``parse._check_markup`` and its helpers).
* :func:`has_nul`, :func:`count_controls` — ``"\\x00" in text`` and the control-character count
  of the encoding sniff.
* :func:`utf8_ignore` — ``text.encode("utf-8", "ignore")`` before lexbor parses it.
* :func:`page_survey`, :func:`meta_elements`, :func:`swallow_suspects`,
  :func:`has_deep_element` — walks over lexbor's tree after parsing (``parse.read_metadata``'s
  elements, raw-text elements that may have swallowed markup, scripts for the cleaner, the
  depth check).
"""

cimport cython
from libc.stdint cimport uintptr_t
from libc.stdlib cimport free, malloc
from libc.string cimport memchr
from cpython.ref cimport PyObject
from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH,
    PyUnicode_KIND, PyUnicode_READ,
)
from blockdex._lexbor_c cimport (
    NODE_ELEMENT, _TagKinds, _ascii_ieq, _attr, _attr_value, _deep_text, _find_attr, _following,
    _all_needles, _needle_mask, _text_nodes, bd_chardata, bd_node,
)
from blockdex._common_c cimport _char_t

cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)
    bint Py_UNICODE_ISUPPER(Py_UCS4 ch)
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch)

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
        if end - (i + 2) < min_chars:  # too short for a span, whatever '<' lies in it (the
            i += 1  # next search finds that one)
            continue
        q = <const char *> memchr(p + i + 2, 60, end - (i + 2)) if i + 2 < end else NULL
        j = (q - p) if q != NULL else end
        if j - (i + 2) >= min_chars:
            out.append((i, j))
        i = j
    return out


cdef extern from *:
    """
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif
    /* The long-tag scan of two- or four-byte text p (n characters) as one pass over its '<'
       and '>' (eight or four characters at a time where SSE2 is there: every x86-64 CPU): a
       '<' before the last character is counted in *lt; one followed by an ASCII letter starts
       a span that ends at the next '<' or '>' (or the end), kept when at least min_chars
       characters lie after the letter. The first cap spans go to spans (start, end pairs); returns how many
       there are. */
    #define BD_DELIM(k) do { \
            if (pending >= 0) { \
                if ((k) - (pending + 2) >= min_chars) { \
                    if (found < cap) { spans[2 * found] = pending; spans[2 * found + 1] = (k); } \
                    found++; \
                } \
                pending = -1; \
            } \
            if (p[k] == 60 && (k) < n - 1) { \
                unsigned int next = p[(k) + 1]; \
                count++; \
                if ((next >= 65 && next <= 90) || (next >= 97 && next <= 122)) pending = (k); \
            } \
        } while (0)
    /* NAME(p, n, ...) for characters of type CHAR, LANES to a vector set by SET1 and compared
       by CMPEQ; the vector's movemask gives 2^SHIFT bits per character, of which KEEP keeps
       the lowest */
    #define BD_TAG_SCAN(NAME, CHAR, LANES, CMPEQ, SET1, KEEP, SHIFT) \
    static Py_ssize_t NAME(const CHAR *p, Py_ssize_t n, Py_ssize_t min_chars, Py_ssize_t *lt, \
                           Py_ssize_t *spans, Py_ssize_t cap) { \
        Py_ssize_t i = 0, k, pending = -1, found = 0, count = 0; \
        BD_VECTOR_LOOP(CHAR, LANES, CMPEQ, SET1, KEEP, SHIFT) \
        for (; i < n; i++) \
            if (p[i] == 60 || p[i] == 62) { \
                k = i; \
                BD_DELIM(k); \
            } \
        if (pending >= 0 && n - (pending + 2) >= min_chars) { \
            if (found < cap) { spans[2 * found] = pending; spans[2 * found + 1] = n; } \
            found++; \
        } \
        *lt += count; \
        return found; \
    }
    #if defined(__SSE2__)
    #define BD_VECTOR_LOOP(CHAR, LANES, CMPEQ, SET1, KEEP, SHIFT) \
        const __m128i lt8 = SET1(60), gt8 = SET1(62); \
        for (; i + LANES <= n; i += LANES) { \
            __m128i v = _mm_loadu_si128((const __m128i *) (p + i)); \
            unsigned m = (unsigned) _mm_movemask_epi8( \
                _mm_or_si128(CMPEQ(v, lt8), CMPEQ(v, gt8))) & KEEP; \
            while (m) { \
                k = i + (__builtin_ctz(m) >> SHIFT); \
                m &= m - 1; \
                BD_DELIM(k); \
            } \
        }
    #else
    #define BD_VECTOR_LOOP(CHAR, LANES, CMPEQ, SET1, KEEP, SHIFT)
    #endif
    BD_TAG_SCAN(bd_tag_scan16, unsigned short, 8, _mm_cmpeq_epi16, _mm_set1_epi16, 0x5555u, 1)
    BD_TAG_SCAN(bd_tag_scan32, unsigned int, 4, _mm_cmpeq_epi32, _mm_set1_epi32, 0x1111u, 2)
    #undef BD_VECTOR_LOOP
    #undef BD_TAG_SCAN
    #undef BD_DELIM
    """
    Py_ssize_t bd_tag_scan16(const unsigned short *p, Py_ssize_t n, Py_ssize_t min_chars,
                             Py_ssize_t *lt, Py_ssize_t *spans, Py_ssize_t cap) noexcept
    Py_ssize_t bd_tag_scan32(const unsigned int *p, Py_ssize_t n, Py_ssize_t min_chars,
                             Py_ssize_t *lt, Py_ssize_t *spans, Py_ssize_t cap) noexcept


cdef list _long_tags_wide(
    const void *p, int kind, Py_ssize_t n, Py_ssize_t min_chars, Py_ssize_t *lt
):
    """:func:`long_tags` for two- and four-byte text (most pages: one character beyond Latin-1
    is enough; an emoji makes four): one pass over its ``<`` and ``>`` (``bd_tag_scan16``,
    ``bd_tag_scan32``), with the same spans and count as :func:`_long_tags_1byte`'s jumps."""
    cdef Py_ssize_t small[128]
    cdef Py_ssize_t *spans = small
    cdef Py_ssize_t found, k, ignored = 0
    found = _scan_wide(p, kind, n, min_chars, lt, small, 64)
    if found > 64:  # rare: scan again into room for all of them (the count is kept once)
        spans = <Py_ssize_t *> malloc(2 * found * sizeof(Py_ssize_t))
        if spans == NULL:
            raise MemoryError()
        _scan_wide(p, kind, n, min_chars, &ignored, spans, found)
    try:
        return [(spans[2 * k], spans[2 * k + 1]) for k in range(found)]
    finally:
        if spans != small:
            free(spans)


cdef inline Py_ssize_t _scan_wide(const void *p, int kind, Py_ssize_t n, Py_ssize_t min_chars,
                                  Py_ssize_t *lt, Py_ssize_t *spans, Py_ssize_t cap) noexcept:
    if kind == PyUnicode_2BYTE_KIND:
        return bd_tag_scan16(<const unsigned short *> p, n, min_chars, lt, spans, cap)
    return bd_tag_scan32(<const unsigned int *> p, n, min_chars, lt, spans, cap)


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
    cdef Py_ssize_t n = len(text)
    if n and PyUnicode_READ(kind, data, n - 1) == 60:  # the loops stop before the last one
        lt[0] += 1
    if kind == PyUnicode_1BYTE_KIND:
        return _long_tags_1byte(<const char *> data, n, min_chars, lt)
    return _long_tags_wide(data, kind, n, min_chars, lt)


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
    its id is in ``read_ids``) and None otherwise, and ``holds`` says which groups of
    ``needles`` (tuples of bytes, at most 32 groups) it holds, as a mask (bit ``g``: a needle of
    ``needles[g]``; every bit when its text is split over several nodes): the list keeps no node
    address, so it stays safe to read after the tree is edited or freed. With ``max_depth`` >= 0
    the walk also does :func:`has_deep_element`'s check and returns None as soon as an element
    has ``max_depth`` element ancestors in the subtree. Call only when :func:`lexbor_ready` is
    True."""
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
    cdef bint title = False, html = False, suspect = False, math = False, base = False
    cdef unsigned int holds
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
                        code = _deep_text(node)
                        meta.append(("ld+json", code))
                    parts = _text_nodes(node, &total, &only)
                    if total:
                        holds = _all_needles(needles) if parts > 1 else _needle_mask(
                            only.data.data, only.data.length, needles
                        )
                        stype = _attr(node, b"type")
                        sid = _attr(node, b"id")
                        if code is None and (holds or _type_has_json(node) or sid in read_ids):
                            code = _deep_text(node)
                        scripts.append((stype, sid, code, holds))
                elif kind & SURVEY_TITLE:
                    if not title:
                        meta.append(("title", _deep_text(node)))
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

    #if defined(__SSE2__)
    /* Sixteen characters at s written to o as their bytes when all are ASCII (1), else 0. */
    static inline int bd_ascii16_1(const unsigned char *s, unsigned char *o) {
        __m128i v = _mm_loadu_si128((const __m128i *) s);
        if (_mm_movemask_epi8(v) != 0)
            return 0;
        _mm_storeu_si128((__m128i *) o, v);
        return 1;
    }

    static inline int bd_ascii16_2(const Py_UCS2 *s, unsigned char *o) {
        const __m128i high = _mm_set1_epi16((short) 0xFF80);
        __m128i a = _mm_loadu_si128((const __m128i *) s);
        __m128i b = _mm_loadu_si128((const __m128i *) (s + 8));
        __m128i any = _mm_and_si128(_mm_or_si128(a, b), high);
        if (_mm_movemask_epi8(_mm_cmpeq_epi16(any, _mm_setzero_si128())) != 0xFFFF)
            return 0;
        _mm_storeu_si128((__m128i *) o, _mm_packus_epi16(a, b));  /* packed to their bytes */
        return 1;
    }
    #else
    #define bd_ascii16_1(s, o) 0
    #define bd_ascii16_2(s, o) 0
    #endif

    /* The UTF-8 of a one- or two-byte string: sixteen ASCII characters at a time where ascii16
       finds them, one code point at a time elsewhere. */
    #define BD_UTF8_NARROW(name, T, ascii16) \
    static Py_ssize_t name(const T *s, Py_ssize_t n, unsigned char *out) { \
        unsigned char *o = out; \
        Py_ssize_t i = 0; \
        while (i + 16 <= n) { \
            if (ascii16(s + i, o)) { \
                o += 16; \
                i += 16; \
                continue; \
            } \
            for (Py_ssize_t end = i + 16; i < end; i++) BD_PUT_BMP(o, (unsigned int) s[i]); \
        } \
        for (; i < n; i++) BD_PUT_BMP(o, (unsigned int) s[i]); \
        return o - out; \
    }

    BD_UTF8_NARROW(bd_utf8_1, unsigned char, bd_ascii16_1)
    BD_UTF8_NARROW(bd_utf8_2, Py_UCS2, bd_ascii16_2)

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
