"""The review page's meters: each coloured by its value, each saying what it measures.

Thresholds live here, in one table, so that a colour always means the same thing. Where a
threshold comes from the run itself (the evidence gate's), the meter uses that one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: name → (poor below, good from, what it measures). Between the two a meter is "fair".
THRESHOLDS: dict[str, tuple[float, float, str]] = {
    "draft confidence, offline": (
        0.5,
        0.75,
        "How closely the quoted sentences match the ticket (the extractive drafter's best "
        "sentence score, scaled to 0-1). Below 0.5 the quotes are loosely related.",
    ),
    "draft confidence, llm": (
        0.5,
        0.75,
        "The drafting model's own estimate that its answer is right and complete (0-1). "
        "Models are often over-confident: read the claims and their checks.",
    ),
    "classifier": (
        0.6,
        0.8,
        "The classifier's confidence that the ticket is a question the documentation can "
        "answer (0-1).",
    ),
}
#: How far above the evidence gate's threshold a value must be to count as clearly enough.
EVIDENCE_MARGIN = 0.15
_EVIDENCE_TEXT = {
    "similarity": "Cosine similarity of the ticket to its closest passage (MiniLM embeddings). "
    "The evidence gate drafts from {threshold:.2f} up; the higher, the closer the "
    "documentation is to what was asked.",
    "coverage": "Share of the ticket's key terms (weighted by rarity) found in the top three "
    "passages. The evidence gate drafts from {threshold:.2f} up.",
}


@dataclass(frozen=True, slots=True)
class Meter:
    name: str
    value: float
    low: float
    high: float
    tooltip: str

    @property
    def tone(self) -> str:
        """``poor``, ``fair`` or ``good``: the CSS class and the meter's colour."""
        if self.value < self.low:
            return "poor"
        return "good" if self.value >= self.high else "fair"

    @property
    def display(self) -> str:
        return f"{self.value:.2f}"


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return max(0.0, min(1.0, float(value)))
    return None


def evidence_meter(gate: Mapping[str, Any]) -> Meter | None:
    """The number the evidence gate decided on, against the threshold it used."""
    measure = str(gate.get("measure") or "coverage")
    value = _number(gate.get(measure))
    threshold = _number(gate.get("threshold"))
    if value is None or measure not in _EVIDENCE_TEXT:
        return None
    threshold = threshold if threshold is not None else 0.4
    high = min(threshold + EVIDENCE_MARGIN, 1.0)
    text = _EVIDENCE_TEXT[measure].format(threshold=threshold)
    return Meter(f"evidence ({measure})", value, threshold, high, text)


def draft_meter(confidence: Any, engine: str) -> Meter | None:
    value = _number(confidence)
    if value is None:
        return None
    key = "draft confidence, llm" if engine == "llm" else "draft confidence, offline"
    low, high, text = THRESHOLDS[key]
    return Meter("draft confidence", value, low, high, text)


def classifier_meter(classify: Mapping[str, Any], engine: str) -> Meter | None:
    """Only where the number carries information: a model's estimate, or scores behind it.

    The offline rules give fixed values (0.9 when a pattern matched, 0.6 when none did), which
    say nothing beyond the rule that decided, so they are not shown as a measurement.
    """
    value = _number(classify.get("confidence"))
    if value is None or (engine != "llm" and not classify.get("scores")):
        return None
    low, high, text = THRESHOLDS["classifier"]
    return Meter("classifier", value, low, high, text)


def review_meters(
    classify: Mapping[str, Any], gate: Mapping[str, Any], draft: Mapping[str, Any], engine: str
) -> tuple[Meter, ...]:
    found = (
        classifier_meter(classify, engine),
        evidence_meter(gate),
        draft_meter(draft.get("confidence"), engine),
    )
    return tuple(m for m in found if m is not None)
