"""Checks shared by the safety rounds' rule-row tests (``test_safety_round*_rules.py``): a
sentence the round's rows must escalate under a category, one they must leave alone, the
reason the classifier's rule table alone gives a ticket, and the bucket the whole triage
(gate, then classifier) gives it."""

from __future__ import annotations

from supportagent.agent.safety import default_screen, screen
from supportagent.domain import Bucket, Ticket
from supportagent.engines.classifier import Classifier, classify_by_rules
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


def rules_reason(body: str) -> str:
    """The reason code the classifier's rule table gives a ticket of ``body`` (after the rule
    table of the gate)."""
    ticket = Ticket(id="rule-row", subject="a question", body=body)
    return classify_by_rules(ticket, screen(ticket.text)).reason_code
