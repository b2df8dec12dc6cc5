"""Gradient-boosted trees as blockdex trains them: LightGBM's settings, a training run's result,
and a trained booster written as the flat-array forests :class:`blockdex.forest.Forest` reads.

The content model (:mod:`blockdex.train`), the page-type model (:mod:`blockdex.train_page_type`)
and the relevance model (:mod:`blockdex.predict.relevance_fit`) share them. LightGBM itself is
imported by the trainers (the ``train`` extra); nothing here needs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class TrainResult:
    model: dict[str, Any]
    report: dict[str, Any] = field(default_factory=dict)


def lgb_params(cfg: Any, seed: int) -> dict[str, Any]:
    """LightGBM's settings from a training config's ``learning_rate``, ``num_leaves``,
    ``max_depth``, ``min_child_samples``, ``feature_fraction`` and ``bagging_fraction``
    (:class:`blockdex.train.TrainConfig`, or the page type's), for a binary objective."""
    return {
        "objective": "binary",
        "learning_rate": cfg.learning_rate,
        "num_leaves": cfg.num_leaves,
        "max_depth": cfg.max_depth,
        "min_child_samples": cfg.min_child_samples,
        "feature_fraction": cfg.feature_fraction,
        "bagging_fraction": cfg.bagging_fraction,
        "bagging_freq": 1,
        "seed": seed,
        "num_threads": 2,
        "verbose": -1,
        "deterministic": True,
        "force_row_wise": True,
    }


def export_booster(booster: Any) -> dict[str, Any]:
    """LightGBM trees → flat arrays: per node feature, threshold, children; leaves self-loop."""
    return export_trees(booster.dump_model()["tree_info"])


def export_classes(booster: Any) -> list[dict[str, Any]]:
    """A LightGBM multiclass model → one forest of flat arrays per class (in class order), each
    summing to that class's raw score: the dump holds an iteration's trees class after class,
    so tree ``i`` belongs to class ``i % num_class``."""
    dump = booster.dump_model()
    k = int(dump.get("num_tree_per_iteration", dump.get("num_class", 1)))
    return [export_trees(dump["tree_info"][c::k]) for c in range(k)]


def export_trees(tree_info: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Trees of a LightGBM dump (``dump_model()["tree_info"]``) → flat arrays (see
    :func:`export_booster`)."""
    feat: list[int] = []
    thr: list[float] = []
    left: list[int] = []
    right: list[int] = []
    value: list[float] = []
    roots: list[int] = []
    depth = 0

    def add(node: dict[str, Any], d: int) -> int:
        nonlocal depth
        me = len(feat)
        feat.append(0)
        thr.append(0.0)
        left.append(me)
        right.append(me)
        value.append(0.0)
        if "leaf_value" in node or "split_feature" not in node:
            value[me] = float(node.get("leaf_value", 0.0))
            thr[me] = float("inf")
            depth = max(depth, d)
            return me
        if node.get("decision_type", "<=") != "<=":
            raise ValueError(f"unsupported split type {node.get('decision_type')}")
        feat[me] = int(node["split_feature"])
        thr[me] = float(node["threshold"])
        left[me] = add(node["left_child"], d + 1)
        right[me] = add(node["right_child"], d + 1)
        return me

    for tree in tree_info:
        roots.append(add(tree["tree_structure"], 0))
    return {
        "feature": feat,
        "threshold": thr,
        "left": left,
        "right": right,
        "value": value,
        "roots": roots,
        "depth": depth,
    }
