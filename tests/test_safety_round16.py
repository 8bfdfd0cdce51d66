"""Round 16 of the triage work (twelfth session): the nearest exemplars name a risk only where
the learned model agrees enough (``exemplar_model_floor``); where it does not, the sentence is
near the risk and the ticket reaches a person as ``uncertain``. The tickets here were written
for this test: none of their sentences is in an exemplar file, a rule's examples or an eval set.
"""

from __future__ import annotations

import numpy as np
import pytest

from supportagent.agent.safety import SafetyScreen, default_screen
from supportagent.agent.safety_semantic import (
    CATEGORIES,
    SentenceScores,
    Threshold,
    load_thresholds,
)
from supportagent.domain import Ticket

FLOORED = Threshold(0.50, 0.05, probability=0.60, exemplar_model_floor=0.25)


def _close_to_exemplars(probabilities: list[float]) -> SentenceScores:
    """Sentences all close to the payment-fraud exemplars, with the model's probabilities."""
    n = len(probabilities)
    return SentenceScores(
        "minilm",
        None,  # type: ignore[arg-type]  # not read by the masks
        [f"A sentence of six words, number {i}." for i in range(n)],
        np.zeros((n, 1), np.float32),
        {"payment_fraud": np.full(n, 0.70, np.float32)},
        {"payment_fraud": np.full(n, 0.20, np.float32)},
        {"payment_fraud": np.asarray(probabilities, np.float32)},
    )


def test_the_exemplars_fire_only_where_the_model_gives_the_floor() -> None:
    # the floor is 0.25 of the 0.60 threshold: 0.15
    scored = _close_to_exemplars([0.02, 0.14, 0.15, 0.40])
    assert scored.by_exemplars("payment_fraud", FLOORED).tolist() == [False, False, True, True]
    # what the exemplars would have fired on is near: a person sees it, as uncertain
    assert scored.held("payment_fraud", FLOORED).tolist() == [True, True, False, False]


def test_without_a_floor_the_exemplars_fire_whatever_the_model_says() -> None:
    scored = _close_to_exemplars([0.02, 0.40])
    unfloored = Threshold(0.50, 0.05, probability=0.60)
    assert scored.by_exemplars("payment_fraud", unfloored).tolist() == [True, True]


def test_a_category_without_a_model_threshold_keeps_its_exemplars() -> None:
    scored = _close_to_exemplars([0.0])
    no_model = Threshold(0.50, 0.05, exemplar_model_floor=0.25)
    assert scored.by_exemplars("payment_fraud", no_model).tolist() == [True]


def test_the_floor_is_read_from_the_thresholds_file() -> None:
    text = (
        "[minilm]\n"
        "payment_fraud = { similarity = 0.5, margin = 0.1, probability = 0.6,"
        " exemplar_model_floor = 0.25 }\n"
    )
    assert load_thresholds(text)["minilm"]["payment_fraud"].exemplar_model_floor == 0.25


def test_the_shipped_floors() -> None:
    shipped = load_thresholds()
    for model in ("minilm", "e5"):
        for category in CATEGORIES[1:]:
            assert shipped[model][category].exemplar_model_floor == 0.25, (model, category)
    assert shipped["minilm"]["self_harm_risk"].exemplar_model_floor == 0.05
    # e5's self-harm exemplars never fire, so they need no floor
    assert not shipped["e5"]["self_harm_risk"].exemplars_fire


@pytest.fixture(scope="module")
def gate() -> SafetyScreen:
    return default_screen()


TOPIC_ONLY = [
    (
        "Card fees",
        "We are a small bakery and want to start taking card payments at the till. What do "
        "you charge for each card payment?",
    ),
    (
        "Copyright on prints",
        "Am I allowed to sell prints of photos I took at a public concert, or is that a "
        "copyright problem?",
    ),
    (
        "Gallery privacy",
        "How do I hide an album so that only the people I invite can open it?",
    ),
]


@pytest.mark.parametrize(("subject", "body"), TOPIC_ONLY, ids=[s for s, _ in TOPIC_ONLY])
def test_a_question_on_a_risky_topic_is_not_named_a_risk(
    gate: SafetyScreen, subject: str, body: str
) -> None:
    verdict = gate(Ticket(id="t", subject=subject, body=body))
    assert not verdict.auto_escalate, verdict.explanation
    assert verdict.category not in CATEGORIES
    # the exemplars still came close: the classifier may not answer it without a person
    assert verdict.reason_code == "near_risk", verdict.explanation


STILL_RISKS = [
    (
        "Someone used my card",
        "Three payments I never made went out on my card through your shop last night.",
        "payment_fraud",
    ),
    (
        "Unknown admin",
        "There is an admin on our account called 'svc-sync' that none of us created.",
        "security_incident",
    ),
    (
        "Solicitor",
        "Our solicitor will be sending you a formal letter before action on Monday.",
        "legal_threat",
    ),
    (
        "Leaked key",
        "Our live API secret ended up in a public GitHub repo this morning.",
        "security_incident",
    ),
    (
        "Bank details changed",
        "We got an email saying your bank details changed, so we paid the March invoice to "
        "the new account.",
        "payment_fraud",
    ),
]


@pytest.mark.parametrize(
    ("subject", "body", "category"), STILL_RISKS, ids=[s for s, _, _ in STILL_RISKS]
)
def test_risks_still_escalate_as_their_category(
    gate: SafetyScreen, subject: str, body: str, category: str
) -> None:
    verdict = gate(Ticket(id="t", subject=subject, body=body))
    assert verdict.auto_escalate, verdict.explanation
    assert verdict.category == category, verdict.explanation
