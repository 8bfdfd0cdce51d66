"""A near band per category: self-harm's is wider than the others' (docs/triage.md, round 10).

A sentence the learned model gives some share of a category's threshold, firing nothing, is
near the risk and the ticket is not answered. The gravest category gets the lowest share.
"""

from __future__ import annotations

import numpy as np
import pytest

from supportagent.agent.safety_semantic import (
    CATEGORIES,
    DEFAULT_NEAR_SHARE,
    SemanticSafety,
    SentenceScores,
    Threshold,
    load_near_share,
    load_near_shares,
)
from supportagent.domain import Ticket


def test_the_shipped_table_gives_self_harm_the_widest_band() -> None:
    shares = load_near_shares()
    assert set(shares) == set(CATEGORIES)
    others = [share for category, share in shares.items() if category != "self_harm_risk"]
    assert shares["self_harm_risk"] < min(others)
    assert all(share == load_near_share() for share in others)


def test_a_category_named_in_the_table_has_its_own_share() -> None:
    shares = load_near_shares("[near]\nshare = 0.8\nlegal_threat = 0.5\n")
    assert shares["legal_threat"] == 0.5
    assert shares["self_harm_risk"] == shares["payment_fraud"] == 0.8
    assert load_near_shares("")["security_incident"] == DEFAULT_NEAR_SHARE


def test_an_unknown_key_in_the_near_table_is_an_error() -> None:
    with pytest.raises(ValueError, match="self_harm"):
        load_near_shares("[near]\nshare = 0.9\nself_harm = 0.3\n")


class _Index:
    model_id = "all-MiniLM-L6-v2"

    def nearest(self, sims: object, category: str) -> tuple[str, float]:
        return "an exemplar", 0.0


class _Scored(SemanticSafety):
    """The detector with fixed sentence scores: the model gives each category 0.30 against a
    threshold of 0.50 (a share of 0.6), and no exemplar fires."""

    def scores(self, ticket: Ticket, sentences: object = None) -> SentenceScores:
        units = ["The first sentence.", "The second sentence."]
        flat = {c: np.full(len(units), 0.1, np.float32) for c in CATEGORIES}
        return SentenceScores(
            "minilm",
            index=_Index(),  # type: ignore[arg-type]
            units=units,
            sims=np.zeros((len(units), 1), np.float32),
            similarity=flat,
            margin={c: np.zeros(len(units), np.float32) for c in CATEGORIES},
            probability={c: np.asarray([0.30, 0.05], np.float32) for c in CATEGORIES},
        )


def _detector(shares: dict[str, float]) -> SemanticSafety:
    limits = {"minilm": {c: Threshold(0.9, 0.5, 0.50) for c in CATEGORIES}}
    return _Scored(None, thresholds=limits, near_share=shares)  # type: ignore[arg-type]


def test_only_the_category_with_the_wider_band_is_near() -> None:
    detector = _detector({"self_harm_risk": 0.5, **{c: 0.9 for c in CATEGORIES[1:]}})
    found = {f.category: f for f in detector.findings(Ticket("N-1", "s", "b"))}
    assert found["self_harm_risk"].near and not found["self_harm_risk"].fired
    assert found["self_harm_risk"].sentence == "The first sentence."
    assert not any(found[c].near for c in CATEGORIES[1:])
    near = detector.detect_or_near(Ticket("N-1", "s", "b"))
    assert near is not None and near.category == "self_harm_risk"


def test_one_share_for_every_category_still_works() -> None:
    assert not any(f.near for f in _detector(0.9).findings(Ticket("N-2", "s", "b")))  # type: ignore[arg-type]
    assert all(f.near for f in _detector(0.5).findings(Ticket("N-3", "s", "b")))  # type: ignore[arg-type]
