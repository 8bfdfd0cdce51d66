"""Shape checks for the second blind risk set, so an edit cannot silently break its contract.

The set is test-only and its counts are quoted in its README; these tests pin both, so a row
dropped, duplicated or relabelled by accident fails here rather than in a report.
"""

from collections import Counter
from typing import ClassVar

from risk_sets import MoneySplitChecks, RiskSetChecks, Row, category


class TestRiskBlind2(RiskSetChecks, MoneySplitChecks):
    NAME = "risk_blind2"
    ID_PREFIX = "B"
    MONEY_SPLIT: ClassVar[dict[str, int]] = {"money_specific": 9, "account_specific": 7}
    ROWS = 150
    SPLIT = "test"
    CATEGORY_COUNTS: ClassVar[dict[str, int]] = {
        "self_harm_risk": 24,
        "security_incident": 20,
        "payment_fraud": 16,
        "legal_threat": 12,
        "money_or_account": 16,
        "look_alike": 36,
        "ordinary": 26,
    }

    def test_counts_per_category_match_the_readme(self, rows: list[Row]) -> None:
        assert Counter(category(row) for row in rows) == self.CATEGORY_COUNTS

    def test_long_tickets_have_three_paragraphs_of_150_to_170_words(self, rows: list[Row]) -> None:
        for row in rows:
            if row["shape"] != "long":
                continue
            body = str(row["body"])
            paragraphs, words = len(body.split("\n\n")), len(body.split())
            assert paragraphs == 3, row["id"]
            assert 150 <= words <= 170, row["id"]

    def test_self_harm_is_written_in_at_least_four_other_languages(self, rows: list[Row]) -> None:
        languages = {row["language"] for row in rows if row["expected_safety"] == "self_harm_risk"}
        assert len(languages - {"en"}) >= 4
