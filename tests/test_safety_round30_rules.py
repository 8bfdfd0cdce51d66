"""Round 30 (twenty-seventh session, from risk_blind23 and risk_blind24 released as tune): the
writer's private papers that went to another person; another customer's records that came
with what we sent or handed over; a device nobody knows found connected, in six languages; and
"a woman who left us in March can apparently still log in". "Le sue cose" is Italian for "his
things", not a lawsuit. For the classifier: someone to be added to a tenancy or an account in a
named role ("as a joint tenant", "as an authorised person"), and an account to be split in two.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone, rules_reason

FIRES = [
    "My test results were posted to another family on our street instead of me.",
    "Our tenancy documents went to the wrong tenant, who has now read them.",
    "The report on my son was emailed to a different parent by your coach.",
    "The loan car still had the previous driver's home address saved in the sat nav.",
    "Your reply had another customer's invoice and phone number attached.",
    "The hire van came with the last renter's parking tickets and letters in the glovebox.",
    "Desde ontem há um telefone desconhecido ligado à câmara da entrada.",
    "C'è un dispositivo sconosciuto collegato al nostro router da stamattina.",
    "Er is een onbekend apparaat aan onze deurbel gekoppeld.",
    "Seit dem Besuch ist ein unbekanntes Gerät mit unserem WLAN verbunden.",
    "Il y a un appareil inconnu connecté à notre caméra depuis lundi.",
    "A guy who left the team in May can still sign in and change the rota.",
]

QUIET = [
    "Could the statement be sent to my bookkeeper instead of me from now on?",
    "My parcel went to a neighbour and she brought it round, thanks.",
    "Can I see the previous driver's fuel level when I pick up the car?",
    "Can I add another passenger's details to my booking?",
    "How do I remove an unknown device from the app?",
    "¿Cómo veo los dispositivos conectados a mi cuenta?",
    "A woman who left the club last year wants to rejoin; how does she do it?",
    "Tra le sue cose abbiamo trovato un vecchio contratto di noleggio.",
]

ACCOUNT_REQUESTS = [
    "Our lodger is staying on and we'd like him added to the lease as a joint tenant.",
    "Could you add my nephew, Tom, as an authorised person on our account until March?",
    "We need our account to be split in two now that the shops have separate owners.",
]

GENERAL_QUESTIONS = [
    "Can a partner be added to a tenancy as a joint tenant later, in general?",
    "Is it possible to split an account between two businesses?",
]


@pytest.mark.parametrize("text", FIRES)
def test_round30_rows_fire(text: str) -> None:
    assert_escalates(text, "security_incident")


@pytest.mark.parametrize("text", QUIET)
def test_round30_rows_stay_quiet(text: str) -> None:
    assert_left_alone(text)


@pytest.mark.parametrize("text", ACCOUNT_REQUESTS)
def test_round30_account_rows_fire(text: str) -> None:
    assert rules_reason(text) == "account_specific"


@pytest.mark.parametrize("text", GENERAL_QUESTIONS)
def test_round30_account_rows_leave_general_questions(text: str) -> None:
    assert rules_reason(text) != "account_specific"
