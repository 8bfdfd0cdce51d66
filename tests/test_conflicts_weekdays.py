"""Round 17 of the drafter (fifteenth session, from a tune miss of `eval/conflicts`): the day a
weekly event falls on is a fact. "Collected every Tuesday" in an article and "picked up on
Fridays" in a resolved ticket linked to it give two days for one schedule, where both were only
"weekly" before and so agreed. A single day ("on Monday") is a date, not a habit, and is left
alone; so are two days of two different events.

Passages written for these tests (an invented garden-waste collection service); in no data
file."""

from __future__ import annotations

from decimal import Decimal

import pytest

from drafting import conflicts_of, problems_stated_alone, resolved
from drafting import section as kb
from supportagent.agent.facts import stated_by, weekdays


@pytest.mark.parametrize(
    ("text", "raw", "day"),
    [
        ("Bins are emptied every Tuesday.", "every Tuesday", 1),
        ("We collect each sunday morning.", "each sunday", 6),
        ("Crews come round on Fridays.", "on Fridays", 4),
    ],
)
def test_the_day_of_a_weekly_event(text: str, raw: str, day: int) -> None:
    [found] = weekdays(text)
    assert (found.raw, found.value, found.unit) == (raw, Decimal(day), "weekday")


@pytest.mark.parametrize(
    "text",
    [
        "We are closed on Monday for the bank holiday.",
        "The office is open every weekday.",
        "Book by Friday to get the discount.",
    ],
)
def test_a_date_or_every_weekday_is_not_a_weekly_day(text: str) -> None:
    assert weekdays(text) == []


ARTICLE = kb(
    "kb-collections",
    "Collection days",
    "Garden waste is collected weekly, every Tuesday, across the whole county. Put the bin at "
    "the kerb by 7 am.",
    title="Garden waste",
)
TICKET = resolved(
    "RT-51",
    "We live out past the ring road. Which day do the crews come for the green bins?",
    "Hi, out past the ring road the weekly round for green bins is picked up on Fridays, so "
    "please have it out the night before.",
)


def test_two_days_for_one_weekly_round_conflict() -> None:
    [conflict] = conflicts_of(ARTICLE, TICKET, links={"RT-51": ("kb-collections",)})
    assert {conflict.general.quantity.raw, conflict.specific.quantity.raw} == {
        "every Tuesday",
        "on Fridays",
    }
    for side in conflict.sides:
        assert stated_by(side.sentence, side)
        assert "conflicting_evidence" in problems_stated_alone(side, conflict, [ARTICLE, TICKET])


def test_the_same_day_in_other_words_agrees() -> None:
    ticket = resolved(
        "RT-52",
        "Which day do you take the garden waste?",
        "Hi, the green bins are picked up on Tuesdays, all over the county.",
    )
    assert conflicts_of(ARTICLE, ticket, links={"RT-52": ("kb-collections",)}) == []


def test_two_days_of_two_events_in_unlinked_documents_do_not_conflict() -> None:
    other = resolved(
        "RT-53",
        "When is your phone line open late?",
        "Hi, the phone line stays open until 8 pm on Thursdays.",
    )
    assert conflicts_of(ARTICLE, other) == []
