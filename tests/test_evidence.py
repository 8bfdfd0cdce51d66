"""The evidence gate: signals and thresholds, offline reformulation, and its place in a run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supportagent.agent.evidence import (
    DEFAULT_COVERAGE_THRESHOLD,
    DEFAULT_SIMILARITY_THRESHOLD,
    EvidenceGate,
    drop_noise,
    expansion_terms,
    focused_query,
    reformulate,
    ticket_content,
)
from supportagent.agent.knowledge import Knowledge
from supportagent.agent.pipeline import Pipeline, PipelineConfig, _Trace
from supportagent.agent.tools import ToolGate
from supportagent.cli import app
from supportagent.domain import DocKind, Document, Hit, Passage, SignalScore, Status, Ticket
from supportagent.store.store import Store
from test_pipeline import KB, RESOLVED, ScriptedEngine

UNCOVERED = Ticket(
    "T-OUT",
    "Garden furniture",
    "Hello,\n\nDo you sell patio umbrellas and garden furniture?\n\nThanks,\nMia",
)
PARAPHRASE = Ticket(
    "T-PARA",
    "Sending too quickly",
    "We send requests too quickly and the API pushes back. How long should we pause?",
)


def _passage(pid: str, kind: DocKind = DocKind.KB, text: str = "text") -> Passage:
    return Passage(pid, pid.split("#")[0], kind, "Title", (), text)


def _hit(pid: str, rank: int, score: float, **signals: tuple[int, float]) -> Hit:
    explained = {name: SignalScore(r, s) for name, (r, s) in signals.items()}
    return Hit(_passage(pid, text=f"about {pid}"), rank, score, explained)


@dataclass
class FixedSource:
    """An EvidenceSource with preset similarities (None: no dense signal)."""

    similarities: list[float] | None
    asked: list[tuple[str, list[str]]] = field(default_factory=list)

    def idf(self, term: str) -> float:
        return 1.0

    def similarity(self, text: str, passage_ids: Sequence[str]) -> list[float] | None:
        self.asked.append((text, list(passage_ids)))
        return self.similarities


# --- the gate on its own ---------------------------------------------------------------------


def test_gate_decides_on_similarity_and_reports_every_signal() -> None:
    hits = [
        _hit("a#x", 1, 1.5, body=(1, 4.0), dense=(2, 0.6)),
        _hit("a#y", 2, 1.2, body=(3, 2.0), dense=(1, 0.7)),
        _hit("b#z", 3, 0.9, dense=(3, 0.5)),
    ]
    source = FixedSource([0.30, 0.45, 0.20])
    ticket = Ticket("T", "Refund", "Hi,\nCan I get a refund?\nThanks,\nAna")
    decision, signals = EvidenceGate().judge(ticket, hits, "q", 0, source)
    assert decision.sufficient and decision.top_score == pytest.approx(0.45)
    assert DEFAULT_SIMILARITY_THRESHOLD <= 0.45
    assert signals["measure"] == "similarity" and signals["closest"] == "a#y"
    assert signals["fused"] == 1.5 and signals["margin"] == pytest.approx(0.6)  # next doc: b
    assert signals["agree"] is True  # body rank 1 and dense rank 2 for the top hit
    assert "similarity 0.45 >= threshold" in decision.reason
    # The ticket is judged as written (no greeting or sign-off), never the search query.
    assert source.asked == [("Refund\nCan I get a refund?", ["a#x", "a#y", "b#z"])]
    strict, _ = EvidenceGate(0.5).judge(ticket, hits, "q", 0, source)
    assert not strict.sufficient and "0.45 < threshold 0.50" in strict.reason


def test_without_dense_the_gate_falls_back_to_coverage() -> None:
    ticket = Ticket("T", "Refund policy", "What is the refund policy?")
    covered = [Hit(_passage("a#x", text="Our refund policy is generous."), 1, 1.0, {})]
    decision, signals = EvidenceGate().judge(ticket, covered, "q", 0, FixedSource(None))
    assert signals["measure"] == "coverage" and signals["similarity"] is None
    assert decision.sufficient and decision.top_score == 1.0
    assert DEFAULT_COVERAGE_THRESHOLD < 1.0
    elsewhere = [Hit(_passage("a#x", text="Passwords reset by email."), 1, 1.0, {})]
    weak, _ = EvidenceGate().judge(ticket, elsewhere, "q", 0, FixedSource(None))
    assert not weak.sufficient and "polic" in weak.reason  # names the missing terms


def test_no_hits_or_no_terms_is_never_enough() -> None:
    decision, signals = EvidenceGate(0.0).judge(UNCOVERED, [], "q", 1, FixedSource([]))
    assert not decision.sufficient and decision.reason == "no passages found"
    assert signals["coverage"] == 0.0 and decision.attempt == 1
    empty = Ticket("T", "", "the and of")
    decision = EvidenceGate(0.0).assess(empty, [_hit("a#x", 1, 1.0)], "q", 0, FixedSource([0.9]))
    assert not decision.sufficient and "no searchable terms" in decision.reason


# --- offline reformulation --------------------------------------------------------------------


def test_reformulation_attempts() -> None:
    ticket = Ticket("T", "Webhook retries", "Hello team,\nOur server was down.\nDo you retry?\n")
    assert reformulate(ticket, 1) == focused_query(ticket) == "Webhook retries Do you retry?"
    assert reformulate(ticket, 2) == "Webhook retries"
    assert reformulate(ticket, 3) is None
    assert reformulate(Ticket("T", " ", "Do you retry?"), 2) is None
    assert ticket_content(ticket) == "Webhook retries\nOur server was down.\nDo you retry?"


def test_drop_noise_keeps_only_words_the_corpus_uses() -> None:
    known = {"webhook", "firma", "verify"}.__contains__
    text = "Pregunta sobre la firma de los webhooks, ¿cómo verify?"
    assert drop_noise(text, known) == "firma webhooks verify"
    assert drop_noise("zzz qqq", known) == ""


def test_expansion_borrows_words_from_resolved_answers() -> None:
    feedback = [
        _passage("RT-1#answer", DocKind.RESOLVED, "An emoji switches the SMS to UCS-2 encoding."),
        _passage("RT-2#answer", DocKind.RESOLVED, "UCS-2 segments hold 70 characters."),
        _passage("kb-x#intro", DocKind.KB, "Articles are not feedback: ignored words."),
    ]
    rare = {"emoji": 3.0, "ucs-2": 2.0, "encod": 2.5, "segment": 1.5}
    terms = expansion_terms(
        "smiley text cost", feedback, lambda t: t != "ignor", lambda t: rare.get(t, 0.5)
    )
    # An identifier counts whole; UCS-2 twice (2 + 2) outweighs emoji once (3).
    assert terms[:3] == ["ucs-2", "emoji", "encoding"]
    assert "ignored" not in terms and len(terms) <= 6
    ticket = Ticket("T", "Smiley text cost", "Why does a smiley make the text cost more?")
    query = reformulate(ticket, 1, lambda t: t != "smiley", lambda t: 1.0, feedback)
    # "smiley" is unknown to the corpus and stopwords carry nothing: both go.
    assert query == "text cost make text cost ucs-2 70 characters emoji encoding hold"


# --- the gate in a run --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def knowledge() -> Knowledge:
    return Knowledge([*KB, *RESOLVED])  # the offline MiniLM embedder by default


def _run(store: Store, knowledge: Knowledge, engine: ScriptedEngine, ticket: Ticket) -> object:
    store.add_tickets([ticket])
    return Pipeline(store, knowledge, engine, PipelineConfig()).run(ticket.id)


def test_an_uncovered_ticket_escalates_without_a_drafting_call(
    store: Store, knowledge: Knowledge
) -> None:
    engine = ScriptedEngine()
    outcome = _run(store, knowledge, engine, UNCOVERED)
    assert (outcome.status, outcome.reason_code) == (Status.ESCALATED, "weak_evidence")  # type: ignore[attr-defined]
    assert engine.stages() == ["classify"]  # no draft, no check
    trace = store.trace(UNCOVERED.id)
    evidence = [e["detail"] for e in trace if e["stage"] == "evidence"]
    assert len(evidence) == 3 and all(e["measure"] == "similarity" for e in evidence)
    assert all(e["similarity"] < DEFAULT_SIMILARITY_THRESHOLD for e in evidence)
    queries = [e["detail"]["query"] for e in trace if e["stage"] == "reformulate"]
    assert len(queries) == 2 and "Hello" not in queries[0] and "Mia" not in queries[0]


def test_a_paraphrase_passes_on_similarity(store: Store, knowledge: Knowledge) -> None:
    engine = ScriptedEngine()
    store.add_tickets([PARAPHRASE])
    pipeline = Pipeline(store, knowledge, engine, PipelineConfig())
    trace = _trace(store, PARAPHRASE)
    decision = pipeline._gather(PARAPHRASE, _gate(pipeline, trace), trace)  # one stage
    assert decision.sufficient and decision.attempt == 0
    assert decision.hits[0].passage.doc_id in {"kb-rate-limits", "RT-1"}


def test_a_model_engine_reformulates_with_its_own_reformulator(
    store: Store, knowledge: Knowledge
) -> None:
    @dataclass
    class Reformulating(ScriptedEngine):
        asked: list[tuple[int, str]] = field(default_factory=list)

        def reformulate(self, ticket: Ticket, attempt: int, previous_query: str) -> str | None:
            self.asked.append((attempt, previous_query))
            return None if attempt == 2 else "garden parasol"

    engine = Reformulating()
    _run(store, knowledge, engine, UNCOVERED)
    assert engine.asked == [(1, UNCOVERED.text), (2, "garden parasol")]
    stages = [e["stage"] for e in store.trace(UNCOVERED.id)]
    assert stages.count("retrieve") == 2 and stages.count("reformulate") == 1


def _gate(pipeline: Pipeline, trace: _Trace) -> ToolGate:
    return ToolGate(pipeline._tools(trace))


def _trace(store: Store, ticket: Ticket) -> _Trace:
    return _Trace(store, ticket.id, store.begin_attempt(ticket.id))


# --- the CLI override ---------------------------------------------------------------------------


def test_triage_confidence_threshold_overrides_the_calibrated_one(
    store: Store, tmp_path: Path
) -> None:
    store.upsert_documents([*KB, *RESOLVED])
    runner = CliRunner()
    text = "429 rate limit\nHow long should I wait after a 429 rate limit?"
    home = str(tmp_path / "home")

    def triage(*extra: str) -> dict[str, object]:
        args = ["--home", home, "triage", "--ticket", text, "--json", *extra]
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
        parsed: dict[str, object] = json.loads(result.stdout)
        return parsed

    assert triage()["reason_code"] != "weak_evidence"
    strict = triage("--confidence-threshold", "0.99")
    assert strict["reason_code"] == "weak_evidence" and strict["draft"] is None
    events = [e for e in strict["trace"] if e["stage"] == "evidence"]  # type: ignore[union-attr]
    assert events and all(e["detail"]["threshold"] == 0.99 for e in events)
    bad = runner.invoke(
        app, ["--home", home, "triage", "--ticket", text, "--confidence-threshold", "x"]
    )
    assert bad.exit_code != 0 and "Traceback" not in bad.output


def test_documents_of_both_kinds_feed_the_gate(knowledge: Knowledge) -> None:
    kinds = {p.kind for p in knowledge.retriever.passages}
    assert kinds == {DocKind.KB, DocKind.RESOLVED}
    assert knowledge.dense
    assert knowledge.knows("retry") and not knowledge.knows("parasol")
    similarities = knowledge.similarity("wait after a 429", ["kb-rate-limits#handling-429", "nope"])
    assert similarities is not None and similarities[0] > 0.3 and similarities[1] == 0.0
    lexical = Knowledge([Document("kb-a", DocKind.KB, "A", "alpha")], embedder=None)
    assert lexical.similarity("alpha", ["kb-a#intro"]) is None and not lexical.dense


def test_the_trace_explains_every_fused_score(store: Store, knowledge: Knowledge) -> None:
    engine = ScriptedEngine()
    _run(store, knowledge, engine, UNCOVERED)
    retrieves = [e["detail"] for e in store.trace(UNCOVERED.id) if e["stage"] == "retrieve"]
    assert retrieves
    for detail in retrieves:
        assert detail["fusion"] == "weighted body=1 dense=3 title=0.5 lexical_trust=2"
        weights = {"body": 1.0, "title": 0.5, "dense": 3.0}
        for hit in detail["hits"]:
            recomputed = sum(
                weights[name] * max(signal["score"], 0.0) / detail["scales"][name]
                for name, signal in hit["signals"].items()
            )
            assert hit["score"] == pytest.approx(recomputed, abs=1e-4)


def test_ambiguity_band_around_the_threshold() -> None:
    from supportagent.agent.evidence import AMBIGUITY_MARGIN, is_ambiguous

    assert is_ambiguous(0.38, 0.38)
    assert is_ambiguous(0.38 + AMBIGUITY_MARGIN / 2, 0.38)
    assert is_ambiguous(0.38 - AMBIGUITY_MARGIN / 2, 0.38)
    assert not is_ambiguous(0.38 + AMBIGUITY_MARGIN * 1.5, 0.38)
    assert not is_ambiguous(0.10, 0.38)
