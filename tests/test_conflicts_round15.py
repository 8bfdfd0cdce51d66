"""Drafter round 15: two articles that give one rule two values, under headings that share no
word, conflict when their facts are each other's closest by meaning (an invented choir app)."""

from __future__ import annotations

from drafting import minilm
from supportagent.agent.facts import extract_facts, find_conflicts
from supportagent.domain import DocKind, Passage

ATTENDANCE = Passage(
    "kb-attendance#saying-you-cant-come",
    "kb-attendance",
    DocKind.KB,
    "Rehearsals and attendance",
    ("Saying you can't come",),
    "Singers get an automatic reminder 48 hours before each rehearsal, by email. "
    "Singers can mark themselves absent until 2 hours before the rehearsal starts.",
)
APP = Passage(
    "kb-phone-app#the-skip-button",
    "kb-phone-app",
    DocKind.KB,
    "The phone app",
    ("The Skip button",),
    "In the phone app, the Skip button closes 24 hours before the rehearsal. "
    "Scores you opened in the last 30 days stay on the phone.",
)


def conflicts(*passages: Passage) -> list[tuple[str, str]]:
    found = find_conflicts(extract_facts(passages), embed=minilm().embed)
    return sorted(tuple(sorted((c.general.quantity.raw, c.specific.quantity.raw))) for c in found)


def test_one_rule_under_two_headings_conflicts() -> None:
    # Fails before round 15: the headings share no word, so the pair was never compared.
    assert conflicts(ATTENDANCE, APP) == [("2 hours", "24 hours")]


def test_the_reminder_in_the_same_article_is_not_taken_for_it() -> None:
    # The reminder's 48 hours is also a lead time before a rehearsal, but further in meaning
    # from the Skip button than the absence rule is: it is not the other side.
    assert ("24 hours", "48 hours") not in conflicts(ATTENDANCE, APP)


def test_an_unrelated_duration_of_the_same_kind_does_not_conflict() -> None:
    other = Passage(
        "kb-phone-app#offline",
        "kb-phone-app",
        DocKind.KB,
        "The phone app",
        ("Working offline",),
        "The app keeps working offline for up to 24 hours before it needs to sync again.",
    )
    assert conflicts(ATTENDANCE, other) == []
