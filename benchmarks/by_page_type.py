"""Mean token F1 per page type, from a ``blockdex bench --out DIR`` run.

wcxb labels each page with one of seven types (article, service, collection, listing, product,
documentation, forum; ``page_type`` in the page's metadata). This splits a bench run's per-page
F1 by that label, for every method in the run:

    python benchmarks/by_page_type.py [--results benchmarks/results-dev] [--dataset wcxb]
        [--methods content,oracle,trafilatura,trafilatura-precision,readability,resiliparse]

Pages without a type are counted under "(none)". A page a method failed on counts as 0.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from blockdex.errors import BlockdexError
from blockdex.evaluate.datasets import load_dataset


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--results", default="benchmarks/results-dev")
    ap.add_argument("--dataset", default="wcxb")
    ap.add_argument(
        "--methods",
        default="content,oracle,trafilatura,trafilatura-precision,readability,resiliparse",
    )
    args = ap.parse_args()
    path = Path(args.results) / "results.json"
    try:
        run = json.loads(path.read_text(encoding="utf-8"))[args.dataset]["pages"]
        types = {
            p.id: (p.meta or {}).get("page_type") or "(none)" for p in load_dataset(args.dataset)
        }
    except (OSError, ValueError, KeyError, BlockdexError) as exc:
        print(f"cannot read {args.dataset} from {path}: {exc!r}", file=sys.stderr)
        return 2
    methods = [m for m in args.methods.split(",") if m in run]
    scores: dict[str, dict[str, list[float]]] = {m: defaultdict(list) for m in methods}
    for m in methods:
        for rec in run[m]:
            scores[m][types.get(rec["page"], "(none)")].append(rec["f1"] or 0.0)
    order = sorted(scores[methods[0]], key=lambda t: -len(scores[methods[0]][t]))
    print(f"| page type (pages) | {' | '.join(methods)} |")
    print(f"|---|{'---:|' * len(methods)}")
    for t in order:
        cells = " | ".join(f"{statistics.fmean(scores[m][t]):.3f}" for m in methods)
        print(f"| {t} ({len(scores[methods[0]][t])}) | {cells} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
