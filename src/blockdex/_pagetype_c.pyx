# cython: language_level=3
"""What ``blockdex/pagetype.py`` runs in C: the only implementation of these rules (built by
``pip install``).

* :func:`block_sums` — ``pagetype._block_sums``: the page type's per-block counts (words as
  ``str.split`` counts them, characters, link characters, long and short blocks, headings,
  words by tag group, linked headlines, questions, labels, currency signs, years and relative
  dates, pronouns) in one pass over the blocks, without joining their texts.
* :func:`class_counts` — ``pagetype._class_counts``: how often each class word is named
  around the blocks, each distinct tokens string of the page scanned once (no cache to grow).
"""

cimport cython
from cpython.dict cimport PyDict_GetItem
from cpython.ref cimport PyObject
from cpython.unicode cimport (
    PyUnicode_1BYTE_KIND, PyUnicode_2BYTE_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
)
from libc.stdlib cimport free
from blockdex._common_c cimport BlockIds, _alloc, _char_t

cdef extern from "Python.h":
    bint Py_UNICODE_ISSPACE(Py_UCS4 ch)
    bint Py_UNICODE_ISDECIMAL(Py_UCS4 ch)
    bint Py_UNICODE_ISALNUM(Py_UCS4 ch)
    bint PyUnicode_IS_ASCII(object o)

cdef enum:
    LABEL_BUF = 128  # the key of an ASCII text of at most LABEL_BUF characters fits
    MAX_GROUPS = 64  # TAG_SHARES groups and LABELS groups counted at most
    MAX_WORDS = 16  # pronouns looked for at most
    WORD_LEN = 8  # and their length

YEAR_PATTERN = r"20[0-3]\d(?!\d)"
"""The year pattern :func:`_scan` matches (``pagetype.YEAR_RE``; another one: :func:`block_sums` refuses it)."""
RELATIVE_PATTERN = r" ago(?!\w)"
"""The relative date pattern :func:`_scan` matches (``pagetype.RELATIVE_DATE_RE``)."""


cdef struct _Words:
    # the pronouns (lower-case ASCII), and where the page's running token stands: the text is
    # read as " " + "\n".join(texts) + " ", lower-cased, and " word " counted in it as
    # str.count counts (non-overlapping, left to right). Spaces are numbered in that text (the
    # added first one 0): a match's token opens at one and closes at the next.
    int n
    unsigned int lengths  # bit k set: some word is k characters long
    int length[MAX_WORDS]
    unsigned char chars[MAX_WORDS][WORD_LEN]
    Py_ssize_t count[MAX_WORDS]
    Py_ssize_t last_close[MAX_WORDS]  # the space closing the word's last match (-1: none)
    Py_ssize_t open  # the space before the token being read
    # the token being read when it lies in the last text read (from its last space, or from
    # the start of the first text, on): its length and first WORD_LEN characters (0 for one
    # past ASCII); tail False: it holds the newline joining two texts, so it is no word
    bint tail
    Py_ssize_t tail_len
    unsigned char tail_chars[WORD_LEN]


cdef inline void _token_end(_Words *w, const _char_t *t, Py_ssize_t m) noexcept:
    """The token ``t[:m]`` (no space in it) ends at a space: count it for a word it spells,
    lower-cased, unless that word's last match closed at the space before it (``str.count``
    goes on after a match's closing space). Lower-casing makes an ASCII letter of no other
    character but the Kelvin sign (k, in no word: :func:`block_sums` refuses words with a k)
    and of U+0130 only with a combining dot, so a token holding a character past ASCII is no
    word."""
    cdef int k, j
    cdef unsigned int c
    if m <= WORD_LEN and (w.lengths >> m) & 1:
        for k in range(w.n):
            if w.length[k] != m or w.open <= w.last_close[k]:
                continue
            for j in range(m):
                c = <unsigned int> t[j]
                if 65 <= c <= 90:
                    c += 32
                if c != w.chars[k][j]:
                    break
            else:
                w.count[k] += 1
                w.last_close[k] = w.open + 1
    w.open += 1


cdef unsigned char _plain[128]  # see _load_plain


cdef void _load_plain() noexcept:
    """``_plain[c]``: 1 for the ASCII characters :func:`_scan` only counts into the running word
    (not whitespace as ``str.split`` reads it, not ``?``, ``$``, the space or the ``2`` a year
    starts with), 0 for those it looks at further."""
    cdef unsigned int c
    for c in range(128):
        _plain[c] = not (Py_UNICODE_ISSPACE(c) or c == 63 or c == 36 or c == 50)


_load_plain()


cdef Py_ssize_t _scan(
    const _char_t *d, Py_ssize_t n, bint *question, Py_ssize_t *prices, Py_ssize_t *dates,
    _Words *w, bint first,
) noexcept:
    """``len(text.split())`` (whitespace as ``str.split`` reads it); whether ``?`` occurs; the
    currency signs (``pagetype.PRICE_SIGNS``); the matches of YEAR_PATTERN and of
    RELATIVE_PATTERN (the regexes' left-to-right, non-overlapping matches: ``\\d`` a decimal,
    ``\\w`` alphanumeric or ``_``, as Python's ``re`` reads them); the pronouns of the tokens
    between its spaces (:func:`_token_end`; ``first``: the text is the page's first, whose
    first token opens at the space added before it; any other's first token holds the newline
    before it). One pass: most characters are :data:`_plain` and only extend the word; a year is
    looked for where a ``2`` stands, a relative date and the end of a token where a space."""
    cdef Py_ssize_t i, k, words = 0, p = 0, y = 0, year_from = 0
    cdef Py_ssize_t start = 0 if first else -1  # where the token being read starts (-1: before)
    cdef bint in_word = False, q = False
    cdef Py_UCS4 c
    cdef unsigned int u
    for i in range(n):
        c = d[i]
        u = <unsigned int> c
        if u < 128 and _plain[u]:
            if not in_word:
                in_word = True
                words += 1
            continue
        if c == 63:  # '?'
            q = True
        elif c == 36 or c == 0x20AC or c == 0xA3 or c == 0xA5 or c == 0x20B9 or c == 0x20A9 \
                or c == 0x20BD:  # $ € £ ¥ ₹ ₩ ₽
            p += 1
        elif c == 50:  # 20[0-3]\d(?!\d), not overlapping the year before
            if (i >= year_from and i + 4 <= n and d[i + 1] == 48 and 48 <= d[i + 2] <= 51
                    and Py_UNICODE_ISDECIMAL(d[i + 3])
                    and (i + 4 == n or not Py_UNICODE_ISDECIMAL(d[i + 4]))):
                y += 1
                year_from = i + 4
        elif c == 32:  # " ago(?!\w)": a match holds no other space, so none overlap
            if (i + 4 <= n and d[i + 1] == 97 and d[i + 2] == 103 and d[i + 3] == 111
                    and (i + 4 == n or not (Py_UNICODE_ISALNUM(d[i + 4]) or d[i + 4] == 95))):
                y += 1
            if start >= 0:
                _token_end(w, d + start, i - start)
            else:
                w.open += 1
            start = i + 1
        if Py_UNICODE_ISSPACE(c):
            in_word = False
        elif not in_word:
            in_word = True
            words += 1
    w.tail = start >= 0
    if w.tail:
        w.tail_len = n - start
        for k in range(min(n - start, WORD_LEN)):
            u = <unsigned int> d[start + k]
            w.tail_chars[k] = <unsigned char> (u if u < 128 else 0)
    question[0] = q
    prices[0] = p
    dates[0] = y
    return words


cdef str _ascii_label_key(const unsigned char *d, Py_ssize_t n, Py_ssize_t longest):
    """``" ".join(_LETTERS_RE.findall(text.lower()))`` for an ASCII ``text`` of at most
    LABEL_BUF characters: its runs of letters, lower-cased, one space between them (in ASCII,
    ``[^\\W\\d_]`` is ``[A-Za-z]``); None for a key longer than ``longest`` or empty (no
    label is: no string need be made to look it up)."""
    cdef char buf[LABEL_BUF]
    cdef Py_ssize_t i, m = 0
    cdef unsigned char c
    cdef bint gap = False
    for i in range(n):
        c = d[i]
        if 65 <= c <= 90:
            c += 32
        if 97 <= c <= 122:
            if gap and m:
                buf[m] = 32
                m += 1
            gap = False
            buf[m] = <char> c
            m += 1
        else:
            gap = True
    if m == 0 or m > longest:
        return None
    return buf[:m].decode("ascii")


@cython.boundscheck(False)
@cython.wraparound(False)
def block_sums(
    BlockIds table, dict tag_codes, Py_ssize_t n_groups, Py_ssize_t long_words,
    Py_ssize_t short_words, Py_ssize_t label_max, dict label_group, Py_ssize_t n_labels,
    Py_ssize_t label_longest, label_key, str price_signs, str year_pattern, str relative_pattern, tuple pronouns,
    tuple pronoun_groups, Py_ssize_t n_pronoun_groups,
):
    """``blockdex.pagetype._block_sums`` (see there for what it returns) over the blocks' table,
    or None when the patterns, signs or pronouns are not the ones this code reads.

    ``tag_codes`` maps a tag to ``8 * (its TAG_SHARES group + 1) + kind`` (kind 1: h1, 2: h2,
    3: h3-h6, 4: pre), looked up once a page for each distinct tag of the table; ``label_group``
    a label's key to its LABELS group, ``label_longest`` the longest key (a longer one is not
    looked up); ``label_key`` is the Python function making a text's key, called for texts past
    ASCII; ``pronouns`` the words
    and ``pronoun_groups`` the PRONOUNS group of each."""
    cdef Py_ssize_t n, pos, nw, length, link, total = 0, chars = 0, links = 0
    cdef Py_ssize_t n_long = 0, long_sum = 0, n_short = 0, h1 = 0, h2 = 0, h3 = 0, pre = 0
    cdef Py_ssize_t linked_headings = 0, headline_links = 0, questions = 0, code, kind
    cdef bint question
    cdef int ukind
    cdef list char_ends
    cdef str text, key
    cdef Py_ssize_t tag_words[MAX_GROUPS]
    cdef Py_ssize_t labels[MAX_GROUPS]
    cdef int *tag_code
    cdef list texts = table.texts, tags = table.tags
    cdef PyObject *found
    cdef Py_ssize_t p_count, d_count, prices = 0, dates = 0, dated = 0, k, j
    cdef list priced = [], pronoun_counts
    cdef _Words w
    cdef bytes word
    if (price_signs != "$\u20ac\u00a3\u00a5\u20b9\u20a9\u20bd" or year_pattern != YEAR_PATTERN
            or relative_pattern != RELATIVE_PATTERN or len(pronouns) > MAX_WORDS
            or len(pronouns) != len(pronoun_groups) or not 0 <= n_groups <= MAX_GROUPS
            or not 0 <= n_labels <= MAX_GROUPS):
        return None
    w.n = len(pronouns)
    w.lengths = 0
    for k in range(w.n):
        word = (<str> pronouns[k]).encode("utf-8")
        if (not 0 < len(word) <= WORD_LEN or not word.isalpha() or not word.islower()
                or len(word) != len(<str> pronouns[k]) or b"k" in word):
            return None
        w.length[k] = len(word)
        w.lengths |= (<unsigned int> 1) << len(word)
        for j in range(len(word)):
            w.chars[k][j] = word[j]
        w.count[k] = 0
        w.last_close[k] = -1
    w.open = 0  # the text starts with a space
    w.tail = True  # the first token, empty so far
    w.tail_len = 0
    n = table.n
    char_ends = [0] * (n + 1)
    for k in range(n_groups):
        tag_words[k] = 0
    for k in range(n_labels):
        labels[k] = 0
    tag_code = <int *> _alloc(len(tags) * sizeof(int), True)
    try:
        for k in range(len(tags)):
            found = PyDict_GetItem(tag_codes, tags[k])
            if found != NULL:
                code = <object> found
                if not 0 <= code < 8 * (n_groups + 1) or not 0 <= (code & 7) <= 4:
                    return None
                tag_code[k] = <int> code
        for pos in range(n):
            text = <str> texts[pos]
            link = <Py_ssize_t> table.link_chars_of[pos]
            length = PyUnicode_GET_LENGTH(text)
            ukind = PyUnicode_KIND(text)
            if ukind == PyUnicode_1BYTE_KIND:
                nw = _scan(<const unsigned char *> PyUnicode_DATA(text), length, &question,
                           &p_count, &d_count, &w, pos == 0)
            elif ukind == PyUnicode_2BYTE_KIND:
                nw = _scan(<const unsigned short *> PyUnicode_DATA(text), length, &question,
                           &p_count, &d_count, &w, pos == 0)
            else:
                nw = _scan(<const unsigned int *> PyUnicode_DATA(text), length, &question,
                           &p_count, &d_count, &w, pos == 0)
            if p_count:
                prices += p_count
                priced.append(pos)
            if d_count:
                dates += d_count
                dated += 1
            chars += length
            char_ends[pos + 1] = chars
            total += nw
            links += link
            if nw >= long_words:
                n_long += 1
                long_sum += nw
            if nw <= short_words:
                n_short += 1
            questions += question
            if nw >= 4 and 5 * link >= 4 * length:
                headline_links += 1
            code = tag_code[table.tag_of[pos]]  # 0: a tag of no group and no kind
            kind = code & 7
            if code >= 8:
                tag_words[(code >> 3) - 1] += nw
            if kind == 1:
                h1 += 1
            elif kind == 2:
                h2 += 1
            elif kind == 3:
                h3 += 1
            elif kind == 4:
                pre += 1
            if 1 <= kind <= 3 and 2 * link >= length:
                linked_headings += 1
            if length <= label_max:
                if PyUnicode_IS_ASCII(text) and length <= LABEL_BUF:
                    key = _ascii_label_key(<const unsigned char *> PyUnicode_DATA(text), length,
                                           label_longest)
                else:
                    key = label_key(text)
                if key is not None:
                    found = PyDict_GetItem(label_group, key)
                    if found != NULL:
                        k = <Py_ssize_t> <object> found
                        if not 0 <= k < n_labels:
                            return None
                        labels[k] += 1
    finally:
        free(tag_code)
    if w.tail:  # the closing space
        _token_end(&w, <const unsigned char *> w.tail_chars, w.tail_len)
    pronoun_counts = [0] * n_pronoun_groups
    for k in range(w.n):
        pronoun_counts[<Py_ssize_t> pronoun_groups[k]] += w.count[k]
    return (
        char_ends, total, links, n_long, long_sum, n_short, h1, h2, h3, pre,
        [tag_words[k] for k in range(n_groups)], linked_headings, headline_links, questions,
        [labels[k] for k in range(n_labels)], prices, priced, dates, dated, pronoun_counts,
    )


cdef object _words_for = None  # the words the table below was built from
cdef bytes _words_pool = None
cdef Py_ssize_t _w_start[512]
cdef Py_ssize_t _w_len[512]
cdef unsigned short _w_first[128 * 128 + 1]  # words starting with bytes a, b: from
# _w_first[128 * a + b] to _w_first[128 * a + b + 1]
cdef Py_ssize_t _w_pos[512]  # the word's position in the words given


cdef int _load_words(tuple words) except -1:
    """Index ``words`` (lower-case ASCII letters, two to a word at least, at most 512) by their
    first two letters, longest first."""
    global _words_for, _words_pool
    cdef Py_ssize_t k, c, at = 0
    cdef list order
    if _words_for is words:
        return 1
    if len(words) > 512:
        return 0
    for w in words:
        if not isinstance(w, str) or len(w) < 2 or not w.isascii() or not w.isalpha() \
                or not w.islower():
            return 0
    order = sorted(
        range(len(words)), key=lambda k: (128 * ord(words[k][0]) + ord(words[k][1]), -len(words[k]))
    )
    _words_pool = "".join([words[k] for k in order]).encode("ascii")
    for k in range(len(order)):
        _w_pos[k] = order[k]
        _w_len[k] = len(words[order[k]])
        _w_start[k] = at
        at += _w_len[k]
    k = 0
    for c in range(128 * 128 + 1):
        while k < len(order) and 128 * ord(words[order[k]][0]) + ord(words[order[k]][1]) < c:
            k += 1
        _w_first[c] = <unsigned short> k
    _words_for = words
    return 1


cdef void _count_words(
    const _char_t *d, Py_ssize_t n, Py_ssize_t times, Py_ssize_t *counts
) noexcept:
    """At each place of ``d`` the longest word that starts there, left to right, each match
    skipped past (what ``pagetype._CLASS_WORD_RE.finditer`` finds: the words as a trie, so
    the longest word at the first place that has one), each counted ``times``. The words
    looked at are those starting with the place's two characters."""
    cdef const unsigned char *pool = <const unsigned char *> (<char *> _words_pool)
    cdef Py_ssize_t i = 0, e, j, m, found
    cdef unsigned int c, key
    while i + 1 < n:
        c = <unsigned int> d[i]
        key = <unsigned int> d[i + 1]
        found = -1
        if c < 128 and key < 128:
            key += 128 * c
            for e in range(_w_first[key], _w_first[key + 1]):  # longest first
                m = _w_len[e]
                if i + m > n:
                    continue
                for j in range(2, m):
                    if d[i + j] != pool[_w_start[e] + j]:
                        break
                else:
                    found = e
                    break
        if found >= 0:
            counts[_w_pos[found]] += times
            i += _w_len[found]
        else:
            i += 1


@cython.boundscheck(False)
@cython.wraparound(False)
def class_counts(BlockIds table, tuple words):
    """``blockdex.pagetype._class_counts``: for each of ``words``, how often it is named in the
    class/id tokens of the elements around the blocks (``Block.scope_attrs``, read from their
    table), each element's tokens counted once per place a block's scope holds it; None when the
    words are not lower-case ASCII letters.

    The table numbers each distinct tokens string once (``owns``), so one pass over the blocks'
    scope places counts how often each string is held, and each string held is then scanned once
    for the words, its matches counted that many times."""
    cdef list owns = table.owns
    cdef Py_ssize_t n_owns = len(owns), i, k, o, n, times
    cdef Py_ssize_t *held
    cdef Py_ssize_t counts[512]
    cdef str s
    cdef int kind
    if not _load_words(words):
        return None
    for k in range(len(words)):
        counts[k] = 0
    held = <Py_ssize_t *> _alloc(n_owns * sizeof(Py_ssize_t), True)
    try:
        for i in range(table.n):
            for k in range(table.scope_off[i], table.scope_off[i + 1]):
                held[table.elem_own[table.scope_ids[k]]] += 1
        for o in range(n_owns):
            times = held[o]
            if not times:
                continue
            s = <str> owns[o]
            n = PyUnicode_GET_LENGTH(s)
            kind = PyUnicode_KIND(s)
            if kind == PyUnicode_1BYTE_KIND:
                _count_words(<const unsigned char *> PyUnicode_DATA(s), n, times, counts)
            elif kind == PyUnicode_2BYTE_KIND:
                _count_words(<const unsigned short *> PyUnicode_DATA(s), n, times, counts)
            else:
                _count_words(<const unsigned int *> PyUnicode_DATA(s), n, times, counts)
    finally:
        free(held)
    return [counts[k] for k in range(len(words))]
