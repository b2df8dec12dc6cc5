"""The page type with and without a URL: variants of the training recipe, measured the same way
(benchmarks/NOTES.md, "Page type without a URL").

Each variant is cross-validated as ``blockdex train --page-type`` does (five seeds, pages of one
host per fold and at random), its out-of-fold pages scored with their URL and with their URL
columns blanked; the model fitted on all of wcxb then types the article sets (l3s-gn1,
scrapinghub-aeb, trafilatura-eval) with the dataset's URL, with the canonical link only (what
``extract(html)`` reads) and with no address. Features and results are written to $PAGE_TYPE_NO_URL_OUT (default /tmp/ptype).

    OMP_WAIT_POLICY=PASSIVE python benchmarks/page_type_no_url.py baseline|copies|copies_hasurl|copies_w0.25|blank_only
"""

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from blockdex import train_page_type as T
from blockdex.errors import BlockdexError
from blockdex.evaluate.datasets import load_dataset
from blockdex.extract import Extractor
from blockdex.forest import Forest
from blockdex.pagetype import PAGE_TYPES, URL_COLUMNS, page_type_features, url_columns

OUT = Path(os.environ.get("PAGE_TYPE_NO_URL_OUT", "/tmp/ptype"))
ARTICLE_SETS = ("l3s-gn1", "scrapinghub-aeb", "trafilatura-eval")


def wcxb():
    f = OUT / "wcxb.npz"
    if f.exists():
        z = np.load(f, allow_pickle=False)
        return T.LabelledPages(z["X"], z["y"], tuple(z["hosts"]), tuple(z["ids"]))
    d = T.collect_page_types(T.PageTypeTrainConfig(), progress=False)
    np.savez(f, X=d.X, y=d.y, hosts=np.array(d.hosts), ids=np.array(d.ids))
    return d


def article_sets():
    f = OUT / "articles.npz"
    if f.exists():
        z = np.load(f, allow_pickle=False)
        return {
            k: (z[k + ":url"], z[k + ":canon"], z[k + ":ids"], z[k + ":has_canon"])
            for k in ARTICLE_SETS
        }
    ex = Extractor()
    out, save = {}, {}
    for name in ARTICLE_SETS:
        rows, canon, ids, has = [], [], [], []
        for p in load_dataset(name):
            try:
                page = ex.segment(p.html, url=p.url)
            except BlockdexError:
                continue
            x = page_type_features(page)
            rows.append(x)
            c = x.copy()
            c[URL_COLUMNS] = url_columns(page.meta.get("canonical"))
            canon.append(c)
            ids.append(p.id)
            has.append(bool(page.meta.get("canonical")))
        out[name] = (np.vstack(rows), np.vstack(canon), np.array(ids), np.array(has))
        (
            save[name + ":url"],
            save[name + ":canon"],
            save[name + ":ids"],
            save[name + ":has_canon"],
        ) = out[name]
    np.savez(f, **save)
    return out


def probs_of(spec, X):
    raw = np.stack([Forest(f).raw(X) for f in spec["forests"]], axis=1)
    raw -= raw.max(axis=1, keepdims=True)
    raw = np.exp(raw)
    return raw / raw.sum(axis=1, keepdims=True)


def labels(spec, X):
    p = probs_of(spec, X)
    lab = np.array(PAGE_TYPES)[p.argmax(1)].astype(object)
    lab[p.max(1) < spec["min_confidence"]] = "other"
    return lab, p.max(1)


def with_has_url(X, has):
    return np.hstack([X, np.full((len(X), 1), float(has), dtype=X.dtype)])


def main(variant):
    data = wcxb()
    arts = article_sets()
    blank_fn = T.without_url
    if variant == "baseline":
        cfg = T.PageTypeTrainConfig(without_url_copies=False)
    elif variant == "copies":
        cfg = T.PageTypeTrainConfig(without_url_copies=True)
    elif variant == "copies_hasurl":
        cfg = T.PageTypeTrainConfig(without_url_copies=True)
        data = T.LabelledPages(with_has_url(data.X, 1), data.y, data.hosts, data.ids)

        def blank_fn(X):
            b = X.copy()
            b[:, URL_COLUMNS] = url_columns(None)
            b[:, -1] = 0
            return b

        T.without_url = blank_fn
        T.FEATURE_NAMES = (*T.FEATURE_NAMES, "has_url")
    elif variant == "blank_only":
        # a second model for pages without an address: trained and scored on blank URL columns
        cfg = T.PageTypeTrainConfig(without_url_copies=False)
        data = T.LabelledPages(T.without_url(data.X), data.y, data.hosts, data.ids)
    elif variant.startswith("copies_w"):
        w = float(variant[len("copies_w") :])
        cfg = T.PageTypeTrainConfig(without_url_copies=False)
        import lightgbm as lgb

        def _fit(X, y, cfg, seed):
            Xa, ya = np.vstack([X, T.without_url(X)]), np.concatenate([y, y])
            wa = np.concatenate([np.ones(len(y)), np.full(len(y), w)])
            return lgb.train(
                T._params(cfg, seed),
                lgb.Dataset(Xa, label=ya, weight=wa),
                num_boost_round=cfg.n_trees,
            )

        T._fit = _fit
    t0 = time.time()
    res = T.train_page_type(cfg, data)
    rep = res.report
    summary = {
        "variant": variant,
        "seconds": round(time.time() - t0),
        "min_confidence": rep["min_confidence"],
        "other": rep["other"],
    }
    for cv in ("cv_by_host", "cv_at_random"):
        summary[cv] = {
            k: rep[cv][k]
            for k in (
                "accuracy",
                "accuracy_by_seed",
                "accuracy_without_url",
                "accuracy_without_url_by_seed",
                "confusion_first_seed",
                "confusion_without_url_first_seed",
            )
        }
    arts_out = {}
    for name, (Xu, Xc, ids, has_canon) in arts.items():
        if variant == "copies_hasurl":
            Xu = with_has_url(Xu, 1)
            has_c = has_canon.astype(float)
            Xc = np.hstack([Xc, has_c[:, None].astype(Xc.dtype)])
        Xb = blank_fn(Xu)
        row = {}
        for how, X in (("url", Xu), ("canonical_only", Xc), ("no_url", Xb)):
            lab, conf = labels(res.model, X)
            bad = np.isin(lab, ["collection", "listing", "product"])
            row[how] = {
                "pages": len(lab),
                "list_like": int(bad.sum()),
                "share": round(float(bad.mean()), 4),
                "counts": {k: int((lab == k).sum()) for k in (*PAGE_TYPES, "other")},
                "list_like_ids": [
                    f"{i}:{t}:{c:.2f}" for i, t, c, b in zip(ids, lab, conf, bad, strict=True) if b
                ],
            }
        arts_out[name] = row
    summary["articles"] = arts_out
    summary["top_features"] = rep["top_features"][:12]
    (OUT / f"{variant}.json").write_text(json.dumps(summary, indent=1))
    (OUT / f"{variant}.model.json").write_text(json.dumps(res.model))
    print(json.dumps({k: v for k, v in summary.items() if k != "articles"}, indent=None)[:3000])
    for name, row in arts_out.items():
        print(name, {h: (r["list_like"], r["pages"]) for h, r in row.items()})


if __name__ == "__main__":
    main(sys.argv[1])
