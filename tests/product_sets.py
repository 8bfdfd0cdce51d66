"""The contract our per-product eval sets share (eval/ferrytale, pickwren, forkline, tidewell).

Each product's test file subclasses `ProductSetChecks` as `Test<Product>` and sets only what is
its own: where the set lives, its counts, its split, its planted conflicts. The checks here then
run once per product; anything a single product adds stays in that product's file.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

import risk_sets

EVAL = Path(__file__).resolve().parents[1] / "eval"
# The risk sets' row contract, less their `shape`, plus what a drafted answer is judged by.
TICKET_FIELDS = (risk_sets.FIELDS - {"shape"}) | {"expected_docs", "expected_facts", "conflict"}
# Why a ticket gets no draft, and the bucket and safety category that reason comes with.
NO_DRAFT_REASONS = {
    "bug_report": ("not_a_question", None),
    "feature_request": ("not_a_question", None),
    "human_requested": ("needs_human", None),
    "money_specific": ("needs_human", "money_or_account"),
    "account_specific": ("needs_human", "money_or_account"),
}

Ticket = dict[str, Any]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        assert line.strip(), f"{path.name}: blank line {number}"
        row = json.loads(line)
        assert isinstance(row, dict), f"{path.name}: line {number} is not an object"
        rows.append(row)
    return rows


def split_article(path: Path) -> tuple[dict[str, Any], str]:
    match = re.match(r"---\n(.*?)\n---\n(.*)", path.read_text(encoding="utf-8"), re.S)
    assert match, f"{path.name}: no front matter"
    meta = yaml.safe_load(match.group(1))
    assert isinstance(meta, dict), path.name
    return meta, match.group(2)


def kind(ticket: Ticket) -> str:
    """The kind of answer a ticket asks for: the first word of its notes."""
    return str(ticket["notes"].split(":", 1)[0])


#: The mix of one recipe that the later products (Tidewell, Pickwren, Forkline) were written to:
#: tickets asking for each kind of answer (the first word of their notes) ...
RECIPE_ANSWER_KINDS: dict[str, int] = {
    "number": 6,
    "duration": 6,
    "version": 4,
    "name": 6,
    "procedure": 6,
    "yes_no": 4,
    "two_questions": 4,
    "conflict": 2,
    "no_draft": 6,
}
#: ... and the reasons of the six that must get no draft.
RECIPE_NO_DRAFT: dict[str, int] = {
    "bug_report": 1,
    "feature_request": 1,
    "human_requested": 1,
    "money_specific": 2,
    "account_specific": 1,
}


class ProductSetChecks:
    """Checks every product set must pass; a subclass names the set and its numbers."""

    NAME: ClassVar[str]  # the folder under eval/
    ARTICLES: ClassVar[int]
    WORDS: ClassVar[tuple[int, int]]  # fewest and most words in an article body
    WITH_STEPS: ClassVar[int]  # at least this many articles have numbered steps
    RESOLVED: ClassVar[int]
    TICKETS: ClassVar[int]
    SPLITS: ClassVar[frozenset[str]]  # the halves tickets may be in
    ANSWER_KINDS: ClassVar[dict[str, int]]  # tickets of each kind, in each of SPLITS
    NO_DRAFT_COUNTS: ClassVar[dict[str, int] | None] = None  # reasons among no_draft tickets
    CONFLICTS: ClassVar[frozenset[str]]  # the names of the planted conflicts

    @pytest.fixture(scope="class")
    @classmethod
    def articles(cls) -> dict[str, str]:
        found = {}
        for path in sorted((EVAL / cls.NAME / "kb").glob("*.md")):
            meta, body = split_article(path)
            assert set(meta) == {"id", "title"}, path.name
            assert meta["id"] == path.stem, path.name
            found[str(meta["id"])] = body
        return found

    @pytest.fixture(scope="class")
    @classmethod
    def resolved(cls) -> list[dict[str, Any]]:
        return read_jsonl(EVAL / cls.NAME / "resolved.jsonl")

    @pytest.fixture(scope="class")
    @classmethod
    def tickets(cls) -> list[Ticket]:
        return read_jsonl(EVAL / cls.NAME / "tickets.jsonl")

    @pytest.fixture(scope="class")
    @classmethod
    def sources(cls, articles: dict[str, str], resolved: list[dict[str, Any]]) -> dict[str, str]:
        texts = dict(articles)
        for row in resolved:
            texts[row["id"]] = f"{row['question']}\n{row['answer']}"
        return texts

    def test_articles_have_sections_numbered_steps_and_the_stated_length(
        self, articles: dict[str, str]
    ) -> None:
        assert len(articles) == self.ARTICLES, len(articles)
        fewest, most = self.WORDS
        with_steps = []
        for doc_id, body in articles.items():
            assert body.lstrip().startswith("# "), doc_id
            assert len(re.findall(r"^## \S", body, re.M)) >= 3, doc_id
            assert fewest <= len(body.split()) <= most, (doc_id, len(body.split()))
            if re.search(r"^1\. .*\n2\. ", body, re.M):
                with_steps.append(doc_id)
        assert len(with_steps) >= self.WITH_STEPS, sorted(set(articles) - set(with_steps))

    def test_resolved_tickets_link_existing_articles(
        self, resolved: list[dict[str, Any]], articles: dict[str, str]
    ) -> None:
        assert len(resolved) == self.RESOLVED, len(resolved)
        assert len({row["id"] for row in resolved}) == self.RESOLVED, "repeated ids"
        for row in resolved:
            assert set(row) == {"id", "question", "answer", "linked_docs"}, row["id"]
            assert row["question"].strip() and row["answer"].strip(), row["id"]
            assert row["linked_docs"] and set(row["linked_docs"]) <= set(articles), row["id"]

    def test_every_ticket_has_the_fields_and_allowed_values(self, tickets: list[Ticket]) -> None:
        assert len(tickets) == self.TICKETS, len(tickets)
        assert len({t["id"] for t in tickets}) == self.TICKETS, "repeated ids"
        for ticket in tickets:
            where = ticket["id"]
            assert set(ticket) == TICKET_FIELDS, where
            assert ticket["language"] == "en", where
            assert ticket["split"] in self.SPLITS, where
            assert kind(ticket) in self.ANSWER_KINDS, where
            if kind(ticket) == "no_draft":
                bucket, safety = NO_DRAFT_REASONS[ticket["expected_reason"]]
                labels = (ticket["expected_bucket"], ticket["expected_safety"])
                assert labels == (bucket, safety), where
                assert ticket["expected_docs"] == [] and ticket["expected_facts"] == [], where
                assert ticket["conflict"] is None, where
            else:
                assert ticket["expected_bucket"] == "answerable", where
                assert ticket["expected_reason"] == "question", where
                assert ticket["expected_safety"] is None, where
                assert (ticket["conflict"] is not None) == (kind(ticket) == "conflict"), where

    def test_each_half_holds_the_stated_mix_of_answer_kinds(self, tickets: list[Ticket]) -> None:
        in_set = {name: n * len(self.SPLITS) for name, n in self.ANSWER_KINDS.items()}
        found = dict(Counter(kind(t) for t in tickets))
        assert found == in_set, found
        counts = Counter((kind(t), t["split"]) for t in tickets)
        for answer_kind, per_half in self.ANSWER_KINDS.items():
            for half in self.SPLITS:
                assert counts[(answer_kind, half)] == per_half, (answer_kind, half)
        if self.NO_DRAFT_COUNTS is not None:
            reasons = Counter(t["expected_reason"] for t in tickets if kind(t) == "no_draft")
            assert dict(reasons) == self.NO_DRAFT_COUNTS, dict(reasons)

    def test_every_key_fact_is_in_an_expected_document_and_not_in_the_ticket(
        self, tickets: list[Ticket], sources: dict[str, str]
    ) -> None:
        for ticket in tickets:
            if kind(ticket) == "no_draft":
                continue
            where = ticket["id"]
            assert ticket["expected_docs"] and set(ticket["expected_docs"]) <= set(sources), where
            asked = f"{ticket['subject']} {ticket['body']}".lower()
            assert ticket["expected_facts"], where
            for group in ticket["expected_facts"]:
                assert group and all(isinstance(text, str) and text for text in group), where
                found = [
                    doc
                    for doc in ticket["expected_docs"]
                    if any(text.lower() in sources[doc].lower() for text in group)
                ]
                assert found, (where, group)
                assert not any(text.lower() in asked for text in group), (where, group)

    def test_each_planted_conflict_has_one_fact_group_per_side(
        self, tickets: list[Ticket], sources: dict[str, str]
    ) -> None:
        conflicts = [t for t in tickets if t["conflict"] is not None]
        names = sorted(t["conflict"] for t in conflicts)
        assert names == sorted(self.CONFLICTS), names
        assert {t["split"] for t in conflicts} == self.SPLITS, [t["split"] for t in conflicts]
        for ticket in conflicts:
            article, answer = ticket["expected_docs"]
            assert article.startswith("kb-") and answer.startswith("RT-"), ticket["id"]
            first, second = ticket["expected_facts"]
            # Each side's value is stated by its own source only.
            for group, own, other in ((first, article, answer), (second, answer, article)):
                assert any(text.lower() in sources[own].lower() for text in group), ticket["id"]
                other_text = sources[other].lower()
                assert not any(text.lower() in other_text for text in group), ticket["id"]


class BlindProductChecks(ProductSetChecks):
    """The checks of a blind product written to the recipe (Rillgate, Pawledger, Echofold): the
    recipe's sizes and kinds, every ticket `test`, two yes and two no answers, and each planted
    conflict's scoped side in its named resolved ticket."""

    ARTICLES = 22
    WORDS = (220, 300)
    WITH_STEPS = 22
    RESOLVED = 12
    TICKETS = 44
    SPLITS = frozenset({"test"})
    ANSWER_KINDS = RECIPE_ANSWER_KINDS
    NO_DRAFT_COUNTS = RECIPE_NO_DRAFT
    #: Each planted conflict and the resolved ticket that holds its scoped side.
    CONFLICT_TICKETS: ClassVar[dict[str, str]] = {}

    def test_yes_no_tickets_expect_two_yes_and_two_no(self, tickets: list[Ticket]) -> None:
        verdicts = Counter(
            re.match(r"yes_no: (yes|no)\b", t["notes"]).group(1)  # type: ignore[union-attr]
            for t in tickets
            if kind(t) == "yes_no"
        )
        assert verdicts == Counter({"yes": 2, "no": 2})

    def test_each_conflict_names_its_resolved_ticket(self, tickets: list[Ticket]) -> None:
        assert {t["conflict"] for t in tickets if t["conflict"]} == set(self.CONFLICT_TICKETS)
        for ticket in tickets:
            if ticket["conflict"] is not None:
                resolved = ticket["expected_docs"][1]
                assert resolved == self.CONFLICT_TICKETS[ticket["conflict"]], ticket["id"]
