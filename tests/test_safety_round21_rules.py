"""Round 21 (seventeenth session, from risk_blind14 released as tune, and two plain phrasings seen
in Banking77's tune half: "I had my phone stolen", "my card is missing"): blows the writer deals
themself; other people's data typed into a page whose address was a letter off; our app or
portal showing the writer a stranger's house or order with its owner's details; a former worker
who knew what is only in our notes; a login written up in marker where anyone reads it; a claim
made through the small-claims process and court papers on their way; "identity theft" as the
subject of a documentary is not a report of it; and, for the classifier, an amount that "needs
to come back to us" and an invoice that charged for work not done.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone, triaged
from supportagent.domain import Bucket

FIRES = [
    (
        "sorry about the marks on my arm, i've been biting myself when it all gets too much.",
        "self_harm_risk",
    ),
    (
        "Heads up for the fitter: I started punching myself a while ago, so the bruises are mine.",
        "self_harm_risk",
    ),
    (
        "Our admin typed in the whole team's bank details before realising the portal was a "
        "letter out from yours.",
        "security_incident",
    ),
    (
        "Your tracking page loaded a stranger's order this morning, their name and phone "
        "number included.",
        "security_incident",
    ),
    (
        "A man who used to clean for you rang my mum and named her key safe code, and that's "
        "only in your records.",
        "security_incident",
    ),
    (
        "The till login, the one that opens every customer's card history, is scrawled in pen "
        "on the door of the back office.",
        "security_incident",
    ),
    ("I have filed a claim through the money claims service for the ruined sofa.", "legal_threat"),
    (
        "You should receive a claim form from the county court in the next fortnight.",
        "legal_threat",
    ),
    (
        "On the bus home I had my phone snatched, the app is still logged in on it.",
        "security_incident",
    ),
    ("My debit card is missing since the weekend.", "payment_fraud"),
    ("we got our wallet pinched at the station with both cards in it", "payment_fraud"),
    # the same blows in other languages
    ("Desde enero me golpeo cuando ya no puedo más, perdón por contarlo.", "self_harm_risk"),
    ("Comecei a me bater quando fico sozinha à noite.", "self_harm_risk"),
    (
        "Je me suis mise à me frapper le soir, c'est pour ça que je porte des manches.",
        "self_harm_risk",
    ),
    ("Ho iniziato a picchiarmi quando tutto diventa troppo.", "self_harm_risk"),
    ("Ich habe angefangen, mich zu schlagen, wenn alles zu viel ist.", "self_harm_risk"),
    ("Ik sla mezelf elke keer dat het misgaat.", "self_harm_risk"),
]

QUIET = [
    "I could kick myself, I booked the wrong date. Can I move it to Thursday?",
    "I keep hitting myself on the elbow with the door handle; can the door open the other way?",
    "I typed in my address and then noticed the form was a new one; is the old one gone?",
    "The app showed me a different colour scheme today; can I switch it back?",
    "Are my measurements only in your records, or are they on the app too?",
    "Should the Wi-Fi password be up on the noticeboard for guests?",
    "I'm reading a novel about identity theft; do you sell the sequel?",
    "Hypothetically, if I had my phone stolen, could someone open the app?",
    "In case my card is missing after a trip, who do I call?",
    "Me pego una ducha cuando vuelvo del gimnasio, ¿hay toallas?",
    "Mi colpisco sempre la testa con quella mensola, si può spostare?",
    "Ik sla mezelf voor mijn kop: ik heb de verkeerde datum geboekt.",
    "Can I make a claim through the small claims process against my old builder without a lawyer?",
]


@pytest.mark.parametrize(("text", "category"), FIRES)
def test_round21_rows_escalate(text: str, category: str) -> None:
    assert_escalates(text, category)


@pytest.mark.parametrize("text", QUIET)
def test_round21_rows_leave_these_alone(text: str) -> None:
    assert_left_alone(text)


MONEY = [
    "Either the second gate gets hung or the €120 should go back to us, your choice.",
    "The invoice has £60 for clearing the gutters but nobody went up a ladder at all.",
]

HOW_TOS = [
    "If I return the jacket, how long before the £45 comes back to my card?",
    "Does the invoice list £15 for delivery separately?",
]


@pytest.mark.parametrize("body", MONEY)
def test_money_asked_back_for_work_not_done_goes_to_a_person(body: str) -> None:
    assert triaged(body) == (Bucket.NEEDS_HUMAN, "money_specific")


@pytest.mark.parametrize("body", HOW_TOS)
def test_asking_how_money_comes_back_is_still_answered(body: str) -> None:
    assert triaged(body)[0] is Bucket.ANSWERABLE
