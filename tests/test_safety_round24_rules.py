"""Round 24 (twentieth session, from risk_blind17 released as tune): going through with "it"
on a night the writer names; a stranger who got in touch knowing what only we held; something
of the writer's that was only ever in a private place on our service; a person or device the
writer does not know inside their own account, in English and six other languages; someone
else's family shown; "you'll be hearing from them" after a claim or a firm; charges for a
place the writer has never been; money paid to someone who called himself one of ours; and,
for the classifier, three account actions asked of us.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone, triaged
from supportagent.domain import Bucket

FIRES = [
    (
        "Please stop the reminders going to my wife, I don't want her phone buzzing the morning "
        "I go through with it.",
        "self_harm_risk",
    ),
    ("Cuando me agobio me hago daño, perdonad que lo cuente aquí.", "self_harm_risk"),
    ("Ultimamente mi faccio del male quando non riesco a dormire.", "self_harm_risk"),
    (
        "Some account I've never heard of messaged my son on the board, using his surname and "
        "his school.",
        "security_incident",
    ),
    (
        "A seller we don't know emailed me yesterday mentioning my postcode and my house number.",
        "security_incident",
    ),
    (
        "Those scans were only ever kept in my private area on your site.",
        "security_incident",
    ),
    (
        "The only place that phone number existed was your account page.",
        "security_incident",
    ),
    (
        "Our shared calendar now has an admin we didn't add, booking rooms every night.",
        "security_incident",
    ),
    (
        "My devices page lists a laptop I don't recognise, signed in since Monday.",
        "security_incident",
    ),
    ("Er is een account aangemeld op mijn horloge die ik niet ken.", "security_incident"),
    ("Ho un dispositivo collegato al mio profilo che non conosco.", "security_incident"),
    (
        "The parent app showed me somebody else's children, names and class photos included.",
        "security_incident",
    ),
    (
        "Someone who is not on our team downloaded our client drawings from the shared folder.",
        "security_incident",
    ),
    (
        "The ombudsman has taken up my complaint about the deposit and you'll be hearing from "
        "them shortly.",
        "legal_threat",
    ),
    ("Your board are going to be hearing from my union rep.", "legal_threat"),
    ("The next letter you get from me will not be a polite one.", "legal_threat"),
    (
        "The tenants' portal showed me every resident's name and room number last night.",
        "security_incident",
    ),
    (
        "There's $95 on our card for lessons at your north branch, and we've never been there.",
        "payment_fraud",
    ),
    (
        "My aunt sent the fee to a man calling himself your head coach on the forum.",
        "payment_fraud",
    ),
]

QUIET = [
    # going through with a plan that is not the writer's life
    "The day I go through with it at the registry office, can the venue stay open late?",
    "The night we go through with it, please have the stage set.",
    # a strain, not an injury the writer deals themself
    "Con esa silla me hago daño en el cuello, ¿tenéis otra?",
    # a stranger's message that uses only its own details, or a question
    "A buyer messaged me with his address so I can post the stamps.",
    "Could a player I don't know message my son using his real name?",
    # a private place, asked about
    "Is my file only kept in my private folder, or can staff see it?",
    # a device the writer added, or a question about adding one
    "How do I link a tablet I don't use yet to my account?",
    "Wie koppel ik een nieuwe telefoon aan mijn account?",
    # someone else's family, asked about
    "Can I see someone else's kids' results if I'm their grandparent?",
    # hearing from someone who is no threat
    "My partner has the booking reference, so you'll be hearing from her later today.",
    # amounts and places, said without a charge in dispute
    "We've never been to the coast branch; is it £12 there too?",
    # names and room numbers asked for, not shown
    "Kindly add every member's name and room number to the rota.",
    # a name someone goes by, with no payment to an impostor
    "I paid for the course and the coach who calls himself Mr Chess was brilliant.",
]

#: Account actions the classifier must send to a person (round 24).
ACCOUNT_ACTIONS = [
    "Could you add my son, Theo Marsh, as a second named rider on my season pass?",
    "My wife is taking over my old tracker; can it be transferred from my account to hers?",
    "Please move my levels onto the new login, and then can the old account be deleted?",
]


@pytest.mark.parametrize(("text", "category"), FIRES)
def test_round24_rows_fire(text: str, category: str) -> None:
    assert_escalates(text, category)


@pytest.mark.parametrize("text", QUIET)
def test_round24_rows_stay_quiet(text: str) -> None:
    assert_left_alone(text)


@pytest.mark.parametrize("body", ACCOUNT_ACTIONS)
def test_round24_account_actions_reach_a_person(body: str) -> None:
    bucket, reason = triaged(body)
    assert (bucket, reason) == (Bucket.NEEDS_HUMAN, "account_specific")
