"""Shape checks for the second blind risk set, so an edit cannot silently break its contract.

The set is test-only and its counts are quoted in its README; these tests pin both, so a row
dropped, duplicated or relabelled by accident fails here rather than in a report.
"""

import json
from collections import Counter
from pathlib import Path

import pytest

from risk_sets import FIELDS, RISK_REASON

SET_DIR = Path(__file__).resolve().parents[1] / "eval" / "risk_blind2"
HARMLESS_REASONS = {
    "answerable": {"question"},
    "not_a_question": {"bug_report", "feature_request", "feedback", "outage"},
}
LANGUAGES = {"en", "es", "de", "fr", "pt", "it", "nl"}
RISK_SHAPES = {"direct", "indirect", "in_passing", "long"}
CATEGORY_COUNTS = {
    "self_harm_risk": 24,
    "security_incident": 20,
    "payment_fraud": 16,
    "legal_threat": 12,
    "money_or_account": 16,
    "look_alike": 36,
    "ordinary": 26,
}


def load_rows() -> list[dict[str, object]]:
    """Read the JSONL file strictly: every line must be one JSON object."""
    lines = (SET_DIR / "tickets.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


@pytest.fixture(scope="module")
def rows() -> list[dict[str, object]]:
    return load_rows()


def category(row: dict[str, object]) -> str:
    """The risk category, or the shape for the two harmless groups."""
    safety = row["expected_safety"]
    return str(safety) if safety is not None else str(row["shape"])


def test_every_row_has_exactly_the_fields(rows: list[dict[str, object]]) -> None:
    assert all(set(row) == FIELDS for row in rows)


def test_ids_are_unique_and_numbered_in_order(rows: list[dict[str, object]]) -> None:
    assert [row["id"] for row in rows] == [f"B-{n:03d}" for n in range(1, 151)]


def test_every_row_is_test_split(rows: list[dict[str, object]]) -> None:
    assert {row["split"] for row in rows} == {"test"}


def test_text_fields_are_non_empty_strings(rows: list[dict[str, object]]) -> None:
    for row in rows:
        for field in ("subject", "body", "notes"):
            value = row[field]
            assert isinstance(value, str) and value.strip(), (row["id"], field)


def test_languages_are_allowed(rows: list[dict[str, object]]) -> None:
    assert {row["language"] for row in rows} <= LANGUAGES


def test_risk_rows_route_to_a_person_with_their_category(rows: list[dict[str, object]]) -> None:
    for row in rows:
        safety = row["expected_safety"]
        if safety is None:
            continue
        assert safety in RISK_REASON, row["id"]
        assert row["expected_bucket"] == "needs_human", row["id"]
        assert row["expected_reason"] in RISK_REASON[str(safety)], row["id"]
        assert row["shape"] in RISK_SHAPES, row["id"]


def test_harmless_rows_have_a_matching_bucket_and_reason(rows: list[dict[str, object]]) -> None:
    for row in rows:
        if row["expected_safety"] is not None:
            continue
        assert row["shape"] in {"look_alike", "ordinary"}, row["id"]
        bucket = str(row["expected_bucket"])
        assert bucket in HARMLESS_REASONS, row["id"]
        assert row["expected_reason"] in HARMLESS_REASONS[bucket], row["id"]


def test_counts_per_category_match_the_readme(rows: list[dict[str, object]]) -> None:
    assert Counter(category(row) for row in rows) == CATEGORY_COUNTS


def test_money_or_account_split(rows: list[dict[str, object]]) -> None:
    reasons = Counter(
        row["expected_reason"] for row in rows if row["expected_safety"] == "money_or_account"
    )
    assert reasons == {"money_specific": 9, "account_specific": 7}


def test_long_tickets_have_three_paragraphs_of_150_to_170_words(
    rows: list[dict[str, object]],
) -> None:
    for row in rows:
        if row["shape"] != "long":
            continue
        body = str(row["body"])
        assert len(body.split("\n\n")) == 3, row["id"]
        assert 150 <= len(body.split()) <= 170, row["id"]


def test_self_harm_is_written_in_at_least_four_other_languages(
    rows: list[dict[str, object]],
) -> None:
    languages = {row["language"] for row in rows if row["expected_safety"] == "self_harm_risk"}
    assert len(languages - {"en"}) >= 4
