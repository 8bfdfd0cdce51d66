"""Round 13 of the offline drafter (twelfth session): "how many kinds of space" asks for a count,
not a size; a step that calls a thing by name as the kind asked for ("Sign in with the Keeper
role") names it. The passages are an invented bike-depot product written for these tests."""

from __future__ import annotations

from drafting import kb, quoted
from supportagent.agent.questions import AnswerKind, ticket_questions
from supportagent.domain import Ticket


def _asked(text: str) -> tuple[AnswerKind, str]:
    (question,) = ticket_questions(Ticket("T-1", "", text))
    return question.kind, question.focus


def test_how_many_kinds_of_space_is_a_count() -> None:
    assert _asked("How many different kinds of space can one depot be set up with?") == (
        AnswerKind.NUMBER,
        "count",
    )
    assert _asked("How many rooms can one account book at once?")[1] == "count"


def test_a_size_stays_a_size() -> None:
    assert _asked("How much space do we get on the Team plan?")[1] == "size"
    assert _asked("How many GB of storage does the Team plan include?")[1] == "size"


DEPOT_SLOTS = (
    kb(
        "kb-slots",
        "Every rentable place in a depot is a slot: a rack, a locker or a cage. Slots are "
        'grouped into slot kinds, such as "cargo rack" or "e-bike cage", which carry the '
        "price.",
        "Intro",
        "Slots and slot kinds",
    ),
    kb("kb-slots", "A depot can have up to 40 slot kinds.", "Slot kinds", "Slots and slot kinds"),
)


def test_a_count_of_kinds_is_answered_by_the_limit() -> None:
    said = quoted(
        "Odd sizes",
        "We rent racks, cages and a few lockers. How many different kinds of space can one "
        "depot be set up with?",
        *DEPOT_SLOTS,
    )
    assert any("40 slot kinds" in s for s in said), said


CLOSING = kb(
    "kb-closing",
    "1. Sign in with the Keeper role.\n2. Open **Settings > Account**.\n3. Choose "
    "**Close account** and confirm by email.",
    "Closing the account",
    "Plans and billing",
)
RENEWALS = kb(
    "kb-renewals",
    "Plans renew on the same day each month, the day the paid plan started.",
    "When you are billed",
    "Plans and billing",
)


def test_a_step_that_names_the_role_answers_which_role() -> None:
    said = quoted(
        "Who can close it",
        "Which role is the only one allowed to shut our depot account down?",
        CLOSING,
        RENEWALS,
    )
    assert any("Keeper role" in s for s in said), said
