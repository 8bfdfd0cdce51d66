"""Shape of eval/risk_blind3/tickets.jsonl, the third blind, test-only risk set (issue 11)."""

from risk_sets import BlindSetChecks


class TestRiskBlind3(BlindSetChecks):
    NAME = "risk_blind3"
    ID_PREFIX = "C"
    NOT_ENGLISH = (33, 42)
    LONG = 22
    LONG_WORDS = (150, 180)
    SHORT_WORDS = (0, 149)
