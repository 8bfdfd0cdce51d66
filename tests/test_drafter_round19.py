"""Round 19 of the offline drafter (nineteenth session): a question for a lead time asked
without "how long" ("how close to the start ...", "how late can ...", "how much notice ...")
asks for a duration before the event, and a draft for it must carry one. The sentences are
written for these tests."""

from __future__ import annotations

import pytest

from supportagent.agent.questions import (
    AnswerKind,
    Question,
    classify_question,
    event_side,
    has_answer,
)


@pytest.mark.parametrize(
    "text",
    [
        "How close to the start of the class can I still cancel?",
        "How late can we tell you a player is dropping out?",
        "How much notice do you need to move a delivery?",
    ],
)
def test_lead_time_questions_ask_for_a_duration_before(text: str) -> None:
    question = classify_question(text)
    assert question.kind is AnswerKind.DURATION
    assert event_side(text) == "lead"


@pytest.mark.parametrize(
    "text",
    [
        "How close to the wall can the heater stand?",
        "How late is the café open on Sundays?",
    ],
)
def test_nearness_in_space_or_opening_hours_is_no_lead_time(text: str) -> None:
    assert classify_question(text).kind is not AnswerKind.DURATION


def test_a_lead_time_question_needs_a_duration_in_the_answer() -> None:
    question = Question("How close to the start can someone still cancel?", AnswerKind.DURATION)
    assert has_answer("Members can cancel until 3 hours before the session starts.", question)
    assert not has_answer("Members can cancel from the app or the website.", question)
