"""Shape of eval/risk_blind26/tickets.jsonl, the twenty-sixth blind, test-only risk set."""

from typing import ClassVar

from risk_sets import BlindSetChecks, MoneySplitChecks


class TestRiskBlind26(BlindSetChecks, MoneySplitChecks):
    NAME = "risk_blind26"
    ID_PREFIX = "BZ"
    MONEY_SPLIT: ClassVar[dict[str, int]] = {"money_specific": 8, "account_specific": 8}
    NOT_ENGLISH = (38, 38)
    LONG = 22
    LONG_WORDS = (155, 169)
    SHORT_WORDS = (35, 61)
