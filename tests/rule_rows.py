"""Checks shared by the safety rounds' rule-row tests (``test_safety_round*_rules.py``): a
sentence the round's rows must escalate under a category, and one they must leave alone."""

from __future__ import annotations

from supportagent.agent.safety import screen


def assert_escalates(text: str, category: str) -> None:
    """The rule table alone escalates ``text`` as ``category``."""
    result = screen(text)
    assert result.auto_escalate and result.category == category, (text, result.matched_rule)


def assert_left_alone(text: str) -> None:
    """The rule table escalates nothing in ``text``."""
    result = screen(text)
    assert not result.auto_escalate, (text, result.matched_rule)
