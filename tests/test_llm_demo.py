"""The whole demo inbox through the llm engine against the stub, and engine choice on the CLI."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from llm_stub import KEY, EvidenceModel, StubLLM, demo_classifier, stub_settings
from supportagent.agent.grounding import check_grounding
from supportagent.agent.knowledge import Knowledge
from supportagent.cli import app
from supportagent.config import load_settings
from supportagent.domain import Status
from supportagent.engines.llm import LLMEngine
from supportagent.engines.offline import OfflineEngine
from supportagent.errors import UserError
from supportagent.labels import bucket_accuracy, read_labels
from supportagent.redact import Redactor
from supportagent.runtime import build_engine, build_pipeline, demo_path, load_demo, open_store
from supportagent.scheduler import run_inbox
from supportagent.store.llm_records import model_call_records, model_call_totals
from supportagent.store.serde import draft_from_json
from supportagent.store.store import Store

LABELS = read_labels(demo_path() / "labels.jsonl")


@pytest.fixture(scope="module")
def handled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, StubLLM]]:
    """The demo inbox handled once by the llm engine (chosen by its key) against the stub."""
    home = tmp_path_factory.mktemp("llm-demo") / "home"
    with StubLLM(EvidenceModel(demo_classifier())) as stub:
        settings = stub_settings(stub, home, engine="auto")
        store = open_store(settings)
        load_demo(store)
        engine = build_engine(settings)
        assert isinstance(engine, LLMEngine)
        summary = run_inbox(build_pipeline(settings, store, engine))
        assert summary.processed == len(LABELS)
        yield store, stub
        store.close()


@pytest.mark.slow
def test_every_demo_ticket_is_staged_with_the_right_bucket(
    handled: tuple[Store, StubLLM],
) -> None:
    store, _stub = handled
    assert store.unhandled_ticket_ids() == []
    staged = store.staged()
    assert sorted(r.ticket.id for r in staged) == sorted(LABELS)
    assert {r.engine for r in staged} == {"llm"}
    accuracy = bucket_accuracy({r.ticket.id: r.bucket for r in staged}, LABELS)
    # The stub classifies every ticket right; the only misses allowed are where the offline
    # floor turned the model's "answerable" into a person's job (the safety gate before any
    # model call, or the classifier's backstop after it), and never the other way.
    assert accuracy.value >= 0.95, accuracy.misses
    for ticket_id, expected, got in accuracy.misses:
        assert (expected, got) == ("answerable", "needs_human"), ticket_id
        trace = store.trace(ticket_id)
        classify = [e for e in trace if e["stage"] == "classify"]
        (safety,) = [e for e in trace if e["stage"] == "safety"]
        if classify and classify[0]["detail"]["decided_by"] == "safety":
            # The gate found a sentence near a risk (firing nothing): the model may not answer.
            assert safety["detail"]["reason_code"] == "near_risk", ticket_id
        elif classify:
            assert classify[0]["detail"]["decided_by"] == "rules over llm", ticket_id
        else:
            assert safety["detail"]["auto_escalate"], ticket_id
    assert len(store.staged(Status.PENDING_REVIEW)) >= 15


@pytest.mark.slow
def test_no_model_call_for_tickets_the_rules_decide(handled: tuple[Store, StubLLM]) -> None:
    store, _stub = handled
    for label in LABELS.values():
        if label.safety_category not in {None, "service_outage"} or label.kind in {
            "injection",
            "empty",
        }:
            assert model_call_records(store, label.ticket_id) == [], label.ticket_id


@pytest.mark.slow
def test_drafts_cite_the_evidence_the_model_was_sent(handled: tuple[Store, StubLLM]) -> None:
    store, stub = handled
    knowledge = Knowledge.from_store(store)
    drafts = [r for r in stub.requests if r.stage == "draft"]
    for record in store.staged(Status.PENDING_REVIEW):
        assert record.draft is not None
        trace = store.trace(record.ticket.id)
        hit_ids = [h["id"] for e in trace if e["stage"] == "retrieve" for h in e["detail"]["hits"]]
        assert set(record.draft["citations"]) <= set(hit_ids)
        shown = Redactor()  # the body as the engine sent it: personal data as placeholders
        shown.redact(record.ticket.subject)
        sent = [r for r in drafts if shown.redact(record.ticket.body.strip()) in r.prompt]
        assert sent, record.ticket.id
        assert all(f'id="{c}"' in sent[-1].prompt for c in record.draft["citations"])
        passages = [knowledge.retriever.get_passage(p) for p in dict.fromkeys(hit_ids)]
        verdict = check_grounding(draft_from_json(record.draft), [p for p in passages if p])
        assert verdict.passed, (record.ticket.id, verdict.problems)


@pytest.mark.slow
def test_the_planted_contradiction_escalates_instead_of_being_revised_away(
    handled: tuple[Store, StubLLM],
) -> None:
    store, _stub = handled
    [ticket_id] = [label.ticket_id for label in LABELS.values() if label.kind == "conflict"]
    record = store.latest_outcome(ticket_id)
    assert record is not None
    assert (record.status, record.reason_code) == (Status.ESCALATED, "conflicting_evidence")
    stages = [r["stage"] for r in model_call_records(store, ticket_id)]
    assert stages == ["classify", "draft"]  # no checker call, no revision


@pytest.mark.slow
def test_a_first_draft_that_passes_costs_three_calls(handled: tuple[Store, StubLLM]) -> None:
    store, stub = handled
    first_pass = assessed = 0
    for record in store.staged(Status.PENDING_REVIEW):
        stages = [r["stage"] for r in model_call_records(store, record.ticket.id)]
        if stages.count("draft") == 1 and "reformulate" not in stages:
            # The evidence assessor costs a call only where the gate's signals were torn.
            torn = any(e["stage"] == "assess" for e in store.trace(record.ticket.id))
            expected = (
                ["classify", "assess", "draft", "check"]
                if torn
                else [
                    "classify",
                    "draft",
                    "check",
                ]
            )
            assert stages == expected, record.ticket.id
            first_pass += 1
            assessed += torn
    assert first_pass >= 10 and assessed <= first_pass // 4
    totals = model_call_totals(store)
    assert totals["calls"] == len(stub.requests)
    assert totals["prompt_tokens"] > 0 and totals["cache_hits"] == 0
    per_stage = Counter(r.stage for r in stub.requests)
    assert set(per_stage) <= {"classify", "assess", "draft", "check", "reformulate"}


# --- the command line -----------------------------------------------------------------------------

runner = CliRunner()


def test_without_a_key_the_run_is_offline() -> None:
    assert isinstance(build_engine(load_settings()), OfflineEngine)
    assert runner.invoke(app, ["load-demo"]).exit_code == 0
    result = runner.invoke(app, ["agent", "T-2004"])
    assert result.exit_code == 0 and "engine: offline" in result.output


def test_asking_for_llm_without_a_key_says_what_to_set() -> None:
    with pytest.raises(UserError, match="DEEPSEEK_API_KEY"):
        build_engine(load_settings(engine="llm"))
    assert runner.invoke(app, ["load-demo"]).exit_code == 0
    result = runner.invoke(app, ["--engine", "llm", "agent", "T-2004"])
    assert result.exit_code == 1
    assert "set DEEPSEEK_API_KEY" in result.output and "Traceback" not in result.output


def test_a_key_chooses_the_llm_engine_and_the_cli_names_the_model(
    llm_stub: StubLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUPPORTAGENT_LLM_BASE_URL", llm_stub.url)
    monkeypatch.setenv("SUPPORTAGENT_LLM_MODEL", "stub-model")
    monkeypatch.setenv("SUPPORTAGENT_LLM_API_KEY", KEY)
    assert runner.invoke(app, ["load-demo"]).exit_code == 0
    result = runner.invoke(app, ["agent", "T-2004"])
    assert result.exit_code == 0, result.output
    assert f"engine: llm (model stub-model, profile compatible, {llm_stub.url})" in result.output
    assert "model requests: 3 for 3 calls;" in result.output
    # Each model call has its row in the timeline: stage, prompt, tokens and time.
    for stage in ("classify", "draft", "check"):
        assert re.search(
            rf"model +ok +{stage} \({stage}@\d+\), [\d,]+ \+ [\d,]+ tokens", result.output
        )
    assert KEY not in result.output
    offline = runner.invoke(app, ["--engine", "offline", "agent", "T-2002"])
    assert "engine: offline" in offline.output and len(llm_stub.requests) == 3


def test_a_deepseek_key_in_dotenv_chooses_deepseek(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("DEEPSEEK_API_KEY=sk-dotenv-deepseek\n", encoding="utf-8")
    engine = build_engine(load_settings())
    assert isinstance(engine, LLMEngine)
    assert engine.description == (
        "llm (model deepseek-chat, profile deepseek, https://api.deepseek.com) "
        "[profile: the default endpoint; timeout 60 s]"
    )
