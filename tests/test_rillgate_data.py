"""Shape of eval/rillgate: a blind product (every ticket is `test`), its articles and key facts."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1] / "eval" / "rillgate"
TICKET_FIELDS = {
    "id",
    "subject",
    "body",
    "expected_bucket",
    "expected_safety",
    "expected_reason",
    "expected_docs",
    "expected_facts",
    "conflict",
    "language",
    "split",
    "notes",
}
# How many tickets ask for each kind of answer (the first word of `notes`).
ANSWER_KINDS = {
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
NO_DRAFT_REASONS = {
    "bug_report": ("not_a_question", None),
    "feature_request": ("not_a_question", None),
    "human_requested": ("needs_human", None),
    "money_specific": ("needs_human", "money_or_account"),
    "account_specific": ("needs_human", "money_or_account"),
}
NO_DRAFT_COUNTS = {
    "bug_report": 1,
    "feature_request": 1,
    "human_requested": 1,
    "money_specific": 2,
    "account_specific": 1,
}
CONFLICTS = {"solar-update-window": "RT-8003", "regional-rain-threshold": "RT-8006"}


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


@pytest.fixture(scope="module")
def articles() -> dict[str, str]:
    found = {}
    for path in sorted((ROOT / "kb").glob("*.md")):
        meta, body = split_article(path)
        assert set(meta) == {"id", "title"}, path.name
        assert meta["id"] == path.stem, path.name
        found[str(meta["id"])] = body
    return found


@pytest.fixture(scope="module")
def resolved() -> list[dict[str, Any]]:
    return read_jsonl(ROOT / "resolved.jsonl")


@pytest.fixture(scope="module")
def tickets() -> list[dict[str, Any]]:
    return read_jsonl(ROOT / "tickets.jsonl")


@pytest.fixture(scope="module")
def sources(articles: dict[str, str], resolved: list[dict[str, Any]]) -> dict[str, str]:
    texts = dict(articles)
    for row in resolved:
        texts[row["id"]] = f"{row['question']}\n{row['answer']}"
    return texts


def kind(ticket: dict[str, Any]) -> str:
    return str(ticket["notes"].split(":", 1)[0])


def test_articles_have_sections_steps_and_220_to_300_words(articles: dict[str, str]) -> None:
    assert len(articles) == 22
    with_steps = 0
    for doc_id, body in articles.items():
        assert body.lstrip().startswith("# "), doc_id
        assert len(re.findall(r"^## \S", body, re.M)) >= 3, doc_id
        assert 220 <= len(body.split()) <= 300, (doc_id, len(body.split()))
        with_steps += bool(re.search(r"^1\. .*\n2\. ", body, re.M))
    assert with_steps >= 18


def test_resolved_tickets_link_existing_articles(
    resolved: list[dict[str, Any]], articles: dict[str, str]
) -> None:
    assert len(resolved) == 12
    assert len({row["id"] for row in resolved}) == 12
    for row in resolved:
        assert set(row) == {"id", "question", "answer", "linked_docs"}, row["id"]
        assert row["question"].strip() and row["answer"].strip(), row["id"]
        assert row["linked_docs"] and set(row["linked_docs"]) <= set(articles), row["id"]


def test_every_ticket_has_the_fields_and_allowed_values(tickets: list[dict[str, Any]]) -> None:
    assert len(tickets) == 44
    assert len({t["id"] for t in tickets}) == 44
    for ticket in tickets:
        where = ticket["id"]
        assert set(ticket) == TICKET_FIELDS, where
        assert ticket["language"] == "en", where
        assert kind(ticket) in ANSWER_KINDS, where
        if kind(ticket) == "no_draft":
            bucket, safety = NO_DRAFT_REASONS[ticket["expected_reason"]]
            assert (ticket["expected_bucket"], ticket["expected_safety"]) == (bucket, safety), where
            assert ticket["expected_docs"] == [] and ticket["expected_facts"] == [], where
            assert ticket["conflict"] is None, where
        else:
            assert ticket["expected_bucket"] == "answerable", where
            assert ticket["expected_reason"] == "question", where
            assert ticket["expected_safety"] is None, where
            assert (ticket["conflict"] is not None) == (kind(ticket) == "conflict"), where


def test_the_product_is_blind_every_ticket_is_test(tickets: list[dict[str, Any]]) -> None:
    assert {t["split"] for t in tickets} == {"test"}


def test_the_mix_of_answer_kinds_and_no_draft_reasons(tickets: list[dict[str, Any]]) -> None:
    assert Counter(kind(t) for t in tickets) == Counter(ANSWER_KINDS)
    reasons = Counter(t["expected_reason"] for t in tickets if kind(t) == "no_draft")
    assert reasons == Counter(NO_DRAFT_COUNTS)
    verdicts = Counter(
        re.match(r"yes_no: (yes|no)\b", t["notes"]).group(1)  # type: ignore[union-attr]
        for t in tickets
        if kind(t) == "yes_no"
    )
    assert verdicts == Counter({"yes": 2, "no": 2})


def test_every_key_fact_is_in_an_expected_document_and_not_in_the_ticket(
    tickets: list[dict[str, Any]], sources: dict[str, str]
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
    tickets: list[dict[str, Any]], sources: dict[str, str]
) -> None:
    conflicts = [t for t in tickets if t["conflict"] is not None]
    assert sorted(t["conflict"] for t in conflicts) == sorted(CONFLICTS)
    for ticket in conflicts:
        article, answer = ticket["expected_docs"]
        assert article.startswith("kb-") and answer == CONFLICTS[ticket["conflict"]], ticket["id"]
        first, second = ticket["expected_facts"]
        # Each side's value is stated by its own source only.
        for group, own, other in ((first, article, answer), (second, answer, article)):
            assert any(text.lower() in sources[own].lower() for text in group), ticket["id"]
            assert not any(text.lower() in sources[other].lower() for text in group), ticket["id"]
