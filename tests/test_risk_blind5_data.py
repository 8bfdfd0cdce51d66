"""Shape of eval/risk_blind5/tickets.jsonl, the fifth blind, test-only risk set."""

from typing import ClassVar

from risk_sets import BlindSetChecks, MoneySplitChecks


class TestRiskBlind5(BlindSetChecks, MoneySplitChecks):
    NAME = "risk_blind5"
    ID_PREFIX = "E"
    MONEY_SPLIT: ClassVar[dict[str, int]] = {"money_specific": 9, "account_specific": 7}
    NOT_ENGLISH = (33, 42)
    LONG = 22
    LONG_WORDS = (154, 173)
    SHORT_WORDS = (18, 74)
