"""Round 19 (fifteenth session, from risk_blind12 released as tune): negations typed without
their apostrophe read as negations; others better off if the writer were not here, and a plan
for how; someone who left the team still able to get in; a login on a sticky note in view; a
file that has every other guest's passport number or address; someone else's form printed for
the writer; a no-win-no-fee firm gone to, a lawyer in the family drafting, environmental health
looking into it; bookings on a card statement in names nobody knows; an amount asked back
onto the card.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone, triaged
from supportagent.agent.safety import rule_view
from supportagent.domain import Bucket
from supportagent.engines.classifier import load_classifier_rules
from supportagent.textnorm import prose

FIRES = [
    ("honestly i dont want to be alive any more", "self_harm_risk"),
    ("my kids would be better off if i wasnt around", "self_harm_risk"),
    ("I think everyone would be better off once I was gone.", "self_harm_risk"),
    ("i've been planning how. anyway, what time do you close", "self_harm_risk"),
    ("A manager who left in March is still logging in to our rota.", "security_incident"),
    ("the volunteer that left last year can still see our members list", "security_incident"),
    ("The passwords for the tills are written on a sticky note by the door.", "security_incident"),
    (
        "the shared sheet lists each other parent's home address and phone number",
        "security_incident",
    ),
    ("Your kiosk handed me another guest's consent form with her allergies.", "security_incident"),
    ("We've now spoken to a no-win, no-fee solicitor about the fall.", "legal_threat"),
    ("my cousin is a solicitor and he's preparing a letter about the damage", "legal_threat"),
    ("The environmental health officers are investigating the kitchen.", "legal_threat"),
    (
        "We dismissed a driver in May and last night he logged in and exported the customer list.",
        "security_incident",
    ),
    ("Our solicitor has already issued proceedings against your company.", "legal_threat"),
    (
        "There are two tickets on my gran's card statement for names she has never heard of.",
        "payment_fraud",
    ),
]

QUIET = [
    "We'd all be better off if I wasn't here on Saturdays, so can the class move to Sunday?",
    "I've started planning how the club will use the new courts.",
    "A coach who left in March still has a locker key; can he return it by post?",
    "Should we keep the till passwords on a sticky note or is there a better way?",
    "Does the sign-up sheet need each other guest's date of birth?",
    "Is a no win no fee lawyer worth it for a neighbour dispute? Asking for a friend.",
    "My daughter is a solicitor and she's preparing for her exams, so can we book Sunday?",
    "Does environmental health inspect the café?",
    "It wasnt clear from the page: do you open on bank holidays?",
    "We let our cleaner go in June; she asks whether she can still download her payslips.",
    "Will the lessons show on my statement under your name or the coach's?",
]


@pytest.mark.parametrize(("text", "category"), FIRES)
def test_the_new_rows_escalate(text: str, category: str) -> None:
    assert_escalates(text, category)


@pytest.mark.parametrize("text", QUIET)
def test_the_new_rows_leave_these_alone(text: str) -> None:
    assert_left_alone(text)


@pytest.mark.parametrize(
    ("typed", "read"),
    [
        ("i dont want to go on", "i don't want to go on"),
        ("It WASNT me, and they havent called", "It WASn't me, and they haven't called"),
        # Words of their own, and German "im", are left as they are.
        ("I cant find the wont setting im Konto", "I cant find the wont setting im Konto"),
    ],
)
def test_a_negation_without_its_apostrophe_is_read_with_one(typed: str, read: str) -> None:
    assert rule_view(typed) == read


def _money_row_fires(text: str) -> bool:
    (rule,) = [r for r in load_classifier_rules() if r.name == "own_charge_or_invoice"]
    return rule.find(prose(text)) is not None


def test_an_amount_asked_back_onto_the_card_is_a_money_request() -> None:
    body = (
        "We played on Thursday and were charged the weekend price. Could you send the £8 "
        "difference back to my debit card? Also is the bar open late on Fridays?"
    )
    assert _money_row_fires(body)
    bucket, reason = triaged(body, "court booking")
    # The gate may name it payment fraud first (its learned model reads a refund onto a card
    # so); either way it reaches a person and is never drafted.
    assert bucket is Bucket.NEEDS_HUMAN, reason


def test_asking_how_long_a_refund_takes_is_not_a_money_request() -> None:
    assert not _money_row_fires("How long does a refund take to go back on my card?")
