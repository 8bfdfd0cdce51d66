"""The offline drafter's third round, on hand-made passages about an invented bicycle-hire
service: which side of an event a duration is on, a setting's name as its label, a sentence
that goes on with "then", what a procedure is for, and a rate or a default asked for.

The drafter runs with the shipped MiniLM model, as the pipeline gives it.
"""

from __future__ import annotations

from drafting import hits, kb, minilm, quoted
from supportagent.agent.questions import (
    AnswerKind,
    classify_question,
    event_side,
    has_answer,
    ticket_questions,
)
from supportagent.domain import DocKind, Passage, Ticket
from supportagent.engines.extract import evidence_units
from supportagent.engines.scoring import SCOPE_BONUS, UnitScorer, purpose

# ---------------------------------------------------------------------------- durations


def test_a_duration_question_says_which_side_of_the_event_it_asks_about() -> None:
    assert event_side("How long before the ride does the deposit have to be paid?") == "lead"
    assert event_side("How soon after a hire has ended does the refund arrive?") == "delay"
    assert event_side("How far in advance can riders book?") == "lead"
    # "How long before it locks?" asks how long until: no verb follows the event.
    assert event_side("How long before it locks the bike by itself?") == ""
    assert event_side("How long are rides kept in the history?") == ""


def test_a_deadline_before_the_event_answers_how_long_before() -> None:
    passage = kb(
        "kb-groups",
        "Group hires are paid out to the shop 3 days after the ride has ended. "
        "The balance of a group hire is due 10 days before the ride.",
        heading="Group hires",
        title="Group hires",
    )
    got = quoted(
        "Group hire",
        "A cycling club has booked twelve bikes for May. How long before the ride does the "
        "rest of the money have to be paid?",
        passage,
    )
    # Without the side of the event, the payout sentence shares more words and comes first.
    assert got[0] == "The balance of a group hire is due 10 days before the ride."


# ---------------------------------------------------------------------------- settings


def test_a_setting_asked_for_as_an_option_is_answered_by_its_label() -> None:
    passage = kb(
        "kb-helmets",
        "Riders can add a helmet to any hire for $2. Once helmets are in stock, the Owner can "
        "turn on **Helmet required**. Riders then cannot finish a booking without a helmet.",
        heading="Helmets",
        title="Helmets",
    )
    got = quoted(
        "Helmets for everyone",
        "We want every rider to wear a helmet. What's the option that stops people booking "
        "without one?",
        passage,
    )
    assert any("**Helmet required**" in s for s in got)
    assert not any("$2" in s for s in got)


def test_a_sentence_that_goes_on_with_then_is_one_unit_with_the_one_before() -> None:
    passage = kb(
        "kb-locks",
        "Turn on **Auto lock** in the app. The bike then locks itself after 2 minutes parked.",
        heading="Locks",
    )
    units = [u.sentences for u in evidence_units(hits(passage))]
    assert (
        "Turn on **Auto lock** in the app.",
        "The bike then locks itself after 2 minutes parked.",
    ) in units
    unpaid = kb(
        "kb-pauses",
        "A hire must be paid within 15 minutes. If it is not paid by then, the bike locks.",
    )
    assert [u.sentences for u in evidence_units(hits(unpaid))][-1] == (
        "A hire must be paid within 15 minutes.",
        "If it is not paid by then, the bike locks.",
    )
    # A sentence that starts with "Then" is a step of its own, not a sentence pointing back.
    steps = kb("kb-steps", "Open the app on the bike's screen. Then scan the code on the frame.")
    assert evidence_units(hits(steps))[-1].procedure


# ---------------------------------------------------------------------------- procedures


def test_a_procedure_is_also_judged_by_what_its_section_is_for() -> None:
    price = kb(
        "kb-prices",
        "1. Go to **Bikes**, open the bike type and choose **Prices**.\n"
        "2. Pick the season and the rider type.\n"
        "3. Click **Save price**.",
        heading="Changing a price",
        title="Prices and rider types",
    )
    season = kb(
        "kb-seasons",
        "1. Go to **Bikes**, open the station and click **New season**.\n"
        "2. Enter the first and last days of the season.\n"
        "3. Click **Publish**.",
        heading="Opening a new season",
        title="Stations and seasons",
    )
    assert purpose(evidence_units(hits(season))[0]) == "Stations and seasons. Opening a new season"
    # The price steps come first in the evidence; the season's heading says what was asked.
    got = quoted("Next summer", "How do I open next summer's season for hires?", price, season)
    assert got[0].startswith("Go to **Bikes**, open the station")
    # Only a question that asks how to do something weighs what the steps are for.
    plain = Passage("kb-seasons#notes", "kb-seasons", DocKind.KB, "Notes", ("Notes",), season.text)

    def step_similarity(text: str, passage: Passage) -> float:
        ticket = Ticket("T-1", "Seasons", text)
        evidence = hits(passage)
        scorer = UnitScorer(
            ticket, ticket_questions(ticket), evidence_units(evidence), evidence, minilm().embed
        )
        return scorer.dense(0, 0) or 0.0

    how = "How do I open a new season?"
    assert step_similarity(how, season) > step_similarity(how, plain)
    other = "How long can one season run?"
    assert step_similarity(other, season) == step_similarity(other, plain)


# ---------------------------------------------------------------------------- rates, defaults


def test_what_commission_asks_for_a_share_or_an_amount() -> None:
    question = classify_question("What commission do hotels get for each hire?")
    assert (question.kind, question.focus) == (AnswerKind.NUMBER, "share")
    assert has_answer("Hotels earn 12% of each hire.", question)
    assert not has_answer("Statements are created on the 1st of each month.", question)
    # "What we charge" is not a question about a rate.
    way = classify_question("Is there a way for riders to see what we charge per hour?")
    assert way.kind is AnswerKind.PROCEDURE


def test_if_i_do_not_set_one_asks_for_the_default() -> None:
    passage = kb(
        "kb-hotels",
        "Hotels can sell your hires from their front desk. You can set any commission from 0% "
        "to 25% for each hotel. The default commission is 12% of the hire price.",
        heading="Commission",
        title="Hotel partners",
    )
    got = quoted("Hotels", "What commission do hotels get if I don't set one?", passage)
    # "You can set any commission" means more alike to MiniLM and stays first; the default
    # comes close enough to be quoted beside it only because it is the one asked for.
    assert "The default commission is 12% of the hire price." in got


# ---------------------------------------------------------------------------- how often


def test_how_often_is_answered_by_a_frequency_and_how_long_is_not() -> None:
    often = classify_question("How often do you pay out the hire money?")
    assert often.kind is AnswerKind.DURATION
    assert has_answer("Hire money is sent to your bank once a week, every Monday.", often)
    assert has_answer("Payouts are made weekly.", often)
    soon = classify_question("How soon after a hire does the money reach us?")
    assert has_answer("Hire money is sent to your bank every Monday.", soon)
    long = classify_question("How long is the free trial?")
    assert not has_answer("Plans are billed monthly or yearly.", long)
    assert not has_answer("Shops pay once a month.", long)


# ---------------------------------------------------------------------------- plans


def test_a_plan_the_customer_says_they_are_on_is_known_without_the_word_plan() -> None:
    passage = kb(
        "kb-hotels",
        "Each hotel can have up to 3 desk users of its own. Cruiser allows up to 4 hotels, "
        "Tandem up to 20, and Peloton has no limit.",
        heading="How many hotels",
        title="Hotel partners",
    )
    got = quoted(
        "Hotels on our plan",
        "We're on Cruiser at the moment. How many hotels can we sign up to sell our hires?",
        passage,
    )
    assert "Cruiser allows up to 4 hotels, Tandem up to 20, and Peloton has no limit." in got

    # Without the customer's word for it, "Cruiser" is just a capitalised word.
    def fit(body: str) -> float:
        ticket = Ticket("T-1", "Hotels", body)
        evidence = hits(passage)
        units = evidence_units(evidence)
        scorer = UnitScorer(ticket, ticket_questions(ticket), units, evidence, minilm().embed)
        return scorer.scope_fit(next(u for u in units if u.text.startswith("Cruiser")))

    assert fit("We're on Cruiser at the moment. How many hotels can we sign up?") == SCOPE_BONUS
    assert fit("How many hotels can we sign up?") == 0.0


def test_a_word_of_the_articles_title_counts_like_one_of_its_heading() -> None:
    helmets = kb("kb-helmets", "Sizes run from 48 to 62 cm.", heading="Sizes", title="Helmets")
    saddles = kb("kb-saddles", "Sizes run from 48 to 62 cm.", heading="Sizes", title="Saddles")
    ticket = Ticket("T-1", "Sizes", "Which sizes do your helmets come in?")
    evidence = hits(helmets, saddles)
    units = evidence_units(evidence)
    scorer = UnitScorer(ticket, ticket_questions(ticket), units, evidence, None)
    assert scorer.lexical(0, 0) > scorer.lexical(0, 1)
    # A resolved ticket's "title" is its customer's question, not a heading.
    answer = "Yes, they fit most riders from the age of eight."
    asked = Passage("RT-1#answer", "RT-1", DocKind.RESOLVED, "Helmets", (), f"Helmets\n\n{answer}")
    rt = evidence_units(hits(asked))
    rt_scorer = UnitScorer(ticket, ticket_questions(ticket), rt, hits(asked), None)
    assert rt_scorer.lexical(0, 0) == 0.0
