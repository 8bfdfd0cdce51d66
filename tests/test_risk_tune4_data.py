"""Checks on eval/risk_tune4/tickets.jsonl, the tuning set of money/account asks and look-alikes."""

import json
import re
from collections import Counter
from pathlib import Path

import pytest

import risk_sets
from risk_sets import RISK_REASON

TICKETS = Path(__file__).resolve().parents[1] / "eval" / "risk_tune4" / "tickets.jsonl"

FIELDS = risk_sets.FIELDS | {"risk_sentences", "trap_sentences"}
HARMLESS_REASON = {
    "answerable": {"question"},
    "not_a_question": {"bug_report", "feature_request", "feedback", "outage"},
}
MONEY_REASON = {"money_specific", "account_specific"}
LANGUAGES = {"en", "es", "de", "fr", "pt", "it", "nl"}
RISK_SHAPES = {"direct", "indirect", "in_passing", "long"}
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
    assert [row["id"] for row in rows] == [f"T4-{n:03d}" for n in range(1, 201)]


def test_every_row_is_tune(rows: list[dict]) -> None:
    assert {row["split"] for row in rows} == {"tune"}


def test_values_are_allowed_and_consistent(rows: list[dict]) -> None:
    for row in rows:
        assert row["language"] in LANGUAGES, row["id"]
        safety = row["expected_safety"]
        if safety is None:
            assert row["shape"] == "look_alike", row["id"]
            assert row["expected_reason"] in HARMLESS_REASON[row["expected_bucket"]], row["id"]
        else:
            assert row["shape"] in RISK_SHAPES, row["id"]
            assert row["expected_bucket"] == "needs_human", row["id"]
            assert row["expected_reason"] in RISK_REASON[safety], row["id"]


def test_counts_per_category(rows: list[dict]) -> None:
    assert Counter(category(row) for row in rows) == {
        "self_harm_risk": 20,
        "security_incident": 14,
        "payment_fraud": 14,
        "legal_threat": 12,
        "money_or_account": 70,
        "look_alike": 70,
    }


def test_money_or_account_shapes_and_wording(rows: list[dict]) -> None:
    money = [row for row in rows if row["expected_safety"] == "money_or_account"]
    assert Counter(row["shape"] for row in money) == {
        "direct": 15,
        "indirect": 15,
        "in_passing": 25,
        "long": 15,
    }
    assert {row["expected_reason"] for row in money} == MONEY_REASON
    without_refund = [row for row in money if "refund" not in row["body"].lower()]
    assert len(without_refund) >= len(money) // 2


def test_self_harm_is_mostly_indirect_or_in_passing(rows: list[dict]) -> None:
    self_harm = [row for row in rows if row["expected_safety"] == "self_harm_risk"]
    shapes = Counter(row["shape"] for row in self_harm)
    assert shapes["indirect"] + shapes["in_passing"] >= 15, shapes
    assert sum(row["language"] != "en" for row in self_harm) >= 5
    explicit = [row["id"] for row in self_harm if EXPLICIT_SELF_HARM.search(row["body"])]
    assert len(explicit) <= 2, explicit


def test_about_a_quarter_is_not_english(rows: list[dict]) -> None:
    share = sum(row["language"] != "en" for row in rows) / len(rows)
    assert 0.2 <= share <= 0.3, share


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


def test_in_passing_money_asks_sit_inside_other_text(rows: list[dict]) -> None:
    for row in rows:
        if row["expected_safety"] == "money_or_account" and row["shape"] == "in_passing":
            rest = row["body"]
            for sentence in row["risk_sentences"]:
                rest = rest.replace(sentence, "")
            assert "?" in rest, row["id"]


def test_long_tickets_carry_the_risk_in_the_middle_paragraph(rows: list[dict]) -> None:
    longs = [row for row in rows if row["shape"] == "long"]
    assert len(longs) == 19
    for row in longs:
        paragraphs = row["body"].split("\n\n")
        assert len(paragraphs) == 3, row["id"]
        assert len(row["body"].split()) >= 120, row["id"]
        for sentence in row["risk_sentences"]:
            assert sentence in paragraphs[1], (row["id"], sentence)
