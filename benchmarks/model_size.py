"""Model-size study: fewer boosting rounds at a higher learning rate, same out-of-fold F1?

Trains the content model (``blockdex.train.train``, the shipped recipe: train split of the
shipped datasets, 4 folds) once per configuration on the same collected pages and prints the
out-of-fold F1 (what training reports; no dev page is used) next to the inference work (trees
walked per block). Each model is written to ``--out-dir`` so a chosen one can be shipped
without training it again.

    python benchmarks/model_size.py --configs 150:0.1,100:0.15 --out-dir /tmp/models
"""

from __future__ import annotations

import argparse
import dataclasses
import json
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
    args = ap.parse_args()
    base = TrainConfig()
    data = collect(base.datasets, base.split)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    print("| trees per stage | learning rate | depth | OOF F1 (macro) | by dataset | s |")
    print("|---:|---:|---:|---:|---|---:|")
    for spec in args.configs.split(","):
        parts = spec.split(":")
        cfg = dataclasses.replace(
            base,
            n_trees=int(parts[0]),
            learning_rate=float(parts[1]),
            max_depth=int(parts[2]) if len(parts) > 2 else base.max_depth,
        )
        t0 = time.perf_counter()
        result = train(cfg, data)
        r = result.report
        name = f"content-{cfg.n_trees}-{cfg.learning_rate}-{cfg.max_depth}.json"
        save_model(result.model, args.out_dir / name)
        print(
            f"| {cfg.n_trees} | {cfg.learning_rate} | {cfg.max_depth} | {r['oof_f1_stage2']:.4f} "
            f"| {json.dumps(r['oof_f1_by_dataset'])} | {time.perf_counter() - t0:.0f} |"
        )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
