"""Parser choice: selectolax (lexbor) vs lxml, parse + one full DFS walk over elements and text.

Run: python benchmarks/parser_choice.py [N_PAGES]
Prints pages/s for each and the ratio, on the same pages in the same run.
"""

from __future__ import annotations

import gzip
import json
import sys
import time
from pathlib import Path

import lxml.html
from selectolax.lexbor import LexborHTMLParser

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def load(n: int) -> list[str]:
    pages = []
    for name in ("scrapinghub-aeb", "wcxb"):
        with gzip.open(DATA / name / "pages.jsonl.gz", "rt") as f:
            for line in f:
                pages.append(json.loads(line)["html"])
                if len(pages) >= n:
                    return pages
    return pages


def walk_lexbor(html: str) -> int:
    tree = LexborHTMLParser(html)
    chars = 0
    for node in tree.root.traverse(include_text=True):
        if node.tag == "-text":
            chars += len(node.text_content or "")
    return chars


def walk_lxml(html: str) -> int:
    root = lxml.html.fromstring(html)
    chars = 0
    for el in root.iter():
        if el.text:
            chars += len(el.text)
        if el.tail:
            chars += len(el.tail)
    return chars


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    pages = load(n)
    for name, fn in (("selectolax/lexbor", walk_lexbor), ("lxml", walk_lxml)):
        t = time.perf_counter()
        for p in pages:
            fn(p)
        dt = time.perf_counter() - t
        print(f"{name:18s} {len(pages) / dt:8.1f} pages/s")


if __name__ == "__main__":
    main()
