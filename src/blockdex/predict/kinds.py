"""What the page's kind changes in the main-content decision (issue 41).

The content model decides block by block, and it learned mostly from articles: on a page made of
many records (a shop's category, a list of search results) it keeps a few cards' images and drops
their titles and prices, and on a product page it keeps the buyers' reviews under the product.
The rules below read the model's decision at the level of the page, each only where its page type
(:func:`blockdex.pagetype.classify_page`, learned from signals that hold on any site) says so:

- **The list is the page.** On a collection or listing page, the largest item list
  (:mod:`blockdex.items`) of at least :data:`MIN_ITEMS` items beside which the model keeps little
  (the kept words outside it are under :data:`MAX_OUTSIDE_SHARE` of the page's words: a page
  whose article the model found is not a page of records) is kept. When the model kept little
  of the list itself (under :data:`UNSEEN_LIST_SHARE` of its words) it did not recognise the
  records, and every slot of the items is kept; otherwise the slots it recognised are, those whose
  mean probability over the items reaches :data:`MIN_SLOT_PROB` (each card's title, each card's
  price). Never added: a slot that says the same in every item (an "Add to basket" button, a
  "Read more" link: the template's words, not the records') and the cards' images (their alt
  text repeats the card's title, once per colour or view).
- **Reviews are not the product.** On a product page, the kept blocks inside elements whose
  class or id names reviews, ratings or testimonials are dropped. When they are all the model
  kept, the product is read from the rest of the page: the blocks outside reviews that score at
  least :data:`REVIEWS_ONLY_SHARE` of the best of them (the model, which learned mostly from
  articles, scores a shop's buyer reviews as prose above the product's own short lines).
- **Other products are not the product.** On a product page, the kept blocks inside an item list
  of at least :data:`RAIL_MIN_ITEMS` items, :data:`RAIL_PRICED_SHARE` of them or more with a
  price (a currency sign), are dropped: a rail of similar items, sponsored offers or the seller's
  other listings (unless nothing would be left).
- **A shop's pictures are not its text.** On a product, collection or listing page read without
  its images (:attr:`blockdex.page.Page.images` off), the kept images are dropped: what is left of
  them is their alt text, the product's name once per view or colour, each card's title again
  (unless nothing would be left).
- **A service page is its sections.** On a service page (a company's offer: hero, features,
  pricing, FAQ), the blocks between the first and the last kept block whose probability reaches
  :data:`SERVICE_MIN_PROB` are kept too (images aside; when they hold at least
  :data:`SERVICE_MIN_ADDED` of the kept words): the model, which learned mostly from articles,
  scores such a page's short sections at 0.3–0.6 one by one and keeps some of them.
- **A service or documentation page is its main column.** On such a page, the element that holds
  :data:`COLUMN_KEPT_SHARE` of the kept words (the deepest one) is the page's main column. Its
  blocks, images and buttons aside (a line of :data:`BUTTON_MAX_WORDS` words or fewer that is a
  link, or has no letter or digit), are kept from :data:`COLUMN_MIN_PROB` on, unless they hold
  more than :data:`COLUMN_MAX_PAGE_SHARE` of the page's words (then the column is the page):
  the sections around the kept ones, a team's names, a FAQ, a manual's short notes, which the
  model, which learned mostly from articles, scores low one by one.
- **A post is written like the posts kept.** On a forum thread, a documentation page or a
  service page, a block the model dropped is kept when a kept block was made from the same
  template (the same tag and the same class/id names of its enclosing elements, numbers aside:
  ``post_message_2017066`` and ``post_message_2017176``) and its probability reaches
  :data:`TEMPLATE_MIN_PROB` (when they hold at least :data:`TEMPLATE_MIN_ADDED` of the kept
  words): the model keeps a thread's first post and drops a short answer
  below it, or keeps most of a manual's paragraphs and drops the short ones. Not on articles,
  where the body's own comment policy and "follow us" lines share the paragraphs' template, nor
  on listings, where a rail's entries share the records' (``benchmarks/NOTES.md``).
- **Quoted text once.** On a forum thread, a kept quote (a ``<blockquote>``, or an element whose
  class or id names a quote) whose words, :data:`QUOTE_MIN_WORDS` or more, the kept blocks before
  it already hold is dropped: a reply quoting a line of an earlier post. (A quote of a whole
  block is dropped on every page by the repeats rule, ``ContentPredictor(repeats=False)``.)

The page type costs a few milliseconds, so it is asked only once a rule has something to change.
No rule reads a page without an address (no URL given and no canonical link): the page type
leans on the URL's shape (``/c/…``, ``/collections/``, ``?page=2``); without it, it calls 191 of
l3s-gn1's 435 news pages listings (65 with it), and on 5 of them the list rule then added the
pages' rails of headlines (``benchmarks/NOTES.md``).
On an article the rules do nothing: a rail of other stories is an item list too, and on a news
page the same list read as a collection's grid would add it (``benchmarks/NOTES.md``).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right

import numpy as np

from blockdex.features import WORD_RE, readable
from blockdex.ids import BlockIds, page_ids
from blockdex.items import cut_lists, fold_digits, item_slot_groups, page_block_words, slot_means
from blockdex.page import Page
from blockdex.pagetype import PRICE_SIGNS
from blockdex.predict import _kinds_c as compiled

MIN_ITEMS = 4
"""Fewer items than this are not a page's list (a pair of teasers, three related links)."""
MAX_OUTSIDE_SHARE = 0.1
"""The kept words outside the list, as a share of the page's words, under which the list can be
the page: where the model keeps an article's worth of text beside a list, the list is that
article's rail or its own paragraphs, not a page of records (on news pages the page type calls
listings, ``benchmarks/NOTES.md``)."""
UNSEEN_LIST_SHARE = 0.2
"""Under this share of the list's words kept, the model did not recognise the records, and its
slot probabilities say nothing about which slots matter: every slot is kept."""
MIN_SLOT_PROB = 0.2
"""A slot (the blocks at one place inside the items) of a list the model recognised is kept when
its mean probability over the items reaches this: titles and prices do, the cards' buttons and
badges do not."""
LIST_KINDS = frozenset({"collection", "listing"})
PICTURE_KINDS = LIST_KINDS | {"product"}
"""Pages whose kept images, read without them, leave only alt texts that repeat the records'
titles."""
SERVICE_MIN_PROB = 0.3
"""A block between a service page's first and last kept block is kept from this probability on
(the model's own threshold is 0.55)."""
SERVICE_MIN_ADDED = 0.05
"""The service rule asks for the page type only when the blocks it would add hold this share of
the kept words: smaller additions change little (wcxb left out, three seeds: −0.0000 to
−0.0002), and the type costs ~8% of a page's pipeline (``benchmarks/NOTES.md``)."""
COLUMN_KINDS = frozenset({"service", "documentation"})
"""Pages whose main column is kept (see the module's rules)."""
COLUMN_KEPT_SHARE = 0.9
"""The share of the kept words the main column holds: a stray kept line elsewhere (a footer's
address) does not make the whole page the column."""
COLUMN_MAX_PAGE_SHARE = 0.8
"""A column holding more than this share of the page's words is the page itself, not a column."""
COLUMN_MIN_PROB = 0.1
"""The probability from which a block of the main column is kept."""
COLUMN_MIN_ADDED = 0.05
"""The main-column rule asks for the page type only when the blocks it would add hold this
share of the kept words."""
BUTTON_MAX_WORDS = 3
"""A line of this many words or fewer that is all link, or has no letter or digit, is a button
("Learn more", "+", "Contact us"), not a section's text."""
TEMPLATE_KINDS = frozenset({"forum", "documentation", "service"})
"""Pages whose dropped blocks made from a kept block's template are kept (see the module's
rules)."""
TEMPLATE_MIN_PROB = 0.1
"""The probability from which such a block is kept: a short answer in a thread scores 0.2–0.5."""
TEMPLATE_MIN_ADDED = 0.02
"""The template rule asks for the page type only when the blocks it would add hold this share of
the kept words: half the calls, for the same gain (wcxb left out, two seeds: +0.0059 / +0.0072
instead of +0.0061 / +0.0073; ``benchmarks/NOTES.md``)."""
QUOTE_MIN_WORDS = 3
"""A shorter quote ("Thanks!", "+1") is kept: its words are likely anywhere before it."""
QUOTE_MAX_CHECKS = 100
"""At most this many kept quotes a page are looked for in the text before them (each look reads
that text: a page of thousands of quotes must not cost their number times its length). The most
any shared page keeps is 164 (a trafilatura-eval tutorial, not a forum)."""
REVIEWS_ONLY_SHARE = 0.5
"""When a product page's kept blocks are all reviews, the blocks outside reviews scoring at least
this share of the best of them are kept instead (the share :func:`blockdex.predict.content.never_empty`
keeps of a page's best blocks)."""
RAIL_MIN_ITEMS = 3
"""A list of other products has at least this many items (:attr:`blockdex.items.ItemConfig.min_items`:
a shop's rails are often three cards in a row)."""
RAIL_PRICED_SHARE = 0.5
"""The share of a list's items with a currency sign from which the list is a rail of other
products on a product page."""
REVIEW_WORDS = ("review", "rating", "testimonial")
"""Class or id tokens (``Block.attrs``, the element's and its nearest ancestors') of a review,
inside a token too (``product-reviews``, ``star-rating``). Searched in C, each class/id string
once a page (``_kinds_c.kept_marks``: three ``in`` tests, a seventh of a regular expression's
search; a test checks them against these words)."""


def page_kind_rules(page: Page, keep: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """``keep`` changed by the rules above (the same array when none applies)."""
    if not (page.url or page.meta.get("canonical")):
        return keep
    keep = _page_list(page, keep, probs)
    keep = _shop_page(page, keep, probs)
    keep = _service_page(page, keep, probs)
    keep = _main_column(page, keep, probs)
    keep = _template_mates(page, keep, probs)
    return _quoted_once(page, keep)


def _page_list(page: Page, keep: np.ndarray, probs: np.ndarray) -> np.ndarray:
    if all(len(lst.items) < MIN_ITEMS for lst in page.item_lists):
        return keep
    n = len(page.blocks)
    words = page_block_words(page)
    kept_words = float(words[keep].sum())
    most_outside = MAX_OUTSIDE_SHARE * float(words.sum())
    best: tuple[int, list[tuple[int, int]]] | None = None
    before: list[float] | None = None  # the kept words before each block, once a list is read
    for lst, items in cut_lists(page):  # block positions, also on a slice of the page
        if len(items) < MIN_ITEMS or (best is not None and lst.words <= best[0]):
            continue
        if before is None:
            before = [0.0, *np.cumsum(np.where(keep, words, 0.0)).tolist()]
        # the items are apart from each other; words are whole numbers, so the sums are exact
        kept_inside = sum(before[last + 1] - before[first] for first, last in items)
        if kept_words - kept_inside >= most_outside:
            continue
        best = (lst.words, items)
    if best is None:
        return keep
    inside = np.zeros(n, dtype=bool)
    for first, last in best[1]:
        inside[first : last + 1] = True
    add = inside & ~keep
    table = page_ids(page)
    _clear_images(table, add)
    # the slot groups of the blocks that may be added (their means read only their groups)
    groups = item_slot_groups(page, np.flatnonzero(add).tolist())
    if float(words[keep & inside].sum()) >= UNSEEN_LIST_SHARE * float(words[inside].sum()):
        add &= slot_means(probs, groups)[:, 0] >= MIN_SLOT_PROB
    texts: dict[int, list[str]] = {}
    block_texts = table.texts
    for i in np.flatnonzero(add).tolist():
        texts.setdefault(int(groups[i]), []).append(block_texts[i])
    for i in np.flatnonzero(add).tolist():
        same = texts[int(groups[i])]
        if len(same) >= MIN_ITEMS - 1 and len(set(same)) == 1:
            add[i] = False
    if not add.any() or page.page_type.label not in LIST_KINDS:
        return keep
    return keep | add


def _clear_images(table: BlockIds, add: np.ndarray) -> None:
    """``add`` (a block mask, changed in place) without the image blocks (of the blocks' table):
    the list and service rules add no pictures."""
    tags = table.column("tag")
    for i in np.flatnonzero(add).tolist():
        if tags[i] == "img":
            add[i] = False


def _priced_rails(page: Page, kept: list[int]) -> list[int]:
    """The kept blocks (``kept``, sorted positions) inside lists of other products: item lists
    of at least :data:`RAIL_MIN_ITEMS` items, :data:`RAIL_PRICED_SHARE` of them with a currency
    sign."""
    table = page_ids(page)
    n = table.n
    out: list[int] = []
    for _lst, items in cut_lists(page):
        if len(items) < RAIL_MIN_ITEMS:
            continue
        # the kept blocks between the list's first and last block (most lists hold none)
        inside = kept[bisect_left(kept, items[0][0]) : bisect_right(kept, items[-1][1])]
        if not inside:
            continue
        # items without a price (a currency sign: pagetype.PRICE_RE's), counted until there are
        # too many for a rail
        allowed = len(items) - math.ceil(RAIL_PRICED_SHARE * len(items))
        if compiled.unpriced_items(table, items, PRICE_SIGNS, allowed) > allowed:
            continue
        spans = iter(items)  # in document order
        first, last = next(spans)
        for i in inside:
            while i > last:
                first, last = next(spans, (n, n))
            if first <= i <= last:
                out.append(i)
    return out


def _product_without_reviews(page: Page, probs: np.ndarray) -> np.ndarray:
    """The blocks with readable text outside reviews that score at least
    :data:`REVIEWS_ONLY_SHARE` of the best of them."""
    table = page_ids(page)
    reviews = compiled.kept_marks(table, list(range(table.n)), compiled.REVIEWS)[1]
    others = np.fromiter(map(readable, table.texts), bool, table.n)
    others[reviews] = False
    if not others.any():
        return others
    return others & (probs >= REVIEWS_ONLY_SHARE * float(probs[others].max()))


def _shop_page(page: Page, keep: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """A product page's reviews and rails of other products, and a shop page's pictures,
    dropped (see the module's rules)."""
    kept = np.flatnonzero(keep).tolist()
    wanted = compiled.REVIEWS if page.images else compiled.REVIEWS | compiled.IMAGES
    images, reviews, _ = compiled.kept_marks(page_ids(page), kept, wanted)
    known = page.facts.known_page_type()
    rails = _priced_rails(page, kept) if known is None or known.label == "product" else []
    if not images and not reviews and not rails:
        return keep
    label = page.page_type.label
    drop = set(images) if label in PICTURE_KINDS else set()
    if label == "product":
        if len(reviews) == len(kept):
            instead = _product_without_reviews(page, probs)
            if instead.any():
                return instead
        drop.update(reviews)
        drop.update(rails)
    if not drop or len(drop) == len(kept):
        return keep
    out = keep.copy()
    out[list(drop)] = False
    return out


def _adds_enough(
    page: Page,
    keep: np.ndarray,
    add: np.ndarray | list[int],
    share: float,
    words: np.ndarray | None = None,
) -> bool:
    """Whether the blocks ``add`` (a mask or positions) hold ``share`` of the kept words: the
    gate before a rule asks for the page type (a few milliseconds) for an addition that would
    change little. ``words``: the page's :func:`page_block_words`, when the caller has them."""
    if words is None:
        words = page_block_words(page)
    return float(words[add].sum()) >= share * max(1.0, float(words[keep].sum()))


def _service_page(page: Page, keep: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """The sections between a service page's first and last kept block (see the module's rules)."""
    kept = np.flatnonzero(keep)
    if not len(kept):
        return keep
    first, last = int(kept[0]), int(kept[-1]) + 1
    add = np.zeros(len(keep), dtype=bool)
    add[first:last] = (probs[first:last] >= SERVICE_MIN_PROB) & ~keep[first:last]
    _clear_images(page_ids(page), add)
    if not add.any():
        return keep
    if not _adds_enough(page, keep, add, SERVICE_MIN_ADDED) or page.page_type.label != "service":
        return keep
    return keep | add


def _column(page: Page, kept: list[int], words: np.ndarray) -> int | None:
    """Id of the deepest element holding :data:`COLUMN_KEPT_SHARE` of the kept blocks' words
    (None when no element does).

    Such an element holds the kept block with the most words when that block has more than the
    share left over, so the elements around it are asked, the nearest first (a page's kept
    blocks share most of their elements, and the first element asked usually answers)."""
    weights = words[kept].tolist()
    total = sum(weights)
    if total <= 0:
        return None
    need = COLUMN_KEPT_SHARE * total
    heaviest = max(range(len(kept)), key=weights.__getitem__)
    return compiled.column_of(page_ids(page), kept, weights, need, heaviest)  # type: ignore[no-any-return]


def _is_button(text: str, link_chars: int, words: float) -> bool:
    """A short line that is all link or has no letter or digit (see :data:`BUTTON_MAX_WORDS`)."""
    return words <= BUTTON_MAX_WORDS and (link_chars >= 0.9 * len(text) or not readable(text))


def _main_column(page: Page, keep: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """The blocks of a service or documentation page's main column (see the module's rules)."""
    known = page.facts.known_page_type()
    if known is not None and known.label not in COLUMN_KINDS:
        return keep
    kept = np.flatnonzero(keep).tolist()
    if len(kept) < 2:
        return keep
    words = page_block_words(page)
    # what the rule could add at most, before the column is looked for
    bound = ~keep & (probs >= COLUMN_MIN_PROB)
    if not _adds_enough(page, keep, bound, COLUMN_MIN_ADDED, words):
        return keep
    column = _column(page, kept, words)
    if column is None:
        return keep
    table = page_ids(page)
    inside = np.frombuffer(compiled.blocks_in(table, column), dtype=bool)  # writable: a bytearray
    tags, texts, link_chars = table.column("tag"), table.texts, table.column("link_chars")
    for i in np.flatnonzero(inside).tolist():
        if tags[i] == "img" or _is_button(texts[i], link_chars[i], float(words[i])):
            inside[i] = False
    if float(words[inside].sum()) > COLUMN_MAX_PAGE_SHARE * float(words.sum()):
        return keep
    add = inside & ~keep & (probs >= COLUMN_MIN_PROB)
    if not add.any() or not _adds_enough(page, keep, add, COLUMN_MIN_ADDED, words):
        return keep
    if page.page_type.label not in COLUMN_KINDS:
        return keep
    return keep | add


_NUMBERED_RE = re.compile(r"[\d#]")


def _template(tag: str, attrs: str) -> tuple[str, str]:
    """A block's template: its tag and its enclosing elements' class/id names, each run of
    digits read as one ``#`` as the item lists' class signatures read them (``post-99`` and
    ``post-100`` are one template)."""
    return tag, fold_digits(attrs)


def _template_mates(page: Page, keep: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """The dropped blocks made from a kept block's template (see the module's rules)."""
    known = page.facts.known_page_type()
    if known is not None and known.label not in TEMPLATE_KINDS:
        return keep
    candidates = np.flatnonzero(~keep & (probs >= TEMPLATE_MIN_PROB)).tolist()
    if not candidates:
        return keep
    table = page_ids(page)
    tags, block_attrs = table.column("tag"), table.column("attrs")
    # Compared per distinct (tag, attrs), a few dozen a page. Numbers are set aside only where a
    # dropped block's attrs hold one (or a '#'): without, only the same attrs can match, and
    # the regular expression over long class lists was most of the rule's time.
    kept = {(tags[i], block_attrs[i]) for i in np.flatnonzero(keep).tolist()}
    numbered: dict[str, set[tuple[str, str]]] = {}
    same: dict[tuple[str, str], bool] = {}
    add = []
    for i in candidates:
        key = (tags[i], block_attrs[i])
        if key not in same:
            tag, attrs = key
            if not attrs or tag == "img":
                same[key] = False
            elif key in kept:
                same[key] = True
            elif _NUMBERED_RE.search(attrs) is None:
                same[key] = False
            else:
                if tag not in numbered:
                    numbered[tag] = {_template(t, a) for t, a in kept if t == tag}
                same[key] = _template(tag, attrs) in numbered[tag]
        if same[key]:
            add.append(i)
    if not add:
        return keep
    if not _adds_enough(page, keep, add, TEMPLATE_MIN_ADDED):
        return keep
    if page.page_type.label not in TEMPLATE_KINDS:
        return keep
    out = keep.copy()
    out[add] = True
    return out


def _quoted_once(page: Page, keep: np.ndarray) -> np.ndarray:
    """A forum's kept quotes of what the thread already says, dropped (see the module's rules)."""
    table = page_ids(page)
    texts = table.texts
    kept = np.flatnonzero(keep).tolist()
    # a <blockquote>'s block, one inside a <blockquote>, or one inside an element whose class or
    # id names a quote ("quote" or "Quote": two tests instead of lower-casing every class list)
    quotes = compiled.kept_marks(table, kept, compiled.QUOTES)[2][:QUOTE_MAX_CHECKS]
    if not quotes:
        return keep
    known = page.facts.known_page_type()
    if known is not None and known.label != "forum":
        return keep
    before = " "  # the kept blocks' words so far, one space around each
    drop = []
    quoted = set(quotes)
    for i in kept:
        if i > quotes[-1]:
            break
        words = " ".join(WORD_RE.findall(texts[i].lower()))
        if i in quoted and words.count(" ") + 1 >= QUOTE_MIN_WORDS and f" {words} " in before:
            drop.append(i)
            continue
        before += words + " "
    if not drop or len(drop) == len(kept) or page.page_type.label != "forum":
        return keep
    out = keep.copy()
    out[drop] = False
    return out
