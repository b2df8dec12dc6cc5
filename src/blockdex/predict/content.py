"""The main-content predictor: blockdex's own two-stage tree model, evaluated with numpy.

The model is plain JSON shipped in the package (``content_model.json``, written by
``blockdex train``): two forests of shallow decision trees as flat arrays. Stage 1 scores each
block from its own features (:func:`blockdex.features.block_features`); stage 2 rescores it with
the stage-1 probabilities of its neighbours, containers and tag-path group
(:func:`blockdex.features.context_features`). Blocks whose stage-2 probability reaches the
model's threshold are kept.

Evaluation walks all trees at once, one numpy step per tree level, so a page costs a handful of
array operations regardless of the number of trees.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from blockdex.errors import BlockdexError
from blockdex.features import (
    CONTEXT_NAMES,
    FEATURE_NAMES,
    PROB_SCOPE_LEVELS,
    PROB_WINDOWS,
    block_features,
    block_groups,
    context_features,
    in_family,
)
from blockdex.features import readable as has_text
from blockdex.forest import Forest
from blockdex.ids import page_ids
from blockdex.items import ITEM_COLUMN_NAMES, ITEM_CONTEXT_NAMES, page_block_words, slot_means
from blockdex.items import item_columns as item_column_values
from blockdex.page import Block, BlockScores, Page, Selection
from blockdex.pagetype import PAGE_TYPE_COLUMN_NAMES
from blockdex.pagetype import page_type_columns as page_type_column_values
from blockdex.predict import _content_c as compiled
from blockdex.predict.kinds import page_kind_rules
from blockdex.predict.page_threshold import PageThreshold
from blockdex.units import UNIT_COLUMN_NAMES, content_counts, missed_story_found, titled_story
from blockdex.units import unit_columns as unit_column_values

MODEL_RESOURCE = "content_model.json"
AD_LABELS = frozenset(
    {
        "advertisement",
        "advertisements",
        "advertising",
        "advert",
        "ad",
        "ads",
        "sponsored",
        "sponsored content",
        "story continues below advertisement",
        "anzeige",
        "werbung",
        "publicité",
        "publicidad",
        "pubblicità",
        "реклама",
        "广告",
    }
)
"""Whole-block texts (lower case, words only) that label an ad slot. The model keeps some of
them when they sit between paragraphs; of 180 such blocks on the training pages, none is
content in the ground truth, so the predictor drops them (a reader never wants the line)."""
_LABEL_MAX_CHARS = max(map(len, AD_LABELS)) + 8
_AD_LABEL_RE = re.compile(
    r"\W*(?:"
    + "|".join(r"\W+".join(map(re.escape, label.split(" "))) for label in sorted(AD_LABELS))
    + r")\W*"
)
"""A lower-cased text whose words (``WORD_RE``'s runs) are one of :data:`AD_LABELS`, the label's
words apart from each other and from the text's ends only by non-word characters: the same test
as the label's words joined by spaces, in one match (a third of the time a kept block)."""
FAVOR_SHIFTS = {"balanced": 0.0, "precision": 0.2, "recall": -0.2}
"""How far ``favor`` moves the content model's threshold (0.55 for the shipped model): the
trade-off trafilatura users know as ``favor_precision`` / ``favor_recall``. Measured per
shared set in ``benchmarks/RESULTS.md`` ("Precision or recall")."""
FALLBACK_THRESHOLD = 0.5
"""When no block reaches the model's threshold, blocks at or above this are kept instead."""
MIN_PAGE_THRESHOLD, MAX_PAGE_THRESHOLD = 0.05, 0.95
"""The range a page's own threshold, moved by ``favor``, is kept in."""
CONFIDENT = (0.03, 0.97)
"""Stage-1 probabilities outside this range are final: stage 2 never reversed one of them on the
dev pages (0 of ~134k blocks of scrapinghub, wcxb and l3s-gn1 changed decision), and skipping it
for them halves stage-2 work. ``ContentPredictor(exact=True)`` runs stage 2 on every block."""

_any = np.logical_or.reduce
"""``a.any()`` of a 1-D bool array, as the ufunc reduction ``ndarray.any`` ends in, without
numpy's Python-level wrapper (a few µs on every page, most of a small page's predict step)."""
_max = np.maximum.reduce
"""``a.max()`` of a 1-D array, the same way."""


def model_features(
    page: Page,
    unit_columns: bool = False,
    item_columns: bool = False,
    page_type_columns: bool = False,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Stage 1's input for ``page``: :func:`block_features`, then with ``unit_columns`` the
    columns of :func:`blockdex.units.unit_columns` (``TrainConfig.unit_columns``), then with
    ``item_columns`` those of :func:`blockdex.items.item_columns`, then with
    ``page_type_columns`` those of :func:`blockdex.pagetype.page_type_columns`; and the blocks'
    item slot groups that stage 2 reads with item columns (None without)."""
    X = block_features(page)
    if not unit_columns and not item_columns and not page_type_columns:
        return X, None
    parts = [X]
    groups = None
    if unit_columns:
        parts.append(unit_column_values(page))
    if item_columns:
        cols, groups = item_column_values(page)
        parts.append(cols)
    if page_type_columns:
        parts.append(page_type_column_values(page))
    return np.ascontiguousarray(np.hstack(parts), dtype=np.float32), groups


def stage1_column_names(
    unit_columns: bool = False, item_columns: bool = False, page_type_columns: bool = False
) -> tuple[str, ...]:
    """The names of :func:`model_features`' columns, in its order, for the same switches."""
    return (
        *FEATURE_NAMES,
        *(UNIT_COLUMN_NAMES if unit_columns else ()),
        *(ITEM_COLUMN_NAMES if item_columns else ()),
        *(PAGE_TYPE_COLUMN_NAMES if page_type_columns else ()),
    )


def context_column_names(item_columns: bool = False) -> tuple[str, ...]:
    """The names of stage 2's context columns (after stage 1's), in their order."""
    return (*CONTEXT_NAMES, *(ITEM_CONTEXT_NAMES if item_columns else ()))


class ContentModel:
    """The two-stage model loaded from its JSON description."""

    def __init__(self, spec: dict[str, Any]) -> None:
        if spec.get("format") != "blockdex-content-model":
            raise BlockdexError("not a blockdex content model (missing format marker)")
        features = tuple(spec["features"])
        self.unit_columns = UNIT_COLUMN_NAMES[0] in features
        """Whether stage 1 reads the page's unit columns too (``TrainConfig.unit_columns``)."""
        self.item_columns = ITEM_COLUMN_NAMES[0] in features
        """Whether stage 1 reads the page's item columns and stage 2 the item slots' means
        (``TrainConfig.item_columns``)."""
        self.page_type_columns = PAGE_TYPE_COLUMN_NAMES[0] in features
        """Whether stage 1 reads the page type's probabilities (``TrainConfig.page_type_columns``)."""
        expected = stage1_column_names(self.unit_columns, self.item_columns, self.page_type_columns)
        context = context_column_names(self.item_columns)
        if features != expected or tuple(spec["context_features"]) != context:
            raise BlockdexError(
                "the content model was trained with other features than this blockdex computes; "
                "retrain it with 'blockdex train'"
            )
        self.threshold = float(spec["threshold"])
        self.page_threshold: PageThreshold | None = None
        """Each page's own threshold (:mod:`blockdex.predict.page_threshold`), when the model
        learned one (``TrainConfig.page_threshold``)."""
        if "page_threshold" in spec:
            try:
                self.page_threshold = PageThreshold(spec["page_threshold"])
            except (KeyError, TypeError, ValueError) as exc:
                raise BlockdexError(
                    f"the content model's page threshold is unreadable: {exc}"
                ) from None
        self.stage1 = Forest(spec["stage1"])
        self.stage2 = Forest(spec["stage2"])
        self.trained_on = tuple(spec.get("trained_on", ()))
        self.report = spec.get("report", {})

    @classmethod
    def load(cls, path: str | Path | None = None) -> ContentModel:
        """Load ``path``, or the model shipped in the package when ``path`` is None."""
        if path is None:
            return _shipped_model()
        try:
            spec = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BlockdexError(f"cannot load content model {path}: {exc}") from None
        return cls(spec)

    def probabilities(self, page: Page, confident: tuple[float, float] | None = None) -> np.ndarray:
        """Per-block probability of being main content, in block order.

        With ``confident=(lo, hi)``, blocks whose stage-1 probability is below ``lo`` or above
        ``hi`` keep it and skip stage 2 (see :data:`CONFIDENT`); None runs stage 2 on every block.
        """
        if not page.blocks:
            return np.zeros(0)
        X, slots = model_features(
            page, self.unit_columns, self.item_columns, self.page_type_columns
        )
        p1 = self.stage1.predict(X)
        if confident is not None and self.stage2._packed is not None:
            # the unsure blocks' stage-2 rows in one compiled call (no context columns for
            # the confident ones, no fancy indexing and hstack copies)
            mean = float(np.add.reduce(p1) / len(p1))  # p1.mean(): the same reduction
            unsure_rows = compiled.stage2_rows(
                page_ids(page), p1, mean, PROB_SCOPE_LEVELS, PROB_WINDOWS,
                confident[0], confident[1], X,
            )  # fmt: skip
            if unsure_rows is not None:
                positions, X2 = unsure_rows
                if len(positions):
                    if slots is not None:
                        X2 = np.hstack([X2, slot_means(p1, slots)[positions]])
                    p1[positions] = self.stage2.predict(X2)
                return p1
        ctx = context_features(p1, block_groups(page))
        if slots is not None:
            ctx = np.hstack([ctx, slot_means(p1, slots)])
        if confident is None:
            return self.stage2.predict(np.hstack([X, ctx]))
        unsure = (p1 >= confident[0]) & (p1 <= confident[1])
        out = p1.copy()
        if _any(unsure):
            out[unsure] = self.stage2.predict(np.hstack([X[unsure], ctx[unsure]]))
        return out


@lru_cache(maxsize=1)
def _shipped_model() -> ContentModel:
    ref = resources.files("blockdex.predict").joinpath(MODEL_RESOURCE)
    if not ref.is_file():
        raise BlockdexError(
            "the package has no content model file; reinstall blockdex or train one with "
            "'blockdex train --out model.json' and pass --model model.json"
        )
    return ContentModel(json.loads(ref.read_text(encoding="utf-8")))


class ContentPredictor:
    """Keep the blocks the main-content model scores at or above its threshold."""

    name = "content"
    reads_markup = False

    def __init__(
        self,
        model: str | Path | ContentModel | None = None,
        threshold: float | None = None,
        exact: bool = False,
        comments: bool = True,
        stories: bool = True,
        never_empty: bool = True,
        favor: str = "balanced",
        kinds: bool = True,
        repeats: bool = False,
    ):
        """``comments=False`` drops kept blocks inside comment sections (elements whose class/id
        says comment, disqus, respond, reply, discussion…) — for readers of articles, who do not
        want a reader thread the model kept (it keeps one when the thread outweighs the post).
        On a forum or Q&A page the thread *is* the content: when every kept block is in such a
        section, they stay, with a warning.

        ``stories=False`` keeps whatever the model keeps even when that spans several stories
        (by default the page's titled story is kept alone: :func:`blockdex.units.titled_story`).

        ``favor="precision"`` keeps only blocks the model is surer of (fewer boilerplate lines,
        some content lost), ``favor="recall"`` keeps more (less content lost, more boilerplate):
        the model's threshold moves by :data:`FAVOR_SHIFTS`. An explicit ``threshold`` wins.
        A model that learned each page's own threshold (``ContentModel.page_threshold``) cuts
        each page at that, moved the same way, unless ``threshold`` is given.

        ``never_empty=False`` returns nothing when no block looks like main content, as
        benchmarks that mark some pages "no main content" expect (by default a page with
        readable text always yields some: :func:`never_empty`).

        ``kinds=False`` leaves out the rules of page kinds (:mod:`blockdex.predict.kinds`: on a
        collection or listing page its list of records is kept, on a product page the reviews
        are dropped), for measuring them.

        ``repeats=True`` keeps a block whose text repeats a kept block before it; by default it
        is dropped (:func:`without_repeats`: a carousel's copies of one slide, a page's mobile
        and desktop copies of one section, a forum post's quote of an earlier post)."""
        self.model = model if isinstance(model, ContentModel) else ContentModel.load(model)
        if favor not in FAVOR_SHIFTS:
            raise BlockdexError(f"favor must be one of {', '.join(FAVOR_SHIFTS)}, not {favor!r}")
        self.favor = favor
        self.per_page = threshold is None and self.model.page_threshold is not None
        """Whether each page is cut at its own threshold (:meth:`page_threshold`)."""
        if threshold is None:
            threshold = self.model.threshold + FAVOR_SHIFTS[favor]
        self.threshold = float(threshold)
        self.confident = None if exact else CONFIDENT
        self.comments = comments
        self.stories = stories
        self.never_empty = never_empty
        self.kinds = kinds
        self.repeats = repeats

    def block_probabilities(self, page: Page) -> np.ndarray:
        """Per-block probability of being main content (used as a prior by query predictors)."""
        return self.model.probabilities(page, self.confident)

    def predict(self, page: Page, query: str | None = None) -> Selection:
        if not page.blocks:
            return Selection()
        probs = self.model.probabilities(page, self.confident)
        threshold = self.page_threshold(page, probs)
        keep, warnings = self._decide(page, probs, threshold)
        if self.stories and _any(keep):
            keep, probs, warnings = self._titled_story(page, keep, probs, warnings, threshold)
        if not self.comments and _any(keep):
            keep, note = _without_comments(page, keep)
            warnings += note
        if self.kinds and _any(keep):
            keep = page_kind_rules(page, keep, probs)
        if not self.repeats and _any(keep):
            keep = without_repeats(page, keep)
        if _any(keep):
            keep = _with_product_facts(page, _with_figures(page, keep))
        fallback = None
        if not _any(keep) and self.never_empty:
            keep, fallback, note = never_empty(page, probs)
            warnings += note
        elif not _any(keep):
            warnings += (
                f"no block looked like main content (best probability {probs.max():.2f} < "
                f"{threshold:.2f}); use --predictor all to get the whole page",
            )
        first = page.first_index
        indices = (np.flatnonzero(keep) + first).tolist()
        scores = BlockScores(first, probs)  # float(p) of a block when asked
        return Selection.from_indices(indices, scores=scores, warnings=warnings, fallback=fallback)

    def page_threshold(self, page: Page, probs: np.ndarray) -> float:
        """The threshold ``page``'s blocks are cut at: the predictor's, or with a model that
        learned each page's own (and no explicit ``threshold``), the page's, moved by ``favor``
        and kept within [:data:`MIN_PAGE_THRESHOLD`, :data:`MAX_PAGE_THRESHOLD`]."""
        if not self.per_page:
            return self.threshold
        own = self.model.page_threshold.of(probs, page_block_words(page), self.model.threshold)
        shifted = own + FAVOR_SHIFTS[self.favor]
        return min(max(shifted, MIN_PAGE_THRESHOLD), MAX_PAGE_THRESHOLD)

    def _titled_story(
        self,
        page: Page,
        keep: np.ndarray,
        probs: np.ndarray,
        warnings: tuple[str, ...],
        threshold: float,
    ) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
        """When the kept blocks hold other stories besides the page's titled one
        (:func:`blockdex.units.titled_story`), the model decides again on the titled story's
        region alone, which then reads like the page it was written as. The stories are found
        in what the model keeps at its own threshold whatever ``favor`` asks: a lower threshold
        keeps boilerplate between the parts of one story that then reads as another."""
        story_keep = keep
        if threshold != self.model.threshold:
            own = _without_ad_labels(page, probs >= self.model.threshold)
            story_keep = own if _any(own) else keep
        region = titled_story(page, story_keep.nonzero()[0].tolist())
        if region is None:
            return keep, probs, warnings
        sub = page.slice(region.first, region.last + 1)
        sub_probs = self.model.probabilities(sub, self.confident)
        sub_keep, sub_warnings = self._decide(sub, sub_probs, threshold)
        # whether the region holds the titled story is decided at the model's own threshold
        own_keep = sub_keep
        if threshold != self.model.threshold:
            own_keep = self._decide(sub, sub_probs, self.model.threshold)[0]
        if not _any(own_keep) or not _any(sub_keep):
            return keep, probs, warnings
        if region.missed:
            # the model kept another story only: use what it finds in the region if that is a
            # story of its own, different from the one it kept
            found = content_counts(" ".join(sub.blocks[i].text for i in np.flatnonzero(own_keep)))
            kept_other = content_counts(" ".join(page.blocks[i].text for i in region.other))
            if not missed_story_found(page, found, kept_other):
                return keep, probs, warnings
        probs = probs.copy()
        probs[region.first : region.last + 1] = sub_probs
        new_keep = np.zeros(len(page.blocks), dtype=bool)
        new_keep[region.first : region.last + 1] = sub_keep
        return new_keep, probs, sub_warnings

    def _decide(
        self, page: Page, probs: np.ndarray, threshold: float | None = None
    ) -> tuple[np.ndarray, tuple[str, ...]]:
        """Which blocks the probabilities keep (at ``threshold``, by default the predictor's),
        with the fallback for pages where none reaches the threshold, and warnings."""
        threshold = self.threshold if threshold is None else threshold
        keep = _without_ad_labels(page, probs >= threshold)
        warnings: tuple[str, ...] = ()
        if not _any(keep) and _max(probs) >= FALLBACK_THRESHOLD:
            # A short page's one paragraph can score just under the threshold; an app shell or
            # error page scores far lower. Keep the likely blocks rather than return nothing.
            keep = _without_ad_labels(page, probs >= FALLBACK_THRESHOLD)
            warnings = (
                f"no block reached the content threshold {threshold:.2f}; kept the blocks "
                f"above {FALLBACK_THRESHOLD:.2f}",
            )
        return keep, warnings


TINY_PAGE_WORDS = 60
"""A page with this few words is kept whole when the model keeps nothing of it: a one-line
page, headings over pictures, a note inside a link — a reader sees all of it at once."""
BEST_BLOCKS_SHARE = 0.5
"""When the model keeps nothing of a larger page, the blocks scoring at least this share of the
best block's probability are kept."""


def never_empty(page: Page, probs: np.ndarray) -> tuple[np.ndarray, str | None, tuple[str, ...]]:
    """Blocks to keep when the model kept none, the name of the fallback and its warning.

    A page with readable text never yields nothing: a tiny page is kept whole, else the primary
    unit (the article the title names) is kept, else the best-scored blocks. A page without a
    word of text keeps nothing (and says so)."""
    texts = page_ids(page).texts
    readable = np.array([has_text(t) for t in texts], dtype=bool)
    if not readable.any():
        return readable, None, ("the page has no readable text",)
    words = sum(len(t.split()) for t in texts)
    best = float(probs.max()) if len(probs) else 0.0
    why = f"no block looked like main content (best probability {best:.2f})"
    if words <= TINY_PAGE_WORDS:
        return readable, "whole-page", (f"{why}; the page is tiny, so all of its text was kept",)
    unit = page.primary_unit
    if unit is not None:
        first = page.first_index
        keep = readable.copy()
        keep[: max(unit.start - first, 0)] = False
        keep[unit.end - first + 1 :] = False
        if keep.any():
            return (
                keep,
                "primary-unit",
                (
                    f"{why}; kept the article the page's title names (blocks {unit.start}-{unit.end})",
                ),
            )
    keep = readable & (probs >= BEST_BLOCKS_SHARE * best)
    if not keep.any():
        keep = readable
    return (
        keep,
        "best-blocks",
        (f"{why}; kept the best-scored blocks (use --predictor all for the whole page)",),
    )


FIGURE_TAGS = frozenset({"img", "figcaption", "caption"})
"""Blocks that are a figure's parts: its image and its caption."""
MAX_FIGURE_GAP = 3
"""Dropped figure blocks between two kept blocks are kept when there are at most this many:
one figure (an image, its caption, a credit line), not a gallery."""


def _in_figure(block: Block) -> bool:
    return block.tag in FIGURE_TAGS or any(tag == "figure" for tag, _ in block.chain)


def _with_figures(page: Page, keep: np.ndarray) -> np.ndarray:
    """``keep`` with the figures that sit between two kept blocks, when the images are written
    (:attr:`blockdex.page.Page.images`): an image and its caption in the middle of the kept text
    are part of it (the model reads them as short lines of little text, and drops them).

    Not without images: the benchmarks' ground truth leaves captions and alt texts out, and
    keeping them cost scrapinghub-aeb 0.0045 F1 (0.0003 for captions alone) and trafilatura-eval
    0.001 snippet F1 (``benchmarks/NOTES.md``)."""
    if not page.images:
        return keep
    blocks = page.blocks
    out = keep
    k = 0
    n = len(blocks)
    while k < n:
        if keep[k] or not k or not keep[k - 1]:
            k += 1
            continue
        end = k
        while end < n and not keep[end] and end - k < MAX_FIGURE_GAP and _in_figure(blocks[end]):
            end += 1
        if end < n and end > k and keep[end]:
            if out is keep:
                out = keep.copy()
            out[k:end] = True
        k = max(end, k + 1)
    return out


def _with_product_facts(page: Page, keep: np.ndarray) -> np.ndarray:
    """``keep`` with the product facts rescued from the page's JSON-LD (``Block.source ==
    "facts"``: its price, availability… where the visible page lacks them): they describe the
    page's one product, whatever the model made of its visible blocks."""
    facts = page_ids(page).positions_from("facts")
    if not facts:
        return keep
    out = keep.copy()
    out[facts] = True
    return out


def _without_comments(page: Page, keep: np.ndarray) -> tuple[np.ndarray, tuple[str, ...]]:
    """``keep`` without the blocks inside comment sections, unless that would leave nothing."""
    kept = np.flatnonzero(keep)
    in_comments = in_family([page.blocks[i] for i in kept], "comment")
    if not in_comments.any():
        return keep, ()
    if in_comments.all():
        return keep, (
            "every kept block is inside a comment or discussion section (a forum or Q&A "
            "page?): kept them although comments were excluded",
        )
    out = keep.copy()
    out[kept[in_comments]] = False
    return out, ()


REPEAT_MIN_WORDS = 3
"""A repeated text of fewer words ("Read more", "Add to basket", a price) is the page's template or
a record's field, not a copy of content: it stays."""
REPEAT_KEPT_TAGS = frozenset({"tr", "td", "th", "pre"})
"""Blocks kept even when their text repeats: a table's equal rows and a tutorial's repeated command
say something each time."""


def without_repeats(page: Page, keep: np.ndarray) -> np.ndarray:
    """``keep`` without the blocks whose text, of :data:`REPEAT_MIN_WORDS` words or more, a kept
    block before them already has (the same characters: the walk has squashed the whitespace).

    A page writes some content twice for its layout: each slide of a carousel again for its
    loop, a section once for wide screens and once for phones, an earlier post quoted in full in
    a forum reply. A reader, and the token budget, want it once. Measured on the shared sets'
    pages (``benchmarks/NOTES.md``, "Text kept twice"), table rows and code blocks
    (:data:`REPEAT_KEPT_TAGS`) aside."""
    table = page_ids(page)
    texts, tags = table.texts, table.column("tag")
    seen: set[str] = set()
    out = keep
    for i in keep.nonzero()[0].tolist():
        text = texts[i]
        if text not in seen:
            seen.add(text)
        elif tags[i] not in REPEAT_KEPT_TAGS and len(text.split()) >= REPEAT_MIN_WORDS:
            if out is keep:
                out = keep.copy()
            out[i] = False
    return out


def _without_ad_labels(page: Page, keep: np.ndarray) -> np.ndarray:
    """``keep`` without blocks whose whole text is an ad label (:data:`AD_LABELS`)."""
    texts = page_ids(page).texts
    out = keep
    for i in keep.nonzero()[0].tolist():
        text = texts[i]
        if len(text) <= _LABEL_MAX_CHARS and _AD_LABEL_RE.fullmatch(text.lower()) is not None:
            if out is keep:
                out = keep.copy()
            out[i] = False
    return out
