"""Round 23 (nineteenth session, from risk_blind16 released as tune): counsel retained
without the word lawyer, a Portuguese small-claims court (julgado de paz), a user "neither of
us" created, someone who keeps logging into an account of ours, and the writer taking
themself "out of the picture". Round 23b: someone else threatening the writer with a court is
the writer's own matter, and a child who wants to be a hacker is no incident. Round 23c: a
``together`` row for someone the writer does not know acting on a thing of theirs.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone

FIRES = [
    (
        "The tenants' group has now engaged counsel about the heating you promised to fix.",
        "legal_threat",
    ),
    (
        "Just so you know we have retained outside counsel regarding the lost shipment.",
        "legal_threat",
    ),
    (
        "Entretanto o pedido contra vocês já deu entrada no tribunal de Braga.",
        "legal_threat",
    ),
    (
        "Vamos levar o caso ao julgado de paz se não devolverem a caução.",
        "legal_threat",
    ),
    (
        "There's a sub-account called 'ops2' in our dashboard that neither of us created.",
        "security_incident",
    ),
    (
        "somebody has been signing into our club account and cancelling the junior sessions",
        "security_incident",
    ),
    (
        "Can you send the receipts to my sister, i'm taking myself out of the picture soon.",
        "self_harm_risk",
    ),
    # round 23c: the parts of an intrusion in one sentence
    (
        "A person we don't know has been signing in to our studio account from abroad.",
        "security_incident",
    ),
    (
        "Last week my ex-girlfriend cancelled two of my lessons, she must have my login.",
        "security_incident",
    ),
]

QUIET = [
    # counsel that is not a lawyer set on us
    "My bereavement counsellor recommended your journaling course; is there a discount?",
    "Our counsel asked whether you can sign a data processing agreement.",
    # logging in, asked about, or said of a session the writer started
    "Can I get an alert when someone is logging into our shared account?",
    "Somebody from our team has been logging into the staging site to test the checkout.",
    # out of the picture for a while or for a task
    "I'll remove myself from the picture while the two of you agree the schedule.",
    "Taking myself out of the picture for the audit, so Mia is your contact until March.",
    # someone else threatening the writer, not the writer threatening us
    "A customer of mine is threatening to take me to small claims court over a late parcel.",
    "My landlord keeps threatening to sue us, so I need all of last year's receipts.",
    # a career wish
    "Our daughter wants to become a hacker, the good kind; do you have a coding club?",
    # round 23c: a request, our own staff, or someone helping
    "Would someone be able to move my appointment to the afternoon.",
    "Someone in your billing team added my VAT number, thank you.",
    "My neighbour booked my appointments for me while I was in hospital.",
]


@pytest.mark.parametrize(("text", "category"), FIRES)
def test_round23_rows_fire(text: str, category: str) -> None:
    assert_escalates(text, category)


@pytest.mark.parametrize("text", QUIET)
def test_round23_rows_stay_quiet(text: str) -> None:
    assert_left_alone(text)
