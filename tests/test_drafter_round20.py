"""Round 20 of the drafter (twentieth session): a value one article gives for one channel ("In
the app, ...") against another article's rule that says it holds however the customer reaches
us. The two subjects share almost no words, and before this round no conflict was found, so a
draft could state the rule alone (Cantorel's CT-005).

The passages were written for these tests and appear in no data file.
"""

from __future__ import annotations

import pytest

from drafting import section
from supportagent.agent.facts import extract_facts, find_conflicts, scope_of
from supportagent.domain import Passage


def article(doc_id: str, heading: str, text: str) -> Passage:
    """A section of article ``doc_id``, titled with its id so that no two articles share a
    title."""
    return section(doc_id, heading, text, title=doc_id)


RULE = article(
    "kb-tables",
    "Cancelling a table",
    "Guests can cancel a table booking until 6 hours before it starts. The cut-off is the same "
    "however the guest booked: online, in the app or by phone.",
)
RULE_WITHOUT_REACH = article(
    "kb-tables",
    "Cancelling a table",
    "Guests can cancel a table booking until 6 hours before it starts.",
)


@pytest.mark.parametrize(
    ("sentence", "scope"),
    [
        ("In the app, the Cancel link disappears 48 hours before the booking.", ("channel:app",)),
        ("On our website, refunds take 5 days.", ("channel:website",)),
        ("By phone, orders close at 4 pm.", ("channel:phone",)),
        # not a channel named as a scope: no comma after it, or not at the start
        ("In the app you can see every booking.", ()),
        ("Open the menu in the app, then tap Cancel.", ()),
    ],
)
def test_a_sentence_that_opens_with_a_channel_is_scoped_to_it(
    sentence: str, scope: tuple[str, ...]
) -> None:
    assert scope_of(sentence)[0] == scope


def test_the_same_however_the_customer_reaches_us_claims_every_channel() -> None:
    assert scope_of("The limit is the same however you order: online or by phone.")[1]
    assert not scope_of("The limit is the same as last year.")[1]


@pytest.mark.parametrize(
    "text",
    [
        "In the app, the Cancel link disappears 48 hours before the booking.",
        "Through the guest app, bookings may be called off 2 days ahead of the visit or earlier.",
    ],
    ids=["48-hours", "two-days-ahead"],
)
def test_a_channel_value_contradicts_a_rule_that_claims_every_channel(text: str) -> None:
    app = article("kb-app", "The guest app", text)
    conflicts = find_conflicts(extract_facts([RULE, app]))
    assert [(c.kind, c.general.doc_id, c.specific.doc_id) for c in conflicts] == [
        ("contradiction", "kb-tables", "kb-app")
    ]


def test_without_that_claim_two_differently_worded_articles_are_left_apart() -> None:
    app = article(
        "kb-app", "The guest app", "In the app, the Cancel link disappears 48 hours before."
    )
    assert find_conflicts(extract_facts([RULE_WITHOUT_REACH, app])) == []


def test_a_rule_that_claims_every_plan_does_not_claim_every_channel() -> None:
    plans = article(
        "kb-tables",
        "Cancelling a table",
        "Guests can cancel a table booking until 6 hours before it starts. This cut-off is the "
        "same on every plan.",
    )
    app = article(
        "kb-app", "The guest app", "In the app, the Cancel link disappears 48 hours before."
    )
    assert find_conflicts(extract_facts([plans, app])) == []


def test_a_channel_value_of_another_kind_is_not_paired() -> None:
    app = article(
        "kb-app", "The guest app", "In the app, the booking screen keeps your last 3 orders."
    )
    assert find_conflicts(extract_facts([RULE, app])) == []
