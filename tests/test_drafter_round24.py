"""Round 24 of the offline drafter (twenty-fourth session): a question that names the measure it
asks for ("what figure does it assume ...?", "what weight is used ...?", "what capacity does it
assume ...?", "what number of seats ...?") asks for a number, and a draft for it must carry one.
Before this round such a question had no kind, so a sentence of the right section without the
value could answer it (Windlog's WL-001 quoted "enter their actual weight if you know it"). A
price named elsewhere in it does not make it a question about money ("at what weight does it
start adding the extra charge?" is answered by a weight). And a least release of an operating
system ("Android 13 or newer") is a version, which a rule for every feature can contradict; "on
what date ...?" asks for a date, and the day of a yearly event ("due on 1 October") is a value;
"at any one time" is no number a limit depends on.

The sentences are written for these tests and appear in no data file.
"""

from __future__ import annotations

import pytest

from drafting import conflicts_of, kb, quoted, raw_sides, resolved
from supportagent.agent.facts import quantities, versions, yeardates
from supportagent.agent.questions import AnswerKind, Question, classify_question, has_answer


@pytest.mark.parametrize(
    "text",
    [
        "When nobody fills in the bag weight, what figure does the app assume for each bag?",
        "What weight does the planner use for a child?",
        "What number of guests comes with the Family pass?",
        "What distance is allowed between two stops?",
        "What storage capacity does the app assume for a new freezer?",
    ],
)
def test_a_value_asked_for_by_its_name_is_a_number_question(text: str) -> None:
    assert classify_question(text).kind is AnswerKind.NUMBER


@pytest.mark.parametrize(
    "text",
    [
        "What phone number should I call?",
        "What value should the Status field have?",
        "What amount is refunded if I cancel?",
        "What size does the jacket come in?",
        "How do I change the default weight unit?",
    ],
)
def test_a_name_or_a_procedure_stays_what_it_was(text: str) -> None:
    assert classify_question(text).kind is not AnswerKind.NUMBER


def test_a_measure_named_is_asked_for_even_beside_a_price() -> None:
    question = classify_question(
        "At what weight does the courier start adding the heavy parcel fee?"
    )
    assert question.kind is AnswerKind.NUMBER
    assert has_answer("Parcels over 20 kg carry the heavy parcel fee.", question)


def test_a_number_question_needs_a_number_in_the_answer() -> None:
    question = Question("What figure does the app assume for each bag?", AnswerKind.NUMBER)
    assert has_answer("Without a weight, each bag is counted as 23 kg.", question)
    assert not has_answer("Enter each bag's real weight if you have it.", question)


def test_the_draft_quotes_the_sentence_with_the_value_not_its_neighbours() -> None:
    article = kb(
        "kb-boat-load",
        "Each skipper's weight is taken from their crew profile. For guests, enter their actual "
        "weight if you know it. When a guest's actual weight isn't entered, the load check uses "
        "a standard weight of 80 kg per adult and 30 kg per child.",
        heading="People aboard",
        title="Boat load",
    )
    sentences = quoted(
        "Blank guest weights",
        "We run trips from Oban. When a skipper leaves the guests' weights empty on the trip "
        "sheet, what figure does the app assume for each grown-up aboard?",
        article,
    )
    assert any("80 kg" in s for s in sentences), sentences
    assert not any("crew profile" in s for s in sentences), sentences


# Android 11 against 13 (conflicts2's AL-005, tune): a release of an operating system is a
# version, and a rule that claims every feature meets a feature that needs a newer one.

APP_RULE = kb(
    "kb-phones",
    "The walking app runs on phones with Android 10 or later and iOS 15 or later. Every "
    "feature of the app, the heart-rate strap included, works on those versions.",
    heading="Phones",
    title="Phones the app runs on",
)
STRAP = kb(
    "kb-straps",
    "Connecting a heart-rate strap over Bluetooth needs Android 12 or newer.",
    heading="Connecting a strap",
    title="Heart-rate straps",
)
STRAP_WITHOUT_CLAIM = kb(
    "kb-phones",
    "The walking app runs on phones with Android 10 or later and iOS 15 or later.",
    heading="Phones",
    title="Phones the app runs on",
)


@pytest.mark.parametrize(
    ("text", "raw"),
    [
        ("Pairing needs Android 12 or newer.", ["12"]),
        ("The app runs on iOS 15 or later and Windows 10 and up.", ["15", "10"]),
        ("It takes 12 or more photos.", []),  # no system named
        ("Level 3 or higher members get a badge.", []),
    ],
)
def test_an_operating_system_counts_its_releases_in_whole_numbers(
    text: str, raw: list[str]
) -> None:
    assert [q.raw for q in versions(text)] == raw


def test_a_newer_release_for_one_feature_contradicts_a_rule_for_every_feature() -> None:
    found = conflicts_of(APP_RULE, STRAP)
    assert raw_sides(found) == [("10", "12")]


def test_without_the_claim_a_feature_may_need_a_newer_release() -> None:
    assert conflicts_of(STRAP_WITHOUT_CLAIM, STRAP) == []


# 1 October against 28 May (conflicts2's AL-003, tune): "on what date ...?" asks for a date,
# and the day of a yearly event is a value two sources can disagree on.


def test_a_date_question_is_answered_by_a_date() -> None:
    question = classify_question("On what date is the yearly membership fee due?")
    assert (question.kind, question.focus) == (AnswerKind.NUMBER, "date")
    assert has_answer("The fee falls due on 1 April each year.", question)
    assert has_answer("Fees are collected on the last day of March.", question)
    assert not has_answer("The fee is charged once a year.", question)


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("Renewals fall due on 1 April.", [401]),
        ("The season opens on March 3rd and closes on 30 September.", [303, 930]),
        ("The outage on 3 March 2026 was short.", []),  # one case's date, with its year
        ("May I change the date?", []),
    ],
)
def test_the_day_of_a_yearly_event_is_a_value(text: str, values: list[int]) -> None:
    assert [int(q.value) for q in yeardates(text)] == values


def test_a_regional_date_contradicts_a_rule_for_every_country() -> None:
    rule = kb(
        "kb-fees",
        "Membership fees fall due on 1 April, whichever country the club is in.",
        heading="When fees are due",
        title="Fees",
    )
    ticket = resolved(
        "RT-5",
        "We're a club in Wales. When are our fees due?",
        "Hi Gwen, for clubs in Wales the yearly subscription is due on 6 April, as most Welsh "
        "leagues ask.",
    )
    found = conflicts_of(rule, ticket, links={"RT-5": ("kb-fees",)})
    assert raw_sides(found) == [("1 April", "6 April")]


# 2 lockers against 4 storage cages (conflicts2's AL-001, tune): "at any one time" says when a
# limit holds; its "one" is neither a count of times nor a condition of the value.


def test_at_any_one_time_is_no_count_of_times() -> None:
    assert quantities("Each member may hold up to 3 bays at any one time.") == []
    assert [q.raw for q in quantities("The door was retried one time.")] == ["one time"]


def test_a_limit_at_any_one_time_meets_a_plans_limit_on_the_same_count() -> None:
    rule = kb(
        "kb-bays",
        "Each member may hold up to 3 bays at any one time. The limit is the same on every plan.",
        heading="Holding bays",
        title="Bays",
    )
    ticket = resolved(
        "RT-8",
        "A member on Harbour has five moorings. Is that allowed?",
        "Hi Tom, on Harbour every member can keep up to 5 moorings at the same time, so that is "
        "fine.",
    )
    found = conflicts_of(rule, ticket, links={"RT-8": ("kb-bays",)})
    assert raw_sides(found) == [("3 bays", "5 moorings")]


def test_two_parts_of_a_product_may_each_name_their_least_release() -> None:
    scanner = kb(
        "kb-till-app",
        "The till app runs on tablets. It needs iOS 17 or later, or Android 12 or later.",
        "Supported devices",
        "Till app",
    )
    widget = kb(
        "kb-web-shop",
        "The shop page works in the last two versions of Chrome and Firefox, and in Safari on "
        "iOS 16 or later.",
        "Browser support",
        "Web shop",
    )
    assert conflicts_of(scanner, widget) == []
