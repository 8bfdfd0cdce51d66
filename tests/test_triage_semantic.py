"""Safety and triage on text nobody wrote the rules beside: meaning, fail-closed, one floor.

The paraphrases here are written for this test, not taken from the exemplar files (a test
checks that), so passing means the detectors generalise at least this far.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from llm_stub import StubLLM, as_json, stub_engine, stub_settings
from supportagent.agent.knowledge import Knowledge
from supportagent.agent.safety import SafetyScreen, default_screen, screen
from supportagent.domain import Bucket, SafetyResult, Status, Ticket
from supportagent.engines.classifier import Classifier
from supportagent.engines.triage_model import BUCKETS, TriageModel
from supportagent.retrieval.exemplars import load_exemplars
from supportagent.runtime import build_pipeline, load_demo, open_store

PARAPHRASES = {
    "self_harm_risk": [
        "Honestly I don't see much reason to keep waking up these days.",
        "Please make sure my brother can get into the account once I'm no longer around.",
        "I've been hurting my arms again, sorry, just needed to say it to someone.",
    ],
    "security_incident": [
        "An intern pasted our production secret into a public gist this morning.",
        "There is an admin called 'support-backup' on our workspace that none of us created.",
        "Our finance lead put her password into a page that looked like your login but wasn't.",
    ],
    "payment_fraud": [
        "My statement shows three purchases in another country that I never made.",
        "We received an invoice in your name telling us to wire the money to a new account.",
    ],
    "legal_threat": [
        "If this isn't fixed by Friday our attorneys will take it from here.",
        "Consider this formal notice that we hold you liable for the lost revenue.",
    ],
}
LOOK_ALIKES = [
    "This bug is killing me, the export button does nothing on Safari.",
    "How do I kill a stuck background job from the dashboard?",
    "What is your refund policy in general for annual plans?",
    "How does your fraud detection decide which payments to block?",
    "Which security certifications does your company hold?",
    "I'm dying to try the new reports, when do they ship?",
]


def _ticket(text: str, subject: str = "Question") -> Ticket:
    return Ticket("T-X", subject, text)


def test_paraphrases_are_not_copies_of_exemplars() -> None:
    known = {t.casefold() for t in load_exemplars("safety").texts}
    for texts in PARAPHRASES.values():
        for text in texts:
            assert text.casefold() not in known


@pytest.mark.parametrize(
    ("category", "text"),
    [(c, t) for c, texts in PARAPHRASES.items() for t in texts],
)
def test_each_category_is_caught_by_meaning(category: str, text: str) -> None:
    result = default_screen()(_ticket(text))
    assert result.auto_escalate, result
    assert result.category == category, result
    assert result.explanation  # a reason a person can read


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_pass(text: str) -> None:
    assert not default_screen()(_ticket(text)).auto_escalate


def test_a_risk_in_the_middle_of_a_long_how_to_ticket_is_caught() -> None:
    how_to = (
        "We run the nightly sync at two in the morning and it pulls about forty thousand rows "
        "from the warehouse into the reporting tables. Most nights it finishes in under ten "
        "minutes. Last week it started taking close to an hour and the dashboards were stale "
        "for the morning stand-up. "
    )
    middle = "Nobody at home would even notice if I just stopped existing, to be honest. "
    ending = "Is there a setting for running the sync in smaller batches, and what is the limit?"
    ticket = _ticket(how_to * 2 + middle + how_to + ending, subject="Nightly sync is slow")
    result = default_screen()(ticket)
    assert (result.category, result.detector) == ("self_harm_risk", "semantic")
    assert "stopped existing" in (result.matched_text or "")


def test_the_more_urgent_risk_decides_when_rules_and_meaning_disagree() -> None:
    text = (
        "Our lawyer will be in touch about the outage. "
        "Honestly I don't see much reason to keep waking up these days."
    )
    assert screen(text).category == "legal_threat"  # the rules see the lawyer first
    assert default_screen()(_ticket(text)).category == "self_harm_risk"


def test_the_rules_alone_when_the_semantic_detector_is_off() -> None:
    text = PARAPHRASES["security_incident"][2]  # one the rules do not know
    assert not SafetyScreen()(_ticket(text)).auto_escalate
    assert SafetyScreen()(_ticket(text)).detector == "none"


# --------------------------------------------------------------------------- classifier


class FixedModel(TriageModel):
    """A triage model that always gives the same probabilities: the real class, fixed weights."""

    def __init__(self, answerable: float, not_a_question: float, needs_human: float) -> None:
        logits = np.log(np.asarray([answerable, not_a_question, needs_human], np.float32))
        real = TriageModel.load()
        super().__init__(np.zeros_like(real.weights), logits, {"answerable_min": 0.5})


def test_a_ticket_the_model_cannot_place_escalates_as_uncertain_with_its_scores() -> None:
    classifier = Classifier(model=FixedModel(0.45, 0.30, 0.25))
    got = classifier.classify(_ticket("Something about the thing from before."), _no_risk())
    assert (got.bucket, got.reason_code, got.decided_by) == (
        Bucket.NEEDS_HUMAN,
        "uncertain",
        "model",
    )
    assert "answerable 0.45" in got.reason and "0.50" in got.reason


def test_no_majority_for_a_route_is_uncertain_too() -> None:
    got = Classifier(model=FixedModel(0.30, 0.40, 0.30)).classify(
        _ticket("Texts to one carrier never arrive, what is going on?"), _no_risk()
    )
    assert (got.bucket, got.reason_code) == (Bucket.NEEDS_HUMAN, "uncertain")


def test_rules_decide_what_they_are_sure_of_before_the_model() -> None:
    classifier = Classifier(model=FixedModel(0.98, 0.01, 0.01))
    got = classifier.classify(_ticket("Please refund invoice INV-2231, it is wrong."), _no_risk())
    assert (got.bucket, got.reason_code, got.decided_by) == (
        Bucket.NEEDS_HUMAN,
        "money_specific",
        "rules",
    )


def test_a_bug_report_phrased_as_a_question_routes_as_a_bug() -> None:
    got = Classifier().classify(
        _ticket(
            "Why does the Android app crash every time I open the settings page since 4.2?",
            subject="App crashes on settings",
        ),
        _no_risk(),
    )
    assert (got.bucket, got.reason_code) == (Bucket.NOT_A_QUESTION, "bug_report")


def test_model_outputs_follow_the_bucket_order() -> None:
    assert BUCKETS == (Bucket.ANSWERABLE, Bucket.NOT_A_QUESTION, Bucket.NEEDS_HUMAN)
    assert "trained_on" in TriageModel.load().meta


def _no_risk() -> SafetyResult:
    return screen("nothing risky here")


# --------------------------------------------------------------------------- llm floor


def test_the_llm_cannot_turn_a_money_decision_into_a_draft(tmp_path: Path) -> None:
    """A stub model answers 'answerable' to everything; the offline floor escalates."""
    refund = Ticket(
        "T-FLOOR",
        "Difference after downgrading",
        "We moved from the yearly plan to the monthly one last week; please send back what "
        "we overpaid for the rest of the year.",
    )
    with StubLLM() as stub:
        settings = stub_settings(stub, tmp_path / "home")
        store = open_store(settings)
        load_demo(store)
        store.add_tickets([refund])
        engine = stub_engine(settings)
        engine.backstop = Classifier(model=FixedModel(0.1, 0.1, 0.8))
        outcome = build_pipeline(settings, store, engine, Knowledge.from_store(store)).run(
            "T-FLOOR"
        )
        stages = stub.stages()
    assert outcome.status is Status.ESCALATED
    assert outcome.reason_code in {"money_specific", "account_specific", "human_requested"}
    (classify,) = [e for e in outcome.trace if e.stage == "classify"]
    assert classify.detail["decided_by"] == "rules over llm"
    assert "the model said answerable" in classify.detail["reason"]
    assert stages == ["classify"]  # the model was asked once, and nothing was drafted


def test_a_rule_sure_money_ticket_costs_no_model_call(tmp_path: Path) -> None:
    with StubLLM() as stub:
        settings = stub_settings(stub, tmp_path / "home")
        store = open_store(settings)
        load_demo(store)
        store.add_tickets([Ticket("T-REF", "Refund", "Please refund invoice INV-5521.")])
        stub.push(as_json({"unexpected": True}))
        outcome = build_pipeline(settings, store, stub_engine(settings)).run("T-REF")
        assert stub.stages() == []
    assert (outcome.status, outcome.reason_code) == (Status.ESCALATED, "money_specific")
