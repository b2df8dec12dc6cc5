"""``blockdex bench``: every method on the same human-labelled pages, side by side.

Methods are blockdex predictors (``content``, ``heuristic``, ``all``, … — rendered as text),
classic baselines registered in :mod:`blockdex.baselines`, and peers
(:mod:`blockdex.evaluate.peers`). Each page yields a record per method — its scores, or the error
that method raised (the page then scores as empty output) — so nothing is silently dropped.

Metrics: token P/R/F1 (bags of lower-cased word tokens), optionally LCS P/R/F1 (``--lcs``),
snippet counts for pages with must-have/must-not-have lists, seconds per page and output tokens.
Pages labelled with a page type (wcxb's) also get wcxb's own score, and ``--by-type`` prints it
per type beside F1 over the pages with main content and the fallback rate
(:mod:`blockdex.evaluate.page_types`).
Speed is measured in-process per method; ``--jobs N`` runs methods in N processes (faster
overall, but concurrent methods share the CPU: quote ratios from ``--jobs 1`` runs).
"""

from __future__ import annotations

import contextlib
import math
import random
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from blockdex.baselines import BASELINES, get_baseline
from blockdex.baselines import DESCRIPTIONS as BASELINE_DESCRIPTIONS
from blockdex.errors import BlockdexError, MissingExtra
from blockdex.evaluate.align import oracle_selection
from blockdex.evaluate.datasets import EvalPage, load_dataset, split_of
from blockdex.evaluate.metrics import lcs_prf, snippet_prf, token_prf, wcxb_prf, word_tokens
from blockdex.evaluate.peers import PEER_DESCRIPTIONS, make_peer
from blockdex.evaluate.records import PageRecord
from blockdex.extract import Extractor
from blockdex.predict import _REGISTRY, DESCRIPTIONS, available_predictors
from blockdex.render import selection_text

DEFAULT_METHODS = ("content", "heuristic", "all", "trafilatura", "readability", "resiliparse")
QE_METHODS = ("hybrid", "lexical", "embedding", "chunk-bm25", "chunk-embed", "content", "all")
"""Query-relevant extraction: blockdex's relevance predictors, the chunk-and-rerank baselines,
and the main content / whole page as the query-blind references."""
COMPOSITE_METHODS = (
    "content",
    "trafilatura",
    "trafilatura-precision",
    "readability",
    "resiliparse",
)
"""Pages made of several real pages (``--task next-story|multi-article``): the main-content
model against the peers."""
BY_TYPE_METHODS = ("content", "oracle", "trafilatura", "readability")
"""``--by-type``: the model, the ceiling its blocks allow, and the two peers wcxb publishes."""
BOOTSTRAP_SAMPLES = 1000
"""Resamples for the 95% interval of mean F1 in the plot (enough for two decimals)."""


@dataclass(slots=True)
class MethodSummary:
    method: str
    pages: int
    errors: int
    seconds: float
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else math.inf


def method_names() -> dict[str, str]:
    """Every method the harness can run, with a description."""
    out = {n: DESCRIPTIONS.get(n, "") for n in available_predictors() if n != "oracle"}
    out.update(BASELINE_DESCRIPTIONS)
    out.update(PEER_DESCRIPTIONS)
    out["oracle"] = "blocks aligned to the ground truth: the ceiling segmentation allows"
    out["content-no-comments"] = (
        "the main-content model with comment sections dropped (--no-comments)"
    )
    return out


def make_method(name: str) -> Callable[[EvalPage], str]:
    """``page → text`` for a predictor, a classic baseline or a peer."""
    if name == "oracle":
        ex = Extractor("all")

        def run_oracle(page: EvalPage) -> str:
            seg = ex.segment(page.html, url=page.url)
            return selection_text(seg, oracle_selection(seg, page.ground_truth or ""))

        return run_oracle
    if name == "content-no-comments":
        ex = Extractor("content", comments=False)
        return lambda page: ex.extract(page.html, url=page.url, output="text")
    if name in _REGISTRY:
        ex = Extractor(name)
        return lambda page: ex.extract(page.html, url=page.url, query=page.query, output="text")
    if name in BASELINES:
        baseline = get_baseline(name)
        return lambda page: baseline.run(page.html, url=page.url, query=page.query).text
    if name in PEER_DESCRIPTIONS:
        fn = make_peer(name)
        return lambda page: fn(page.html)
    raise BlockdexError(
        f"unknown method {name!r}; 'blockdex bench --list' shows the {len(method_names())} known"
    )


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def score_page(page: EvalPage, method: str, text: str, seconds: float, lcs: bool) -> PageRecord:
    rec = PageRecord(page=page.id, method=method, seconds=seconds, tokens=len(word_tokens(text)))
    if page.ground_truth is not None:
        rec.empty = rec.tokens == 0 and bool(word_tokens(page.ground_truth))
        s = token_prf(text, page.ground_truth)
        rec.precision, rec.recall, rec.f1 = s.precision, s.recall, s.f1
        if lcs:
            rec.lcs_f1 = lcs_prf(text, page.ground_truth).f1
    if page.meta.get("page_type"):
        # Typed pages are labelled the wcxb way: no reference text means no main content.
        rec.page_type = str(page.meta["page_type"])
        rec.has_main_content = bool(word_tokens(page.ground_truth))
        rec.wcxb_f1 = wcxb_prf(text, page.ground_truth).f1
    if page.with_snippets or page.without_snippets:
        t = _norm(text)
        found = sum(_norm(x) in t for x in page.with_snippets)
        bad = sum(_norm(x) in t for x in page.without_snippets)
        rec.snippets = (
            found,
            len(page.with_snippets) - found,
            bad,
            len(page.without_snippets) - bad,
        )
    return rec


def run_method(
    method: str,
    pages: list[EvalPage],
    *,
    lcs: bool = False,
    progress: bool = True,
    fn: Callable[[EvalPage], str] | None = None,
) -> list[PageRecord]:
    """Run one method over the pages; every page yields a record (scores or the error).

    ``fn`` (``page → text``) runs instead of the method named ``method`` (which then only labels
    the records): a model that is not one of the registered methods, say.
    """
    from tqdm import tqdm

    fn = fn or make_method(method)
    if pages:
        # warm-up outside the clock: model loading and caches are not per-page costs
        with contextlib.suppress(Exception):
            fn(pages[0])
    records = []
    for page in tqdm(pages, desc=method, disable=not progress, file=sys.stderr, leave=False):
        t0 = time.perf_counter()
        error = None
        try:
            text = fn(page) or ""
        except Exception as exc:  # a peer's failure on one page is recorded, not fatal
            text, error = "", f"{type(exc).__name__}: {str(exc)[:200]}"
        seconds = time.perf_counter() - t0
        rec = score_page(page, method, text, seconds, lcs)
        rec.error = error
        if error is not None and rec.wcxb_f1 is not None:
            rec.wcxb_f1 = 0.0  # a failure is no answer, even on a page with no main content
        records.append(rec)
    return records


def summarise_method(method: str, records: list[PageRecord]) -> MethodSummary:
    s = MethodSummary(
        method=method,
        pages=len(records),
        errors=sum(r.error is not None for r in records),
        seconds=sum(r.seconds for r in records),
    )
    f1 = [r.f1 for r in records if r.f1 is not None]
    if f1:
        s.scores["P"] = statistics.fmean(r.precision for r in records if r.precision is not None)
        s.scores["R"] = statistics.fmean(r.recall for r in records if r.recall is not None)
        s.scores["F1"] = statistics.fmean(f1)
        s.scores["F1 median"] = statistics.median(f1)
    lcs = [r.lcs_f1 for r in records if r.lcs_f1 is not None]
    if lcs:
        s.scores["LCS F1"] = statistics.fmean(lcs)
    snips = [r.snippets for r in records if r.snippets is not None]
    if snips:
        tp, fn, fp, _ = (sum(x[i] for x in snips) for i in range(4))
        p, r, f = snippet_prf(tp, fn, fp)
        s.scores["snippet P"] = float(p)
        s.scores["snippet R"] = float(r)
        s.scores["snippet F1"] = float(f)
    s.scores["tokens"] = statistics.fmean(r.tokens for r in records) if records else 0.0
    s.scores["empty"] = float(sum(r.empty for r in records))
    return s


def bootstrap_ci(values: list[float], seed: int = 0) -> tuple[float, float]:
    """95% percentile bootstrap interval of the mean."""
    if len(values) < 2:
        v = values[0] if values else 0.0
        return v, v
    rng = random.Random(seed)
    n = len(values)
    means = sorted(statistics.fmean(rng.choices(values, k=n)) for _ in range(BOOTSTRAP_SAMPLES))
    return means[int(0.025 * BOOTSTRAP_SAMPLES)], means[int(0.975 * BOOTSTRAP_SAMPLES) - 1]


def markdown_table(dataset: str, summaries: list[MethodSummary], baseline: str) -> str:
    if not summaries:
        return f"### {dataset}\n\n(no method could run)\n"
    key = "F1" if any("F1" in s.scores for s in summaries) else "snippet F1"
    cols = [
        c
        for c in (
            "P",
            "R",
            "F1",
            "F1 median",
            "LCS F1",
            "snippet P",
            "snippet R",
            "snippet F1",
            "tokens",
            "empty",
        )
        if any(c in s.scores for s in summaries)
    ]
    base = next((s.pages_per_second for s in summaries if s.method == baseline), None)
    lines = [
        f"### {dataset}",
        "",
        "| method | " + " | ".join(cols) + f" | pages/s | vs {baseline} | errors |",
        "|---|" + "---:|" * (len(cols) + 3),
    ]
    for s in sorted(summaries, key=lambda s: -s.scores.get(key, -1.0)):
        vals = " | ".join(
            (f"{s.scores[c]:.0f}" if c in ("tokens", "empty") else f"{s.scores[c]:.3f}")
            if c in s.scores
            else "–"
            for c in cols
        )
        ratio = f"{s.pages_per_second / base:.2f}x" if base else "–"
        lines.append(f"| {s.method} | {vals} | {s.pages_per_second:.1f} | {ratio} | {s.errors} |")
    return "\n".join(lines) + "\n"


def kind_table(dataset: str, records: dict[str, list[PageRecord]], split: str) -> str:
    """Mean F1 per QE query kind (the record id starts with its kind)."""
    kinds = sorted({r.page.split(":", 1)[0] for recs in records.values() for r in recs})
    lines = [
        f"F1 by query kind ({split} split):",
        "",
        "| method | "
        + " | ".join(
            f"{k} ({sum(r.page.startswith(k + ':') for r in next(iter(records.values())))})"
            for k in kinds
        )
        + " |",
        "|---|" + "---:|" * len(kinds),
    ]
    for method, recs in records.items():
        cells = []
        for k in kinds:
            f1 = [r.f1 for r in recs if r.page.startswith(k + ":") and r.f1 is not None]
            cells.append(f"{statistics.fmean(f1):.3f}" if f1 else "–")
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    answered = [
        k
        for k in kinds
        if any(r.page.startswith(k + ":") and r.snippets for recs in records.values() for r in recs)
    ]
    if answered:
        lines += [
            "",
            f"Answer hit (the output holds every answer string) and output words ({split} split):",
            "",
            "| method | " + " | ".join(f"{k} hit | {k} median words" for k in answered) + " |",
            "|---|" + "---:|---:|" * len(answered),
        ]
        for method, recs in records.items():
            cells = []
            for k in answered:
                mine = [r for r in recs if r.page.startswith(k + ":") and r.snippets]
                hit = statistics.fmean(r.snippets[1] == 0 for r in mine) if mine else 0.0
                words = statistics.median(r.tokens for r in mine) if mine else 0
                cells.append(f"{hit:.3f} | {words:.0f}")
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def plot(
    dataset: str,
    records: dict[str, list[PageRecord]],
    summaries: list[MethodSummary],
    out_dir: Path,
) -> list[Path]:
    """Bar chart of mean F1 with bootstrap 95% intervals, and F1 vs pages/s (log x)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtra("matplotlib", "eval", "drawing benchmark plots") from None
    have = [s for s in summaries if "F1" in s.scores]
    if not have:
        return []
    have.sort(key=lambda s: -s.scores["F1"])
    name = re.sub(r"\.(jsonl|json)(\.gz)?$", "", Path(dataset).name)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "dataset"
    paths = []
    fig, ax = plt.subplots(figsize=(max(4, 0.8 * len(have) + 2), 3.5))
    means = [s.scores["F1"] for s in have]
    cis = [bootstrap_ci([r.f1 for r in records[s.method] if r.f1 is not None]) for s in have]
    err = [
        [m - lo for m, (lo, _) in zip(means, cis, strict=True)],
        [hi - m for m, (_, hi) in zip(means, cis, strict=True)],
    ]
    ax.bar([s.method for s in have], means, yerr=err, capsize=3, color="#4c72b0")
    ax.set_ylabel("mean token F1 (95% CI)")
    ax.set_title(dataset)
    ax.set_ylim(0, 1)
    ax.tick_params(axis="x", rotation=45)
    fig.tight_layout()
    paths.append(out_dir / f"{stem}-f1.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for s in have:
        ax.scatter(s.pages_per_second, s.scores["F1"])
        ax.annotate(s.method, (s.pages_per_second, s.scores["F1"]), fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("pages/s (log)")
    ax.set_ylabel("mean token F1")
    ax.set_title(dataset)
    fig.tight_layout()
    paths.append(out_dir / f"{stem}-speed.png")
    fig.savefig(paths[-1], dpi=120)
    plt.close(fig)
    return paths


def _split(page: EvalPage) -> str:
    # Made records (QE, composite pages) carry their own split and a kind; a shared dataset's
    # pages carry their source's split, which blockdex does not use.
    if (page.query is not None or page.meta.get("kind")) and page.meta.get("split"):
        return str(page.meta["split"])
    return split_of(page.id)


def _load_pages(dataset: str, split: str, limit: int | None) -> list[EvalPage]:
    # QE records carry their own split (dev = tuning, test = reporting); dataset pages use the
    # seeded hash, whatever split their source assigns them (wcxb's pages all say "dev").
    pages = [p for p in load_dataset(dataset) if split == "all" or _split(p) == split]
    if not pages:
        raise BlockdexError(f"{dataset} has no pages in the {split!r} split")
    return pages[:limit] if limit else pages


def _worker(job: tuple[str, str, str, int | None, bool]) -> tuple[str, list[dict], str | None]:
    method, dataset, split, limit, lcs = job
    try:
        recs = run_method(method, _load_pages(dataset, split, limit), lcs=lcs, progress=False)
    except (MissingExtra, BlockdexError) as exc:
        return method, [], str(exc)
    return method, [asdict(r) for r in recs], None


def _init_worker() -> None:
    # tqdm's default lock is a multiprocessing semaphore; a pool worker is terminated, not
    # joined, so that semaphore would be reported as leaked at exit. A thread lock suffices here.
    import threading

    from tqdm import tqdm

    tqdm.set_lock(threading.RLock())


def bench(
    dataset: str,
    methods: list[str],
    *,
    split: str = "all",
    limit: int | None = None,
    lcs: bool = False,
    jobs: int = 1,
) -> tuple[dict[str, list[PageRecord]], list[MethodSummary], list[str]]:
    """Run ``methods`` on one dataset; returns per-page records, summaries and skip notes."""
    notes: list[str] = []
    records: dict[str, list[PageRecord]] = {}
    if jobs > 1:
        from multiprocessing import get_context

        from tqdm import tqdm

        with get_context("spawn").Pool(jobs, initializer=_init_worker) as pool:
            jobs_list = [(m, dataset, split, limit, lcs) for m in methods]
            done = pool.imap_unordered(_worker, jobs_list)
            bar = tqdm(done, total=len(methods), desc="methods", unit="method", file=sys.stderr)
            for method, recs, note in bar:
                bar.set_postfix_str(f"{method} done")
                if note:
                    notes.append(f"{method} skipped: {note}")
                else:
                    records[method] = [PageRecord(**r) for r in recs]
    else:
        pages = _load_pages(dataset, split, limit)
        if "oracle" in methods and not any(p.ground_truth for p in pages):
            methods = [m for m in methods if m != "oracle"]
            notes.append("oracle skipped: the pages have no ground-truth text to align")
        for method in methods:
            try:
                records[method] = run_method(method, pages, lcs=lcs)
            except (MissingExtra, BlockdexError) as exc:
                notes.append(f"{method} skipped: {exc}")
    summaries = [summarise_method(m, records[m]) for m in methods if m in records]
    return records, summaries, notes


def show_page(dataset: str, page_id: str, methods: list[str], top: int = 30) -> str:
    """Which ground-truth tokens each method missed and which tokens it added."""
    page = next((p for p in load_dataset(dataset) if p.id == page_id), None)
    if page is None:
        raise BlockdexError(f"no page {page_id!r} in {dataset}")
    lines = [f"page {page_id} ({page.url or 'no url'})"]
    ref = Counter(word_tokens(page.ground_truth))
    for method in methods:
        text = make_method(method)(page)
        got = Counter(word_tokens(text))
        s = token_prf(text, page.ground_truth)
        missed = ref - got
        extra = got - ref
        lines.append(f"\n== {method}: P {s.precision:.3f} R {s.recall:.3f} F1 {s.f1:.3f}")
        lines.append(
            f"missed ({sum(missed.values())}): "
            + " ".join(f"{w}×{c}" if c > 1 else w for w, c in missed.most_common(top))
        )
        lines.append(
            f"extra ({sum(extra.values())}): "
            + " ".join(f"{w}×{c}" if c > 1 else w for w, c in extra.most_common(top))
        )
    return "\n".join(lines) + "\n"
