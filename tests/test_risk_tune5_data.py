"""Checks on eval/risk_tune5/tickets.jsonl, the fifth tuning set, risk and trap sentences marked."""

import json
import re
from collections import Counter
from pathlib import Path

import pytest

import risk_sets
from risk_sets import RISK_REASON

TICKETS = Path(__file__).resolve().parents[1] / "eval" / "risk_tune5" / "tickets.jsonl"

FIELDS = risk_sets.FIELDS | {"risk_sentences", "trap_sentences"}
HARMLESS_REASON = {
    "answerable": {"question"},
    "not_a_question": {"bug_report", "feature_request", "feedback", "outage"},
}
LANGUAGES = {"en", "es", "de", "fr", "pt", "it", "nl"}
RISK_SHAPES = {"direct", "indirect", "in_passing", "long"}
# Words a keyword rule would catch first; this set keeps self-harm mostly without them.
EXPLICIT_SELF_HARM = re.compile(
    r"suicid|kill myself|end my life|quitarme la vida|mich umzubringen|me tuer|uccidermi|"
    r"me matar|zelfmoord",
    re.IGNORECASE,
)


def category(row: dict) -> str:
    if row["expected_safety"] is not None:
        return str(row["expected_safety"])
    return "look_alike" if row["shape"] == "look_alike" else "ordinary"


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    with TICKETS.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def test_every_row_has_exactly_the_fields(rows: list[dict]) -> None:
    for row in rows:
        assert set(row) == FIELDS, row.get("id")
        for name in ("subject", "body", "notes"):
            assert isinstance(row[name], str) and row[name].strip(), (row["id"], name)
        assert "; " in row["notes"], row["id"]


def test_ids_are_unique_and_numbered_in_order(rows: list[dict]) -> None:
    assert [row["id"] for row in rows] == [f"T5-{n:03d}" for n in range(1, 201)]


def test_every_row_is_tune(rows: list[dict]) -> None:
    assert {row["split"] for row in rows} == {"tune"}


def test_values_are_allowed_and_consistent(rows: list[dict]) -> None:
    for row in rows:
        assert row["language"] in LANGUAGES, row["id"]
        safety = row["expected_safety"]
        if safety is None:
            assert row["shape"] in {"look_alike", "ordinary"}, row["id"]
            assert row["expected_reason"] in HARMLESS_REASON[row["expected_bucket"]], row["id"]
        else:
            assert row["shape"] in RISK_SHAPES, row["id"]
            assert row["expected_bucket"] == "needs_human", row["id"]
            assert row["expected_reason"] in RISK_REASON[safety], row["id"]


def test_counts_per_category(rows: list[dict]) -> None:
    assert Counter(category(row) for row in rows) == {
        "security_incident": 22,
        "payment_fraud": 20,
        "legal_threat": 18,
        "money_or_account": 20,
        "self_harm_risk": 10,
        "look_alike": 80,
        "ordinary": 30,
    }


def test_risks_are_mostly_in_passing_or_long(rows: list[dict]) -> None:
    risks = [row for row in rows if row["expected_safety"] is not None]
    hidden = sum(row["shape"] in {"in_passing", "long"} for row in risks)
    assert hidden / len(risks) >= 0.6, hidden


def test_every_risk_category_uses_all_four_shapes(rows: list[dict]) -> None:
    for safety in RISK_REASON:
        shapes = {row["shape"] for row in rows if row["expected_safety"] == safety}
        assert shapes == RISK_SHAPES, safety


def test_self_harm_is_mostly_without_explicit_words(rows: list[dict]) -> None:
    self_harm = [row for row in rows if row["expected_safety"] == "self_harm_risk"]
    explicit = [row["id"] for row in self_harm if EXPLICIT_SELF_HARM.search(row["body"])]
    assert len(explicit) <= 2, explicit


def test_about_a_quarter_is_not_english(rows: list[dict]) -> None:
    share = sum(row["language"] != "en" for row in rows) / len(rows)
    assert 0.2 <= share <= 0.3, share
    assert {row["language"] for row in rows} == LANGUAGES


def test_marked_sentences_are_exact_substrings(rows: list[dict]) -> None:
    for row in rows:
        text = row["subject"] + "\n" + row["body"]
        for sentence in row["risk_sentences"] + row["trap_sentences"]:
            assert isinstance(sentence, str) and sentence.strip(), row["id"]
            assert sentence in text, (row["id"], sentence)
        marked = row["risk_sentences"] + row["trap_sentences"]
        assert len(marked) == len(set(marked)), row["id"]


def test_risk_rows_mark_risk_and_harmless_rows_do_not(rows: list[dict]) -> None:
    for row in rows:
        assert bool(row["risk_sentences"]) == (row["expected_safety"] is not None), row["id"]
        assert bool(row["trap_sentences"]) == (row["shape"] == "look_alike"), row["id"]


def test_long_tickets_carry_the_risk_in_the_middle_paragraph(rows: list[dict]) -> None:
    longs = [row for row in rows if row["shape"] == "long"]
    assert len(longs) == 21
    for row in longs:
        paragraphs = row["body"].split("\n\n")
        assert len(paragraphs) == 3, row["id"]
        assert len(row["body"].split()) >= 120, row["id"]
        for sentence in row["risk_sentences"]:
            assert sentence in paragraphs[1], (row["id"], sentence)
