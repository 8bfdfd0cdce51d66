"""Round 13's rule rows (ninth session): data of others seen with the data named first,
someone else's home or account shown, something private found in search results, a colleague's
lost phone; a lawyer "spoken to" and the company reported to any body; an Italian lawyer or
consumer association turned to; a farewell after a weekday ("after Sunday I'm not going to be
here").

The sentences were written for these tests and appear in no data file (neither in the rule
table's examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone
from supportagent.agent.safety import default_screen
from supportagent.domain import Bucket, Ticket
from supportagent.engines.classifier import Classifier

FIRES = [
    # round 13's second batch, from the tune sets' risks told in passing
    (
        "Our cart shows two furniture orders to a flat in Bristol that we never placed.",
        "payment_fraud",
    ),
    (
        "I bought nothing at all last month, but my card shows four purchases from you.",
        "payment_fraud",
    ),
    (
        "Whoever has the files says they will publish them unless we transfer 1 BTC.",
        "security_incident",
    ),
    (
        "An editor called 'ops_temp' appeared in our team and nobody here set it up.",
        "security_incident",
    ),
    (
        "Somebody cancelled all our Tuesday classes through our account last night.",
        "security_incident",
    ),
    ("This morning I got an email with a login link that I didn't ask for.", "security_incident"),
    (
        "A parent posted the coach's login details in the public WhatsApp group.",
        "security_incident",
    ),
    ("We consider your price change to be a serious breach of the contract.", "legal_threat"),
    (
        "The invoice email had the names and home addresses of about twenty other tenants in it.",
        "security_incident",
    ),
    (
        "Your driver app displays the gate codes for all the other households on the street.",
        "security_incident",
    ),
    (
        "This morning the dashboard started showing me someone else's orders and their address.",
        "security_incident",
    ),
    ("The app is showing me the heating schedule of a house that isn't ours.", "security_incident"),
    ("Our unlisted price sheet is now showing up in Google search results.", "security_incident"),
    (
        "My daughter lost her phone at school and the app is still logged in on it.",
        "security_incident",
    ),
    ("I have already spoken with a solicitor about the damaged bike.", "legal_threat"),
    ("Just so you know, I've reported your business to the county trading office.", "legal_threat"),
    ("Abbiamo già sentito con il nostro avvocato per i soldi della caparra.", "legal_threat"),
    ("Ho segnalato tutto a un'associazione dei consumatori della mia città.", "legal_threat"),
    (
        "Pass the allotment plot to my neighbour; after Saturday I'm not going to be here to "
        "look after it.",
        "self_harm_risk",
    ),
]

QUIET = [
    "I bought nothing new this month; when is the next invoice due?",
    "Someone on my team deleted a class in our account; can we restore it?",
    "Is a late delivery a breach of your terms of service?",
    "Can I post the booking link on our public Facebook page?",
    "Can I see the names of the other parents in the group before I join?",
    "Could the app show the opening hours for every branch on one page?",
    "Is someone else's card allowed on my account if they live with me?",
    "Does a private gallery ever show up in search results, or is it hidden?",
    "How do I report a broken bike to the office?",
    "Who do I report a lost item to at the front desk?",
    "After Saturday I'm not going to be here until the 9th, so please hold my box.",
    "Il mio avvocato di famiglia chiede una copia della fattura per la dichiarazione.",
]


@pytest.mark.parametrize(("text", "category"), FIRES)
def test_the_new_rows_escalate(text: str, category: str) -> None:
    assert_escalates(text, category)


@pytest.mark.parametrize("text", QUIET)
def test_the_new_rows_leave_these_alone(text: str) -> None:
    assert_left_alone(text)


ACCOUNT_REQUESTS = [
    "Quick one about receipts first. Also, my sister has her own login by mistake; please merge "
    "her bookings into my account.",
    "How do I print the calendar? By the way we sold the bakery, so the account has to go into "
    "the new owners' names.",
    "We're changing committee. I'd like Dana Whitlock to be the owner from now on.",
]


@pytest.mark.parametrize("body", ACCOUNT_REQUESTS)
def test_an_account_handed_over_or_merged_reaches_a_person(body: str) -> None:
    ticket = Ticket(id="r13", subject="Account", body=body)
    result = Classifier().classify(ticket, default_screen()(ticket))
    assert result.bucket is Bucket.NEEDS_HUMAN and result.reason_code == "account_specific", (
        result.reason
    )
