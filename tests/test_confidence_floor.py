"""The offline checker's confidence floor (drafter round 14, twelfth session): a draft the
evidence answers too weakly (most likely a question no article covers) is not staged; it fails
as ``low_confidence``, a reason a reviewer can read."""

from __future__ import annotations

from dataclasses import replace

from drafting import hits, kb, minilm
from supportagent.domain import Ticket, Verdict
from supportagent.engines.offline import MIN_CONFIDENCE, OfflineEngine
from supportagent.reasons import explain, known_codes

COVERED = kb(
    "kb-seats",
    "On the Studio plan you get 3 seats, and the Owner can add more under Settings.",
    "Seats",
    "Plans",
)


def _checked(confidence: float) -> Verdict:
    engine = OfflineEngine(embed=minilm().embed)
    ticket = Ticket("T-1", "", "How many seats do we get on the Studio plan?")
    draft = engine.draft(ticket, hits(COVERED))
    assert draft.sentences and draft.confidence >= MIN_CONFIDENCE
    return engine.check(ticket, replace(draft, confidence=confidence), hits(COVERED))


def test_a_draft_below_the_floor_fails_as_low_confidence() -> None:
    verdict = _checked(MIN_CONFIDENCE - 0.01)
    assert not verdict.passed
    assert verdict.reason_code == "low_confidence"
    assert "too weakly" in verdict.problems[0].message


def test_a_draft_at_the_floor_passes() -> None:
    assert _checked(MIN_CONFIDENCE).passed


def test_low_confidence_is_a_reason_a_reviewer_can_read() -> None:
    assert "low_confidence" in known_codes()
    assert explain("low_confidence").known
