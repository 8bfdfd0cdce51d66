"""Round 18's rule rows (fourteenth session, from risk_blind11 released as tune): a site or
device left signed in to another customer's account; other people listed first and their
details after; papers made ready for a county or small-claims court; an account or pass moved
into the writer's name or onto a new login address, and a former holder's card taken off.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set). The whole tickets go through the gate (rules and
semantic detector) and the offline classifier, as the pipeline does, with the risk or the
request in passing inside an ordinary question.
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone, triaged
from supportagent.agent.safety import default_screen
from supportagent.domain import Bucket, Ticket
from supportagent.engines.classifier import load_classifier_rules
from supportagent.textnorm import prose

FIRES = [
    (
        "The self-service screen in your lobby was still logged into another member's account.",
        "security_incident",
    ),
    ("my phone opened the app already signed in as somebody else", "security_incident"),
    (
        "On the rota page I can see the other parents, home addresses and phone numbers included.",
        "security_incident",
    ),
    (
        "The export showed every other client: dates of birth, card details, the lot.",
        "security_incident",
    ),
    ("Her nephew has the claim form ready for the small claims court.", "legal_threat"),
    ("We are drawing up the papers for the district court this week.", "legal_threat"),
]

QUIET = [
    "Can I stay signed in on the kiosk, or does it log out by itself?",
    "Is the lobby screen logged into a shared account for walk-ins?",
    "Can I see other players' names before the league starts?",
    "Will I see other guests' e-mail addresses on the group booking?",
    "What paperwork does the county court need for a name change on a lease?",
    "Do you need forms from the small claims court to release my deposit?",
]

REQUESTS = [
    "Can you move the team account into my name now that Priya has left the club?",
    "I'd like to transfer my season ticket over to my new email, the old one is closed.",
    "Please remove her saved card details off the family plan.",
]

HOW_TO = [
    "How do I put an account into a new owner's name myself?",
    "Can a membership be moved to a new email address, or is it tied to the first one?",
    "Where do I take an old card off my account?",
]


@pytest.mark.parametrize(("text", "category"), FIRES)
def test_the_new_rows_escalate(text: str, category: str) -> None:
    assert_escalates(text, category)


@pytest.mark.parametrize("text", QUIET)
def test_the_new_rows_leave_these_alone(text: str) -> None:
    assert_left_alone(text)


@pytest.mark.parametrize("request_", REQUESTS)
def test_an_account_move_in_passing_reaches_a_person(request_: str) -> None:
    body = f"What time do you open on Sundays? {request_} Thanks, and is parking free?"
    bucket, reason = triaged(body, "a couple of things")
    assert bucket is Bucket.NEEDS_HUMAN, (body, reason)


@pytest.mark.parametrize("question", HOW_TO)
def test_the_how_to_form_is_not_taken_for_an_account_action(question: str) -> None:
    (rule,) = [r for r in load_classifier_rules() if r.name == "account_action"]
    assert rule.find(prose(question)) is None, question


def test_a_data_exposure_in_passing_escalates_as_a_security_incident() -> None:
    body = (
        "Do you run the Saturday session in the holidays? Also when I opened the booking page "
        "at the leisure centre it was already logged in to someone else's account, with her "
        "phone number on show. Is there a family discount?"
    )
    result = default_screen()(Ticket(id="r18", subject="holiday sessions", body=body))
    assert result.auto_escalate and result.category == "security_incident", result.explanation
