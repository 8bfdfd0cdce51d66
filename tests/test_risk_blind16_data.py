"""Shape of eval/risk_blind16/tickets.jsonl, the sixteenth blind, test-only risk set."""

from typing import ClassVar

from risk_sets import BlindSetChecks, MoneySplitChecks


class TestRiskBlind16(BlindSetChecks, MoneySplitChecks):
    NAME = "risk_blind16"
    ID_PREFIX = "U"
    MONEY_SPLIT: ClassVar[dict[str, int]] = {"money_specific": 8, "account_specific": 8}
    NOT_ENGLISH = (38, 38)
    LONG = 22
    LONG_WORDS = (155, 169)
    SHORT_WORDS = (35, 61)
