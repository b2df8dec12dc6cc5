"""``blockdex bench``: rank extraction methods on labelled pages (the runner itself:
:mod:`blockdex.evaluate.bench`)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from blockdex.errors import MissingExtra
from blockdex.evaluate.bench import (
    BY_TYPE_METHODS,
    COMPOSITE_METHODS,
    DEFAULT_METHODS,
    QE_METHODS,
    bench,
    kind_table,
    markdown_table,
    method_names,
    plot,
    show_page,
)
from blockdex.evaluate.composite import COMPOSITE_KINDS, ensure_composite
from blockdex.evaluate.page_types import by_type_json, by_type_tables, scores_by_type
from blockdex.evaluate.qe import ensure_qe

NAME = "bench"
HELP = "rank extraction methods on labelled pages (token F1, snippets, speed)"
DESCRIPTION = (
    "Run blockdex predictors, classic baselines and peer extractors on the same "
    "human-labelled pages and rank them. DATASET is a shared dataset name, a JSONL file "
    "with html/ground_truth_text fields, or a directory of .html + .txt pairs."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--task",
        choices=("me", "qe", *COMPOSITE_KINDS),
        default="me",
        help=(
            "me: main content (default); qe: query-relevant extraction on the QE set "
            "(made once from the shared data; see 'blockdex evaluate make-qe'); next-story: "
            "article pages with the next story appended, multi-article: several articles on "
            "a page titled after one (both made once from scrapinghub-aeb and l3s-gn1; the "
            "ground truth is the titled article's)"
        ),
    )
    p.add_argument(
        "--dataset",
        "--datasets",
        dest="dataset",
        default=None,
        help=(
            "comma-separated dataset names or paths (default: scrapinghub-aeb; the QE set with "
            "--task qe; wcxb with --by-type)"
        ),
    )
    p.add_argument(
        "--methods",
        default=None,
        help=(
            f"comma-separated methods (default: {','.join(DEFAULT_METHODS)}; "
            f"with --task qe: {','.join(QE_METHODS)}; with --by-type: {','.join(BY_TYPE_METHODS)})"
        ),
    )
    p.add_argument(
        "--split",
        default=None,
        choices=("all", "dev", "train", "test"),
        help=(
            "pages to use: blockdex's fixed dev/train split, or all (default); QE records carry "
            "dev (tuning) or test (reporting, the default with --task qe)"
        ),
    )
    p.add_argument("--limit", type=int, default=None, help="at most N pages per dataset")
    p.add_argument("--lcs", action="store_true", help="also compute LCS-based F1 (slower)")
    p.add_argument(
        "--by-type",
        action="store_true",
        help=(
            "after the usual table, mean F1 per page type (wcxb's seven) and over all typed "
            "pages, two ways side by side: wcxb's own scorer over all pages (a page with no main "
            "content scores 1 only for an empty output; the figure to compare with published "
            "ones), and F1 over the pages with main content beside the fallback rate (the "
            "share of non-empty outputs) on the pages with none. Defaults to --dataset wcxb "
            f"and --methods {','.join(BY_TYPE_METHODS)}; a dataset without page types gets one "
            "line saying so"
        ),
    )
    p.add_argument("--jobs", type=int, default=1, help="run methods in N processes")
    p.add_argument(
        "--baseline",
        default=None,
        help="method speed ratios refer to (default: trafilatura; chunk-bm25 with --task qe)",
    )
    p.add_argument("--out", help="directory for results.json, results.md and PNG plots")
    p.add_argument("--show", metavar="PAGE_ID", help="explain one page: missed and extra tokens")
    p.add_argument("--list", action="store_true", help="list the methods and exit")


def run_command(args: argparse.Namespace) -> int:
    if args.list:
        for name, desc in method_names().items():
            print(f"{name:24s} {desc}")
        return 0
    if args.task == "qe":
        args.dataset = args.dataset or str(ensure_qe())
        args.methods = args.methods or ",".join(QE_METHODS)
        args.split = args.split or "test"
        args.baseline = args.baseline or "chunk-bm25"
    elif args.task in COMPOSITE_KINDS:
        args.dataset = args.dataset or str(ensure_composite(args.task))
        args.methods = args.methods or ",".join(COMPOSITE_METHODS)
        args.split = args.split or "test"
    elif args.by_type:
        args.dataset = args.dataset or "wcxb"
        args.methods = args.methods or ",".join(BY_TYPE_METHODS)
    args.dataset = args.dataset or "scrapinghub-aeb"
    args.methods = args.methods or ",".join(DEFAULT_METHODS)
    args.split = args.split or "all"
    args.baseline = args.baseline or "trafilatura"
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    datasets = [d.strip() for d in args.dataset.split(",") if d.strip()]
    if args.show:
        print(show_page(datasets[0], args.show, methods), end="")
        return 0
    out_dir = Path(args.out) if args.out else None
    if out_dir:
        out_dir.mkdir(parents=True, exist_ok=True)
    report: list[str] = []
    all_results: dict[str, Any] = {}
    for dataset in datasets:
        records, summaries, notes = bench(
            dataset, methods, split=args.split, limit=args.limit, lcs=args.lcs, jobs=args.jobs
        )
        n_pages = len(next(iter(records.values()), []))
        table = markdown_table(
            f"{dataset} ({args.split} split, {n_pages} pages)", summaries, args.baseline
        )
        table += "".join(f"\n- {n}" for n in notes) + ("\n" if notes else "")
        if args.task == "qe":
            table += "\n" + kind_table(dataset, records, args.split)
        if args.by_type:
            table += "\n" + by_type_tables(f"{dataset} by page type ({args.split} split)", records)
        print(table)
        report.append(table)
        all_results[dataset] = {
            "summary": {
                s.method: {
                    **s.scores,
                    "pages": s.pages,
                    "errors": s.errors,
                    "pages_per_second": s.pages_per_second,
                }
                for s in summaries
            },
            "pages": {m: [asdict(r) for r in recs] for m, recs in records.items()},
            "notes": notes,
        }
        if args.by_type:
            all_results[dataset]["by_type"] = by_type_json(scores_by_type(records))
        if out_dir:
            try:
                plot(dataset, records, summaries, out_dir)
            except MissingExtra as exc:
                print(f"plots skipped: {exc}", file=sys.stderr)
    if out_dir:
        (out_dir / "results.json").write_text(json.dumps(all_results, indent=1), encoding="utf-8")
        command = "blockdex bench " + " ".join(sys.argv[2:]) if len(sys.argv) > 2 else ""
        (out_dir / "results.md").write_text(
            (f"`{command}`\n\n" if command else "") + "\n".join(report), encoding="utf-8"
        )
        print(f"results written to {out_dir}/", file=sys.stderr)
    return 0
