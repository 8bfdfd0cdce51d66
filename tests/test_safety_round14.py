"""Round 14 of the triage work (tenth session): a sentence too short for its nearest
self-harm exemplars to fire the category is held to near, so that it cannot rename a ticket
whose fraud rule matched; a longer sentence as close to them still fires. Scores are set by
hand, and the whole-ticket case runs the shipped gate on a ticket written for this test."""

from __future__ import annotations

import dataclasses

import numpy as np

from supportagent.agent.safety import default_screen
from supportagent.agent.safety_semantic import SentenceScores, Threshold
from supportagent.domain import Ticket


def _close_to_self_harm(unit: str) -> SentenceScores:
    one = np.asarray([0.0], dtype=np.float32)
    return SentenceScores(
        "minilm",
        None,  # type: ignore[arg-type]
        [unit],
        np.zeros((1, 1), np.float32),
        {"self_harm_risk": one + 0.60},
        {"self_harm_risk": one + 0.20},
    )


FIRING = Threshold(0.45, 0.10)


def test_a_three_word_sentence_is_only_near() -> None:
    scores = _close_to_self_harm("i was asleep.")
    assert not scores.fires("self_harm_risk", FIRING)
    assert scores.held("self_harm_risk", FIRING).all()


def test_a_longer_sentence_as_close_still_fires() -> None:
    scores = dataclasses.replace(
        _close_to_self_harm("x"), units=["I have given all my things away to my sister."]
    )
    assert scores.fires("self_harm_risk", FIRING)
    assert not scores.held("self_harm_risk", FIRING).any()


def test_a_fraud_ticket_keeps_its_category_beside_a_short_sentence() -> None:
    body = (
        "Quick one about the app first: can I export my order history as a CSV? More "
        "urgently, my saved card was used at 3am on Monday for six orders from a seller "
        "in another city, and I don't recognise these payments. I was asleep. Can you stop "
        "the orders?"
    )
    result = default_screen()(Ticket("r14-short", "Orders I never made", body))
    assert result.auto_escalate and result.category == "payment_fraud", result.explanation
