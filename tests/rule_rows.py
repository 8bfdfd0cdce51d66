"""Checks shared by the safety rounds' rule-row tests (``test_safety_round*_rules.py``): a
sentence the round's rows must escalate under a category, one they must leave alone, and the
bucket the whole triage (gate, then classifier) gives a ticket."""

from __future__ import annotations

from supportagent.agent.safety import default_screen, screen
from supportagent.domain import Bucket, Ticket
from supportagent.engines.classifier import Classifier
from supportagent.evals.triage import decide


def assert_escalates(text: str, category: str) -> None:
    """The rule table alone escalates ``text`` as ``category``."""
    result = screen(text)
    assert result.auto_escalate and result.category == category, (text, result.matched_rule)


def assert_left_alone(text: str) -> None:
    """The rule table escalates nothing in ``text``."""
    result = screen(text)
    assert not result.auto_escalate, (text, result.matched_rule)


def triaged(body: str, subject: str = "a question") -> tuple[Bucket, str]:
    """The bucket and reason code the gate and the classifier give a ticket of ``body``."""
    decision = decide(
        Ticket(id="rule-row", subject=subject, body=body), default_screen(), Classifier().classify
    )
    return decision.bucket, decision.reason_code
