"""Round 7 of the safety gate: a learned model that may not fire far from its category, a band
near a model threshold in which the classifier may not answer, and phishing that was only
passed on.

The sentences were written for these tests and appear in no data file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from supportagent.agent.safety import NEAR_RISK, SafetyScreen, near_result, screen
from supportagent.agent.safety_semantic import (
    DEFAULT_NEAR_SHARE,
    Finding,
    SentenceScores,
    Threshold,
    load_near_share,
    load_thresholds,
)
from supportagent.domain import Bucket, Classification, Ticket
from supportagent.engines.classifier import not_answered_near_a_risk

# --------------------------------------------------------------------------- the model's margin


def _scores(probability: list[float], margin: list[float]) -> SentenceScores:
    units = [f"the sentence numbered {i} here" for i in range(len(probability))]
    category = "self_harm_risk"
    return SentenceScores(
        "minilm",
        index=None,  # type: ignore[arg-type]  # not read by the masks
        units=units,
        sims=np.zeros((len(units), 1), np.float32),
        similarity={category: np.full(len(units), 0.1, np.float32)},
        margin={category: np.asarray(margin, np.float32)},
        probability={category: np.asarray(probability, np.float32)},
    )


def test_the_model_does_not_fire_on_a_sentence_far_closer_to_a_harmless_example() -> None:
    scored = _scores([0.80, 0.80, 0.80], [-0.30, -0.05, 0.10])
    limit = Threshold(0.37, 0.10, 0.50, model_margin=-0.10)
    assert scored.by_model("self_harm_risk", limit).tolist() == [False, True, True]
    # without a margin floor the model fires on all three, as before round 7
    assert scored.by_model("self_harm_risk", Threshold(0.37, 0.10, 0.50)).all()


def test_near_a_threshold_is_a_share_of_it() -> None:
    scored = _scores([0.40, 0.46, 0.52], [0.0, 0.0, 0.0])
    limit = Threshold(0.37, 0.10, 0.50)
    assert scored.by_model("self_harm_risk", limit).tolist() == [False, False, True]
    assert scored.by_model("self_harm_risk", limit, 0.9).tolist() == [False, True, True]


def test_the_shipped_table_has_a_near_share_and_minilm_margin_floors() -> None:
    assert 0.5 < load_near_share() < 1.0
    limits = load_thresholds()
    assert all(t.model_margin is not None for t in limits["minilm"].values())
    assert "near" not in limits  # the near table is not an embedder


def test_a_table_without_the_new_fields_reads_as_before() -> None:
    text = "[minilm]\nlegal_threat = { similarity = 0.2, margin = 0.1, probability = 0.6 }\n"
    limits = load_thresholds(text)
    assert limits["minilm"]["legal_threat"].model_margin is None
    assert load_near_share(text) == DEFAULT_NEAR_SHARE


# --------------------------------------------------------------------------- the near band


def _finding(*, fired: bool, near: bool, category: str = "security_incident") -> Finding:
    return Finding(
        category=category,
        similarity=0.41,
        margin=0.02,
        sentence="The front-desk tablet now signs in as a user none of us know.",
        exemplar="an exemplar",
        model="all-MiniLM-L6-v2",
        fired=fired,
        probability=0.83,
        fired_by="model" if fired else "",
        near=near,
    )


@dataclass
class _Semantic:
    """Stands in for the semantic detector: always the same finding."""

    finding: Finding | None

    def detect_or_near(self, ticket: Ticket) -> Finding | None:
        return self.finding


def _gate(finding: Finding | None) -> SafetyScreen:
    return SafetyScreen(semantic=_Semantic(finding))  # type: ignore[arg-type]


def test_a_near_finding_lets_the_ticket_through_with_the_reason() -> None:
    result = _gate(_finding(fired=False, near=True))(Ticket("N-1", "Tablet", "How do I ...?"))
    assert not result.auto_escalate
    assert result.reason_code == NEAR_RISK and result.detector == "semantic"
    assert "security_incident" in (result.explanation or "")


def test_a_fired_finding_still_escalates() -> None:
    result = _gate(_finding(fired=True, near=False))(Ticket("N-2", "Tablet", "How do I ...?"))
    assert result.auto_escalate and result.category == "security_incident"


def test_a_rule_that_did_not_escalate_keeps_its_category_near_a_risk() -> None:
    """An outage the rules found stays an outage (the classifier routes it as one); the near
    finding is added to its reason."""
    text = "Your whole service is down for everyone in our office since 9am."
    ruled = screen(text)
    assert ruled.matched_rule is not None and not ruled.auto_escalate
    result = _gate(_finding(fired=False, near=True))(Ticket("N-3", "Down", text))
    assert result.category == ruled.category and result.matched_rule == ruled.matched_rule
    assert result.reason_code == NEAR_RISK and not result.auto_escalate
    assert "comes near security_incident" in (result.explanation or "")


def _answer() -> Classification:
    return Classification(Bucket.ANSWERABLE, "question", "recognised as a question", 0.6, "model")


def test_the_classifier_does_not_answer_near_a_risk() -> None:
    near = near_result(_finding(fired=False, near=True))
    decided = not_answered_near_a_risk(_answer(), near)
    assert decided.bucket is Bucket.NEEDS_HUMAN and decided.reason_code == "uncertain"
    assert decided.decided_by == "safety" and "comes near security_incident" in decided.reason


@pytest.mark.parametrize(
    "decided",
    [
        Classification(Bucket.NOT_A_QUESTION, "bug_report", "a bug", 0.9, "rules"),
        Classification(Bucket.NEEDS_HUMAN, "money_specific", "a refund", 0.9, "requests"),
    ],
)
def test_only_an_answer_is_withheld(decided: Classification) -> None:
    near = near_result(_finding(fired=False, near=True))
    assert not_answered_near_a_risk(decided, near) is decided


def test_without_a_near_finding_an_answer_stands() -> None:
    plain = screen("Which file formats does the importer take?")
    assert not_answered_near_a_risk(_answer(), plain).bucket is Bucket.ANSWERABLE


# --------------------------------------------------------------------------- phishing passed on


@pytest.mark.parametrize(
    "text",
    [
        "A text claiming to be your support team arrived with a phishing link. We never opened "
        "it. Is there a number to forward these to?",
        "Got a phishing email dressed up as your renewal notice this morning and binned it. "
        "Do you want a copy?",
    ],
)
def test_phishing_that_nobody_acted_on_is_not_an_incident(text: str) -> None:
    assert screen(text).matched_rule != "phishing_in_our_name"


@pytest.mark.parametrize(
    "text",
    [
        "A phishing email in your name went to our whole team and our bookkeeper typed her "
        "password into it.",
        "We deleted the message, but a phishing site pretending to be your login page took our "
        "manager's password first.",
        "I didn't click the link, though my husband did: it was a phishing email pretending to "
        "be your company.",
    ],
)
def test_phishing_someone_acted_on_still_escalates(text: str) -> None:
    result = screen(text)
    assert result.auto_escalate and result.category == "security_incident"


def test_the_llm_engine_does_not_answer_near_a_risk(tmp_path: Path) -> None:
    """A stub model answers a plain how-to question; the same ticket with the gate's near
    verdict goes to a person as ``uncertain``, before the offline floor is asked."""
    from llm_stub import StubLLM, stub_engine, stub_settings

    ticket = Ticket("N-L", "Export", "How do I export my contact list to a CSV file?")
    with StubLLM() as stub:
        engine = stub_engine(stub_settings(stub, tmp_path / "home"))
        plain = engine.classify(ticket, screen(ticket.text))
        near = engine.classify(ticket, near_result(_finding(fired=False, near=True)))
    assert plain.bucket is Bucket.ANSWERABLE, plain
    assert near.bucket is Bucket.NEEDS_HUMAN and near.reason_code == "uncertain"
    assert near.decided_by == "safety"


def test_a_rule_that_escalates_keeps_its_reason_code_near_another_risk() -> None:
    """Round 13: a security rule that escalates is not turned into ``near_risk`` by a sentence
    near self-harm; the near finding joins its explanation."""
    text = "Somebody pushed our live API key to a public repo last night."
    ruled = screen(text)
    assert ruled.auto_escalate and ruled.category == "security_incident"
    result = _gate(_finding(fired=False, near=True))(Ticket("N-4", "Key", text))
    assert result.auto_escalate and result.category == "security_incident"
    assert result.reason_code == ruled.reason_code
    assert "comes near security_incident" in (result.explanation or "")
