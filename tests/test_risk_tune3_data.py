"""Checks on eval/risk_tune3/tickets.jsonl, the tuning set with the risky sentences marked."""

from collections import Counter
from typing import ClassVar

from risk_sets import EXPLICIT_SELF_HARM, LANGUAGES, RISK_REASON, RISK_SHAPES, Row, TuneSetChecks


class TestRiskTune3(TuneSetChecks):
    NAME = "risk_tune3"
    ID_PREFIX = "T3"
    ROWS = 220
    CATEGORIES: ClassVar[dict[str, int]] = {
        "self_harm_risk": 44,
        "security_incident": 32,
        "payment_fraud": 24,
        "legal_threat": 14,
        "money_or_account": 24,
        "look_alike": 56,
        "ordinary": 26,
    }
    LONG = 33

    def test_self_harm_shapes_and_languages(self, rows: list[Row]) -> None:
        self_harm = [row for row in rows if row["expected_safety"] == "self_harm_risk"]
        assert Counter(row["shape"] for row in self_harm) == {
            "direct": 6,
            "indirect": 16,
            "in_passing": 12,
            "long": 10,
        }
        languages = Counter(row["language"] for row in self_harm)
        assert all(languages[language] >= 2 for language in LANGUAGES), languages
        explicit = [row["id"] for row in self_harm if EXPLICIT_SELF_HARM.search(row["body"])]
        assert len(explicit) <= 6, explicit

    def test_every_risk_category_uses_all_four_shapes(self, rows: list[Row]) -> None:
        for safety in RISK_REASON:
            shapes = {row["shape"] for row in rows if row["expected_safety"] == safety}
            assert shapes == RISK_SHAPES, safety
