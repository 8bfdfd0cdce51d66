"""Round 26 of the offline drafter (twenty-seventh session, from conflicts4 released as tune):
values the fact checks did not read, and a rival answer the drafter did not quote.

- A price in pence ("a 60p fee") is money, in pounds: it can disagree with "£1.20". Not a
  video's "1080p" nor its "60p" frame rate.
- A person's age ("under 12 years old", "12-year-olds", "pupils aged 9 and over") is a value
  of its own kind, not a duration of twelve years.
- "into one dye bath" names one thing of a kind, as "a single batch" does: no number the value
  depends on, so the two limits can meet.
- "the same minimum on phones and tablets alike" claims a least release holds everywhere, which
  a feature that needs a newer one contradicts.
- "What should I write?" asks what the subject asks; and two articles that each answer "which
  day?" with another weekday are both quoted, though worded less alike than two durations must
  be.

The sentences are written for these tests and appear in no data file.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from drafting import conflicts_of, kb, quoted, raw_sides, resolved
from supportagent.agent.facts import ages, extract_facts, quantities, stated_by, values_in
from supportagent.agent.questions import ticket_questions
from supportagent.domain import Ticket


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Stamps bought at the post counter cost 85p each.", Decimal("0.85")),
        ("A paper receipt costs 40 pence.", Decimal("0.4")),
        ("The locker fee is £1.50 per parcel.", Decimal("1.5")),
    ],
)
def test_pence_are_pounds(text: str, value: Decimal) -> None:
    (found,) = quantities(text)
    assert (found.dimension, found.base_value) == ("gbp", value)


@pytest.mark.parametrize(
    "text",
    [
        "The shop opens at 2p.m. on Sundays.",
        "See p 5 of the guide.",
        "Open from 9 till 5p. m.",
        "Clips export at 1080p unless you choose otherwise.",
        "The camera records 4K at 60p.",
        "A sum of 250p is rarely written that way.",
    ],
)
def test_a_p_that_is_no_price_stays_out(text: str) -> None:
    assert not [q for q in quantities(text) if q.dimension == "gbp"]


def test_a_fee_in_pence_meets_a_fee_in_pounds() -> None:
    rule = kb(
        "kb-delivery",
        "A delivery fee of £1.50 is added to every order, however it is delivered.",
        heading="Delivery fee",
        title="Delivery",
    )
    ticket = resolved(
        "RT-61",
        "What do locker collections cost?",
        "Hi Ana, orders collected from one of our parcel lockers pay a delivery fee of 75p.",
    )
    found = conflicts_of(rule, ticket, links={"RT-61": ("kb-delivery",)})
    assert raw_sides(found) == [("£1.50", "75p")]


@pytest.mark.parametrize(
    ("text", "raw", "value"),
    [
        ("Riders under 14 years old must wear a helmet.", "14 years old", 14),
        ("The course suits 8-year-olds and up.", "8-year-olds", 8),
        ("Children aged 5 and over can join the class.", "aged 5", 5),
        ("Anyone from the age of 16 can hire a kayak alone.", "the age of 16", 16),
    ],
)
def test_an_age_is_a_value_of_its_own_kind(text: str, raw: str, value: int) -> None:
    found = [q for q in values_in(text) if q.dimension == "age"]
    assert [(q.raw, int(q.value)) for q in found] == [(raw, value)]
    assert not [q for q in values_in(text) if q.dimension == "duration"]


def test_an_age_is_stated_in_either_wording() -> None:
    (fact,) = extract_facts(
        [kb("kb-kayaks", "Paddlers under 16 years old need an adult in the next boat.")]
    )
    assert stated_by("Anyone aged 16 can paddle alone.", fact)
    assert not stated_by("Anyone aged 18 can paddle alone.", fact)
    assert ages("a 12 year plan") == []


def test_an_age_for_school_groups_meets_the_rule_for_every_visitor() -> None:
    rule = kb(
        "kb-climbing-wall",
        "Climbers under 16 years old must have a parent at the foot of the wall on every visit.",
        heading="Young climbers",
        title="The climbing wall",
    )
    ticket = resolved(
        "RT-62",
        "Our Year 7 class wants to climb. Do the parents have to come?",
        "Hi Sam, for school groups pupils aged 11 and over can climb with their teachers "
        "belaying, so no parents are needed.",
    )
    found = conflicts_of(rule, ticket, links={"RT-62": ("kb-climbing-wall",)})
    assert raw_sides(found) == [("16 years old", "aged 11")]


def test_one_thing_of_a_kind_is_no_condition_of_the_limit() -> None:
    oven = kb(
        "kb-ovens",
        "A single bake can take up to 6 kg of dough.",
        heading="Batch size",
        title="Ovens",
    )
    planner = kb(
        "kb-planner",
        "The planner will not let you put more than 4 kilograms of dough into one bake.",
        heading="Planning bakes",
        title="The bake planner",
    )
    assert raw_sides(conflicts_of(oven, planner)) == [("6 kg", "4 kilograms")]


def test_four_of_a_kind_is_still_a_condition() -> None:
    one = kb("kb-shelves", "One shelf holds up to 20 kg of stock.", heading="Shelves")
    four = kb("kb-racks", "Four shelves together hold up to 60 kg of stock.", heading="Racks")
    assert conflicts_of(one, four) == []


TABLET_FEATURE = kb(
    "kb-charts",
    "Showing offline charts on a tablet needs Android 12 or newer.",
    heading="Offline charts",
    title="Charts",
)


def test_a_minimum_claimed_for_phones_and_tablets_alike_meets_a_newer_one() -> None:
    rule = kb(
        "kb-devices",
        "Tidemark runs on iOS 15 and on Android 9 or later, the same minimum on phones and "
        "tablets alike.",
        heading="Devices",
        title="The Tidemark app",
    )
    assert {frozenset(sides) for sides in raw_sides(conflicts_of(rule, TABLET_FEATURE))} == {
        frozenset({"9", "12"})
    }


def test_a_minimum_without_the_claim_leaves_the_feature_its_own() -> None:
    rule = kb(
        "kb-devices",
        "Tidemark runs on iOS 15 and on Android 9 or later.",
        heading="Devices",
        title="The Tidemark app",
    )
    assert conflicts_of(rule, TABLET_FEATURE) == []


def test_what_should_i_write_asks_what_the_subject_asks() -> None:
    ticket = Ticket(
        "T-1",
        "Which day do next month's pottery classes open?",
        "Students keep asking me when they can sign up. What should I write on the board?",
    )
    assert [q.text for q in ticket_questions(ticket)] == [
        "Which day do next month's pottery classes open?"
    ]


def test_a_real_question_about_writing_stays() -> None:
    ticket = Ticket("T-1", "Invoices", "What should I write in the PO number field on invoices?")
    assert [q.text for q in ticket_questions(ticket)] == [
        "What should I write in the PO number field on invoices?"
    ]


def test_two_articles_that_answer_which_day_with_two_weekdays_are_both_quoted() -> None:
    app = kb(
        "kb-app",
        "New wheel slots for the coming week show up in the app on Thursdays. Members get a "
        "notice when they do.",
        heading="Booking in the app",
        title="The member app",
    )
    sheet = kb(
        "kb-wheels",
        "The wheel booking sheet for the next week opens to members every Monday. Each member "
        "can hold two slots.",
        heading="When booking opens",
        title="Booking wheels",
    )
    sentences = quoted(
        "Which day do next week's wheels open?",
        "Members ask me which day they can start booking wheels for the week after.",
        app,
        sheet,
    )
    assert any("Thursdays" in s for s in sentences), sentences
    assert any("every Monday" in s for s in sentences), sentences
