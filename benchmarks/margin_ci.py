"""How sure is a margin? Paired bootstrap of blockdex's lead over the best peer, per dataset.

Reads a ``blockdex bench --out DIR`` run (``DIR/results.json``) and resamples its pages with
replacement, the same pages for every method (paired). In each resample the statistic is the one
the target is stated in: blockdex's score minus the **best** peer's score on that resample (the
best peer is chosen again each time, so the interval includes the luck of which peer is best).
Scores are the bench's: mean token F1 over pages, or for snippet-only sets the snippet F1 of the
summed snippet counts.

    python benchmarks/margin_ci.py [--results benchmarks/results-dev] [--ours content]
        [--peers trafilatura,trafilatura-precision,trafilatura-recall,readability,resiliparse]
        [--samples 10000] [--target 0.01]

Prints per dataset: pages, margin, the 95% percentile interval, and the share of resamples in
which the margin reaches the target.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from blockdex.evaluate.metrics import snippet_prf


def _per_page(records: list[dict], pages: list[str]) -> tuple[str, np.ndarray]:
    """("f1", per-page F1) or ("snippets", per-page counts), in the order of ``pages``."""
    by = {r["page"]: r for r in records}
    if all(by[p].get("snippets") is not None for p in pages) and all(
        by[p].get("f1") is None for p in pages
    ):
        return "snippets", np.array([by[p]["snippets"] for p in pages], dtype=float)
    return "f1", np.array([by[p]["f1"] or 0.0 for p in pages], dtype=float)


def margins(
    pages: dict[str, list[dict]], ours: str, peers: list[str], samples: int, seed: int = 0
) -> tuple[float, np.ndarray, str, int]:
    """(margin on the pages as they are, margins over ``samples`` paired resamples, best peer,
    how many pages: those every method has a record of)."""
    have = [m for m in peers if m in pages]
    if ours not in pages or not have:
        raise SystemExit(f"the run has no {ours!r} or none of the peers {peers}")
    common = {r["page"] for r in pages[ours]}
    for m in have:
        common &= {r["page"] for r in pages[m]}
    ids = sorted(common)
    kinds = {m: _per_page(pages[m], ids) for m in (ours, *have)}
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(ids), size=(samples, len(ids)))

    def score(m: str, rows: np.ndarray | None) -> np.ndarray:
        kind, v = kinds[m]
        if kind == "snippets":
            sums = v.sum(axis=0) if rows is None else v[rows].sum(axis=1)
            return snippet_prf(sums[..., 0], sums[..., 1], sums[..., 2])[2]
        return v.mean() if rows is None else v[rows].mean(axis=1)

    full = {m: float(score(m, None)) for m in kinds}
    best = max(have, key=lambda m: full[m])
    boot = score(ours, idx) - np.max(np.stack([score(m, idx) for m in have]), axis=0)
    return full[ours] - full[best], boot, best, len(ids)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--results", default="benchmarks/results-dev")
    ap.add_argument("--ours", default="content")
    ap.add_argument(
        "--peers",
        default="trafilatura,trafilatura-precision,trafilatura-recall,readability,resiliparse",
    )
    ap.add_argument("--samples", type=int, default=10000)
    ap.add_argument("--target", type=float, default=0.01)
    args = ap.parse_args()
    path = Path(args.results) / "results.json"
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"cannot read {path}: {exc}", file=sys.stderr)
        return 2
    peers = [p for p in args.peers.split(",") if p]
    print(
        f"| dataset (pages) | best peer | margin | 95% interval | resamples with margin ≥ {args.target} |"
    )
    print("|---|---|---:|---|---:|")
    for dataset, run in results.items():
        margin, boot, best, n = margins(run["pages"], args.ours, peers, args.samples)
        lo, hi = np.percentile(boot, [2.5, 97.5])
        share = float(np.mean(boot >= args.target - 1e-12))
        print(f"| {dataset} ({n}) | {best} | {margin:+.3f} | {lo:+.3f} … {hi:+.3f} | {share:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
