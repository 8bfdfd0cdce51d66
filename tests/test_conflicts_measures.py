"""Round 21 of the drafter (twenty-second session, from the misses of `eval/conflicts`' Windlog
once it was released as tune data): a distance in nautical miles ("25 nautical miles", "50
nm"); the day of a monthly event ("on the 1st of each month", "the last day of each month"); a
least version said as "from firmware 3.1 onwards"; and two articles that each give the evidence
one value of a measure, in sentences that mean alike, as one subject however their headings
read.

Passages written for these tests (an invented canal-boat hire firm); in no data file."""

from __future__ import annotations

from decimal import Decimal

import pytest

from drafting import conflicts_of, raw_sides, resolved, section
from supportagent.agent.facts import LAST_DAY, monthdays, quantities, versions


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Moorings are checked within 12 nautical miles of the marina.", Decimal(12 * 1852)),
        ("Day boats stay within 8 nm of the yard.", Decimal(8 * 1852)),
    ],
)
def test_nautical_miles_are_a_length(text: str, value: Decimal) -> None:
    [found] = quantities(text)
    assert (found.dimension, found.base_value) == ("length", value)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Hire fees are taken on the 3rd of each month.", Decimal(3)),
        ("The licence is renewed on the 21st day of every month.", Decimal(21)),
        ("Statements go out on the last day of the month.", LAST_DAY),
    ],
)
def test_the_day_of_a_monthly_event(text: str, value: Decimal) -> None:
    [found] = monthdays(text)
    assert (found.unit, found.value) == ("monthday", value)


@pytest.mark.parametrize(
    "text",
    [
        "Since the 3rd the booking page has been slow.",
        "We moored on the 14th and left on the 16th.",
        "The last day of the season is in October.",
    ],
)
def test_a_date_of_one_case_is_not_a_monthly_day(text: str) -> None:
    assert monthdays(text) == []


def test_a_version_from_which_something_works_is_a_least_version() -> None:
    [found] = versions("The small tracker reports by itself from firmware 4.2 onwards.")
    assert (found.raw, found.value) == ("4.2", Decimal(4_002_000))
    assert versions("From 2019 onwards the yard opened on Sundays.") == []


RANGE = section(
    "kb-skippers",
    "New skippers",
    "First-time skippers need a trained helmsman on board for any trip planned to go more "
    "than 6 nautical miles from the marina.",
    title="Skippers and crew",
)
ROUTES = section(
    "kb-routes",
    "Planning a cruise",
    "First-time skippers can plan cruises up to 10 nm from the home marina without a trained "
    "helmsman on board; anything further needs one.",
    title="Routes and locks",
)
LOCKS = section(
    "kb-locks",
    "Lock flights",
    "The Hatton flight climbs 45 metres over two miles of locks.",
    title="Routes and locks",
)


def test_two_articles_with_one_distance_each_for_one_rule_conflict() -> None:
    [found] = conflicts_of(RANGE, ROUTES)
    assert {found.general.quantity.raw, found.specific.quantity.raw} == {
        "6 nautical miles",
        "10 nm",
    }


def test_two_distances_of_two_things_do_not() -> None:
    assert conflicts_of(RANGE, LOCKS) == []


FEES = section(
    "kb-fees",
    "Monthly fees",
    "The mooring fee is taken on the 1st of each month from the saved card.",
    title="Fees",
)
BILLING = section(
    "kb-billing",
    "Card payments",
    "Mooring fees are charged to the member's card on the 28th of each month.",
    title="Billing",
)


def test_two_days_of_the_month_for_one_payment_conflict() -> None:
    [found] = conflicts_of(FEES, BILLING)
    assert {found.general.quantity.value, found.specific.quantity.value} == {
        Decimal(1),
        Decimal(28),
    }


def test_a_ticket_that_gives_a_later_least_version_conflicts_with_the_article() -> None:
    article = section(
        "kb-trackers",
        "Firmware",
        "Automatic cruise logging needs tracker firmware 3.0 or later on every model.",
        title="Trackers",
    )
    ticket = resolved(
        "RT-71",
        "Our small tracker never logs cruises on its own. What's wrong?",
        "Hi, the small tracker only logs cruises by itself from firmware 4.2 onwards.",
    )
    found = conflicts_of(article, ticket, links={"RT-71": ("kb-trackers",)})
    assert raw_sides(found) == [("3.0", "4.2")]
