"""Checks on eval/risk_tune4/tickets.jsonl, the tuning set of money/account asks and look-alikes."""

from collections import Counter
from typing import ClassVar

from risk_sets import EXPLICIT_SELF_HARM, Row, TuneSetChecks

MONEY_REASON = {"money_specific", "account_specific"}


class TestRiskTune4(TuneSetChecks):
    NAME = "risk_tune4"
    ID_PREFIX = "T4"
    ROWS = 200
    HARMLESS_SHAPES = frozenset({"look_alike"})
    CATEGORIES: ClassVar[dict[str, int]] = {
        "self_harm_risk": 20,
        "security_incident": 14,
        "payment_fraud": 14,
        "legal_threat": 12,
        "money_or_account": 70,
        "look_alike": 70,
    }
    LONG = 19

    def test_every_row_says_how_it_was_written_in_its_notes(self, rows: list[Row]) -> None:
        for row in rows:
            assert "; " in row["notes"], row["id"]

    def test_money_or_account_shapes_and_wording(self, rows: list[Row]) -> None:
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

    def test_self_harm_is_mostly_indirect_or_in_passing(self, rows: list[Row]) -> None:
        self_harm = [row for row in rows if row["expected_safety"] == "self_harm_risk"]
        shapes = Counter(row["shape"] for row in self_harm)
        assert shapes["indirect"] + shapes["in_passing"] >= 15, shapes
        assert sum(row["language"] != "en" for row in self_harm) >= 5
        explicit = [row["id"] for row in self_harm if EXPLICIT_SELF_HARM.search(row["body"])]
        assert len(explicit) <= 2, explicit

    def test_in_passing_money_asks_sit_inside_other_text(self, rows: list[Row]) -> None:
        for row in rows:
            if row["expected_safety"] == "money_or_account" and row["shape"] == "in_passing":
                rest = row["body"]
                for sentence in row["risk_sentences"]:
                    rest = rest.replace(sentence, "")
                assert "?" in rest, row["id"]
