"""Pages made of many items (issue 41): item lists as units, what each kind of page keeps, and
how its Markdown is written. Hand-made pages in ``tests/data/kinds``: a product grid, a
search-result list, a forum thread, a product page whose price lives only in JSON-LD, a service
page of sections and an article with a captioned figure."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blockdex
from blockdex.evaluate.datasets import load_dataset
from blockdex.extract import Extractor
from blockdex.ids import page_ids
from blockdex.items import (
    block_words,
    class_signature,
    find_item_lists,
    item_columns,
    item_slot_groups,
    page_block_words,
)

KINDS = Path(__file__).parent / "data" / "kinds"


def _html(name: str) -> str:
    return (KINDS / f"{name}.html").read_text(encoding="utf-8")


def _list_of(page: blockdex.Page, first_text: str) -> list[str]:
    """The first lines of the items of the item list whose first item starts with
    ``first_text``."""
    for unit in page.units:
        if unit.kind == "items" and page.by_index(unit.start).text.startswith(first_text):
            items = [u for u in page.units if u.kind == "item" and u.parent == unit.id]
            return [u.title for u in items]
    raise AssertionError(f"no item list starts with {first_text!r}")


def first_card(page: blockdex.Page) -> int:
    return next(b.index for b in page.blocks if b.text == "Ridgeline GTX")


# -- finding item lists ------------------------------------------------------------------------


def test_a_product_grid_is_one_item_list_with_a_unit_per_card() -> None:
    page = blockdex.segment(_html("product_grid"))
    assert _list_of(page, "Ridgeline GTX") == [
        "Ridgeline GTX",
        "Fellrunner Mid",
        "Moorland Classic",
        "Trailhead Vegan",
        "Summit Pro",
        "Dales Walker",
    ]
    grid = next(u for u in page.units if u.kind == "items" and u.holds(first_card(page)))
    cards = [u for u in page.units if u.parent == grid.id]
    assert all(u.kind == "item" and grid.contains(u) for u in cards)
    # each card holds its title, blurb and price
    first = cards[0]
    texts = [page.by_index(i).text for i in range(first.start, first.end + 1)]
    assert "€189.00" in texts and "Ridgeline GTX" in texts


def test_the_words_of_a_pages_blocks_are_counted_once_and_kept_with_its_ids() -> None:
    page = blockdex.segment(_html("product_grid"))
    words = page_block_words(page)
    assert page_ids(page).block_words is words and page_block_words(page) is words  # kept
    assert not words.flags.writeable
    assert words.tolist() == block_words(page.blocks).tolist()
    assert words.tolist() == [float(len(b.text.split(" "))) if b.text else 0.0 for b in page.blocks]
    sub = page.slice(2, 7)  # a slice counts its own
    assert page_block_words(sub).tolist() == words[2:7].tolist()


def test_menus_of_short_links_are_not_item_lists() -> None:
    page = blockdex.segment(_html("product_grid"))
    listed = {page.by_index(i).text for lst in page.item_lists for s, _ in lst.items for i in [s]}
    assert "Boots" not in listed and "Waterproof" not in listed and "Delivery" not in listed


def test_results_posts_and_sections_are_item_lists() -> None:
    results = blockdex.segment(_html("search_results"))
    assert _list_of(results, "How to read a tide table")[:2] == [
        "How to read a tide table",
        "Tide tables for small harbours",
    ]
    forum = blockdex.segment(_html("forum_thread"))
    posts = _list_of(forum, "skerryhopper")
    assert len(posts) == 4 and posts[1].startswith("ardnamurchan_al")
    service = blockdex.segment(_html("service_page"))
    assert _list_of(service, "Mooring") == ["Mooring", "Marina", "Port"]
    assert _list_of(service, "Do I need my own gauge?")[2] == "Does it work outside Europe?"


def test_a_grid_laid_out_in_rows_is_one_list_of_cards() -> None:
    cards = "".join(
        f'<div class="card"><h3>Boot {r}{c}</h3><p>A sturdy boot, model {r}{c}.</p>'
        f"<p>€{100 + 10 * r + c}.00</p></div>"
        for c in range(3)
        for r in [0]
    )
    rows = "".join(
        '<div class="row">'
        + "".join(
            f'<div class="card"><h3>Boot {r}{c}</h3><p>A sturdy boot, model {r}{c}.</p>'
            f"<p>€{100 + 10 * r + c}.00</p></div>"
            for c in range(3)
        )
        + "</div>"
        for r in range(3)
    )
    assert cards
    page = blockdex.segment(
        f"<html><body><h1>Boots</h1><div class='grid'>{rows}</div></body></html>"
    )
    lists = find_item_lists(page.blocks)
    assert [len(lst.items) for lst in lists] == [9]
    assert lists[0].depth == 2 and lists[0].signature == "div.card"


def test_item_units_are_in_the_json_output() -> None:
    doc = json.loads(Extractor().extract(_html("product_grid"), output="json"))
    kinds = [u["kind"] for u in doc["units"]]
    assert kinds.count("items") >= 1 and kinds.count("item") >= 6
    card = next(u for u in doc["units"] if u["kind"] == "item" and u["title"] == "Summit Pro")
    assert card["source"] == "template" and doc["units"][card["parent"]]["kind"] == "items"


def test_item_columns_mark_the_blocks_of_a_list() -> None:
    page = blockdex.segment(_html("product_grid"))
    cols, slots = item_columns(page)
    price = [i for i, b in enumerate(page.blocks) if re.fullmatch(r"€\d+\.00", b.text)]
    assert len(price) == 6
    assert (cols[price, 0] == 1).all()  # in an item
    assert (cols[price, 5] == 1).all()  # every card has a price in that slot
    assert len(set(slots[price].tolist())) == 1  # one slot for all six prices
    intro = next(i for i, b in enumerate(page.blocks) if b.text.startswith("Boots for long days"))
    assert cols[intro, 0] == 0 and slots[intro] not in set(slots[price].tolist())
    assert item_slot_groups(page).tolist() == slots.tolist()


@pytest.mark.dataset
def test_slot_groups_alone_are_the_item_columns_groups(shared_data) -> None:
    """The page-kind rules ask for the slot groups without the columns: the same groups, on
    whole pages and on slices of them (items cut to the slice)."""
    seen = 0
    for name in ("wcxb", "scrapinghub-aeb"):
        for p in load_dataset(name, limit=40):
            page = blockdex.segment(p.html, url=p.url)
            for part in (page, page.slice(len(page.blocks) // 3, len(page.blocks))):
                if not part.blocks:
                    continue
                _, slots = item_columns(part)
                assert item_slot_groups(part).tolist() == slots.tolist(), f"{name} {p.id}"
                seen += len(set(slots.tolist())) < len(part.blocks)
                # the groups of some blocks only (every third block of the largest list)
                lists = sorted(part.item_lists, key=lambda lst: -lst.words)[:1]
                first = part.blocks[0].index
                among = [
                    i - first
                    for lst in lists
                    for s, e in lst.items
                    for i in range(s, e + 1)
                    if 0 <= i - first < len(part.blocks)
                ][::3]
                some = item_slot_groups(part, among)
                for i in among:
                    assert (some == some[i]).tolist() == (slots == slots[i]).tolist()
    assert seen >= 20  # pages whose lists make groups of several blocks


# -- Markdown of items -------------------------------------------------------------------------


def test_a_collection_is_written_one_entry_per_item() -> None:
    md = Extractor().extract(_html("product_grid"))
    entries = [line for line in md.splitlines() if line.startswith("- ")]
    assert entries[0] == (
        "- **Ridgeline GTX** · Waterproof leather boot with a Vibram sole for rocky trails. · €189.00"
    )
    assert len(entries) == 6 and "Add to basket" not in md and "Waterproof\n" not in md


def test_search_results_are_one_entry_per_result_with_links() -> None:
    md = blockdex.extract(
        _html("search_results"), url="https://harbournotes.example/search?q=tide+tables", links=True
    )
    first = next(line for line in md.splitlines() if "How to read a tide table" in line)
    assert first.startswith("1. **[How to read a tide table](https://harbournotes.example/")
    assert "12 March 2026" in first


def test_forum_posts_are_separated_each_with_its_author_and_date() -> None:
    md = Extractor().extract(_html("forum_thread"))
    posts = md.split("\n---\n")
    assert len(posts) == 4
    assert posts[1].strip().startswith("ardnamurchan_al 14 March 2026, 22:05")
    assert "> Is the holding known to be poor on the east side" in posts[1]


# -- what each kind of page keeps --------------------------------------------------------------


def test_a_product_page_gets_its_price_from_json_ld() -> None:
    md = Extractor().extract(_html("product_jsonld"))
    assert "- Price: 64.95 EUR" in md
    assert "- Availability: In stock" in md
    assert "- Rating: 4.7 out of 5 (212 reviews)" in md
    assert "Brand" not in md  # its name is on the page already
    doc = json.loads(Extractor().extract(_html("product_jsonld"), output="json"))
    facts = [b for b in doc["blocks"] if b.get("source") == "facts"]
    assert [b["text"] for b in facts] == [
        "Price: 64.95 EUR",
        "Availability: In stock",
        "Rating: 4.7 out of 5 (212 reviews)",
        "SKU: HM-40-NVY",
    ]


def test_a_price_the_page_shows_is_not_repeated() -> None:
    html = _html("product_jsonld").replace(
        '<div class="product-price" data-price-loader="HM-40-NVY"></div>',
        '<p class="product-price">€64.95</p>',
    )
    assert "Price:" not in Extractor().extract(html)


def test_a_page_of_several_products_gets_no_product_facts() -> None:
    html = (
        _html("product_jsonld")
        .replace(
            '{"@context"',
            '[{"@context": "https://schema.org", "@type": "Product", "name": "Other"}, {"@context"',
        )
        .replace('"212"}}\n</script>', '"212"}}]\n</script>')
    )
    assert "Price:" not in Extractor().extract(html)


def test_a_service_page_keeps_every_section_of_its_main_column() -> None:
    md = Extractor().extract(_html("service_page"))
    for needle in ("Live gauge readings", "€59 a month", "Does it work outside Europe?"):
        assert needle in md
    assert "Careers" not in md and "Sign in" not in md


@pytest.mark.parametrize("images", [False, True])
def test_a_captioned_figure_between_kept_paragraphs_is_kept(images: bool) -> None:
    md = blockdex.extract(
        _html("article_figure"), url="https://harbournotes.example/news/breakwater", images=images
    )
    assert "*Figure 1: Delay of low water at the fish quay gauge" in md
    if images:
        assert "![Chart of the delay of low water](https://harbournotes.example/charts/" in md
    assert "More news" not in md and "Regatta returns" not in md


def _signature_oracle(tag: str, attrs: str) -> str:
    """The template key as first written: ``re``'s ``\\d+`` folded, ``str.split``, sorted."""
    if not attrs:
        return tag
    return ".".join([tag, *sorted(set(re.sub(r"\d+", "#", attrs).split()))])


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["div", "li", "é", "x" * 300]),
    st.one_of(
        st.text(alphabet="ab19 -_\t\n\x0b\x1c\x1f\x85\xa0\u2003\u0663\uff12Z", max_size=40),
        st.text(alphabet="a1 ", min_size=250, max_size=270),  # the ASCII buffers' edge
        st.text(max_size=20),
    ),
)
def test_class_signature_equals_its_oracle(tag: str, attrs: str) -> None:
    """Digits of any script folded, ASCII and Unicode white space, repeated tokens, long
    attributes past the compiled code's ASCII buffers."""
    class_signature.cache_clear()
    assert class_signature(tag, attrs) == _signature_oracle(tag, attrs)


def test_class_signature_of_a_huge_attribute_equals_its_oracle() -> None:
    """Past the ASCII buffers, digits of other scripts in a long value: the general path."""
    for attrs in ("1a " * 100_000, "x\u0663y " * 50_000 + "card-12"):
        assert class_signature("div", attrs) == _signature_oracle("div", attrs)
