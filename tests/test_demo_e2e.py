"""The offline engine end to end on the whole demo inbox, and the learning loop."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from supportagent.agent.grounding import check_grounding
from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings, load_settings
from supportagent.domain import DocKind, Status, Ticket
from supportagent.engines.offline import OfflineEngine
from supportagent.labels import bucket_accuracy, read_labels
from supportagent.review import approve
from supportagent.runtime import build_pipeline, demo_path, load_demo, open_store
from supportagent.scheduler import run_inbox
from supportagent.store.serde import draft_from_json
from supportagent.store.store import Store

LABELS = read_labels(demo_path() / "labels.jsonl")


def _handle_demo(settings: Settings, store: Store) -> Store:
    load_demo(store)
    summary = run_inbox(build_pipeline(settings, store, OfflineEngine()))
    assert summary.processed == len(LABELS)
    return store


@pytest.fixture(scope="module")
def handled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """The demo inbox handled once, shared by the read-only tests of this module."""
    settings = load_settings(home=tmp_path_factory.mktemp("demo") / "home")
    store = open_store(settings)
    yield _handle_demo(settings, store)
    store.close()


def _by_kind(kind: str) -> list[str]:
    return [label.ticket_id for label in LABELS.values() if label.kind == kind]


def test_every_ticket_is_staged_once_with_a_reason(handled: Store) -> None:
    assert handled.unhandled_ticket_ids() == []
    staged = handled.staged()
    assert sorted(r.ticket.id for r in staged) == sorted(LABELS)
    assert all(r.reason_code for r in staged)
    assert {r.status for r in staged} == {
        Status.PENDING_REVIEW,
        Status.ROUTED,
        Status.ESCALATED,
    }


def test_bucket_accuracy_on_the_demo_labels(handled: Store) -> None:
    predicted = {r.ticket.id: r.bucket for r in handled.staged()}
    accuracy = bucket_accuracy(predicted, LABELS)
    assert accuracy.total == len(LABELS)
    # The rules were once written beside these labels (47/47); the triage model was not
    # tuned on them, and fails closed: an answerable ticket it cannot place escalates.
    assert accuracy.value >= 0.85, accuracy.misses
    wrong_way = [m for m in accuracy.misses if m[1] != "answerable"]
    assert len(wrong_way) <= 1, wrong_way  # risks and routes hold


def test_each_safety_category_escalates_with_its_reason(handled: Store) -> None:
    for label in LABELS.values():
        if label.safety_category is None:
            continue
        record = handled.latest_outcome(label.ticket_id)
        assert record is not None and record.safety is not None
        assert record.safety["category"] == label.safety_category, label.ticket_id
        if label.safety_category == "service_outage":
            assert record.status is Status.ROUTED  # an outage is reported, not escalated
        else:
            assert record.status is Status.ESCALATED
            assert record.reason_code == f"safety_{label.safety_category}".replace(
                "self_harm_risk", "self_harm"
            )
            assert record.draft is None


def test_injection_empty_and_account_tickets_get_no_draft(handled: Store) -> None:
    for ticket_id in _by_kind("injection") + _by_kind("empty") + _by_kind("account"):
        record = handled.latest_outcome(ticket_id)
        assert record is not None
        assert record.status is Status.ESCALATED and record.draft is None, ticket_id
        stages = [e["stage"] for e in handled.trace(ticket_id)]
        assert "draft" not in stages and "retrieve" not in stages


def test_bug_feature_and_outage_tickets_are_routed(handled: Store) -> None:
    for ticket_id in _by_kind("bug") + _by_kind("feature") + _by_kind("outage"):
        record = handled.latest_outcome(ticket_id)
        assert record is not None and record.status is Status.ROUTED, ticket_id


def test_the_planted_contradiction_is_caught(handled: Store) -> None:
    [ticket_id] = _by_kind("conflict")
    record = handled.latest_outcome(ticket_id)
    assert record is not None
    assert (record.status, record.reason_code) == (Status.ESCALATED, "conflicting_evidence")
    checks = [e for e in handled.trace(ticket_id) if e["stage"] == "check"]
    messages = " ".join(p["message"] for c in checks for p in c["detail"]["problems"])
    assert "30 days" in messages and "90 days" in messages


def test_every_staged_draft_passes_grounding_against_its_own_evidence(handled: Store) -> None:
    knowledge = Knowledge.from_store(handled)
    drafted = handled.staged(Status.PENDING_REVIEW)
    assert len(drafted) >= 10
    for record in drafted:
        assert record.draft is not None
        trace = handled.trace(record.ticket.id)
        hit_ids = [h["id"] for e in trace if e["stage"] == "retrieve" for h in e["detail"]["hits"]]
        assert set(record.draft["citations"]) <= set(hit_ids)
        passages = [knowledge.retriever.get_passage(pid) for pid in dict.fromkeys(hit_ids)]
        verdict = check_grounding(draft_from_json(record.draft), [p for p in passages if p])
        assert verdict.passed, (record.ticket.id, verdict.problems)


def test_resolved_only_questions_cite_the_resolved_ticket(handled: Store) -> None:
    expected = {
        json.loads(line)["id"]: json.loads(line)["expected_docs"]
        for line in (demo_path() / "labels.jsonl").read_text().splitlines()
    }
    cited_right = drafted = 0
    for ticket_id in _by_kind("resolved_only"):
        record = handled.latest_outcome(ticket_id)
        if record is not None and record.draft is not None:
            drafted += 1
            cited_docs = {c.split("#")[0] for c in record.draft["citations"]}
            cited_right += bool(cited_docs & set(expected[ticket_id]))
    # Some of these escalate before drafting (the classifier fails closed); every one that
    # is drafted finds its answer in the resolved ticket.
    assert drafted >= 2
    assert cited_right == drafted


def test_an_approved_answer_is_found_by_the_next_ticket(settings: Settings, store: Store) -> None:
    handled = _handle_demo(settings, store)
    knowledge = Knowledge.from_store(handled)
    record = handled.staged(Status.PENDING_REVIEW)[0]
    result = approve(handled, knowledge, record.ticket.id, reviewer="ana")
    assert result.resolved_doc_id == f"AR-{record.ticket.id}"
    # The next search, with no restart, finds the new resolved record.
    hits = knowledge.search(record.ticket.subject, k=5, kinds={DocKind.RESOLVED})
    assert result.resolved_doc_id in {h.passage.doc_id for h in hits}
    # And a fresh process building its index from the store sees it too.
    fresh = Knowledge.from_store(handled)
    assert fresh.retriever.document(result.resolved_doc_id) is not None
    # The same question arriving as a new ticket finds it as evidence; the drafter quotes it, or
    # the article it was quoted from (an article is preferred to a resolved ticket saying the
    # same), so the draft says what the approved answer said.
    handled.add_tickets([Ticket("T-NEXT", record.ticket.subject, record.ticket.body)])
    outcome = build_pipeline(settings, handled, OfflineEngine(), knowledge).run("T-NEXT")
    assert outcome.draft is not None
    found = [h["id"] for e in outcome.trace if e.stage == "retrieve" for h in e.detail["hits"]]
    assert any(pid.startswith(f"{result.resolved_doc_id}#") for pid in found)
    approved = {s["text"] for s in record.draft["sentences"]} if record.draft else set()
    assert approved & {s.text for s in outcome.draft.sentences}


def test_no_key_reaches_the_store_or_the_data_directory(
    settings: Settings, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-SECRET-0123456789abcdef"
    for name in ("DEEPSEEK_API_KEY", "OPENAI_API_KEY", "SUPPORTAGENT_LLM_API_KEY"):
        monkeypatch.setenv(name, secret)
    load_demo(store)
    run_inbox(build_pipeline(settings, store, OfflineEngine()), max_tickets=10)
    store.close()
    for path in Path(settings.home).rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
