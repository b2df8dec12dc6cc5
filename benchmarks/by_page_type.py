"""Mean F1 per page type, from a ``blockdex bench --out DIR`` run.

wcxb labels each page with one of seven types (article, service, collection, listing, product,
documentation, forum). This prints the tables ``blockdex bench --by-type`` prints, from the
per-page records a run saved in ``DIR/results.json`` (so other methods, or a subset, need no
rerun): wcxb's own scorer over all pages, and F1 over the pages with main content beside the
fallback rate on the pages with none. The rule lives in ``blockdex.evaluate.page_types``.

    python benchmarks/by_page_type.py [--results benchmarks/results-dev] [--dataset wcxb]
        [--methods content,oracle,trafilatura,readability]

A page a method failed on counts as 0. A results.json from a bench older than page types in
its records has none: rerun the bench.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from blockdex.evaluate.bench import PageRecord
from blockdex.evaluate.page_types import by_type_tables


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--results", default="benchmarks/results-dev")
    ap.add_argument("--dataset", default="wcxb")
    ap.add_argument("--methods", default=None, help="comma-separated (default: all in the run)")
    args = ap.parse_args()
    path = Path(args.results) / "results.json"
    try:
        run = json.loads(path.read_text(encoding="utf-8"))[args.dataset]["pages"]
        records = {m: [PageRecord(**r) for r in recs] for m, recs in run.items()}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"cannot read {args.dataset} from {path}: {exc!r}", file=sys.stderr)
        return 2
    if args.methods:
        wanted = [m.strip() for m in args.methods.split(",") if m.strip()]
        missing = [m for m in wanted if m not in records]
        if missing:
            print(f"not in {path}: {', '.join(missing)}", file=sys.stderr)
            return 2
        records = {m: records[m] for m in wanted}
    if not any(r.page_type for recs in records.values() for r in recs):
        print(
            f"{path}: no record carries a page type (a dataset without types, or a run older "
            "than page types in bench records: rerun blockdex bench --out)",
            file=sys.stderr,
        )
        return 2
    print(by_type_tables(f"{args.dataset} by page type", records), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
