"""One hash of the default pipeline's output on every shared page: the check that a speed change
gives the same output.

Each page of the shared sets is run through ``Extractor().run`` (the HTML as ``str``, or as UTF-8
``bytes`` with ``--bytes``) and hashed: its JSON (blocks, selection, metadata; the timings left
out), its Markdown, HTML and text. The figure printed is the sha256 of the per-page hashes in
order; compare it before and after a change. ``--save FILE`` writes the per-page hashes and
``--against FILE`` names the pages whose hash differs from a saved run.
``--urls`` gives each page its address (as ``run(html, url=...)``): the page-kind rules
(``predict/kinds.py``) and the URL columns of the page type read only pages with one (or a
canonical link). Each page is also run for text output only (``run(output="text")``, no block markup built) and
its text compared with the full run's: the pages where they differ are named (none should be).

``--doors`` hashes every entry point instead, on every ``--every``-th page of the sets: the
Python API (``blockdex.extract``), ``blockdex extract`` (its output and what it prints on stderr)
and the HTTP service (``POST /v1/extract`` through the app's test client) in each format, the MCP
``extract`` tool, ``batch`` records in each format and the records of a crawl of a local site
serving those pages (times left out). Each page is asked with one of a few option sets in turn
(defaults, ``favor``, ``comments`` off, ``links`` and ``images``, a query), so that the options
travel through each door too.

    python benchmarks/output_hash.py [--bytes] [--urls] [--save pages.txt] [--against pages.txt]
    python benchmarks/output_hash.py --doors [--every 10] [--save doors.txt] [--against doors.txt]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import warnings
from pathlib import Path

from blockdex.evaluate.datasets import load_dataset
from blockdex.extract import Extractor

SETS = ("l3s-gn1", "scrapinghub-aeb", "trafilatura-eval", "wcxb", "webmainbench-samples")


def page_hash(ex: Extractor, html: str | bytes, url: str | None = None) -> tuple[str, bool]:
    """The page's output hash, and whether its text-only run gives the same text."""
    result = ex.run(html, url=url)
    doc = result.to_json()
    doc.pop("timings_ms", None)
    text = result.render("text")
    body = "\n".join(
        [json.dumps(doc, sort_keys=True, ensure_ascii=False)]
        + [result.render(fmt) for fmt in ("markdown", "html")]
        + [text]
    )
    same_text = ex.run(html, url=url, output="text").render("text") == text
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest(), same_text


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--bytes", action="store_true", help="give each page as UTF-8 bytes")
    ap.add_argument(
        "--urls",
        action="store_true",
        help="give each page its address (the page-kind rules read only pages with one)",
    )
    ap.add_argument("--save", type=Path, help="write 'set id hash' a line to this file")
    ap.add_argument("--against", type=Path, help="name the pages that differ from this saved run")
    ap.add_argument("--doors", action="store_true", help="hash every entry point (see above)")
    ap.add_argument(
        "--every", type=int, default=10, metavar="K", help="with --doors: every K-th page"
    )
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    if args.doors:
        from door_hash import door_rows

        rows = door_rows(SETS, args.every)
        return report(rows, [], args.save, args.against)
    ex = Extractor()
    rows = []
    text_differs = []
    for name in SETS:
        for page in load_dataset(name):
            html = page.html.encode("utf-8", "surrogatepass") if args.bytes else page.html
            digest, same_text = page_hash(ex, html, page.url if args.urls else None)
            rows.append(f"{name} {page.id} {digest}")
            if not same_text:
                text_differs.append(f"{name} {page.id}")
    return report(rows, text_differs, args.save, args.against)


def report(
    rows: list[str], text_differs: list[str], save: Path | None, against: Path | None
) -> int:
    """Print the combined hash; save the rows, or name those that differ from a saved run."""
    total = hashlib.sha256("\n".join(rows).encode()).hexdigest()
    print(f"{len(rows)} pages, combined sha256 {total}")
    print(f"{len(text_differs)} pages whose text-only run gives other text")
    for key in text_differs[:50]:
        print("  " + key)
    if save:
        save.write_text("\n".join(rows) + "\n")
    if against:
        before = dict(line.rsplit(" ", 1) for line in against.read_text().splitlines())
        changed = [
            r.rsplit(" ", 1)[0]
            for r in rows
            if before.get(r.rsplit(" ", 1)[0]) != r.rsplit(" ", 1)[1]
        ]
        print(f"{len(changed)} pages differ from {against}")
        for key in changed[:50]:
            print("  " + key)
        return 1 if changed or text_differs else 0
    return 1 if text_differs else 0


if __name__ == "__main__":
    sys.exit(main())
