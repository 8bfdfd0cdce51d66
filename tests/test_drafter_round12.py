"""Round 12 of the drafter (tenth session, from Pawledger released as tune): a bullet labelled
with a plan is about that plan alone, whatever plan it mentions ("everything in Team plus");
"how many times and for how long" wants a count of times besides a duration.

Sentences written for these tests (an invented beehive-monitoring app); in no data file."""

from __future__ import annotations

from drafting import kb, quoted
from supportagent.agent.questions import AnswerKind, Question, has_answer

PLANS = kb(
    "kb-plans",
    "Hivecount has three plans.\n\n"
    "- **Hobby**, $9 a month: up to 3 hives and email alerts.\n"
    "- **Team**, $29 a month: up to 40 hives, everything in Hobby plus swarm alerts.\n"
    "- **Apiary**, $79 a month: up to 400 hives, everything in Team plus the API.\n",
    "The plans",
    "Plans and prices",
)


def test_a_bullet_labelled_with_another_plan_does_not_answer_for_the_customers() -> None:
    said = " ".join(
        quoted(
            "Hive limit",
            "We're on Team. How many hives can we have on Team before we need to move up?",
            PLANS,
        )
    )
    assert "up to 40 hives" in said


RETRIES = kb(
    "kb-alerts",
    "Your phone must confirm an alert within 30 seconds. If it does not, Hivecount sends the "
    "alert again up to 5 times over 2 hours.",
    "Repeated alerts",
    "Alerts",
)


def test_how_many_times_and_how_long_wants_both() -> None:
    question = Question("How many times and for how long do you resend it?", AnswerKind.DURATION)
    assert not has_answer("Your phone must confirm an alert within 30 seconds.", question)
    assert has_answer("Hivecount sends it again up to 5 times over 2 hours.", question)
    assert has_answer("It is sent twice, an hour apart.", question)
    plain = Question("How long do you keep resending it?", AnswerKind.DURATION)
    assert has_answer("Your phone must confirm an alert within 30 seconds.", plain)


def test_the_retry_sentence_is_quoted_for_how_many_times_and_how_long() -> None:
    said = quoted(
        "Missed alerts",
        "My phone was off. How many times and for how long do you resend an alert?",
        RETRIES,
    )
    assert any("up to 5 times over 2 hours" in s for s in said)
