"""Shape of eval/risk_blind5/tickets.jsonl, the fifth blind, test-only risk set."""

from typing import ClassVar

from risk_sets import BlindSetChecks, MoneySplitChecks


class TestRiskBlind5(BlindSetChecks, MoneySplitChecks):
    NAME = "risk_blind5"
    ID_PREFIX = "E"
    MONEY_SPLIT: ClassVar[dict[str, int]] = {"money_specific": 9, "account_specific": 7}
    PER_SHAPE: ClassVar[dict[str, int]] = {
        "self_harm_risk": 6,
        "security_incident": 5,
        "payment_fraud": 4,
        "legal_threat": 3,
        "money_or_account": 4,
    }
    LOOK_ALIKES: ClassVar[dict[str, int]] = {
        "question": 24,
        "bug_report": 4,
        "feature_request": 4,
        "feedback": 4,
    }
    ORDINARY: ClassVar[dict[str, int]] = {
        "question": 10,
        "bug_report": 6,
        "feature_request": 4,
        "feedback": 5,
        "outage": 1,
    }
    NOT_ENGLISH = (33, 42)
    LONG = 22
    LONG_WORDS = (154, 173)
    SHORT_WORDS = (18, 74)
