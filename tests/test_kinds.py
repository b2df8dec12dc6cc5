"""The page-kind rules of the main-content decision (:mod:`blockdex.predict.kinds`): a collection's
list of records is kept whole, a product page's reviews are dropped, and an article is left as
the model decided. The model's probabilities are set by hand, so that each test says which
decision the rule starts from."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blockdex
import blockdex.predict.kinds as kinds
from blockdex.ids import block_ids
from blockdex.page import Block, Page
from blockdex.pagetype import PRICE_RE, PRICE_SIGNS, PageType
from blockdex.predict import _kinds_c
from blockdex.predict.content import ContentPredictor
from blockdex.predict.kinds import (
    MAX_OUTSIDE_SHARE,
    MIN_SLOT_PROB,
    REVIEW_WORDS,
    page_kind_rules,
)

KINDS = Path(__file__).parent / "data" / "kinds"
GRID_URL = "https://shop.example/c/walking-boots"
GRID = (KINDS / "product_grid.html").read_text(encoding="utf-8")
REVIEWS = """<html><head><title>Trail stove</title></head><body>
<nav><a href="/">Home</a> <a href="/stoves">Stoves</a></nav>
<main><h1>Pocket trail stove</h1>
<p>A folding titanium stove that boils half a litre of water in three minutes on gas.</p>
<p>Weighs 45 grams, folds to the size of a matchbox and fits inside a 450 ml pot.</p>
<p>Price: 39.00 EUR, in stock, ships in two days from our warehouse in Lyon.</p>
<section class="customer-reviews">
<div class="review"><p>Boiled water on a windy ridge in four minutes; the flame held steady.</p></div>
<div class="review"><p>Light and tiny, but the pot supports bend if you overtighten them.</p></div>
</section></main><footer>© Trail Shop</footer></body></html>"""


def _as(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every page reads as ``kind`` (the shipped page type model is not what is tested)."""
    monkeypatch.setattr(Page, "page_type", property(lambda self: PageType(kind, 0.9, {kind: 0.9})))


def _grid_probs(page: Page) -> np.ndarray:
    """The decision the rule exists for: the cards' images kept, their titles, blurbs and
    prices just under the threshold, the cards' buttons lower, everything else far lower."""
    probs = np.full(len(page.blocks), 0.02)
    for b in page.blocks:
        if "product-gr" in b.attrs or "product" in b.attrs:
            if b.tag == "img":
                probs[b.index] = 0.7
            elif b.text == "Add to basket":
                probs[b.index] = 0.25
            else:
                probs[b.index] = 0.4
    return probs


def _texts(page: Page, keep: np.ndarray) -> list[str]:
    return [page.blocks[i].text for i in np.flatnonzero(keep)]


def test_a_collections_records_are_kept_without_the_templates_buttons(monkeypatch) -> None:
    _as("collection", monkeypatch)
    page = blockdex.segment(GRID, url=GRID_URL)
    probs = _grid_probs(page)
    keep = probs >= 0.5
    assert "Ridgeline GTX" not in _texts(page, keep)
    kept = _texts(page, page_kind_rules(page, keep, probs))
    for title, price in [("Ridgeline GTX", "€189.00"), ("Dales Walker", "€99.00")]:
        assert title in kept and price in kept
    assert "Waterproof leather boot with a Vibram sole for rocky trails." in kept
    assert "Add to basket" not in kept  # the same words in every card: the template's
    assert "Delivery" not in kept and "Boots" not in kept  # the page's menus are no records


def test_a_page_without_an_address_is_left_as_the_model_decided(monkeypatch) -> None:
    # the page type leans on the URL's shape: without one, the rules do not trust it
    _as("collection", monkeypatch)
    canonical = (
        '<link rel="canonical" href="https://shop.northfield.example/collections/walking-boots">'
    )
    assert canonical in GRID
    page = blockdex.segment(GRID.replace(canonical, ""))
    assert page.url is None
    probs = _grid_probs(page)
    keep = probs >= 0.5
    assert (page_kind_rules(page, keep, probs) == keep).all()
    page = blockdex.segment(GRID)  # its canonical link is an address
    assert (page_kind_rules(page, keep, probs) != keep).any()


def test_the_same_list_on_an_article_is_left_as_the_model_decided(monkeypatch) -> None:
    _as("article", monkeypatch)
    page = blockdex.segment(GRID, url=GRID_URL)
    probs = _grid_probs(page)
    keep = probs >= 0.5
    assert (page_kind_rules(page, keep, probs) == keep).all()


def test_a_list_the_model_did_not_recognise_is_kept_whole(monkeypatch) -> None:
    # nothing of the grid kept, and nothing much beside it: on a collection page the largest
    # list is the page, and with no slot probability to go by, every slot is kept
    _as("collection", monkeypatch)
    page = blockdex.segment(GRID, url=GRID_URL)
    probs = _grid_probs(page) * 0.2  # every slot, images too, under MIN_SLOT_PROB
    keep = np.array([b.tag == "h1" for b in page.blocks])
    assert keep.any() and not (probs >= MIN_SLOT_PROB).any()
    ruled = page_kind_rules(page, keep, probs)
    kept = _texts(page, ruled)
    for title, price in [("Ridgeline GTX", "€189.00"), ("Dales Walker", "€99.00")]:
        assert title in kept and price in kept
    assert "Add to basket" not in kept  # the template's words, in every card
    assert not any(page.blocks[i].tag == "img" for i in np.flatnonzero(ruled))
    assert "Delivery" not in kept and "Boots" not in kept


def test_a_list_beside_an_article_the_model_kept_is_left_alone(monkeypatch) -> None:
    # the same grid under an article's worth of kept text is that article's rail, not the page
    _as("collection", monkeypatch)
    story = "<p>" + " ".join(["The boots were tested on wet limestone for a week."] * 12) + "</p>"
    html = GRID.replace("</h1>", "</h1>" + story * 3, 1)
    page = blockdex.segment(html, url=GRID_URL)
    probs = _grid_probs(page) * 0.2
    keep = np.array([b.tag == "p" and "limestone" in b.text for b in page.blocks])
    words = [len(b.text.split()) for b in page.blocks]
    assert keep.sum() == 3
    assert sum(np.array(words)[keep]) > MAX_OUTSIDE_SHARE * sum(words)
    assert (page_kind_rules(page, keep, probs) == keep).all()
    only_title = np.array([b.tag == "h1" for b in page.blocks])  # the same page, story unkept
    assert (page_kind_rules(page, only_title, probs) != only_title).any()


def test_a_product_pages_reviews_are_dropped(monkeypatch) -> None:
    page = blockdex.segment(REVIEWS, url="https://shop.example/p/pocket-trail-stove")
    probs = np.full(len(page.blocks), 0.9)
    keep = np.array([b.tag in ("h1", "p") for b in page.blocks])
    _as("product", monkeypatch)
    kept = _texts(page, page_kind_rules(page, keep, probs))
    assert any(t.startswith("Weighs 45 grams") for t in kept)
    assert not any("windy ridge" in t or "pot supports" in t for t in kept)
    _as("article", monkeypatch)  # an article's comments are the comments option's business
    assert (page_kind_rules(page, keep, probs) == keep).all()


def test_a_product_pages_pictures_are_dropped_unless_images_are_written(monkeypatch) -> None:
    html = REVIEWS.replace(
        "<h1>Pocket trail stove</h1>",
        "<h1>Pocket trail stove</h1>"
        + "".join(f'<img src="/stove-{v}.jpg" alt="Pocket trail stove">' for v in ("a", "b", "c")),
    )
    page = blockdex.segment(html, url="https://shop.example/p/pocket-trail-stove")
    images = np.array([b.tag == "img" for b in page.blocks])
    assert images.sum() == 3
    keep = np.array([b.tag in ("h1", "p", "img") and "review" not in b.attrs for b in page.blocks])
    probs = np.full(len(page.blocks), 0.9)
    _as("product", monkeypatch)
    ruled = page_kind_rules(page, keep, probs)
    assert not ruled[images].any() and (ruled == (keep & ~images)).all()
    written = dataclasses.replace(page, images=True)  # ``--images``: the pictures are wanted
    assert (page_kind_rules(written, keep, probs) == keep).all()
    only_pictures = images.copy()
    assert (page_kind_rules(page, only_pictures, probs) == only_pictures).all()
    _as("article", monkeypatch)
    assert (page_kind_rules(page, keep, probs) == keep).all()


@pytest.mark.parametrize("kind", ["collection", "listing"])
def test_a_shop_grids_pictures_are_dropped_but_not_its_reviews(kind, monkeypatch) -> None:
    # a grid's card images, read as text, are each card's title again
    page = blockdex.segment(GRID, url=GRID_URL)
    images = np.array([b.tag == "img" for b in page.blocks])
    assert images.sum() >= 4
    keep = np.array(["product" in b.attrs for b in page.blocks])
    assert (keep & images).any() and (keep & ~images).any()
    probs = np.full(len(page.blocks), 0.9)
    _as(kind, monkeypatch)
    assert (page_kind_rules(page, keep, probs) == (keep & ~images)).all()
    written = dataclasses.replace(page, images=True)
    assert (page_kind_rules(written, keep, probs) == keep).all()
    reviews = blockdex.segment(REVIEWS, url="https://shop.example/c/stoves")
    kept = np.array([b.tag in ("h1", "p") for b in reviews.blocks])
    assert (page_kind_rules(reviews, kept, np.full(len(reviews.blocks), 0.9)) == kept).all()


def test_reviews_alone_give_way_to_the_product(monkeypatch) -> None:
    # the model, which learned from articles, kept the buyers' prose and none of the product's
    _as("product", monkeypatch)
    page = blockdex.segment(REVIEWS, url="https://shop.example/p/pocket-trail-stove")
    keep = np.array(["review" in b.attrs for b in page.blocks])
    assert keep.any()
    probs = np.array([0.9 if k else 0.02 for k in keep])
    for b in page.blocks:
        if b.tag in ("h1", "p") and not keep[b.index]:
            probs[b.index] = 0.3 if b.tag == "p" else 0.16
    kept = _texts(page, page_kind_rules(page, keep, probs))
    assert kept[0] == "Pocket trail stove" and any(t.startswith("Weighs 45 grams") for t in kept)
    assert not any("windy ridge" in t or "Home" in t or "Trail Shop" in t for t in kept)
    # at REVIEWS_ONLY_SHARE of the best block outside the reviews: the headline at 0.14 is not
    probs[[b.index for b in page.blocks if b.tag == "h1"]] = 0.14
    assert "Pocket trail stove" not in _texts(page, page_kind_rules(page, keep, probs))
    _as("article", monkeypatch)  # on an article the comments option decides
    assert (page_kind_rules(page, keep, probs) == keep).all()


def test_reviews_alone_stay_when_the_page_has_nothing_else(monkeypatch) -> None:
    _as("product", monkeypatch)
    html = '<html><body><div class="reviews"><p>Great stove, light and quick.</p>'
    html += "<p>Bends if you overtighten it.</p></div></body></html>"
    page = blockdex.segment(html, url="https://shop.example/p/stove/reviews")
    keep = np.ones(len(page.blocks), dtype=bool)
    assert all("review" in b.attrs for b in page.blocks)
    assert (page_kind_rules(page, keep, np.full(len(page.blocks), 0.9)) == keep).all()


RAIL = REVIEWS.replace(
    '<section class="customer-reviews">',
    '<section class="also-viewed"><h2>Customers also viewed</h2><ul class="cards">'
    + "".join(
        f'<li class="card"><a href="/p/{n}"><div class="name">{name}</div>'
        f'<div class="price">{price}</div></a></li>'
        for n, (name, price) in enumerate(
            [("Windproof gas stove with piezo", "$54.00"), ("Compact alcohol burner", "€21.50"),
             ("Two-burner base camp stove", "£99.00"), ("Titanium pot, 750 ml", "$32.00")]
        )
    )
    + "</ul></section>"
    + '<ul class="specs">'
    + "".join(
        f'<li class="spec"><div class="k">{k}</div><div class="v">{v}</div></li>'
        for k, v in [("Weight", "45 g"), ("Fuel", "gas canister"), ("Output", "2.6 kW")]
    )
    + '</ul><section class="customer-reviews">',
)  # fmt: skip


def test_a_rail_of_other_products_is_dropped(monkeypatch) -> None:
    page = blockdex.segment(RAIL, url="https://shop.example/p/pocket-trail-stove")
    rail = np.array(["card" in b.attrs for b in page.blocks])
    specs = np.array(["spec" in b.attrs for b in page.blocks])
    assert rail.sum() >= 4 and specs.sum() >= 3
    keep = np.array([b.tag != "li" or "review" not in b.attrs for b in page.blocks])
    keep &= np.array(["review" not in b.attrs for b in page.blocks])
    probs = np.full(len(page.blocks), 0.9)
    _as("product", monkeypatch)
    ruled = page_kind_rules(page, keep, probs)
    assert not ruled[rail].any()  # the priced cards go
    assert (ruled[specs] == keep[specs]).all() and ruled[specs].any()  # the specifications stay
    assert (ruled[~rail] == keep[~rail]).all()
    only_rail = rail.copy()  # unless nothing would be left
    assert (page_kind_rules(page, only_rail, probs) == only_rail).all()
    for kind in ("article", "collection", "listing"):  # on a shop's grid the cards are the page
        _as(kind, monkeypatch)
        assert (page_kind_rules(page, keep, probs)[rail] == keep[rail]).all()


def test_the_rules_are_on_by_default_and_can_be_left_out() -> None:
    assert ContentPredictor().kinds is True
    page = blockdex.segment(GRID, url=GRID_URL)
    off = ContentPredictor(kinds=False).predict(page)
    assert off.indices  # the model alone already reads this hand-made grid
    on = set(ContentPredictor().predict(page).indices)
    images = {b.index for b in page.blocks if b.tag == "img"}
    assert set(off.indices) - images <= on and on != set(off.indices)


@pytest.mark.parametrize(
    "attrs",
    ["", "review", "customer-reviews | main", "star-rating", "rating", "testimonials-grid",
     "Review", "RATING", "revie w", "rat ing", "testimonia", "preview-pane", "grating",
     "product-info | description", "reviewer | ratings-summary"],
)  # fmt: skip
def test_the_review_check_is_a_search_for_the_review_words(attrs: str) -> None:
    blocks = (Block(index=0, tag="p", html="", text="x", attrs=attrs),)
    reviews = _kinds_c.kept_marks(block_ids(blocks), [0], _kinds_c.REVIEWS)[1]
    assert (reviews == [0]) == any(w in attrs for w in REVIEW_WORDS)


SERVICE = """<html><head><title>Window cleaning</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> <a href="/contact">Contact</a></nav>
<main><h1>Window cleaning for offices</h1>
<p class="hero">Streak-free glass on every floor, cleaned before your staff arrive.</p>
<h2>What we clean</h2><p class="feature">Outside panes by rope access up to twenty floors.</p>
<h2>Prices</h2><p class="price">From 2 EUR a pane, billed monthly, no contract.</p>
<img src="/team.jpg" alt="Our team at work">
<h2>Questions</h2><p class="faq">Do you work at night? Yes, between 6 pm and 6 am.</p>
</main><footer><p>Call us on 0123 456 789.</p></footer></body></html>"""


def test_a_service_pages_sections_between_the_kept_ones_are_kept(monkeypatch) -> None:
    from blockdex.predict.kinds import SERVICE_MIN_PROB

    monkeypatch.setattr(kinds, "COLUMN_KINDS", frozenset())  # the main column's rule apart
    page = blockdex.segment(SERVICE, url="https://clean.example/services/windows")
    texts = [b.text for b in page.blocks]
    first = texts.index("Streak-free glass on every floor, cleaned before your staff arrive.")
    last = texts.index("Do you work at night? Yes, between 6 pm and 6 am.")
    keep = np.zeros(len(texts), dtype=bool)
    keep[[first, last]] = True
    probs = np.where(keep, 0.9, SERVICE_MIN_PROB)  # every block near the line, images too
    probs[texts.index("Call us on 0123 456 789.")] = SERVICE_MIN_PROB
    probs[texts.index("Home About Contact")] = SERVICE_MIN_PROB
    _as("service", monkeypatch)
    ruled = page_kind_rules(page, keep, probs)
    kept = _texts(page, ruled)
    assert "Prices" in kept and "From 2 EUR a pane, billed monthly, no contract." in kept
    assert "Our team at work" not in kept  # an image is not a section
    assert "Call us on 0123 456 789." not in kept and "Home About Contact" not in kept  # outside
    below = probs.copy()
    below[~keep] = SERVICE_MIN_PROB - 0.01
    assert (page_kind_rules(page, keep, below) == keep).all()
    # one heading's word beside everything else kept: too little to ask the page type for
    nearly = ruled.copy()
    nearly[texts.index("Prices")] = False
    assert (page_kind_rules(page, nearly, probs) == nearly).all()
    for kind in ("article", "product", "documentation"):
        _as(kind, monkeypatch)
        assert (page_kind_rules(page, keep, probs) == keep).all()


COLUMN = """<html><head><title>Harbour surveys</title></head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> <a href="/contact">Contact</a></nav>
<div class="page"><main class="content">
<section class="hero"><h1>Harbour surveys</h1>
<p>Depth surveys of harbours, marinas and channels, delivered as charts within a week.</p>
<a class="button" href="/quote">Get a quote</a></section>
<section class="how"><h2>How we survey</h2>
<p>A multibeam sonar boat maps the bottom to ten centimetres, tied to the local chart datum.</p>
<p>Every survey is checked by a hydrographer before the charts leave the office.</p></section>
<section class="team"><h2>Our surveyors</h2>
<div class="person"><h3>Ailsa Grant</h3><p>Chief hydrographer</p></div>
<div class="person"><h3>Rory Bell</h3><p>Sonar operator</p></div></section>
<section class="faq"><h2>Questions</h2>
<p>How soon can you start? Most surveys start within two weeks of the order.</p></section>
</main>
<aside class="sidebar"><h2>Latest news</h2><p>We opened an office in Bergen this spring, our third in the North Sea.</p></aside>
</div>
<footer><p>Call us on 0123 456 789.</p></footer></body></html>"""


def test_a_service_pages_main_column_is_kept(monkeypatch) -> None:
    page = blockdex.segment(COLUMN, url="https://survey.example/services/harbours")
    texts = [b.text for b in page.blocks]
    keep = np.array([t.startswith(("Depth surveys", "A multibeam", "Every survey")) for t in texts])
    assert keep.sum() == 3
    probs = np.where(keep, 0.9, kinds.COLUMN_MIN_PROB)  # every other block just at the line
    _as("service", monkeypatch)
    kept = _texts(page, page_kind_rules(page, keep, probs))
    for text in (
        "Harbour surveys",
        "Our surveyors",
        "Ailsa Grant",
        "Chief hydrographer",
        "How soon can you start? Most surveys start within two weeks of the order.",
    ):
        assert text in kept  # fmt: skip
    assert "Get a quote" not in kept  # a button
    assert not any("Bergen" in t or "0123" in t or "Home" in t for t in kept)  # outside main
    below = np.where(keep, 0.9, kinds.COLUMN_MIN_PROB - 0.01)
    assert (page_kind_rules(page, keep, below) == keep).all()
    for kind in ("article", "product", "forum", "collection", "listing"):
        _as(kind, monkeypatch)
        assert (page_kind_rules(page, keep, probs) == keep).all()
    _as("documentation", monkeypatch)
    assert "Ailsa Grant" in _texts(page, page_kind_rules(page, keep, probs))


def test_a_column_that_is_the_whole_page_adds_nothing(monkeypatch) -> None:
    # the kept words' element holds nearly all the page's words: it is the page, not a column
    page = blockdex.segment(COLUMN, url="https://survey.example/services/harbours")
    texts = [b.text for b in page.blocks]
    keep = np.array([t.startswith(("Depth surveys", "We opened an office")) for t in texts])
    probs = np.where(keep, 0.9, 0.5)
    _as("service", monkeypatch)
    monkeypatch.setattr(kinds, "SERVICE_MIN_PROB", 1.0)  # the sections' rule apart
    monkeypatch.setattr(kinds, "TEMPLATE_KINDS", frozenset())  # and the template's
    assert (page_kind_rules(page, keep, probs) == keep).all()


def test_a_slice_of_a_page_gets_a_type_and_the_rules_without_reading_past_it(monkeypatch) -> None:
    # a query naming one article runs the main-content decision on that slice of the page; the
    # slice keeps the whole page's item lists, in block indices, reaching past its ends
    from blockdex.pagetype import classify_page

    page = blockdex.segment(GRID, url=GRID_URL)
    n = len(page.blocks)
    lists = page.item_lists
    assert lists and lists[0].items[-1][1] >= n // 2
    for start, stop in [(0, n // 2), (3, n), (n // 3, n - 2), (n // 2, n // 2 + 3)]:
        part = page.slice(start, stop)
        assert classify_page(part).label  # no IndexError
        probs = np.full(len(part.blocks), 0.4)
        keep = np.zeros(len(part.blocks), dtype=bool)
        keep[0] = True
        for kind in ("collection", "product", "service"):
            _as(kind, monkeypatch)
            ruled = page_kind_rules(part, keep, probs)
            assert ruled.shape == keep.shape and ruled[0]


def test_a_threads_posts_written_like_the_kept_one_are_kept(monkeypatch) -> None:
    from blockdex.predict.kinds import TEMPLATE_MIN_PROB

    html = (KINDS / "forum_thread.html").read_text(encoding="utf-8")
    page = blockdex.segment(html, url="https://forum.example/t/4411")
    texts = [b.text for b in page.blocks]
    first = next(i for i, t in enumerate(texts) if t.startswith("We spent two nights"))
    answer = next(i for i, t in enumerate(texts) if t.startswith("A 16 kg Delta"))
    thanks = next(i for i, t in enumerate(texts) if t.startswith("Thanks both"))
    keep = np.zeros(len(texts), dtype=bool)
    keep[first] = True
    probs = np.full(len(texts), 0.02)
    probs[first] = 0.9
    probs[answer] = 0.3  # a reply the model scored under its threshold
    probs[thanks] = TEMPLATE_MIN_PROB - 0.01  # too unsure even for a post's template
    probs[texts.index("Best anchor for kelp and weed?")] = 0.5  # another template
    _as("forum", monkeypatch)
    kept = _texts(page, page_kind_rules(page, keep, probs))
    assert texts[answer] in kept and texts[first] in kept
    assert texts[thanks] not in kept
    assert "Best anchor for kelp and weed?" not in kept
    # the post bodies' ids differ by their numbers only (post-101, post-103)
    assert page.blocks[first].attrs != page.blocks[answer].attrs
    # what it would add must hold TEMPLATE_MIN_ADDED of the kept words (here the reply holds
    # fewer words than the kept post)
    monkeypatch.setattr("blockdex.predict.kinds.TEMPLATE_MIN_ADDED", 1.0)
    assert (page_kind_rules(page, keep, probs) == keep).all()
    for kind in ("article", "product"):  # (on a listing the list rule reads the posts)
        _as(kind, monkeypatch)
        assert (page_kind_rules(page, keep, probs) == keep).all()


def test_a_threads_quote_of_an_earlier_post_is_written_once(monkeypatch) -> None:
    html = (KINDS / "forum_thread.html").read_text(encoding="utf-8")
    page = blockdex.segment(html, url="https://forum.example/t/4411")
    texts = [b.text for b in page.blocks]
    quote = texts.index("Is the holding known to be poor on the east side")
    keep = np.array([b.tag in ("p", "blockquote") and "post-body" in b.attrs for b in page.blocks])
    assert keep[quote] and page.blocks[quote].tag == "blockquote"
    probs = np.where(keep, 0.9, 0.02)
    _as("forum", monkeypatch)
    ruled = page_kind_rules(page, keep, probs)
    assert not ruled[quote]  # the first post, kept above it, says it already
    assert (ruled | (np.arange(len(keep)) == quote) == keep).all()  # nothing else changes
    later = keep.copy()
    later[:quote] = False  # the quoted post not kept: the quote is the thread's only copy
    assert (page_kind_rules(page, later, np.where(later, 0.9, 0.02)) == later).all()
    _as("article", monkeypatch)  # a pull quote in an article is the article's to keep
    assert (page_kind_rules(page, keep, probs) == keep).all()


# -- the compiled readers of the rules, against what they state (``predict/_kinds_c.pyx``) --------

_ATTR_WORDS = ["review", "rating", "testimonial", "quote", "Quote", "QUOTE", "main", "revie"]
_attrs = st.lists(st.sampled_from(_ATTR_WORDS), max_size=3).map(" ".join)
_blocks = st.lists(
    st.tuples(
        st.sampled_from(["p", "img", "blockquote", "li", "h2"]),
        _attrs,
        st.sampled_from(["body>div>p", "body>blockquote>p", "div>blockquoted>p", "main>ul>li"]),
        st.text(alphabet="ab $€£¥₹₩₽x", max_size=8),
        st.lists(st.integers(1, 6), max_size=4, unique=True).map(tuple),
    ),
    min_size=1,
    max_size=12,
).map(
    lambda rows: tuple(
        Block(index=k, tag=t, html="", text=x, path=p, attrs=a, scope=s)
        for k, (t, a, p, x, s) in enumerate(rows)
    )
)


@settings(max_examples=200, deadline=None)
@given(_blocks, st.data())
def test_kept_marks_are_the_tag_review_and_quote_tests(blocks: tuple[Block, ...], data) -> None:
    kept = sorted(data.draw(st.sets(st.integers(0, len(blocks) - 1))))
    images, reviews, quotes = _kinds_c.kept_marks(
        block_ids(blocks), kept, _kinds_c.IMAGES | _kinds_c.REVIEWS | _kinds_c.QUOTES
    )
    assert images == [i for i in kept if blocks[i].tag == "img"]
    assert reviews == [i for i in kept if any(w in blocks[i].attrs for w in REVIEW_WORDS)]
    assert quotes == [
        i
        for i in kept
        if blocks[i].tag == "blockquote"
        or "blockquote" in blocks[i].path
        or "quote" in blocks[i].attrs
        or "Quote" in blocks[i].attrs
    ]
    assert _kinds_c.kept_marks(block_ids(blocks), kept, _kinds_c.REVIEWS)[0::2] == ([], [])


@settings(max_examples=200, deadline=None)
@given(_blocks, st.data())
def test_unpriced_items_count_the_items_without_a_currency_sign(
    blocks: tuple[Block, ...], data
) -> None:
    cuts = sorted(data.draw(st.sets(st.integers(0, len(blocks) - 1), min_size=1)))
    items = [(a, b - 1) for a, b in zip(cuts, [*cuts[1:], len(blocks)], strict=True)]
    allowed = data.draw(st.integers(0, len(items)))
    unpriced = sum(not any(PRICE_RE.search(b.text) for b in blocks[s : e + 1]) for s, e in items)
    found = _kinds_c.unpriced_items(block_ids(blocks), items, PRICE_SIGNS, allowed)
    assert found == (unpriced if unpriced <= allowed else allowed + 1)


@settings(max_examples=200, deadline=None)
@given(_blocks, st.data())
def test_the_column_is_the_nearest_element_holding_the_share(
    blocks: tuple[Block, ...], data
) -> None:
    scopes = [b.scope for b in blocks]
    weights = [float(w) for w in data.draw(st.lists(st.integers(0, 9), min_size=len(blocks),
                                                    max_size=len(blocks)))]  # fmt: skip
    need = data.draw(st.floats(0.0, 60.0))
    heaviest = max(range(len(blocks)), key=weights.__getitem__)
    expected = next(
        (
            e
            for e in reversed(scopes[heaviest])
            if sum(w for s, w in zip(scopes, weights, strict=True) if e in s) >= need
        ),
        None,
    )
    table = block_ids(blocks)
    kept = list(range(len(blocks)))
    assert _kinds_c.column_of(table, kept, weights, need, heaviest) == expected
    element = data.draw(st.integers(1, 6))
    inside = np.frombuffer(_kinds_c.blocks_in(table, element), dtype=bool)
    assert inside.tolist() == [element in s for s in scopes]
