"""Round 27 (twenty-fourth session, from risk_blind20 released as tune): a detail that reached
someone though the writer told nobody else, asked as whom we passed it to, or kept in the private
part of a form that someone else read; money taken by a caller or a visitor who said they were
from us; money paid through something that wore our logo, crest or colours; and a full name as
personal data in five more languages.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone

FIRES = [
    (
        "The new tenant downstairs knew our alarm code, and we've told nobody else.",
        "security_incident",
    ),
    (
        "A dealer rang my aunt about her hearing aids the day after your visit. Who have you "
        "sold her details to?",
        "security_incident",
    ),
    (
        "The coach knew which bus my daughter takes, which was only in the private section of "
        "her player profile.",
        "security_incident",
    ),
    (
        "The seating plan, which your team promised only the two families would see, is pinned "
        "to the venue's noticeboard.",
        "security_incident",
    ),
    (
        "A woman turned up at the shop claiming she was from your card team and took €300 for "
        "a new terminal.",
        "payment_fraud",
    ),
    (
        "I paid $95 for the renewal through a link in a text with your logo and green colours.",
        "payment_fraud",
    ),
    (
        "Dans l'onglet Équipe je vois les fiches d'autres salariés, avec leur nom complet et leur "
        "IBAN.",
        "security_incident",
    ),
    (
        "In der App stehen die Abrechnungen einer anderen Mitarbeiterin mit vollständigem Namen "
        "und Steuer-ID.",
        "security_incident",
    ),
]

QUIET = [
    "I've told nobody else about the surprise party yet, so please keep the booking quiet?",
    "Who can I pass my details to if I'm away on the day?",
    "What goes in the private section of a player profile?",
    "Which of our staff can see the seating plan?",
    "A man from your card team came and fitted the new terminal; it works well.",
    "We ordered 200 flyers with your logo and paid £60; they look great.",
    "Dove inserisco il nome completo e l'IBAN per il rimborso?",
]


@pytest.mark.parametrize(("text", "category"), FIRES)
def test_round27_rows_fire(text: str, category: str) -> None:
    assert_escalates(text, category)


@pytest.mark.parametrize("text", QUIET)
def test_round27_rows_stay_quiet(text: str) -> None:
    assert_left_alone(text)
