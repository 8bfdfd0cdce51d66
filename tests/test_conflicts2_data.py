"""Shape of eval/conflicts2: two more fictional products, each with 5 planted conflicts, 4 controls
and 3 plain tickets.

Ids map to sources as in the other product sets: an article's id is its front-matter `id`, which
must equal the file stem under `kb/`; a resolved ticket's id is its `id` in `resolved.jsonl`, and
its text is the question and the answer together.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from product_sets import TICKET_FIELDS, read_jsonl, split_article

BASE = Path(__file__).resolve().parents[1] / "eval" / "conflicts2"

#: Product folder -> split of all its tickets (both products are test data).
PRODUCTS = {"plotwise": "test", "tuftwagon": "test"}

RESOLVED_FIELDS = frozenset({"id", "question", "answer", "linked_docs"})

#: Controls about a different subject that sounds alike: the look-alike value and where it is.
DISTRACTORS = {
    "AL-008": ("kb-rent-and-billing", "30 days"),
    "AL-009": ("kb-rootstick-probes", "45 minutes"),
    "GV-009": ("kb-reminders-and-messages", "8 weeks"),
}


def articles(product: str) -> dict[str, str]:
    found = {}
    for path in sorted((BASE / product / "kb").glob("*.md")):
        meta, body = split_article(path)
        assert set(meta) == {"id", "title"}, path
        assert meta["id"] == path.stem, path
        found[path.stem] = body
    return found


def resolved(product: str) -> list[dict[str, Any]]:
    return read_jsonl(BASE / product / "resolved.jsonl")


def tickets(product: str) -> list[dict[str, Any]]:
    return read_jsonl(BASE / product / "tickets.jsonl")


def sources(product: str) -> dict[str, str]:
    texts = dict(articles(product))
    for row in resolved(product):
        texts[row["id"]] = f"{row['question']}\n{row['answer']}"
    return texts


def has(text: str, value: str) -> bool:
    """Case-insensitive substring, as the eval's key-fact check."""
    return value.casefold() in text.casefold()


def has_value(text: str, value: str) -> bool:
    """The value as a value of its own, not part of a longer number or word (5 kg is not in
    4.5 kg)."""
    return re.search(rf"(?<![\w.]){re.escape(value)}(?!\w)", text, re.I) is not None


def is_control(ticket: dict[str, Any]) -> bool:
    return bool(ticket["notes"].startswith("control:"))


def kind_of(ticket: dict[str, Any]) -> str:
    if ticket["conflict"] is not None:
        return "conflict"
    return "control" if is_control(ticket) else "plain"


@pytest.mark.parametrize("product", PRODUCTS)
def test_articles_are_markdown_with_headings_and_length(product: str) -> None:
    found = articles(product)
    assert 6 <= len(found) <= 8, (product, len(found))
    for doc_id, body in found.items():
        assert body.lstrip().startswith("# "), doc_id
        assert len(re.findall(r"^## \S", body, re.M)) >= 2, doc_id
        assert 150 <= len(body.split()) <= 500, (product, doc_id, len(body.split()))


@pytest.mark.parametrize("product", PRODUCTS)
def test_resolved_tickets_have_the_fields_and_link_existing_articles(product: str) -> None:
    rows = resolved(product)
    known = articles(product)
    assert 8 <= len(rows) <= 10, (product, len(rows))
    ids = [row["id"] for row in rows]
    assert len(set(ids)) == len(ids), "repeated resolved ids"
    assert not set(ids) & set(known), "a resolved id equals an article id"
    for row in rows:
        assert set(row) == RESOLVED_FIELDS, row.get("id")
        assert row["question"].strip() and row["answer"].strip(), row["id"]
        assert row["linked_docs"] and set(row["linked_docs"]) <= set(known), row["id"]


@pytest.mark.parametrize("product", PRODUCTS)
def test_tickets_have_the_fields_and_existing_docs(product: str) -> None:
    rows = tickets(product)
    known = sources(product)
    assert len(rows) == 12, (product, len(rows))
    ids = [row["id"] for row in rows]
    assert len(set(ids)) == len(ids), "repeated ticket ids"
    for ticket in rows:
        where = ticket["id"]
        assert set(ticket) == TICKET_FIELDS, where
        assert ticket["expected_bucket"] == "answerable", where
        assert ticket["expected_safety"] is None, where
        assert ticket["expected_reason"] == "question", where
        assert ticket["language"] == "en", where
        assert ticket["split"] == PRODUCTS[product], where
        assert ticket["subject"].strip() and ticket["body"].strip(), where
        assert ticket["notes"].strip(), where
        docs = ticket["expected_docs"]
        assert docs and len(set(docs)) == len(docs), where
        assert all("#" not in doc for doc in docs), where
        assert set(docs) <= set(known), (where, set(docs) - set(known))
        facts = ticket["expected_facts"]
        assert facts and all(isinstance(group, list) and group for group in facts), where
        assert all(isinstance(alt, str) and alt.strip() for group in facts for alt in group), where


@pytest.mark.parametrize("product", PRODUCTS)
def test_every_fact_alternative_is_in_an_expected_doc_and_not_in_the_ticket(product: str) -> None:
    known = sources(product)
    for ticket in tickets(product):
        texts = [known[doc] for doc in ticket["expected_docs"]]
        asked = f"{ticket['subject']}\n{ticket['body']}"
        for group in ticket["expected_facts"]:
            for alt in group:
                assert any(has(text, alt) for text in texts), (ticket["id"], alt)
                assert not has(asked, alt), (ticket["id"], alt, "given away in the ticket")


@pytest.mark.parametrize("product", PRODUCTS)
def test_five_conflicts_four_controls_three_plain(product: str) -> None:
    rows = tickets(product)
    kinds = [kind_of(ticket) for ticket in rows]
    assert kinds.count("conflict") == 5, product
    assert kinds.count("control") == 4, product
    assert kinds.count("plain") == 3, product
    slugs = [ticket["conflict"] for ticket in rows if ticket["conflict"] is not None]
    assert len(set(slugs)) == 5, slugs
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", slug) for slug in slugs), slugs


@pytest.mark.parametrize("product", PRODUCTS)
def test_conflicts_put_one_value_in_each_source(product: str) -> None:
    known = sources(product)
    for ticket in tickets(product):
        if ticket["conflict"] is None:
            continue
        where = ticket["id"]
        assert ticket["notes"].startswith("conflict:"), where
        docs, groups = ticket["expected_docs"], ticket["expected_facts"]
        assert len(docs) == 2 and len(groups) == 2, where
        for side, group in enumerate(groups):
            own, other = known[docs[side]], known[docs[1 - side]]
            # each side's value is in its own source, and only there
            assert all(has(own, alt) for alt in group), (where, side)
            assert not any(has_value(other, alt) for alt in group), (where, side, "in both sources")
        first, second = groups
        assert not {alt.casefold() for alt in first} & {alt.casefold() for alt in second}, where


@pytest.mark.parametrize("product", PRODUCTS)
def test_controls_agree_in_other_words_or_are_about_another_subject(product: str) -> None:
    known = sources(product)
    for ticket in tickets(product):
        if not is_control(ticket):
            continue
        where = ticket["id"]
        assert ticket["conflict"] is None, where
        docs = ticket["expected_docs"]
        if len(docs) == 2:
            # two sources, the same value, different words in each
            for group in ticket["expected_facts"]:
                in_first = {alt for alt in group if has(known[docs[0]], alt)}
                in_second = {alt for alt in group if has(known[docs[1]], alt)}
                assert in_first and in_second, (where, group)
                assert not in_first & in_second, (where, group, "worded the same")
            assert where not in DISTRACTORS, where
        else:
            assert len(docs) == 1, where
            doc, value = DISTRACTORS[where]
            assert has_value(known[doc], value), (where, doc, value)
            facts = ticket["expected_facts"]
            assert not any(has(value, alt) for group in facts for alt in group), where
            assert value in ticket["notes"] and doc in ticket["notes"], where


@pytest.mark.parametrize("product", PRODUCTS)
def test_plain_tickets_have_one_source(product: str) -> None:
    for ticket in tickets(product):
        if kind_of(ticket) == "plain":
            assert len(ticket["expected_docs"]) == 1, ticket["id"]
            assert not ticket["notes"].startswith(("conflict:", "control:")), ticket["id"]


def test_ids_and_conflict_slugs_are_unique_across_products() -> None:
    ticket_ids: list[str] = []
    resolved_ids: list[str] = []
    slugs: list[str] = []
    for product in PRODUCTS:
        rows = tickets(product)
        ticket_ids += [row["id"] for row in rows]
        resolved_ids += [row["id"] for row in resolved(product)]
        slugs += [row["conflict"] for row in rows if row["conflict"] is not None]
    assert len(set(ticket_ids)) == len(ticket_ids) == 24
    assert len(set(resolved_ids)) == len(resolved_ids)
    assert len(set(slugs)) == len(slugs) == 10
    assert set(DISTRACTORS) <= set(ticket_ids)


def test_only_the_two_products_are_present() -> None:
    folders = {path.name for path in BASE.iterdir() if path.is_dir()}
    assert folders == set(PRODUCTS), folders


@pytest.mark.parametrize("product", PRODUCTS)
def test_articles_have_numbered_steps_and_200_to_290_words(product: str) -> None:
    for doc_id, body in articles(product).items():
        assert re.search(r"^1\. .*\n2\. ", body, re.M), (product, doc_id)
        assert 200 <= len(body.split()) <= 290, (product, doc_id, len(body.split()))


@pytest.mark.parametrize("product", PRODUCTS)
def test_hosts_are_on_the_reserved_example_domain(product: str) -> None:
    texts = list(sources(product).values())
    texts += [f"{t['subject']}\n{t['body']}" for t in tickets(product)]
    for text in texts:
        for host in re.findall(r"\b(?:[a-z][a-z0-9-]*\.)+[a-z]{2,}\b", text, re.I):
            assert host.lower().endswith(".example"), host


def test_ids_and_slugs_do_not_clash_with_the_first_conflicts_set() -> None:
    first = BASE.parent / "conflicts"
    old_tickets = [row for path in first.glob("*/tickets.jsonl") for row in read_jsonl(path)]
    old_resolved = {
        row["id"] for path in first.glob("*/resolved.jsonl") for row in read_jsonl(path)
    }
    old_slugs = {row["conflict"] for row in old_tickets if row["conflict"] is not None}
    old_prefixes = {row["id"].split("-")[0] for row in old_tickets}
    for product in PRODUCTS:
        for row in tickets(product):
            assert row["id"].split("-")[0] not in old_prefixes, row["id"]
            assert row["conflict"] not in old_slugs, row["conflict"]
        assert not {row["id"] for row in resolved(product)} & old_resolved, product
