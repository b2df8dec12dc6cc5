"""Near-duplicate pages: a SimHash fingerprint of a page's extracted text (VSSE's SimHash over
word shingles), and an index that finds a fingerprint within a few bits of one seen before."""

from __future__ import annotations

import re
from collections import Counter

from blockdex.baselines.vsse import simhash
from blockdex.crawl.discovery import DEFAULT_DISCOVERY, DiscoveryConfig

_WORD = re.compile(r"\w+")


def text_simhash(text: str, config: DiscoveryConfig = DEFAULT_DISCOVERY) -> int | None:
    """VSSE's 64-bit SimHash of the text's word 3-grams (None for too short a text): pages
    whose fingerprints differ in a few bits say the same thing."""
    words = _WORD.findall(text.lower())
    if len(words) < config.simhash_min_words:
        return None
    n = min(len(words) - 2, config.simhash_max_shingles)
    shingles = Counter(" ".join(words[i : i + 3]) for i in range(n))
    return simhash(dict(shingles))


class SimhashIndex:
    """Fingerprints seen so far, found again within ``max_bits`` differing bits.

    The 64 bits are cut into ``max_bits + 1`` bands; two fingerprints that differ in at most
    ``max_bits`` bits agree exactly on at least one band (pigeonhole), so a lookup compares only
    the fingerprints that share a band instead of all of them."""

    def __init__(self, max_bits: int = 3) -> None:
        self.max_bits = max_bits
        n = max_bits + 1
        width = 64 // n
        self._bands = [(i * width, 64 - i * width if i == n - 1 else width) for i in range(n)]
        self._tables: list[dict[int, list[tuple[int, str]]]] = [{} for _ in self._bands]

    def _keys(self, fingerprint: int) -> list[int]:
        return [(fingerprint >> start) & ((1 << width) - 1) for start, width in self._bands]

    def find(self, fingerprint: int) -> str | None:
        """The first page added whose fingerprint is within ``max_bits`` of this one."""
        for table, key in zip(self._tables, self._keys(fingerprint), strict=True):
            for other, page in table.get(key, ()):
                if (other ^ fingerprint).bit_count() <= self.max_bits:
                    return page
        return None

    def add(self, fingerprint: int, page: str) -> None:
        for table, key in zip(self._tables, self._keys(fingerprint), strict=True):
            table.setdefault(key, []).append((fingerprint, page))
