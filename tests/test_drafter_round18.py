"""Round 18 of the offline drafter (sixteenth session): "how long does it take?" asks for the
time a process takes, which a time ahead of an event ("cancel 24 hours or more before the
class") does not give; and "or more before" still reads as a lead. The passages are an invented
climbing-wall product written for these tests."""

from __future__ import annotations

from drafting import kb, quoted
from supportagent.agent.facts import quantities, role_of
from supportagent.agent.questions import AnswerKind, Question, has_answer

AHEAD = "If you cancel 48 hours or more before the session, the fee goes back to your card."
TAKES = "A returned fee reaches your card within 3 to 5 working days, depending on your bank."


def test_or_more_before_is_a_lead() -> None:
    (value,) = quantities(AHEAD)
    assert role_of(AHEAD, value) == "lead"
    (plain,) = quantities("Book 2 days before the session.")
    assert role_of("Book 2 days before the session.", plain) == "lead"


def test_a_time_ahead_does_not_say_how_long_something_takes() -> None:
    takes = Question("How long does the money usually take to come back?", AnswerKind.DURATION)
    assert not has_answer(AHEAD, takes)
    assert has_answer(TAKES, takes)


def test_a_time_ahead_still_answers_how_long_one_has() -> None:
    # "How long do I have?" and "how far ahead?" are answered by the lead itself.
    for text in ("How long before the session do I have to cancel?", "How long do I have?"):
        assert has_answer(AHEAD, Question(text, AnswerKind.DURATION))


def test_the_refund_time_is_quoted_not_the_cancellation_window() -> None:
    ahead = (
        "If the member cancels 48 hours or more before the session, the session fee is "
        "returned to their card in full."
    )
    takes = (
        "A returned session fee reaches the member's card in 3 to 5 working days, depending "
        "on their bank."
    )
    section = (
        f"When the member comes, the fee is taken off the day's bill. {ahead} If they cancel "
        f"later, the wall keeps it. {takes}"
    )
    said = quoted(
        "Session fee back",
        "A member cancelled her session three days before it and wants to know when the session "
        "fee will be back on her card. How long does that usually take?",
        kb("kb-fees", section, "What happens to the fee"),
    )
    assert takes in said and ahead not in said, said
