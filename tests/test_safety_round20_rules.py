"""Round 20 (sixteenth session, from risk_blind13 released as tune): a link or folder of ours
that opens onto other customers' records; money demanded in bitcoin; someone signed in to the
writer's account, or sending messages in the writer's name, said in German; asking how one
would find out ("how would i know if someone had logged in") supposes; and, for the
classifier, the e-mail or phone number on the writer's account changed for them, or an account
or contract moved over to a company.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone, triaged
from supportagent.domain import Bucket

FIRES = [
    (
        "the photo link you sent takes me to a folder holding other families' photos and names",
        "security_incident",
    ),
    (
        "Your reminder email had an attachment with every other tenant's contracts in it.",
        "security_incident",
    ),
    ("they are asking for 2,000 dollars in bitcoin to give our files back", "security_incident"),
    ("Ils veulent 400 euros en bitcoins avant vendredi.", "security_incident"),
    ("The sender wants $900 via bitcoin by Monday or the list goes public.", "security_incident"),
    ("Hij wil 250 euro in bitcoin, anders zet hij de foto's online.", "security_incident"),
    ("Heute Morgen hat sich jemand Fremdes mit meinem Account eingeloggt.", "security_incident"),
    ("Jemand hat in meinem Namen zwei Kurse gebucht, die ich nie wollte.", "security_incident"),
    # A report after the question is still a report: asking how to tell supposes only itself.
    (
        "How would I know who it was? Someone else had logged into my account on Sunday.",
        "security_incident",
    ),
]

QUIET = [
    "Will the folder link open other members' files too, or only the ones I upload?",
    "Can I pay for the party in bitcoin or only by card?",
    "Will you accept payment in bitcoin?",
    "Our client will pay in bitcoin, is that ok?",
    "My son wants to pay 40 pounds in bitcoin for his membership.",
    "Customers keep asking for a way to pay in crypto.",
    "We want to put 50 euro in crypto into the raffle prize, is that allowed?",
    "Wie melde ich mich mit meinem Konto auf dem Tablet an?",
    "Darf mein Mann in meinem Namen anrufen und Termine verschieben?",
    "Is there a page with other customers' reviews of the studio?",
    "how would i know if someone else had logged into my account? nothing has happened yet",
    "How can we tell whether someone has been using our login from another office?",
]


@pytest.mark.parametrize(("text", "category"), FIRES)
def test_round20_rows_escalate(text: str, category: str) -> None:
    assert_escalates(text, category)


@pytest.mark.parametrize("text", QUIET)
def test_round20_rows_leave_these_alone(text: str) -> None:
    assert_left_alone(text)


ASKS = [
    "hi, could you please update the email address on my account to my new one? the old one "
    "closes on friday.",
    "we have formed a partnership now, so the membership should be in the name of the "
    "partnership from april.",
    "please can you transfer our booking over to the company, it is paying from now on.",
]

HOW_TOS = [
    "How can I update the email address on my account?",
    "In general, can a membership be in the name of a partnership?",
    "Is it possible to move a booking over to a company later, and is there a fee?",
]


@pytest.mark.parametrize("body", ASKS)
def test_a_change_to_the_writers_own_account_goes_to_a_person(body: str) -> None:
    assert triaged(body) == (Bucket.NEEDS_HUMAN, "account_specific")


@pytest.mark.parametrize("body", HOW_TOS)
def test_asking_how_such_a_change_works_is_still_answered(body: str) -> None:
    assert triaged(body)[0] is Bucket.ANSWERABLE
