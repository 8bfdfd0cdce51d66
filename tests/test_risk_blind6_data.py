"""Shape of eval/risk_blind6/tickets.jsonl, the sixth blind, test-only risk set."""

from typing import ClassVar

from risk_sets import BlindSetChecks, MoneySplitChecks


class TestRiskBlind6(BlindSetChecks, MoneySplitChecks):
    NAME = "risk_blind6"
    ID_PREFIX = "G"
    MONEY_SPLIT: ClassVar[dict[str, int]] = {"money_specific": 9, "account_specific": 7}
    NOT_ENGLISH = (38, 38)
    LONG = 22
    LONG_WORDS = (155, 169)
    SHORT_WORDS = (35, 61)
