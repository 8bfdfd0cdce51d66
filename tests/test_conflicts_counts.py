"""Round 12 of the drafter (tenth session, from Pawledger released as tune): a limit on a count
of things said in words ("no more than three reminders") is a fact, and a resolved ticket that
counts the same thing under another name ("up to five notices") conflicts with the article it
links to. Two counts of two things in one article stay apart, and so do unlinked documents.

Passages written for these tests (an invented allotment-society app); in no data file."""

from __future__ import annotations

from decimal import Decimal

import pytest

from drafting import conflicts_of, problems_stated_alone, resolved
from drafting import section as kb
from supportagent.agent.facts import limit_counts, stated_by


@pytest.mark.parametrize(
    ("text", "raw", "value", "unit"),
    [
        ("You get no more than three warnings a season.", "three warnings", 3, "count:warning"),
        ("Up to twenty-four guests can come.", "twenty-four guests", 24, "count:guest"),
        ("A committee has at most 9 trustees.", "9 trustees", 9, "count:trustee"),
    ],
)
def test_a_limit_on_a_count_in_digits_or_words(text: str, raw: str, value: int, unit: str) -> None:
    [found] = limit_counts(text)
    assert (found.raw, found.value, found.unit) == (raw, Decimal(value), unit)


def test_no_count_without_a_number() -> None:
    assert limit_counts("You can bring up to a dozen seedlings.") == []


ARTICLE = kb(
    "kb-warnings",
    "Untidy plot warnings",
    "The society sends warnings about an untidy plot by email. That makes no more than three "
    "warnings per plot each season. The number is the same for every site and cannot be "
    "changed.",
    title="Plot inspections",
)
TICKET = resolved(
    "RT-77",
    "Our site has a waiting list; do untidy plots get handled differently?",
    "Yes. On sites with a waiting list, up to five notices go to the plot holder before the "
    "plot is offered to the next person.",
)


def test_a_count_under_another_name_in_a_linked_ticket_conflicts() -> None:
    [conflict] = conflicts_of(ARTICLE, TICKET, links={"RT-77": ("kb-warnings",)})
    assert {conflict.general.quantity.raw, conflict.specific.quantity.raw} == {
        "three warnings",
        "five notices",
    }
    for side in conflict.sides:
        assert problems_stated_alone(side, conflict, [ARTICLE, TICKET]) == ["conflicting_evidence"]
        assert stated_by(side.sentence, side)


def test_unlinked_documents_counting_different_things_do_not_conflict() -> None:
    assert conflicts_of(ARTICLE, TICKET) == []


def test_two_counts_in_one_article_keep_their_things_apart() -> None:
    article = kb(
        "kb-sheds",
        "Sheds and water butts",
        "A plot may have up to 2 sheds. It may also have up to 4 water butts.",
        title="What a plot may hold",
    )
    ticket = resolved(
        "RT-78",
        "How many sheds can go on one plot?",
        "On the riverside site a plot may hold as many as 3 greenhouses.",
    )
    assert conflicts_of(article, ticket, links={"RT-78": ("kb-sheds",)}) == []


def test_a_count_that_claims_no_reach_keeps_its_own_thing() -> None:
    article = kb(
        "kb-rota",
        "The work-party rota",
        "The rota shows at most 30 tasks per volunteer per day; more open a full list.",
        title="Work parties",
    )
    ticket = resolved(
        "RT-79",
        "Can two volunteers share a task?",
        "Yes: open the task and add people in the Helpers field, up to 4 volunteers per task.",
    )
    assert conflicts_of(article, ticket, links={"RT-79": ("kb-rota",)}) == []


# Round 17 (fifteenth session, from a tune miss of eval/conflicts): the other side's noun has a
# unit of its own ("seats", "users"), which a limit makes a count like any other; a number of
# them said in passing is not a second limit.
PROFILES = kb(
    "kb-profiles",
    "Profiles in a household",
    "A household can have up to 4 profiles. The limit is the same for every plan.",
    title="Households",
)
FAMILY = resolved(
    "RT-80",
    "We're on Family. How many of us can share one household?",
    "Hi, on the Family plan up to 6 users can share a household. The 2 users you added "
    "yesterday are already counted.",
)


def test_a_limit_in_a_unit_of_its_own_conflicts_with_a_counted_noun() -> None:
    [conflict] = conflicts_of(PROFILES, FAMILY, links={"RT-80": ("kb-profiles",)})
    assert {conflict.general.quantity.raw, conflict.specific.quantity.raw} == {
        "4 profiles",
        "6 users",
    }


def test_a_number_of_users_in_passing_is_no_limit() -> None:
    ticket = resolved(
        "RT-81",
        "Do new profiles count at once?",
        "Hi, yes: the 2 users you added yesterday are already counted in your household.",
    )
    assert conflicts_of(PROFILES, ticket, links={"RT-81": ("kb-profiles",)}) == []
