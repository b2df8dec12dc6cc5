"""Pages per second of the blockdex pipeline next to a peer, same pages, same run.

The pipeline is parse + clean + segment + predict + assemble + render (``--format``, Markdown by
default). The predictor is ``--predictor`` (default: the package default). The peer is
``--peer``: trafilatura (Markdown output) or resiliparse (``extract_plain_text(tree,
main_content=True)``, the extractor corpus builders pick for speed; it parses with lexbor too).
The two are interleaved in rounds so that noise on a shared machine hits both alike; the ratio
(peer's time / blockdex's) is the figure to quote: above 1 blockdex is faster.

    python benchmarks/pipeline_speed.py [--dataset wcxb] [--limit 200] [--predictor all] [--rounds 3]
        [--per-page] [--peer resiliparse] [--format text]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

from blockdex.evaluate.datasets import load_dataset
from blockdex.extract import Extractor


def _time(fn, pages) -> float:
    t0 = time.perf_counter()
    for p in pages:
        fn(p)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dataset", default="wcxb")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--predictor", default=None)
    ap.add_argument("--format", default="markdown")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--peer", choices=("trafilatura", "resiliparse"), default="trafilatura")
    ap.add_argument(
        "--per-page",
        action="store_true",
        help="alternate the two on every page (each page: blockdex, then the peer) and "
        "report each round's ratio: slow drifts of a shared machine's speed then hit both alike",
    )
    args = ap.parse_args()

    warnings.filterwarnings("ignore")
    pages = [p.html for p in load_dataset(args.dataset, limit=args.limit)]
    ex = Extractor(args.predictor)
    name = args.predictor or "default"

    def ours(html: str) -> None:
        ex.extract(html, output=args.format)

    peer = args.peer
    if peer == "resiliparse":
        from resiliparse.extract.html2text import extract_plain_text
        from resiliparse.parse.html import HTMLTree

        def theirs(html: str) -> None:
            extract_plain_text(HTMLTree.parse(html), main_content=True)

    else:
        import trafilatura

        def theirs(html: str) -> None:
            trafilatura.extract(html, output_format="markdown")

    ours(pages[0])  # load models, warm caches
    theirs(pages[0])
    if args.per_page:
        clock = time.perf_counter
        ratios = []
        for r in range(args.rounds):
            t_ours = t_theirs = 0.0
            for p in pages:
                t0 = clock()
                ours(p)
                t1 = clock()
                theirs(p)
                t_ours += t1 - t0
                t_theirs += clock() - t1
            ratios.append(t_theirs / t_ours)
            print(
                f"round {r + 1}: blockdex[{name}] {len(pages) / t_ours:.1f} pages/s, "
                f"{peer} {len(pages) / t_theirs:.1f} pages/s, ratio {ratios[-1]:.2f}x"
            )
        ratios.sort()
        print(
            f"dataset={args.dataset} pages={len(pages)} rounds={args.rounds} format={args.format} "
            f"peer={peer} (alternating)"
        )
        print(f"ratio median {ratios[len(ratios) // 2]:.2f}x (min {ratios[0]:.2f}x)")
        return 0
    t_ours: list[float] = []
    t_theirs: list[float] = []
    for _ in range(args.rounds):
        t_ours.append(_time(ours, pages))
        t_theirs.append(_time(theirs, pages))
    best_ours, best_theirs = min(t_ours), min(t_theirs)
    print(f"dataset={args.dataset} pages={len(pages)} rounds={args.rounds} (best round)")
    print(f"blockdex[{name}] {len(pages) / best_ours:8.1f} pages/s")
    print(f"{peer:16} {len(pages) / best_theirs:8.1f} pages/s")
    print(f"ratio            {best_theirs / best_ours:8.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
