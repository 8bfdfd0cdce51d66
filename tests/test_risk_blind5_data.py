"""Shape of eval/risk_blind5/tickets.jsonl, the fifth blind, test-only risk set."""

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from risk_sets import FIELDS
from risk_sets import RISK_REASON as RISK_REASONS

TICKETS = Path(__file__).resolve().parents[1] / "eval" / "risk_blind5" / "tickets.jsonl"

HARMLESS_REASONS = {
    "answerable": {"question"},
    "not_a_question": {"bug_report", "feature_request", "feedback", "outage"},
}
LANGUAGES = {"en", "es", "de", "fr", "pt", "it", "nl"}
RISK_SHAPES = ("direct", "indirect", "in_passing", "long")
PER_SHAPE = {
    "self_harm_risk": 6,
    "security_incident": 5,
    "payment_fraud": 4,
    "legal_threat": 3,
    "money_or_account": 4,
}


@pytest.fixture(scope="module")
def rows() -> list[dict[str, Any]]:
    with TICKETS.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def test_every_row_has_exactly_the_fields_and_a_text(rows: list[dict[str, Any]]) -> None:
    assert len(rows) == 150
    for row in rows:
        assert set(row) == FIELDS, row["id"]
        for field in ("subject", "body", "notes"):
            assert isinstance(row[field], str) and row[field].strip(), (row["id"], field)


def test_ids_run_from_e001_to_e150_once_each(rows: list[dict[str, Any]]) -> None:
    assert [row["id"] for row in rows] == [f"E-{n:03d}" for n in range(1, 151)]


def test_every_row_is_in_the_test_split(rows: list[dict[str, Any]]) -> None:
    assert {row["split"] for row in rows} == {"test"}


def test_labels_agree_with_each_other(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        safety, bucket = row["expected_safety"], row["expected_bucket"]
        reason = row["expected_reason"]
        assert row["language"] in LANGUAGES, row["id"]
        if safety is None:
            assert row["shape"] in {"look_alike", "ordinary"}, row["id"]
            assert reason in HARMLESS_REASONS[bucket], row["id"]
        else:
            assert row["shape"] in RISK_SHAPES, row["id"]
            assert bucket == "needs_human", row["id"]
            assert reason in RISK_REASONS[safety], row["id"]


def test_counts_per_category_and_shape(rows: list[dict[str, Any]]) -> None:
    cells = Counter((row["expected_safety"], row["shape"]) for row in rows)
    expected = {(cat, shape): n for cat, n in PER_SHAPE.items() for shape in RISK_SHAPES}
    expected[(None, "look_alike")] = 36
    expected[(None, "ordinary")] = 26
    assert dict(cells) == expected


def test_look_alikes_and_ordinary_tickets_cover_every_harmless_reason(
    rows: list[dict[str, Any]],
) -> None:
    look_alike = Counter(row["expected_reason"] for row in rows if row["shape"] == "look_alike")
    assert look_alike == {"question": 24, "bug_report": 4, "feature_request": 4, "feedback": 4}
    ordinary = Counter(row["expected_reason"] for row in rows if row["shape"] == "ordinary")
    assert ordinary == {
        "question": 10,
        "bug_report": 6,
        "feature_request": 4,
        "feedback": 5,
        "outage": 1,
    }


def test_about_a_quarter_is_not_english_and_self_harm_is_in_all_seven(
    rows: list[dict[str, Any]],
) -> None:
    not_english = sum(row["language"] != "en" for row in rows)
    assert 33 <= not_english <= 42
    self_harm = {row["language"] for row in rows if row["expected_safety"] == "self_harm_risk"}
    assert self_harm == LANGUAGES


def test_long_tickets_are_three_paragraphs_of_154_to_173_words(
    rows: list[dict[str, Any]],
) -> None:
    long_rows = [row for row in rows if row["shape"] == "long"]
    assert len(long_rows) == 22
    for row in long_rows:
        paragraphs = row["body"].split("\n\n")
        assert len(paragraphs) == 3, row["id"]
        assert 154 <= len(row["body"].split()) <= 173, row["id"]
    short = [len(row["body"].split()) for row in rows if row["shape"] != "long"]
    assert min(short) >= 18 and max(short) <= 74


def test_subjects_and_bodies_are_not_repeated(rows: list[dict[str, Any]]) -> None:
    assert len({row["subject"] for row in rows}) == len(rows)
    assert len({row["body"] for row in rows}) == len(rows)


def test_money_or_account_splits_nine_money_and_seven_account(rows: list[dict[str, Any]]) -> None:
    reasons = Counter(
        row["expected_reason"] for row in rows if row["expected_safety"] == "money_or_account"
    )
    assert reasons == {"money_specific": 9, "account_specific": 7}
