"""Round 17 of the drafter (fifteenth session, from a tune miss of `eval/conflicts`): a version
that something needs is a fact. An article that asks for "firmware 2.1 or later" and a resolved
ticket linked to it that asks for "2.6 or newer" on one model give two minimum versions of one
thing. Only a least version counts ("or later", "at least"), not one that something merely runs,
and two versions of two things ("Python 3.9 or newer", "Go 1.21 or newer") never meet.

Passages written for these tests (an invented smart-thermostat maker); in no data file."""

from __future__ import annotations

from decimal import Decimal

import pytest

from drafting import conflicts_of, problems_stated_alone, resolved
from drafting import section as kb
from supportagent.agent.facts import stated_by, versions


@pytest.mark.parametrize(
    ("text", "raw", "value"),
    [
        ("Eco mode needs firmware 2.1 or later.", "2.1", 2_001_000),
        ("The hub must run at least version 4.10.", "4.10", 4_010_000),
        ("It works with the app 5.2.3 and newer.", "5.2.3", 5_002_003),
        ("Set-up needs a minimum of v3.0 on the hub.", "3.0", 3_000_000),
        ("Requires Python 3.9+ on the server.", "3.9", 3_009_000),
    ],
)
def test_a_version_a_thing_needs(text: str, raw: str, value: int) -> None:
    [found] = versions(text)
    assert (found.raw, found.value, found.unit) == (raw, Decimal(value), "version")


@pytest.mark.parametrize(
    "text",
    [
        "The valve costs £2.40 or more with fitting.",
        "The unit weighs 1.5 kg.",
        "A full heat-up takes 2.5 hours or longer.",
        "Version 7 is out.",  # a whole number alone names a release, not a minimum to compare
        # A version something runs is a state, not what it needs.
        "Your hub is still on version 1.9.",
        "Version 4.2.0 reads the proxy settings by itself.",
    ],
)
def test_a_price_a_weight_or_a_duration_is_not_a_version(text: str) -> None:
    assert versions(text) == []


ARTICLE = kb(
    "kb-eco",
    "Eco mode",
    "Eco mode lowers the target overnight. Eco mode needs thermostat firmware 2.1 or later.",
    title="Saving energy",
)
TICKET = resolved(
    "RT-61",
    "Our new Halo thermostats won't show Eco mode. Why?",
    "Hi, the Halo has a different sensor board, and for Eco mode to appear it needs firmware "
    "2.6 or newer. Update it from the hub's settings page.",
)


def test_two_minimum_versions_for_one_feature_conflict() -> None:
    [conflict] = conflicts_of(ARTICLE, TICKET, links={"RT-61": ("kb-eco",)})
    assert {conflict.general.quantity.raw, conflict.specific.quantity.raw} == {"2.1", "2.6"}
    for side in conflict.sides:
        assert stated_by(side.sentence, side)
        assert "conflicting_evidence" in problems_stated_alone(side, conflict, [ARTICLE, TICKET])


def test_the_same_version_in_other_words_agrees() -> None:
    ticket = resolved(
        "RT-62",
        "Which firmware does Eco mode want?",
        "Hi, Eco mode shows once the thermostat runs v2.1 or anything newer.",
    )
    assert conflicts_of(ARTICLE, ticket, links={"RT-62": ("kb-eco",)}) == []


def test_least_versions_of_two_things_do_not_conflict() -> None:
    ticket = resolved(
        "RT-63",
        "Can the hub's companion app run on my old phone?",
        "Hi, the companion app needs Android 9.0 or later on the phone.",
    )
    assert conflicts_of(ARTICLE, ticket, links={"RT-63": ("kb-eco",)}) == []


def test_a_version_the_customer_runs_is_not_a_requirement() -> None:
    ticket = resolved(
        "RT-64",
        "Eco mode is missing on our thermostat.",
        "Hi, your thermostat is still on firmware 1.8, so update it from the hub's settings.",
    )
    assert conflicts_of(ARTICLE, ticket, links={"RT-64": ("kb-eco",)}) == []
