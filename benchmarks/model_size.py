"""Model-size study: fewer boosting rounds at a higher learning rate, same out-of-fold F1?

Trains the content model (``blockdex.train.train``, the shipped recipe: train split of the
shipped datasets, 4 folds) once per configuration on the same collected pages and prints the
out-of-fold F1 (what training reports; no dev page is used) next to the inference work (trees
walked per block). Each model is written to ``--out-dir`` so a chosen one can be shipped
without training it again.

``--seeds`` trains each configuration once per seed (the seed sets the page folds and the
trees' row and feature sampling) and adds a mean row: on scrapinghub-aeb's 87 training pages the
seed alone moves out-of-fold F1 by ±0.01 (NOTES.md, ninth session), so compare recipes by the
mean over seeds, not by one draw.

    python benchmarks/model_size.py --configs 150:0.1,100:0.15 --out-dir /tmp/models
    python benchmarks/model_size.py --configs 180:0.08 --seeds 20261122,1,2,3
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

from blockdex.train import TrainConfig, collect, save_model, train


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--configs",
        default="150:0.1,100:0.15",
        help="comma-separated TREES:LEARNING_RATE[:MAX_DEPTH] (default depth 7)",
    )
    ap.add_argument("--out-dir", type=Path, default=Path("model-size"))
    ap.add_argument(
        "--seeds",
        default=str(TrainConfig().seed),
        help="comma-separated training seeds; several give a mean row per configuration",
    )
    args = ap.parse_args()
    seeds = [int(x) for x in args.seeds.split(",") if x.strip()]
    base = TrainConfig()
    data = collect(base.datasets, base.split)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    print(
        "| trees per stage | learning rate | depth | seed | threshold | OOF F1 (macro) | by dataset | s |"
    )
    print("|---:|---:|---:|---|---:|---:|---|---:|")
    for spec in args.configs.split(","):
        parts = spec.split(":")
        cfg = dataclasses.replace(
            base,
            n_trees=int(parts[0]),
            learning_rate=float(parts[1]),
            max_depth=int(parts[2]) if len(parts) > 2 else base.max_depth,
        )
        reports = []
        for seed in seeds:
            cfg = dataclasses.replace(cfg, seed=seed)
            t0 = time.perf_counter()
            result = train(cfg, data)
            r = result.report
            reports.append(r)
            name = f"content-{cfg.n_trees}-{cfg.learning_rate}-{cfg.max_depth}-{seed}.json"
            save_model(result.model, args.out_dir / name)
            print(
                f"| {cfg.n_trees} | {cfg.learning_rate} | {cfg.max_depth} | {seed} "
                f"| {r['threshold']} | {r['oof_f1_stage2']:.4f} "
                f"| {json.dumps(r['oof_f1_by_dataset'])} | {time.perf_counter() - t0:.0f} |"
            )
            sys.stdout.flush()
        if len(reports) > 1:
            by = {
                k: [r["oof_f1_by_dataset"][k] for r in reports]
                for k in reports[0]["oof_f1_by_dataset"]
            }
            spread = {
                k: f"{statistics.fmean(v):.4f} ({min(v):.4f}-{max(v):.4f})" for k, v in by.items()
            }
            macro = statistics.fmean(r["oof_f1_stage2"] for r in reports)
            print(
                f"| {cfg.n_trees} | {cfg.learning_rate} | {cfg.max_depth} | mean of {len(reports)} "
                f"| | {macro:.4f} | {json.dumps(spread)} | |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
