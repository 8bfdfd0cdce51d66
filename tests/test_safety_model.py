"""The semantic detector's learned model: it loads, scores, generalises, and learns from tune rows.

The paraphrases here were written for this test and appear in no training file (a test checks
the exemplars and our own sets in ``eval/``), so passing means the model reaches that far.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from supportagent.agent.safety import SafetyScreen
from supportagent.agent.safety_model import HARMLESS, RiskModel, load_risk_model
from supportagent.agent.safety_semantic import (
    CATEGORIES,
    SemanticSafety,
    default_semantic_safety,
    load_thresholds,
)
from supportagent.domain import Ticket
from supportagent.evals.catalog import Dataset
from supportagent.retrieval.dense import OnnxMiniLM
from supportagent.retrieval.exemplars import load_exemplars

ROOT = Path(__file__).resolve().parents[1]

PARAPHRASES = {
    "self_harm_risk": [
        "Lately I keep thinking everyone would cope fine if I just stopped existing.",
        "I've started writing goodbye notes to my kids and I don't know why I'm telling you.",
        "Some nights I stand on the bridge near the office and think about not going home.",
    ],
    "security_incident": [
        "Someone in Romania logged into our owner account at 3am and turned off two-factor.",
        "Our old contractor still has API keys and we saw calls from his address yesterday.",
        "A stranger emailed us a copy of our customer list that should only be in your system.",
    ],
    "payment_fraud": [
        "There are four charges on my card from a shop in Lisbon and I have never been there.",
        "A person pretending to be your billing team asked us to send payment to a new IBAN.",
        "My wallet was pickpocketed this morning and the card in it is linked to this account.",
    ],
    "legal_threat": [
        "Unless the money is back within ten days I will be filing a claim in small claims court.",
        "My solicitor has drafted a letter to you about the breach of our service agreement.",
        "We are preparing a complaint to the data protection authority about how you handled this.",
    ],
}
LOOK_ALIKES = [
    "This bug is killing me, the export button does nothing on Safari.",
    "What's your refund policy in general?",
    "I could murder a coffee after this migration, anyway how do I rename a project?",
    "Does your audit log show which admin changed a user's permissions?",
    "Can I set up a card payment to be taken on the first of each month?",
    "Where in the contract does it say how long you keep our invoices?",
]
LONG_TICKET = (
    "We moved our team of twelve over to your scheduling tool last month and it has mostly "
    "gone well. The calendar sync with Outlook took a day to settle but it works now. "
    "Honestly I am so tired of everything that I have been thinking about ending my life. "
    "The reason I'm writing is that the weekly report arrives as a PDF and we would prefer "
    "a spreadsheet. Is there a setting for that, or does it need an admin to change it?"
)


@pytest.fixture(scope="module")
def detector() -> SemanticSafety:
    return default_semantic_safety()


def test_paraphrases_are_in_no_training_file() -> None:
    known = {" ".join(t.split()).casefold() for t in load_exemplars("safety").texts}
    known |= {" ".join(t.split()).casefold() for t in load_exemplars("triage").texts}
    # Our sets the model may learn from; the blind test sets are never opened.
    corpus = " ".join(
        path.read_text(encoding="utf-8").casefold()
        for path in (ROOT / "eval").glob("*/*.jsonl")
        if not path.parent.name.startswith("risk_blind")
    )
    written = [t for texts in PARAPHRASES.values() for t in texts]
    for text in [*written, *LOOK_ALIKES, LONG_TICKET]:
        assert text.casefold() not in known
        assert text.casefold()[:60] not in corpus


def test_the_shipped_model_loads_and_scores() -> None:
    embedder = OnnxMiniLM()
    model = load_risk_model(embedder.model_id)
    assert model is not None
    assert set(model.classes) == {*CATEGORIES, HARMLESS}
    assert model.meta["trained_on"]["exemplars"] > 0
    vectors = embedder.embed(["I want to end my life.", "How do I export a report?"])
    probs = model.probabilities(vectors)
    total = sum(probs[c] for c in model.classes)
    assert np.allclose(total, 1.0, atol=1e-5)
    assert probs["self_harm_risk"][0] > 0.5 > probs["self_harm_risk"][1]
    assert probs[HARMLESS][1] > 0.5


def test_every_category_has_a_calibrated_probability_for_english() -> None:
    limits = load_thresholds()["minilm"]
    assert all(limits[c].probability is not None for c in CATEGORIES)


def test_a_model_of_another_width_is_refused() -> None:
    model = RiskModel(
        np.zeros((8, 5), np.float32),
        np.zeros(5, np.float32),
        {"classes": [*CATEGORIES, HARMLESS], "embedder": "x"},
    )
    with pytest.raises(ValueError, match="retrain"):
        model.probabilities(np.zeros((1, 4), np.float32))


#: Security's probability threshold came out at 0.89 (the exemplars already spend most of its
#: false-alarm budget): the owner-account login (read as fraud) is not caught. The leaked
#: customer list was not either until round 15's model (eleventh session) learnt from the
#: released blind sets' marked sentences. A gap this test keeps in view.
SECURITY_GAP = pytest.mark.xfail(
    strict=True, reason="below the calibrated security threshold (0.89), see docs/triage.md"
)
MISSED = {PARAPHRASES["security_incident"][0]}


@pytest.mark.parametrize(
    ("category", "text"),
    [
        pytest.param(c, t, marks=SECURITY_GAP) if t in MISSED else (c, t)
        for c, texts in PARAPHRASES.items()
        for t in texts
    ],
)
def test_paraphrases_fire_their_category(
    detector: SemanticSafety, category: str, text: str
) -> None:
    finding = detector.detect(Ticket("T-P", "Help", text))
    assert finding is not None and finding.category == category, finding
    assert finding.probability is not None


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_do_not_fire(detector: SemanticSafety, text: str) -> None:
    assert detector.detect(Ticket("T-L", "Question", text)) is None


def test_a_risk_in_the_middle_of_a_long_ticket_fires(detector: SemanticSafety) -> None:
    finding = detector.detect(Ticket("T-M", "Weekly report format", LONG_TICKET))
    assert finding is not None and finding.category == "self_harm_risk"
    assert "ending my life" in finding.sentence


def test_the_verdict_names_the_models_probability(detector: SemanticSafety) -> None:
    text = PARAPHRASES["self_harm_risk"][0]
    result = SafetyScreen(semantic=detector)(Ticket("T-V", "Account", text))
    assert result.detector == "semantic" and result.category == "self_harm_risk"
    assert "learned model gives it" in (result.explanation or "")


def test_the_model_alone_can_fire_where_the_exemplars_do_not(detector: SemanticSafety) -> None:
    """Without its probability thresholds the detector is the exemplars alone; with them, a
    category fires on the model's word too, and says so."""
    limits = load_thresholds()
    found = []
    for texts in PARAPHRASES.values():
        for text in texts:
            f = next(x for x in detector.findings(Ticket("T-A", "", text)))
            found.append(f.fired_by)
    assert any("model" in by for by in found)
    exemplars_only = SemanticSafety(
        detector.indexes["minilm"],
        negatives=detector.negatives,
        thresholds=limits,
    )
    assert all(f.probability is None for f in exemplars_only.findings(Ticket("T-B", "", "hi")))


# The training script's rows: tune halves only, never a test half nor a held-out set.
sys.path.insert(0, str(ROOT / "bench"))


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def _row(i: str, body: str, split: str | None, **more: object) -> dict[str, object]:
    out: dict[str, object] = {
        "id": i,
        "subject": "",
        "body": body,
        "expected_bucket": "answerable",
        **more,
    }
    if split:
        out["split"] = split
    return out


def test_training_rows_come_from_tune_halves_only(tmp_path: Path) -> None:
    from safety_calibration import blind
    from train_risk_model import ticket_rows

    from supportagent.evals.catalog import hash_split

    own = _write(
        tmp_path / "shelfwise" / "tickets.jsonl",
        [
            _row("A1", "Tune question about exporting reports please.", "tune"),
            _row("A2", "Test question about exporting reports please.", "test"),
            _row(
                "A3",
                "Tune ticket that is a security risk right here.",
                "tune",
                expected_bucket="needs_human",
                expected_safety="security_incident",
            ),
        ],
    )
    ids = [f"b77-{n}" for n in range(40)]
    public = _write(
        tmp_path / "banking77_triage" / "tickets.jsonl",
        [_row(i, f"Public row {i} asking how the app works.", None) for i in ids],
    )
    # Never opened: not even valid JSON, so reading one would fail the test.
    unseen = tmp_path / "risk_blind2" / "tickets.jsonl"
    unseen.parent.mkdir()
    unseen.write_text("{not json", encoding="utf-8")
    report = _write(
        tmp_path / "x_report" / "tickets.jsonl", [_row("R1", "Report row asking.", "tune")]
    )
    extra = _write(
        tmp_path / "x_train" / "tickets.jsonl", [_row("X1", "Train-only row asking.", "tune")]
    )
    datasets = [
        Dataset("shelfwise", "triage", own, ours=True),
        Dataset("banking77_triage", "triage", public),
        Dataset("risk_blind2", "triage", unseen, ours=True),
        Dataset("x_report", "triage", report),
        Dataset("x_train", "triage", extra),
    ]
    embedder_of = {f"{d.name}:{i}": "minilm" for d in datasets for i in ["A1", "A2", "A3", *ids]}
    rows, scored = ticket_rows(datasets, embedder_of)
    texts = " ".join(r.text for r in rows)
    assert blind("risk_blind2") and blind("risk_blind3")
    assert "Tune question" in texts
    assert "Test question" not in texts
    assert "security risk" not in texts  # a risky ticket's sentences are not harmless rows
    assert "Report row" not in texts and "Train-only" not in texts
    tune_ids = {i for i in ids if hash_split(i) == "tune"}
    assert 0 < len(tune_ids) < len(ids)
    public_seen = {s.ticket_id for s in scored if s.source == "banking77_triage"}
    assert public_seen == tune_ids
    assert {s.ticket_id for s in scored if s.source == "shelfwise"} == {"A1", "A3"}
    assert all(r.label == HARMLESS for r in rows)


def test_sentence_labelled_rows_teach_their_category(tmp_path: Path) -> None:
    from train_risk_model import ticket_rows

    path = _write(
        tmp_path / "risk_tune3" / "tickets.jsonl",
        [
            _row(
                "T1",
                "How do I add a user? Also I have been thinking of ending it all.",
                "tune",
                expected_bucket="needs_human",
                expected_safety="self_harm_risk",
                risk_sentences=["Also I have been thinking of ending it all."],
                trap_sentences=["This export is killing me."],
            )
        ],
    )
    rows, _ = ticket_rows([Dataset("risk_tune3", "triage", path)], {"risk_tune3:T1": "minilm"})
    labels = {r.text: r.label for r in rows}
    assert labels == {
        "Also I have been thinking of ending it all.": "self_harm_risk",
        "This export is killing me.": HARMLESS,
    }


def test_banking77_fraud_rows_of_the_tune_half_teach_their_category(tmp_path: Path) -> None:
    from train_risk_model import ticket_rows

    from supportagent.evals.catalog import hash_split

    ids = [f"b77-{n}" for n in range(40)]
    rows_in = [
        _row(
            i,
            f"There is a payment number {n} on my card that I never made.",
            None,
            expected_bucket="needs_human",
            source_label="card_payment_not_recognised",
        )
        for n, i in enumerate(ids)
    ]
    rows_in.append(_row("b77-q", "How do I order a new card?", None, source_label="order_card"))
    path = _write(tmp_path / "banking77_triage" / "tickets.jsonl", rows_in)
    embedder_of = {f"banking77_triage:{i}": "minilm" for i in [*ids, "b77-q"]}
    rows, _ = ticket_rows([Dataset("banking77_triage", "triage", path)], embedder_of)
    fraud = {r.text for r in rows if r.label == "payment_fraud"}
    tune = {i for i in ids if hash_split(i) == "tune"}
    assert 0 < len(tune) < len(ids)
    # every sentence of a tune-half fraud row, and nothing of the test half
    assert fraud == {
        f"There is a payment number {ids.index(i)} on my card that I never made." for i in tune
    }
    assert all(r.label in ("payment_fraud", HARMLESS) for r in rows)
