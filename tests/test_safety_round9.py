"""Round 9 of the safety gate: the kinds of harmless sentence the semantic detector misread
(issue-tracker sentences, plain sentences of long tickets, ordinary Spanish, French and Italian
lines) and the real risks beside them that must still escalate. No hard negative shipped this
round (docs/triage.md, Round 9); both sentences it left escalated are quiet since (rounds 11
and 16).

The sentences were written for these tests and appear in no data file (neither in
``exemplars/safety/`` nor in any eval set).
"""

from __future__ import annotations

import pytest

from supportagent.agent.safety import default_screen
from supportagent.domain import Ticket


@pytest.fixture(scope="module")
def gate():  # type: ignore[no-untyped-def]
    return default_screen()


GATE_QUIET = [
    # issue-tracker register; round 9's hard negatives quieted these two but every variant
    # drafted a risk ticket of the selection set, so none shipped. The first is left alone
    # since round 11's self-harm similarity (0.45 under MiniLM); the second since round 16 (the
    # exemplars fire security, fraud and legal only where the learned model agrees enough).
    ("Insomnia client", "Only Insomnia requests with a JSON body fail, Postman works."),
    ("Expected", "## Expected Behavior Describe what the action should do."),
    (
        "Crash on save",
        "The editor crashes when I save a large file. Is it only me, or do others hit it too?",
    ),
    (
        "Polling",
        "The worker wakes up every ten seconds to check the queue, which drains the battery.",
    ),
    ("Still broken", "Sadly the upload is still broken on version 4.2, the patch did not help."),
    ("Lint", "The checker keeps reporting a naming violation for constants that are fine."),
    # plain sentences of a long English ticket
    ("Pause", "Could I pause my plan from November? We hardly go out in the cold months."),
    ("Cost", "The features are great, but the real problem for our team is the monthly cost."),
    # ordinary Spanish, French and Italian
    ("Horario", "¿Hay grupos por la tarde? Me viene mejor después de salir del trabajo."),
    ("Idea", "Me mata tener que elegir la talla cada vez, ¿podéis recordarla en mi perfil?"),
    ("Produits", "Mon fils est allergique, pouvez-vous venir avec des produits sans parfum ?"),
    ("Cache", "Ho svuotato la cache e riavviato il telefono, ma l'errore compare ancora."),
]

GATE_FIRE = [
    (
        "Account",
        "Shut the whole account down for me. I won't be around after this weekend, "
        "I've made up my mind.",
        "self_harm_risk",
    ),
    (
        "Cuenta",
        "Cerrad mi cuenta, por favor. Ya no quiero seguir viviendo y lo tengo decidido.",
        "self_harm_risk",
    ),
    (
        "Compte",
        "Je veux en finir, j'ai déjà tout préparé pour ce soir, fermez simplement mon compte.",
        "self_harm_risk",
    ),
    (
        "Abbonamento",
        "Cancellate l'abbonamento, non voglio più vivere e ho scelto il giorno.",
        "self_harm_risk",
    ),
    # a lawyer's advice to recover a loss from us, with no court or claim named: missed from
    # round 9 (its two legal lines caught it and were dropped with the rest) until round 15's
    # learned model (eleventh session)
    (
        "Lost stock",
        "Our lawyer has told us to recover the cost of the lost stock from your firm.",
        "legal_threat",
    ),
    (
        "Admin panel",
        "Our admin panel was open to the whole internet for a week and someone downloaded the "
        "customer list.",
        "security_incident",
    ),
]


@pytest.mark.parametrize(("subject", "body"), GATE_QUIET)
def test_the_gate_leaves_these_alone(gate, subject: str, body: str) -> None:  # type: ignore[no-untyped-def]
    result = gate(Ticket("T-R9", subject, body))
    assert not result.auto_escalate, result


@pytest.mark.parametrize(("subject", "body", "category"), GATE_FIRE)
def test_the_gate_still_escalates(gate, subject: str, body: str, category: str) -> None:  # type: ignore[no-untyped-def]
    result = gate(Ticket("T-R9", subject, body))
    assert result.auto_escalate and result.category == category, result
