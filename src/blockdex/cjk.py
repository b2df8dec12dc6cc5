"""Scripts written without spaces between words (Chinese, Japanese): each character is a word.

One definition for everything that counts words or tokens: the block features' word counts
(:func:`blockdex.features.word_count`) and segmentation's token budget
(:func:`blockdex.segment.count_tokens`), in Python and in the compiled code, which gets the
ranges from here when this module is imported.
"""

from __future__ import annotations

from blockdex import _cjk_c as compiled

CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x3134F),  # CJK Unified Ideographs Extensions B-G
)
"""Each character of these ranges is a word (as Unicode word segmentation and BERT-style
tokenizers treat ideographs). Otherwise a Chinese paragraph is one "word" to a split count: no
block of a Chinese page reaches the features' prose minimum, and a 3,000-character paragraph
stays one block while a 200-token budget splits an English one."""

CJK_CLASS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES)
"""The ranges as the inside of a regular-expression character class."""

WORD_PATTERN = f"[{CJK_CLASS}]|[^\\W{CJK_CLASS}]+"
"""A word as a regular expression: one CJK character, or a run of other word characters
(segmentation's token count adds punctuation marks to it; the ground-truth alignment uses it
as it is)."""

compiled.set_cjk_ranges(list(CJK_RANGES))
