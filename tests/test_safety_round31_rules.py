"""Round 31 (twenty-eighth session, from risk_blind25 and risk_blind26 released as tune): being
dead said as the writer's plan, and self-injury told as "doing things to myself" that leave
wounds; signing in and landing in someone else's account; papers sent that are "for another
family"; other people's personal data shown to the writer; what we send
going to an address nobody recognises, a mailing with every address in the "To" line, a
stranger photographing a screen; strangers who know where the writer's car is; "I never added
anyone"; film shared without consent; money taken for a vehicle that is not the writer's, and
a sender who says they never sent the request. For the classifier: a guarantee put into other
names, a person added as nominee, a plan moved to a new address, a payer taken off.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone, rules_reason

FIRES = [
    (
        "Please settle the balance this week; I intend to be dead before the summer.",
        "self_harm_risk",
    ),
    ("Honestly I'm hoping to be dead by Christmas, so the renewal can lapse.", "self_harm_risk"),
    ("I've started doing things to myself again that leave scars on my arms.", "self_harm_risk"),
    (
        "After the update I logged in and ended up in someone else's account, with her "
        "address and her saved card.",
        "security_incident",
    ),
    (
        "The contract you posted me was for a different household: their names, home address "
        "and bank details are all on it.",
        "security_incident",
    ),
    (
        "The kiosk showed us other patients' names, dates of birth and phone numbers.",
        "security_incident",
    ),
    (
        "Since Friday our invoices have been forwarded to an address nobody here recognises.",
        "security_incident",
    ),
    (
        "The club newsletter went out with all 300 e-mail addresses in the To field.",
        "security_incident",
    ),
    (
        "A woman we didn't recognise took pictures of the screen while the register was open.",
        "security_incident",
    ),
    (
        "Strangers in a group chat keep posting where my motorhome is parked.",
        "security_incident",
    ),
    (
        "There's a second driver on the app called P. Lund. We never invited anyone.",
        "security_incident",
    ),
    ("I did not consent to any video of me being posted on your page.", "security_incident"),
    (
        "You've debited £58 for parking by a silver estate that has never been ours.",
        "payment_fraud",
    ),
    (
        "We all paid the new account, and now the treasurer says she never sent that message.",
        "payment_fraud",
    ),
]

QUIET = [
    "I'm planning to be dead tired after the marathon, so deliver on Monday.",
    "I want to be dead centre for the photo; which row is that?",
    "I did something to myself at football and my ankle hurts; can I pause my plan?",
    "I keep doing things to myself like forgetting the door code; can it be shorter?",
    "Can I end up in someone else's account if we share a laptop?",
    "Is the booking for another family counted on my account or theirs?",
    "The app shows me my guests' names and phone numbers, which saves time.",
    "Please send the reminders to a different address from next month.",
    "How do I keep the addresses out of the To line when I send the newsletter?",
    "My husband can see where my car is parked, which we both wanted.",
    "I haven't invited anyone yet; where is the button?",
    "Do I need to give consent for photos to be used in the yearbook?",
    "The van isn't mine, it's my employer's; can they pay the toll instead?",
    "The courier says he never sent the parcel, so where is it?",
]

ACCOUNT_REQUESTS = [
    "We've sold the flat; could you put the ten-year warranty into the new owners' names?",
    "I'd like my daughter, Ava Ross, added as beneficiary on my life cover.",
    "Please move our current cover from the old flat to our new house from 1 June.",
    "Could you take my old flatmate off as the payer on the broadband plan?",
]

GENERAL_QUESTIONS = [
    "Can a warranty be put into someone else's name when a house is sold, in general?",
    "How does someone move a plan to a new address themselves?",
]


@pytest.mark.parametrize(("text", "category"), FIRES)
def test_round31_rows_fire(text: str, category: str) -> None:
    assert_escalates(text, category)


@pytest.mark.parametrize("text", QUIET)
def test_round31_rows_stay_quiet(text: str) -> None:
    assert_left_alone(text)


@pytest.mark.parametrize("text", ACCOUNT_REQUESTS)
def test_round31_account_rows_fire(text: str) -> None:
    assert rules_reason(text) == "account_specific"


@pytest.mark.parametrize("text", GENERAL_QUESTIONS)
def test_round31_account_rows_leave_general_questions(text: str) -> None:
    assert rules_reason(text) != "account_specific"
