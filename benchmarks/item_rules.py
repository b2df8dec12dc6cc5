"""Item-list rules tried on top of the content model's decision (issue 41), none of them shipped.

For each page the shipped predictor (or ``--model``) decides; each rule then changes that
decision at the level of the page's item lists (:func:`blockdex.items.find_item_lists`), and
the kept blocks are rendered to text and scored with token F1 against the ground truth. The
rules, each with the parameters ``benchmarks/NOTES.md`` reports:

- ``snap``: a slot of a list's items (each card's title, each card's price: the blocks at the
  same place inside the items) kept in at least half of the items is kept in all;
- ``dominant``: when one list holds at least half of the kept words, every slot kept in more
  than 1% of its items is kept throughout;
- ``rescue``: the largest list of at least 4 items, with some item kept and a mean block
  probability of at least 0.3, is kept (its slots of mean probability ≥ 0.2) when it holds at
  least as many words as the kept text outside it.

    python benchmarks/item_rules.py [--datasets wcxb,l3s-gn1,scrapinghub-aeb] [--split dev]
        [--model content_model.json]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from collections import defaultdict
from collections.abc import Callable

import numpy as np

from blockdex.evaluate.datasets import load_dataset, split_of
from blockdex.evaluate.metrics import token_prf
from blockdex.extract import Extractor
from blockdex.items import item_columns, slot_means
from blockdex.page import Page, Selection
from blockdex.predict.content import ContentModel, ContentPredictor
from blockdex.render import selection_text

MIN_SLOT_ITEMS = 3

Rule = Callable[[Page, np.ndarray, np.ndarray], np.ndarray]


def _slot_shares(page: Page, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each block's slot group, whether it is in a slot of ≥ 3 items, and its slot's kept share."""
    _, groups = item_columns(page)
    _, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    kept = np.bincount(inverse, weights=keep.astype(np.float64))
    big = (groups >= len(groups)) & (counts[inverse] >= MIN_SLOT_ITEMS)
    return groups, big, kept[inverse] / counts[inverse]


def _list_masks(page: Page) -> list[np.ndarray]:
    masks = []
    for lst in page.item_lists:
        m = np.zeros(len(page.blocks), dtype=bool)
        for s, e in lst.items:
            m[s : e + 1] = True
        masks.append(m)
    return masks


def snap(page: Page, keep: np.ndarray, probs: np.ndarray, whole: float = 0.5) -> np.ndarray:
    _, big, share = _slot_shares(page, keep)
    out = keep.copy()
    out[big & (share >= whole)] = True
    return out


def dominant(page: Page, keep: np.ndarray, probs: np.ndarray) -> np.ndarray:
    words = np.array([len(b.text.split()) for b in page.blocks], dtype=np.float64)
    kept_words = (words * keep).sum() or 1.0
    _, big, share = _slot_shares(page, keep)
    out = keep.copy()
    for m in _list_masks(page):
        if (words * keep * m).sum() / kept_words >= 0.5:
            out[m & big & (share >= 0.01)] = True
    return out


def rescue(page: Page, keep: np.ndarray, probs: np.ndarray) -> np.ndarray:
    words = np.array([len(b.text.split()) for b in page.blocks], dtype=np.float64)
    best: tuple[float, np.ndarray] | None = None
    for lst, m in zip(page.item_lists, _list_masks(page), strict=True):
        if len(lst.items) < 4 or probs[m].mean() < 0.3:
            continue
        if not any(keep[s : e + 1].any() for s, e in lst.items):
            continue
        if best is None or words[m].sum() > best[0]:
            best = (words[m].sum(), m)
    if best is None or best[0] < (words * keep * ~best[1]).sum():
        return keep
    groups = item_columns(page)[1]
    out = keep.copy()
    out[best[1] & (slot_means(probs, groups)[:, 0] >= 0.2)] = True
    return out


RULES: dict[str, Rule] = {
    "model": lambda page, keep, probs: keep,
    "snap": snap,
    "dominant": dominant,
    "rescue": rescue,
}


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--datasets", default="wcxb,l3s-gn1,scrapinghub-aeb")
    ap.add_argument(
        "--split",
        default="dev",
        choices=("dev", "train", "all"),
        help="which pages (l3s-gn1 never trains a model: all its pages are used)",
    )
    ap.add_argument("--model", default=None, help="a content model file (default: shipped)")
    args = ap.parse_args()
    warnings.filterwarnings("ignore")
    predictor = ContentPredictor(ContentModel.load(args.model) if args.model else None)
    ex = Extractor(predictor)
    for name in args.datasets.split(","):
        scores: dict[str, dict[str, list[float]]] = {r: defaultdict(list) for r in RULES}
        for page in load_dataset(name):
            if not page.ground_truth:
                continue
            if name != "l3s-gn1" and args.split != "all" and split_of(page.id) != args.split:
                continue
            seg = ex.segment(page.html, url=page.url)
            if not seg.blocks:
                continue
            probs = predictor.block_probabilities(seg)
            chosen = set(predictor.predict(seg).indices)
            keep = np.array([b.index in chosen for b in seg.blocks])
            kind = (page.meta or {}).get("page_type") or "all"
            for rule_name, rule in RULES.items():
                mask = rule(seg, keep, probs) if keep.any() else keep
                sel = Selection.from_indices(
                    [b.index for b, k in zip(seg.blocks, mask, strict=True) if k]
                )
                f1 = token_prf(selection_text(seg, sel), page.ground_truth).f1
                scores[rule_name][kind].append(f1)
                if kind != "all":
                    scores[rule_name]["all"].append(f1)
        kinds = sorted(scores["model"], key=lambda k: (k == "all", -len(scores["model"][k])))
        print(f"\n{name} ({args.split}; mean token F1)\n")
        print("| page type (pages) | " + " | ".join(RULES) + " |")
        print("|---|" + "---:|" * len(RULES))
        for kind in kinds:
            cells = " | ".join(f"{statistics.fmean(scores[r][kind]):.4f}" for r in RULES)
            print(f"| {kind} ({len(scores['model'][kind])}) | {cells} |")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
