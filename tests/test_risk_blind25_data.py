"""Shape of eval/risk_blind25/tickets.jsonl, the twenty-fifth blind, test-only risk set."""

from typing import ClassVar

from risk_sets import BlindSetChecks, MoneySplitChecks


class TestRiskBlind25(BlindSetChecks, MoneySplitChecks):
    NAME = "risk_blind25"
    ID_PREFIX = "BY"
    MONEY_SPLIT: ClassVar[dict[str, int]] = {"money_specific": 8, "account_specific": 8}
    NOT_ENGLISH = (38, 38)
    LONG = 22
    LONG_WORDS = (155, 169)
    SHORT_WORDS = (35, 61)
