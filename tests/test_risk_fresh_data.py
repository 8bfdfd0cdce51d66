"""Shape of eval/risk_fresh/tickets.jsonl: fields, allowed values, ids, counts, test-only split."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from typing import Any

import pytest

from risk_sets import FIELDS, RISK_REASON, read_rows

HARMLESS_BUCKET = {
    "question": "answerable",
    "bug_report": "not_a_question",
    "feature_request": "not_a_question",
    "feedback": "not_a_question",
}
LANGUAGES = {"en", "es", "de", "fr", "pt", "it"}
RISK_SHAPES = {"direct", "indirect", "in_passing", "long"}
HARMLESS_SHAPES = {"look_alike", "ordinary"}

# The brief's numbers per category; the file must hold at least each minus 2.
BRIEF_COUNTS = {
    "self_harm_risk": 24,
    "security_incident": 20,
    "payment_fraud": 16,
    "legal_threat": 12,
    "money_or_account": 16,
    "look_alike": 36,
    "ordinary": 26,
}
BRIEF_NOT_ENGLISH = {
    "self_harm_risk": 6,
    "security_incident": 4,
    "payment_fraud": 3,
    "legal_threat": 2,
    "money_or_account": 3,
    "look_alike": 6,
    "ordinary": 4,
}


def category(row: dict[str, Any]) -> str:
    """The risk category, or the shape (look_alike / ordinary) for a harmless ticket."""
    safety = row["expected_safety"]
    return str(safety) if safety is not None else str(row["shape"])


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    return read_rows("risk_fresh")


def test_every_row_has_exactly_the_fields_with_allowed_values(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        where = row.get("id", row)
        assert set(row) == FIELDS, where
        for field in ("id", "subject", "body", "notes"):
            assert isinstance(row[field], str) and row[field].strip(), (where, field)
        assert row["language"] in LANGUAGES, where
        assert row["split"] == "test", where
        safety = row["expected_safety"]
        if safety is None:
            assert row["shape"] in HARMLESS_SHAPES, where
            assert row["expected_reason"] in HARMLESS_BUCKET, where
            assert row["expected_bucket"] == HARMLESS_BUCKET[row["expected_reason"]], where
        else:
            assert safety in RISK_REASON, where
            assert row["shape"] in RISK_SHAPES, where
            assert row["expected_reason"] in RISK_REASON[safety], where
            assert row["expected_bucket"] == "needs_human", where


def test_ids_are_unique_and_numbered_from_one(rows: list[dict[str, Any]]) -> None:
    ids = [row["id"] for row in rows]
    assert all(re.fullmatch(r"F-\d{3}", ticket_id) for ticket_id in ids)
    assert len(set(ids)) == len(ids)
    assert sorted(ids) == [f"F-{n:03d}" for n in range(1, len(ids) + 1)]


def test_ids_do_not_follow_the_category(rows: list[dict[str, Any]]) -> None:
    by_id = sorted(rows, key=lambda row: row["id"])
    runs = sum(category(a) != category(b) for a, b in itertools.pairwise(by_id))
    # Written in category blocks, the order would change category only six times.
    assert runs > len(rows) // 2


def test_bodies_are_not_repeated(rows: list[dict[str, Any]]) -> None:
    bodies = [" ".join(row["body"].lower().split()) for row in rows]
    assert len(set(bodies)) == len(bodies)


def test_counts_per_category_reach_the_brief(rows: list[dict[str, Any]]) -> None:
    counts = Counter(category(row) for row in rows)
    assert set(counts) == set(BRIEF_COUNTS)
    for name, wanted in BRIEF_COUNTS.items():
        assert counts[name] >= wanted - 2, (name, counts[name])
    not_english = Counter(category(row) for row in rows if row["language"] != "en")
    for name, wanted in BRIEF_NOT_ENGLISH.items():
        assert not_english[name] >= wanted, (name, not_english[name])


def test_a_quarter_of_risk_tickets_are_long_or_in_passing(rows: list[dict[str, Any]]) -> None:
    risk = [row for row in rows if row["expected_safety"] is not None]
    hidden = [row for row in risk if row["shape"] in {"long", "in_passing"}]
    assert 4 * len(hidden) >= len(risk)


def test_long_tickets_have_three_paragraphs_of_120_to_250_words(
    rows: list[dict[str, Any]],
) -> None:
    long_rows = [row for row in rows if row["shape"] == "long"]
    assert long_rows
    for row in long_rows:
        words = len(row["body"].split())
        assert 120 <= words <= 250, (row["id"], words)
        paragraphs = [part for part in row["body"].split("\n\n") if part.strip()]
        assert len(paragraphs) == 3, row["id"]
