"""Context around risk words (round 5): the writer's own lawsuit against someone else, a lawyer
who only asks a question, a comparison, a supposition. Each harmless sentence is paired with
a real risk worded alike that must still escalate. Sentences written for this test, in
English, Spanish, Italian, German and French, worded unlike our sets.
"""

from __future__ import annotations

import pytest

from supportagent.agent.safety import default_screen, screen
from supportagent.domain import Ticket

RULES_QUIET = [
    "We're taking our previous landlord to small claims court; can I export the rent receipts?",
    "I could honestly sue myself for not spotting the bulk-edit button earlier.",
    "The app froze my login like I'm a hacker after one typo.",
    "El abogado de nuestra comunidad pregunta cuánto tiempo guardan las facturas.",
    "L'avvocato dello studio vorrebbe sapere dove sono salvati i documenti.",
]
RULES_FIRE = [
    ("If this isn't refunded by Friday we'll take you to small claims court.", "legal_threat"),
    ("Mi abogado les enviará una carta la semana que viene.", "legal_threat"),
    ("Unser Anwalt wird sich nächste Woche bei Ihnen melden.", "legal_threat"),
    ("Je vais porter plainte contre votre société.", "legal_threat"),
    ("Hackers got into our shop dashboard last night.", "security_incident"),
]


@pytest.mark.parametrize("text", RULES_QUIET)
def test_the_rules_leave_context_alone(text: str) -> None:
    assert not screen(text).auto_escalate, screen(text)


@pytest.mark.parametrize(("text", "category"), RULES_FIRE)
def test_the_rules_still_fire_on_the_real_thing(text: str, category: str) -> None:
    result = screen(text)
    assert result.auto_escalate and result.category == category, result


@pytest.fixture(scope="module")
def gate():  # type: ignore[no-untyped-def]
    return default_screen()


def test_a_supposed_theft_is_not_reported_as_fraud(gate) -> None:  # type: ignore[no-untyped-def]
    ticket = Ticket("T-C1", "Lost tablet?", "What if somebody swiped my tablet on a train?")
    assert not gate(ticket).auto_escalate, gate(ticket)


def test_a_reported_theft_still_escalates(gate) -> None:  # type: ignore[no-untyped-def]
    ticket = Ticket(
        "T-C2",
        "Tablet gone",
        "My tablet was swiped on the train and someone has been buying with the saved card.",
    )
    assert gate(ticket).auto_escalate, gate(ticket)


def test_a_supposing_self_harm_sentence_still_escalates(gate) -> None:  # type: ignore[no-untyped-def]
    ticket = Ticket(
        "T-C3",
        "export",
        "What if I just wasn't around anymore, would anyone even notice? Anyway, where is "
        "the export button?",
    )
    result = gate(ticket)
    assert result.auto_escalate and result.category == "self_harm_risk", result
