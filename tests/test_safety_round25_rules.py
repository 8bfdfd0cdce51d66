"""Round 25 (twenty-second session, from risk_blind18 released as tune): the formal steps
before or beside a claim (a pre-action letter, a judicial review, a named court, an early
conciliation number); a writer who heads off the helpline before it is offered; personal data
of people counted or named as others; and, for the classifier, money asked back as "it", an
amount asked off, and an invoice line for work that was not done.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone, rules_reason, triaged
from supportagent.domain import Bucket

FIRES = [
    (
        "The residents' group has sent a pre-action protocol letter about the car park closure.",
        "legal_threat",
    ),
    (
        "We are applying for judicial review of the way the licence was withdrawn.",
        "legal_threat",
    ),
    ("If the deposit isn't back by Friday, this goes to the county court.", "legal_threat"),
    (
        "I've got an early conciliation certificate and my union says the next step is a claim.",
        "legal_threat",
    ),
    (
        "I'd like my saved routes sent to my brother before the 20th. No need to answer with a "
        "crisis line, I've made my peace with it.",
        "self_harm_risk",
    ),
    (
        "Cancel the grocery slots after this week and spare me the helpline, I know it by heart.",
        "self_harm_risk",
    ),
    (
        "My inbox is full of booking confirmations for three other families, with their home "
        "addresses and phone numbers.",
        "security_incident",
    ),
    (
        "The export I downloaded holds other patients' dates of birth and medical notes.",
        "security_incident",
    ),
]

QUIET = [
    # a court, a review and a tribunal that nobody is taking us to
    "Do you keep the logs long enough for a review, in general?",
    "Our club plays on the court by the high street; can we book it on Sundays?",
    # a helpline for the product
    "Your helpline kept me on hold for forty minutes; is there a chat option?",
    "Is there a helpline number I can call about my order?",
    # other people's details asked about, not shown
    "Can other members see my full name and phone number on the ladder?",
    "How do I add other parents' names and phone numbers to the class list?",
]

#: Money asked back inside a ticket that also asks how things work: the rule table must send
#: it to a person by itself (round 25; the models caught some of these before, not all).
MONEY_ASKS = [
    "Can I bring a guest on Thursday? The weekend rate went on my Tuesday game. Could you "
    "work out the £6 and put it back on my debit card? And do you sell grip tape?",
    "Is the spring clean bookable online yet? The invoice I got on Monday includes £25 for the "
    "windows, but they weren't done that day. Also, do you clean gutters on bungalows?",
    "Do you run lessons at half term? Please take the £12 fee off, the class was cancelled by "
    "you. And is there parking at the back?",
]

#: The same words in a how-to: no rule fires, and the whole triage leaves a question.
MONEY_QUESTIONS = [
    "When a refund is approved, do you put it back on the card I paid with?",
]


@pytest.mark.parametrize(("text", "category"), FIRES)
def test_round25_rows_fire(text: str, category: str) -> None:
    assert_escalates(text, category)


@pytest.mark.parametrize("text", QUIET)
def test_round25_rows_stay_quiet(text: str) -> None:
    assert_left_alone(text)


@pytest.mark.parametrize("body", MONEY_ASKS)
def test_round25_money_asks_reach_a_person(body: str) -> None:
    assert rules_reason(body) == "money_specific"
    assert triaged(body) == (Bucket.NEEDS_HUMAN, "money_specific")


@pytest.mark.parametrize("body", MONEY_QUESTIONS)
def test_round25_money_questions_stay_questions(body: str) -> None:
    assert rules_reason(body) == "question"
    assert triaged(body)[0] is Bucket.ANSWERABLE
