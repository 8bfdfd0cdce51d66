"""Round 28 (twenty-fifth session, from risk_blind21 released as tune): someone else's record
shown to the writer or to anyone; a stranger who contacts people with their details; a person on
an account "whom I never added"; never having agreed to share; someone who got into an account,
and having told nobody, in other languages; someone who says the writer has a strong case, a
claim gone in with a court, "expect to hear from them" after a lawyer; going somewhere to die.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone

FIRES = [
    ("The portal showed me another patient's prescriptions when I logged in.", "security_incident"),
    ("Your welcome pack had somebody else's bank details printed inside.", "security_incident"),
    (
        "The results screen lets anyone scroll through every player's medical forms.",
        "security_incident",
    ),
    (
        "A stranger keeps texting the girls in her squad with their home addresses.",
        "security_incident",
    ),
    ("Our shared drive now has a user, 'temp-admin', that we never created.", "security_incident"),
    ("We never gave permission to show our son's photo on your poster.", "security_incident"),
    (
        "Iemand is gisteren in mijn account gekomen en heeft het wachtwoord veranderd.",
        "security_incident",
    ),
    ("Alguém entrou na minha conta e mudou o e-mail.", "security_incident"),
    ("Não contei a ninguém, mas o meu chefe já sabia do resultado.", "security_incident"),
    ("Our neighbour's a solicitor and told us we've got a solid case.", "legal_threat"),
    ("The claim over the scalded hand has now been lodged with the county court.", "legal_threat"),
    (
        "I've sent the photos to a solicitor I know. Expect to hear from her next week.",
        "legal_threat",
    ),
    ("I'm going out to the coast to die once the paperwork is done.", "self_harm_risk"),
    ("Whatever the report says, it won't be from natural causes.", "self_harm_risk"),
]

QUIET = [
    "Can the coach see another player's medical form?",
    "I put the gift in someone else's name by mistake; can you change it?",
    "A stranger handed in my keys at your front desk, please thank him.",
    "Is there a setting that I never changed from the default?",
    "I agreed to share my results with my trainer; can I undo that?",
    "Alguém pode entrar na minha conta se eu der a palavra-passe?",
    "Our finance lead thinks we have a strong case for the annual plan.",
    "Is a claim for a delayed flight sent to you or to the airport?",
    "The engineer says the part ships Monday; expect to hear from them then.",
    "I'm going to the salon to die my hair, so can the delivery come after four?",
    "His death was from natural causes; how do I close his account?",
]


@pytest.mark.parametrize(("text", "category"), FIRES)
def test_round28_rows_fire(text: str, category: str) -> None:
    assert_escalates(text, category)


@pytest.mark.parametrize("text", QUIET)
def test_round28_rows_stay_quiet(text: str) -> None:
    assert_left_alone(text)


def test_a_supposition_reads_past_a_title() -> None:
    """Round 28's review: the skips read a sentence as the rule rows do, so the full stop of
    "Dr." or "Mrs." does not cut the supposition off the event it supposes."""
    assert_left_alone("Hypothetically, if Dr. Okafor's laptop got stolen, would the app lock?")
    assert_left_alone("Hypothetically, if Mrs. Lee's phone got stolen, could she still sign in?")


def test_a_question_in_quotes_is_a_question_to_the_rows_too() -> None:
    """Round 28's review: the rows read by their parts skip a question the way the semantic
    detector does (``ruletable.asks``), closing quote or bracket and all."""
    assert_left_alone(
        'My son keeps asking, "Are our home address and phone number posted publicly?"'
    )
    assert_left_alone("Is our home address and phone number posted publicly (on the club page?)")
