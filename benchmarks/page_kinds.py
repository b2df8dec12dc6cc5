"""The page-kind rules (``blockdex.predict.kinds``) measured off and on, with honest page types.

The rules read the page type, and the shipped page-type model was trained on every stored wcxb
page: on wcxb it would be judged on pages it learned. So each wcxb page here gets the type of a
model that never saw its host (5 folds of whole hosts, ``--cv-seeds`` fold assignments
averaged: :func:`blockdex.train_page_type.out_of_fold`). The other sets never trained the page
type and keep the shipped one. For each page the content model decides once
(``ContentPredictor(kinds=False, repeats=True)``: the repeats rule, which runs after the page-kind
rules, is left out of both columns), then the rules run on that decision, and both are rendered
to text and scored with token F1 against the ground truth (a page with no main content scores 1
only when nothing is kept).

``--model`` scores a content model trained without a set (``benchmarks/cross_dataset.py``'s
recipe, written with ``blockdex train --datasets …``): the left-out figure of the rules.

    python benchmarks/page_kinds.py [--datasets wcxb,l3s-gn1,scrapinghub-aeb]
        [--split dev|all] [--model content_model.json] [--cv-seeds 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from collections import defaultdict

import numpy as np

from blockdex.evaluate.datasets import load_dataset, split_of
from blockdex.evaluate.metrics import token_prf
from blockdex.extract import Extractor
from blockdex.page import Page, Selection
from blockdex.pagetype import PAGE_TYPES, page_type_of
from blockdex.predict.content import ContentModel, ContentPredictor
from blockdex.predict.kinds import page_kind_rules
from blockdex.render import selection_text
from blockdex.train import with_page_type
from blockdex.train_page_type import PageTypeTrainConfig, collect_page_types, out_of_fold_runs


def out_of_fold_types(cv_seeds: int) -> dict[str, dict[str, float]]:
    """Each typed wcxb page's type probabilities from models that never saw its host."""
    cfg = PageTypeTrainConfig(cv_seeds=cv_seeds)
    data = collect_page_types(cfg, progress=False)
    probs = np.mean([p for p, _ in out_of_fold_runs(data, cfg, by_host=True)], axis=0)
    accuracy = float((probs.argmax(1) == data.y).mean())
    print(f"wcxb page types out of fold: accuracy {accuracy:.3f} on {len(data.y)} pages")
    return {
        i.split(":", 1)[1]: dict(zip(PAGE_TYPES, row, strict=True))
        for i, row in zip(data.ids, probs, strict=True)
    }


def _with_type(page: Page, scores: dict[str, float]) -> Page:
    """``page`` whose type is the most likely of ``scores`` (no ``other`` floor; its primary
    article is found as before)."""
    return with_page_type(page, page_type_of(scores, 0.0))


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--datasets", default="wcxb,l3s-gn1,scrapinghub-aeb")
    ap.add_argument("--split", default="dev", choices=("dev", "train", "all"))
    ap.add_argument("--model", default=None, help="a content model file (default: shipped)")
    ap.add_argument("--cv-seeds", type=int, default=3)
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    oof = out_of_fold_types(args.cv_seeds) if "wcxb" in args.datasets.split(",") else {}
    predictor = ContentPredictor(
        ContentModel.load(args.model) if args.model else None, kinds=False, repeats=True
    )
    ex = Extractor("all")
    for name in args.datasets.split(","):
        scores: dict[str, dict[str, list[float]]] = {
            "off": defaultdict(list),
            "on": defaultdict(list),
        }
        changed = 0
        for item in load_dataset(name):
            if item.ground_truth is None:
                continue
            if name != "l3s-gn1" and args.split != "all" and split_of(item.id) != args.split:
                continue
            page = ex.segment(item.html, url=item.url)
            if not page.blocks:
                continue
            if name == "wcxb" and item.id in oof:
                page = _with_type(page, oof[item.id])
            sel = predictor.predict(page)
            probs = np.array([sel.scores[b.index] for b in page.blocks])
            keep = np.zeros(len(page.blocks), dtype=bool)
            keep[list(sel.indices)] = True
            ruled = page_kind_rules(page, keep, probs) if keep.any() else keep
            changed += bool((ruled != keep).any())
            kind = (item.meta or {}).get("page_type") or "all"
            for key, mask in (("off", keep), ("on", ruled)):
                chosen = Selection.from_indices(np.flatnonzero(mask).tolist())
                f1 = (
                    token_prf(selection_text(page, chosen), item.ground_truth).f1
                    if item.ground_truth
                    else float(not mask.any())
                )
                scores[key][kind].append(f1)
                if kind != "all":
                    scores[key]["all"].append(f1)
        print(f"\n{name} ({args.split}; mean token F1; the rules change {changed} pages)\n")
        print("| page type (pages) | model alone | with the page-kind rules | change |")
        print("|---|---:|---:|---:|")
        for kind in sorted(scores["off"], key=lambda k: (k == "all", -len(scores["off"][k]))):
            off, on = (statistics.fmean(scores[k][kind]) for k in ("off", "on"))
            print(
                f"| {kind} ({len(scores['off'][kind])}) | {off:.4f} | {on:.4f} | {on - off:+.4f} |"
            )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
