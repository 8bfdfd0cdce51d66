"""Shape of eval/risk_blind3/tickets.jsonl, the third blind, test-only risk set (issue 11)."""

from typing import ClassVar

from risk_sets import BlindSetChecks


class TestRiskBlind3(BlindSetChecks):
    NAME = "risk_blind3"
    ID_PREFIX = "C"
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
    LONG_WORDS = (150, 180)
    SHORT_WORDS = (0, 149)
