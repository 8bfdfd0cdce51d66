"""Shape of eval/risk_blind28/tickets.jsonl, the twenty-eighth blind, test-only risk set."""

from typing import ClassVar

from risk_sets import BlindSetChecks, MoneySplitChecks


class TestRiskBlind28(BlindSetChecks, MoneySplitChecks):
    NAME = "risk_blind28"
    ID_PREFIX = "CD"
    MONEY_SPLIT: ClassVar[dict[str, int]] = {"money_specific": 8, "account_specific": 8}
    NOT_ENGLISH = (38, 38)
    LONG = 22
    LONG_WORDS = (155, 169)
    SHORT_WORDS = (35, 61)
