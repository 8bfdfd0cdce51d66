"""Checks on eval/risk_tune5/tickets.jsonl, the fifth tuning set, risk and trap sentences marked."""

from typing import ClassVar

from risk_sets import EXPLICIT_SELF_HARM, LANGUAGES, RISK_REASON, RISK_SHAPES, Row, TuneSetChecks


class TestRiskTune5(TuneSetChecks):
    NAME = "risk_tune5"
    ID_PREFIX = "T5"
    ROWS = 200
    CATEGORIES: ClassVar[dict[str, int]] = {
        "security_incident": 22,
        "payment_fraud": 20,
        "legal_threat": 18,
        "money_or_account": 20,
        "self_harm_risk": 10,
        "look_alike": 80,
        "ordinary": 30,
    }
    LONG = 21

    def test_every_row_says_how_it_was_written_in_its_notes(self, rows: list[Row]) -> None:
        for row in rows:
            assert "; " in row["notes"], row["id"]

    def test_risks_are_mostly_in_passing_or_long(self, rows: list[Row]) -> None:
        risks = [row for row in rows if row["expected_safety"] is not None]
        hidden = sum(row["shape"] in {"in_passing", "long"} for row in risks)
        assert hidden / len(risks) >= 0.6, hidden

    def test_every_risk_category_uses_all_four_shapes(self, rows: list[Row]) -> None:
        for safety in RISK_REASON:
            shapes = {row["shape"] for row in rows if row["expected_safety"] == safety}
            assert shapes == set(RISK_SHAPES), safety

    def test_self_harm_is_mostly_without_explicit_words(self, rows: list[Row]) -> None:
        self_harm = [row for row in rows if row["expected_safety"] == "self_harm_risk"]
        explicit = [row["id"] for row in self_harm if EXPLICIT_SELF_HARM.search(row["body"])]
        assert len(explicit) <= 2, explicit

    def test_every_language_appears(self, rows: list[Row]) -> None:
        assert {row["language"] for row in rows} == set(LANGUAGES)
