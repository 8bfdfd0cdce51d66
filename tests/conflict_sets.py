"""Checks shared by the conflict sets' data tests (`test_conflicts_data.py`,
`test_conflicts2_data.py` ... `test_conflicts5_data.py`): small fictional products, each with 5
planted conflicts, 4 controls and 3 plain tickets; and what the helper-written sets ask besides
(numbered steps and 200-290 words an article, hosts on `.example`, no id or slug of an earlier
set, and ids used nowhere else in `eval/`). A set's test module subclasses
:class:`ConflictSetChecks` or :class:`HelperWrittenSetChecks` with its own set, as the risk
sets' modules subclass the classes of `risk_sets.py`.

Ids map to sources as in the other product sets: an article's id is its front-matter `id`, which
must equal the file stem under `kb/`; a resolved ticket's id is its `id` in `resolved.jsonl`, and
its text is the question and the answer together.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from product_sets import TICKET_FIELDS, read_jsonl, split_article

EVAL = Path(__file__).resolve().parents[1] / "eval"

RESOLVED_FIELDS = frozenset({"id", "question", "answer", "linked_docs"})


@dataclass(frozen=True)
class ConflictSet:
    """One folder of conflict products: ``products`` maps each product folder to the split of
    all its tickets; ``distractors`` maps each control about a different subject that sounds
    alike to the look-alike value and the article it is in."""

    base: Path
    products: dict[str, str]
    distractors: dict[str, tuple[str, str]] = field(default_factory=dict)

    def articles(self, product: str) -> dict[str, str]:
        found = {}
        for path in sorted((self.base / product / "kb").glob("*.md")):
            meta, body = split_article(path)
            assert set(meta) == {"id", "title"}, path
            assert meta["id"] == path.stem, path
            found[path.stem] = body
        return found

    def resolved(self, product: str) -> list[dict[str, Any]]:
        return read_jsonl(self.base / product / "resolved.jsonl")

    def tickets(self, product: str) -> list[dict[str, Any]]:
        return read_jsonl(self.base / product / "tickets.jsonl")

    def sources(self, product: str) -> dict[str, str]:
        texts = dict(self.articles(product))
        for row in self.resolved(product):
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


def check_articles(cs: ConflictSet, product: str) -> None:
    """Markdown with a title, at least two sections and 150-500 words; 6-8 articles."""
    found = cs.articles(product)
    assert 6 <= len(found) <= 8, (product, len(found))
    for doc_id, body in found.items():
        assert body.lstrip().startswith("# "), doc_id
        assert len(re.findall(r"^## \S", body, re.M)) >= 2, doc_id
        assert 150 <= len(body.split()) <= 500, (product, doc_id, len(body.split()))


def check_resolved(cs: ConflictSet, product: str) -> None:
    """8-10 resolved tickets with the fields, each linking existing articles."""
    rows = cs.resolved(product)
    known = cs.articles(product)
    assert 8 <= len(rows) <= 10, (product, len(rows))
    ids = [row["id"] for row in rows]
    assert len(set(ids)) == len(ids), "repeated resolved ids"
    assert not set(ids) & set(known), "a resolved id equals an article id"
    for row in rows:
        assert set(row) == RESOLVED_FIELDS, row.get("id")
        assert row["question"].strip() and row["answer"].strip(), row["id"]
        assert row["linked_docs"] and set(row["linked_docs"]) <= set(known), row["id"]


def check_tickets(cs: ConflictSet, product: str) -> None:
    """12 tickets with exactly the product sets' fields, the product's split and existing
    expected documents."""
    rows = cs.tickets(product)
    known = cs.sources(product)
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
        assert ticket["split"] == cs.products[product], where
        assert ticket["subject"].strip() and ticket["body"].strip(), where
        assert ticket["notes"].strip(), where
        docs = ticket["expected_docs"]
        assert docs and len(set(docs)) == len(docs), where
        assert all("#" not in doc for doc in docs), where
        assert set(docs) <= set(known), (where, set(docs) - set(known))
        facts = ticket["expected_facts"]
        assert facts and all(isinstance(group, list) and group for group in facts), where
        assert all(isinstance(alt, str) and alt.strip() for group in facts for alt in group), where


def check_fact_alternatives(cs: ConflictSet, product: str) -> None:
    """Every alternative of a key fact is in an expected source and not in the ticket."""
    known = cs.sources(product)
    for ticket in cs.tickets(product):
        texts = [known[doc] for doc in ticket["expected_docs"]]
        asked = f"{ticket['subject']}\n{ticket['body']}"
        for group in ticket["expected_facts"]:
            for alt in group:
                assert any(has(text, alt) for text in texts), (ticket["id"], alt)
                assert not has(asked, alt), (ticket["id"], alt, "given away in the ticket")


def check_mix(cs: ConflictSet, product: str) -> None:
    """Five conflicts with distinct slugs, four controls, three plain tickets."""
    rows = cs.tickets(product)
    kinds = [kind_of(ticket) for ticket in rows]
    assert kinds.count("conflict") == 5, product
    assert kinds.count("control") == 4, product
    assert kinds.count("plain") == 3, product
    slugs = [ticket["conflict"] for ticket in rows if ticket["conflict"] is not None]
    assert len(set(slugs)) == 5, slugs
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", slug) for slug in slugs), slugs


def check_conflicts(cs: ConflictSet, product: str) -> None:
    """Each conflict side's value is in its own source and not in the other one."""
    known = cs.sources(product)
    for ticket in cs.tickets(product):
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


def check_controls(cs: ConflictSet, product: str) -> None:
    """A control's two sources hold one value in different words, or its one source holds the
    answer and its article a look-alike value of another subject (``distractors``)."""
    known = cs.sources(product)
    for ticket in cs.tickets(product):
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
            assert where not in cs.distractors, where
        else:
            assert len(docs) == 1, where
            doc, value = cs.distractors[where]
            assert has_value(known[doc], value), (where, doc, value)
            facts = ticket["expected_facts"]
            assert not any(has(value, alt) for group in facts for alt in group), where
            assert value in ticket["notes"] and doc in ticket["notes"], where


def check_plain(cs: ConflictSet, product: str) -> None:
    """A plain ticket has one source and is neither a conflict nor a control."""
    for ticket in cs.tickets(product):
        if kind_of(ticket) == "plain":
            assert len(ticket["expected_docs"]) == 1, ticket["id"]
            assert not ticket["notes"].startswith(("conflict:", "control:")), ticket["id"]


def check_unique_across_products(cs: ConflictSet, tickets: int, slugs: int) -> None:
    """Ticket ids, resolved ids and conflict slugs are unique across the set's products, with
    ``tickets`` tickets and ``slugs`` slugs in all; every distractor names a ticket."""
    ticket_ids: list[str] = []
    resolved_ids: list[str] = []
    found: list[str] = []
    for product in cs.products:
        rows = cs.tickets(product)
        ticket_ids += [row["id"] for row in rows]
        resolved_ids += [row["id"] for row in cs.resolved(product)]
        found += [row["conflict"] for row in rows if row["conflict"] is not None]
    assert len(set(ticket_ids)) == len(ticket_ids) == tickets
    assert len(set(resolved_ids)) == len(resolved_ids)
    assert len(set(found)) == len(found) == slugs
    assert set(cs.distractors) <= set(ticket_ids)


#: Folders a set may hold besides its products: the summaries of its runs (counts and ids).
NOT_PRODUCTS = frozenset({"runs"})


def check_only_its_products(cs: ConflictSet) -> None:
    folders = {path.name for path in cs.base.iterdir() if path.is_dir()} - NOT_PRODUCTS
    assert folders == set(cs.products), folders


def check_steps_and_length(cs: ConflictSet, product: str) -> None:
    """Every article has numbered steps and 200-290 words."""
    for doc_id, body in cs.articles(product).items():
        assert re.search(r"^1\. .*\n2\. ", body, re.M), (product, doc_id)
        assert 200 <= len(body.split()) <= 290, (product, doc_id, len(body.split()))


def check_example_hosts(cs: ConflictSet, product: str) -> None:
    """Every host named in a source or a ticket is on the reserved `.example` domain."""
    texts = list(cs.sources(product).values())
    texts += [f"{t['subject']}\n{t['body']}" for t in cs.tickets(product)]
    for text in texts:
        for host in re.findall(r"\b(?:[a-z][a-z0-9-]*\.)+[a-z]{2,}\b", text, re.I):
            assert host.lower().endswith(".example"), host


def check_no_clash_with(cs: ConflictSet, earlier: str) -> None:
    """No ticket-id prefix, conflict slug or resolved id of the set is one of ``earlier``'s
    (an `eval/` folder of conflict products)."""
    base = EVAL / earlier
    old_tickets = [row for path in base.glob("*/tickets.jsonl") for row in read_jsonl(path)]
    old_resolved = {row["id"] for path in base.glob("*/resolved.jsonl") for row in read_jsonl(path)}
    old_slugs = {row["conflict"] for row in old_tickets if row["conflict"] is not None}
    old_prefixes = {row["id"].split("-")[0] for row in old_tickets}
    assert old_tickets and old_resolved, earlier
    for product in cs.products:
        for row in cs.tickets(product):
            assert row["id"].split("-")[0] not in old_prefixes, row["id"]
            assert row["conflict"] not in old_slugs, row["conflict"]
        assert not {row["id"] for row in cs.resolved(product)} & old_resolved, product


def check_ids_unused_elsewhere(cs: ConflictSet) -> None:
    """The set's ticket-id prefixes and resolved ids appear in no JSONL file outside it (read
    as text, for the ids only)."""
    ours = {row["id"] for p in cs.products for row in cs.resolved(p)}
    prefixes = {row["id"].split("-")[0] for p in cs.products for row in cs.tickets(p)}
    for path in EVAL.rglob("*.jsonl"):
        if cs.base in path.parents:
            continue
        found = set(re.findall(r'"id": "([A-Za-z0-9]+-[0-9]+)"', path.read_text(encoding="utf-8")))
        assert not found & ours, (path, found & ours)
        assert not {i.split("-")[0] for i in found} & prefixes, path


class ConflictSetChecks:
    """The checks every conflict set's data test runs, each check per product where it reads
    one (``product`` is each folder of ``SET``). A subclass named ``Test...`` gives ``SET``, and
    ``TICKETS`` and ``SLUGS`` when the set is not two products of 12 tickets and 5 conflicts."""

    SET: ClassVar[ConflictSet]
    TICKETS: ClassVar[int] = 24
    SLUGS: ClassVar[int] = 10

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        if "product" in metafunc.fixturenames:
            metafunc.parametrize("product", list(self.SET.products))

    def test_articles_are_markdown_with_headings_and_length(self, product: str) -> None:
        check_articles(self.SET, product)

    def test_resolved_tickets_have_the_fields_and_link_existing_articles(
        self, product: str
    ) -> None:
        check_resolved(self.SET, product)

    def test_tickets_have_the_fields_and_existing_docs(self, product: str) -> None:
        check_tickets(self.SET, product)

    def test_every_fact_alternative_is_in_an_expected_doc_and_not_in_the_ticket(
        self, product: str
    ) -> None:
        check_fact_alternatives(self.SET, product)

    def test_five_conflicts_four_controls_three_plain(self, product: str) -> None:
        check_mix(self.SET, product)

    def test_conflicts_put_one_value_in_each_source(self, product: str) -> None:
        check_conflicts(self.SET, product)

    def test_controls_agree_in_other_words_or_are_about_another_subject(self, product: str) -> None:
        check_controls(self.SET, product)

    def test_plain_tickets_have_one_source(self, product: str) -> None:
        check_plain(self.SET, product)

    def test_ids_and_conflict_slugs_are_unique_across_products(self) -> None:
        check_unique_across_products(self.SET, tickets=self.TICKETS, slugs=self.SLUGS)

    def test_only_its_products_are_present(self) -> None:
        check_only_its_products(self.SET)


class HelperWrittenSetChecks(ConflictSetChecks):
    """The same, and what the sets a helper wrote after the first ask besides: numbered steps
    and 200-290 words an article, hosts on `.example`, no id or slug of the ``EARLIER`` sets
    (``earlier`` is each of them), and ids used nowhere else in `eval/`."""

    EARLIER: ClassVar[tuple[str, ...]]

    def pytest_generate_tests(self, metafunc: pytest.Metafunc) -> None:
        super().pytest_generate_tests(metafunc)
        if "earlier" in metafunc.fixturenames:
            metafunc.parametrize("earlier", self.EARLIER)

    def test_articles_have_numbered_steps_and_200_to_290_words(self, product: str) -> None:
        check_steps_and_length(self.SET, product)

    def test_hosts_are_on_the_reserved_example_domain(self, product: str) -> None:
        check_example_hosts(self.SET, product)

    def test_ids_and_slugs_do_not_clash_with_the_earlier_conflicts_sets(self, earlier: str) -> None:
        check_no_clash_with(self.SET, earlier)

    def test_ids_are_not_used_by_any_other_eval_set(self) -> None:
        check_ids_unused_elsewhere(self.SET)
