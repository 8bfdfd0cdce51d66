"""Round 22 (eighteenth session, from risk_blind15 released as tune): rows that read a sentence
by its parts (``together``: two kinds of personal data in one sentence that says they reached
people they were not for; two amounts set against each other), "ending things" said of the
writer's own life, a booking or reservation named by its code, and a third party's threat to
send what they took unless paid.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set).
"""

from __future__ import annotations

import numpy as np
import pytest

from rule_rows import assert_escalates, assert_left_alone, triaged
from supportagent.agent.safety import parse_rules
from supportagent.agent.safety_semantic import SentenceScores, load_thresholds
from supportagent.domain import Bucket
from supportagent.engines.classifier import load_classifier_rules

FIRES = [
    (
        "The coach's app pinged me the match sheet for some other kid, with his date of birth "
        "and his mum's phone number on it.",
        "security_incident",
    ),
    (
        "Somebody in your warehouse posted a picture of our parcel label online, full name and "
        "home address clearly readable.",
        "security_incident",
    ),
    (
        "the treasurer sent the spreadsheet of all the members' bank details and addresses to "
        "the whole group chat by mistake",
        "security_incident",
    ),
    (
        "I keep the dog walks going for now, but before I end things I want her rehomed properly.",
        "self_harm_risk",
    ),
    (
        "Booking the cottage one last time with my girls before i go through with it, they "
        "don't know.",
        "self_harm_risk",
    ),
    (
        "An email from nobody we know says they will send our client files to the newspaper "
        "unless we pay 3,000 euros by Monday.",
        "security_incident",
    ),
]

QUIET = [
    # the same parts, but asked, or nothing shown to anyone
    "Would my full name and home address be visible to other members on the leaderboard?",
    "Please update my home address and phone number, I moved last week.",
    "I've posted you my new address; my phone number stays the same.",
    "Another member asked for my phone number and address, and I was happy to give them.",
    # ending something that is not a life
    "Before I end things with my current broadband provider, can you confirm the install date?",
    "We're going through with it: the extension starts in May, so can you quote for the wiring?",
    "If I end the free trial early, do I lose my drafts?",
    # a supplier's terms, not a threat
    "The framers won't send the prints unless we pay the balance; can you chase them?",
]


@pytest.mark.parametrize(("text", "category"), FIRES)
def test_round22_rows_fire(text: str, category: str) -> None:
    assert_escalates(text, category)


@pytest.mark.parametrize("text", QUIET)
def test_round22_rows_stay_quiet(text: str) -> None:
    assert_left_alone(text)


@pytest.mark.parametrize(
    ("body", "row", "reason"),
    [
        (
            "My plan is meant to be £18 a month but the last three came out at £23.",
            "two_amounts_disputed",
            "money_specific",
        ),
        (
            "The cleaning was quoted at 90 euros but the invoice says 130 euros.",
            "two_amounts_disputed",
            "money_specific",
        ),
        (
            "Please move the arrival on reservation KT-40912 to the Saturday.",
            "account_id",
            "account_specific",
        ),
        (
            "Booking ref 77120 has my old surname; can it be fixed?",
            "account_id",
            "account_specific",
        ),
    ],
)
def test_round22_classifier_rows(body: str, row: str, reason: str) -> None:
    (rule,) = [r for r in load_classifier_rules() if r.name == row]
    assert rule.find(body) is not None
    assert triaged(body) == (Bucket.NEEDS_HUMAN, reason)


@pytest.mark.parametrize(
    "body",
    [
        "Is the family pass £45 or £60 for two adults and three children?",
        "The monthly plan is £18 and the yearly one is £180; which suits a beginner?",
        "Is booking 2 of the course the same day as the first one?",
    ],
)
def test_round22_classifier_rows_leave_questions(body: str) -> None:
    assert triaged(body)[1] not in {"money_specific", "account_specific"}


# --------------------------------------------------------------- the ``together`` field

_HEAD = """
[[rule]]
name = "parts"
category = "security_incident"
severity = "critical"
auto_escalate = true
reason_code = "safety_security_incident"
"""


def _parts(body: str) -> str:
    return _HEAD + body


def test_together_needs_every_facet_in_one_sentence() -> None:
    (rule,) = parse_rules(
        _parts(
            """together = [
    { least = 2, patterns = [
        'home\\s+address', 'address', 'phone\\s+number', 'date\\s+of\\s+birth',
    ] },
    { patterns = ['posted'] },
]"""
        )
    )
    assert rule.find("Someone posted my address and phone number.") is not None
    # two different kinds are needed: one kind twice is not enough
    assert rule.find("Someone posted my address and my old address.") is None
    # nor one mention that two patterns match ("home address" holds "address")
    assert rule.find("Someone posted my home address.") is None
    assert rule.find("Someone posted my home address and date of birth.") is not None
    # the parts in two sentences do not make one report
    assert rule.find("My address and phone number are on file. Someone posted a photo.") is None
    # a question is no report
    assert rule.find("Was my address and phone number posted?") is None
    # a full stop inside an amount or a name does not end the sentence
    match = rule.find("On 3.4 someone posted my address and phone number.")
    assert match is not None and match.group(0) == "address"


def test_together_row_without_patterns_parses_and_reports_its_errors() -> None:
    (rule,) = parse_rules(_parts("together = [ { patterns = ['a+'] }, { patterns = ['b+'] } ]"))
    assert rule.patterns == ()
    with pytest.raises(ValueError, match="at least two facet tables"):
        parse_rules(_parts("together = [ { patterns = ['a'] } ]"))
    with pytest.raises(ValueError, match="'least' must be a whole number"):
        parse_rules(_parts("together = [ { patterns = ['a'], least = 0 }, { patterns = ['b'] } ]"))
    with pytest.raises(ValueError, match="a facet is a table"):
        parse_rules(_parts("together = [ { pattern = 'a' }, { patterns = ['b'] } ]"))
    with pytest.raises(ValueError, match="missing field 'patterns'"):
        parse_rules(_HEAD)


# -------------------------------- payment fraud's and security's similarity floors (22c, 22d)


@pytest.mark.parametrize(
    ("category", "units", "similarity"),
    [
        # the conflicts set's TF-002 had such a sentence at 0.385, given 0.58 for fraud
        (
            "payment_fraud",
            ["A rider said the map was empty at the depot.", "Money left my card twice overnight."],
            [0.385, 0.52],
        ),
        # a GitHub issue of the Ticket Tagger tune sample had one at 0.31, given 0.93
        (
            "security_incident",
            ["Is the sidebar cached anywhere in the toolkit?", "Someone is logged in as me."],
            [0.31, 0.55],
        ),
    ],
)
def test_the_model_is_only_near_far_from_every_exemplar_of_its_category(
    category: str, units: list[str], similarity: list[float]
) -> None:
    """Under the floor a sentence the model is sure of is near: the ticket reaches a person as
    ``uncertain`` if nothing else fires, and is never named that category."""
    limit = load_thresholds()["minilm"][category]
    assert limit.probability is not None and limit.model_similarity is not None
    n = len(units)
    scored = SentenceScores(
        "minilm",
        None,  # type: ignore[arg-type]  # not read by the masks
        units,
        np.zeros((n, 1), np.float32),
        {category: np.asarray(similarity, np.float32)},
        {category: np.zeros(n, np.float32)},
        {category: np.full(n, min(limit.probability + 0.04, 0.99), np.float32)},
    )
    assert scored.by_model(category, limit).tolist() == [False, True]
    assert scored.held(category, limit).tolist() == [True, False]
