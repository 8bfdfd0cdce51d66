"""Shape of eval/risk_blind4/tickets.jsonl, the fourth blind, test-only risk set."""

from typing import ClassVar

from risk_sets import BlindSetChecks, MoneySplitChecks, Row


class TestRiskBlind4(BlindSetChecks, MoneySplitChecks):
    NAME = "risk_blind4"
    ID_PREFIX = "D"
    MONEY_SPLIT: ClassVar[dict[str, int]] = {"money_specific": 9, "account_specific": 7}
    NOT_ENGLISH = (33, 42)
    LONG = 22
    LONG_WORDS = (150, 180)
    SHORT_WORDS = (15, 149)

    def test_short_tickets_are_one_paragraph(self, rows: list[Row]) -> None:
        for row in rows:
            if row["shape"] != "long":
                one_paragraph = "\n\n" not in row["body"]
                assert one_paragraph, row["id"]

    def test_money_or_account_tickets_mostly_avoid_the_word_refund(self, rows: list[Row]) -> None:
        money = [row for row in rows if row["expected_safety"] == "money_or_account"]
        with_refund = sum("refund" in (row["subject"] + row["body"]).lower() for row in money)
        in_all = len(money)
        assert with_refund * 2 <= in_all, (with_refund, in_all)
