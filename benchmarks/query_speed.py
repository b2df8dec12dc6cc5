"""Query mode on one core: F1 and pages per CPU-second of the default query predictor on QE.

One process, one thread: numpy/BLAS, the tokenizer and onnxruntime are limited to one thread
(set below, before they are imported), so the CPU time of the extraction is what one core
spends on it. The machine is shared, so CPU time (``getrusage``: user + system, every thread of
the process) is the figure to quote; wall pages/s is printed beside it. Each record runs the
whole pipeline as ``blockdex bench --task qe`` does: ``Extractor(predictor).extract(html,
query=…, output="text")``, scored by token F1 against the relevant text; the first record runs
once more outside the clock (model loading is not a per-page cost). Embeddings remembered from
earlier records are forgotten before each record (``--warm`` keeps them).

    python benchmarks/query_speed.py [--split test] [--limit N] [--predictor hybrid]
        [--max-embedded 160] [--embed-tokens 32] [--warm] [--out per-page.json] [--profile out.prof]

``--limit N`` takes N records spread evenly over the split (every kind represented), not the
first N. ``--out`` writes per-record F1 and CPU time, to compare two runs record by record.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _one_thread_encoder() -> None:
    """Every embedding in this process goes through one single-threaded encoder."""
    import functools

    import blockdex.embed as embed

    one = embed.EmbedConfig(threads=1)
    embed.shared_encoder = functools.lru_cache(maxsize=1)(
        lambda config=one: embed.MiniLMEncoder(one)
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--dataset", default=None, help="QE JSONL (default: the cached QE set)")
    ap.add_argument("--split", default="test", choices=("test", "dev", "all"))
    ap.add_argument("--limit", type=int, default=None, help="N records spread over the split")
    ap.add_argument("--predictor", default="hybrid")
    ap.add_argument("--max-embedded", type=int, default=None, help="HybridPredictor option")
    ap.add_argument("--embed-tokens", type=int, default=None, help="HybridPredictor option")
    ap.add_argument(
        "--warm",
        action="store_true",
        help="keep remembered embeddings between records (by default each record starts cold; "
        "the QE set asks several queries of one page, which the cache would make cheaper)",
    )
    ap.add_argument("--out", default=None, help="write per-record F1/CPU seconds as JSON")
    ap.add_argument("--profile", default=None, help="write a cProfile of the timed loop here")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")

    from blockdex.evaluate.bench import _load_pages, score_page
    from blockdex.evaluate.qe import ensure_qe
    from blockdex.extract import Extractor
    from blockdex.predict import get_predictor

    _one_thread_encoder()
    pages = _load_pages(args.dataset or str(ensure_qe()), args.split, None)
    if args.limit and args.limit < len(pages):
        step = len(pages) / args.limit
        pages = [pages[int(i * step)] for i in range(args.limit)]
    options = {
        k: v
        for k, v in (("max_embedded", args.max_embedded), ("embed_tokens", args.embed_tokens))
        if v is not None
    }
    ex = Extractor(query_predictor=get_predictor(args.predictor, **options))

    def run(page) -> str:
        return ex.extract(page.html, url=page.url, query=page.query, output="text") or ""

    from blockdex.predict import relevance

    # warm-up outside the clock (model loading, imports): a no-answer record reaches every stage
    run(next((p for p in pages if p.id.startswith("no-answer:")), pages[0]))
    profiler = None
    if args.profile:
        import cProfile

        profiler = cProfile.Profile()
    rows = []
    wall0, cpu0 = time.perf_counter(), _cpu()
    for page in pages:
        if not args.warm:
            relevance.clear_embedding_cache()
        c0 = _cpu()
        if profiler:
            profiler.enable()
        text = run(page)
        if profiler:
            profiler.disable()
        cpu = _cpu() - c0
        rec = score_page(page, args.predictor, text, cpu, lcs=False)
        rows.append({"id": page.id, "kind": page.id.split(":", 1)[0], "f1": rec.f1, "cpu": cpu})
        rows[-1].update(p=rec.precision, r=rec.recall)
    wall, cpu = time.perf_counter() - wall0, _cpu() - cpu0
    if profiler:
        profiler.dump_stats(args.profile)

    n = len(rows)
    kinds = sorted({r["kind"] for r in rows})

    def mean(key: str, kind: str | None = None) -> float:
        return statistics.fmean(r[key] for r in rows if kind is None or r["kind"] == kind)

    opt = f", max_embedded={args.max_embedded}" if args.max_embedded is not None else ""
    opt += f", embed_tokens={args.embed_tokens}" if args.embed_tokens is not None else ""
    print(f"{args.predictor}{opt} on QE {args.split} ({n} records), one thread")
    print(f"P {mean('p'):.3f} R {mean('r'):.3f} F1 {mean('f1'):.4f}")
    print(
        " | ".join(f"{k} ({sum(r['kind'] == k for r in rows)}) {mean('f1', k):.3f}" for k in kinds)
    )
    cpus = sorted(r["cpu"] for r in rows)
    print(
        f"pages/CPU-s {n / cpu:.2f} (CPU {1000 * cpu / n:.0f} ms/page, median "
        f"{1000 * cpus[n // 2]:.0f} ms, max {1000 * cpus[-1]:.0f} ms) | wall pages/s {n / wall:.2f}"
    )
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
