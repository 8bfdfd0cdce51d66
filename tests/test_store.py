"""The Store over real SQLite and real PostgreSQL: migrations, tickets, outcomes, reviews."""

from __future__ import annotations

import pytest

from store_checks import outcome_counts
from supportagent.domain import (
    Bucket,
    DocKind,
    Document,
    Draft,
    DraftSentence,
    Outcome,
    Status,
    Ticket,
    TraceEvent,
)
from supportagent.errors import ConflictError, NotFoundError
from supportagent.store.claims import StaleAttemptError
from supportagent.store.llm_records import model_call_records
from supportagent.store.migrations import MIGRATIONS
from supportagent.store.store import Store, TraceBatch


def _draft() -> Draft:
    return Draft((DraftSentence("Keys start with ks_live_.", ("kb-keys#intro",)),), 0.8)


def test_migrations_are_named_recorded_and_idempotent(any_store: Store) -> None:
    assert any_store.migrate() == []  # already applied by the fixture
    import sqlalchemy as sa

    with any_store.engine.connect() as conn:
        names = list(conn.execute(sa.text("SELECT name FROM schema_migrations")).scalars())
    assert names == [name for name, _ in MIGRATIONS]


def test_tickets_round_trip_and_duplicates_are_skipped(any_store: Store) -> None:
    t1 = Ticket("T-1", "Rate limits", "What is the limit?", priority=2, customer="acme")
    report = any_store.add_tickets([t1, Ticket("T-2", "Hello", "")])
    assert (report.added, report.skipped_existing) == (2, ())
    again = any_store.add_tickets([Ticket("T-1", "changed", "changed"), Ticket("T-3", "x", "y")])
    assert again.added == 1 and again.skipped_existing == ("T-1",)
    assert any_store.get_ticket("T-1") == t1
    assert any_store.ticket_status("T-1") is Status.NEW
    assert any_store.unhandled_ticket_ids() == ["T-1", "T-2", "T-3"]  # priority first
    with pytest.raises(NotFoundError, match="T-404"):
        any_store.get_ticket("T-404")


def test_documents_upsert_replaces_by_id(any_store: Store) -> None:
    doc = Document("kb-a", DocKind.KB, "A", "alpha", linked_docs=("kb-b",), meta={"x": 1})
    assert any_store.upsert_documents([doc]).added == 1
    report = any_store.upsert_documents([Document("kb-a", DocKind.KB, "A2", "beta")])
    assert (report.added, report.updated) == (0, 1)
    [stored] = any_store.documents(DocKind.KB)
    assert (stored.title, stored.body) == ("A2", "beta")
    assert any_store.document_counts() == {"kb": 1}


def test_stage_outcome_trace_and_review_conflict(any_store: Store) -> None:
    any_store.add_tickets([Ticket("T-1", "Keys", "Which prefix?")])
    attempt = any_store.begin_attempt("T-1")
    assert attempt == 1 and any_store.ticket_status("T-1") is Status.IN_PROGRESS
    any_store.append_trace(
        TraceBatch("T-1", attempt, [(0, TraceEvent("safety", "pass", {"a": 1}, 1.5))])
    )
    outcome = Outcome(
        "T-1", Status.PENDING_REVIEW, "drafted", Bucket.ANSWERABLE, _draft(), None, (), "offline"
    )
    any_store.stage_outcome(outcome, attempt)
    assert any_store.ticket_status("T-1") is Status.PENDING_REVIEW
    assert [e["stage"] for e in any_store.trace("T-1")] == ["safety"]
    [record] = any_store.staged(Status.PENDING_REVIEW)
    assert record.draft is not None and record.draft["citations"] == ["kb-keys#intro"]

    resolved = Document("AR-T-1", DocKind.RESOLVED, "Keys", "Which prefix?\n\nks_live_")
    any_store.record_review("T-1", "approve", Status.APPROVED, "ana", "ks_live_", None, resolved)
    assert any_store.ticket_status("T-1") is Status.APPROVED
    assert [d.id for d in any_store.documents(DocKind.RESOLVED)] == ["AR-T-1"]
    with pytest.raises(ConflictError, match="not pending_review"):
        any_store.record_review("T-1", "reject", Status.HANDED_OFF, "bo", None, "no", None)
    assert len(any_store.reviews("T-1")) == 1


def test_the_document_revision_counts_every_document_write(any_store: Store) -> None:
    assert any_store.document_revision() == 0
    any_store.upsert_documents([Document("kb-a", DocKind.KB, "A", "alpha")])
    any_store.upsert_documents([Document("kb-a", DocKind.KB, "A", "alpha, revised")])
    assert any_store.document_revision() == 2
    any_store.add_tickets([Ticket("T-1", "Keys", "Which prefix?")])
    attempt = any_store.begin_attempt("T-1")
    outcome = Outcome(
        "T-1", Status.PENDING_REVIEW, "drafted", Bucket.ANSWERABLE, _draft(), None, (), "offline"
    )
    any_store.stage_outcome(outcome, attempt)
    assert any_store.document_revision() == 2  # tickets and outcomes are not documents
    resolved = Document("AR-T-1", DocKind.RESOLVED, "Keys", "Which prefix?\n\nks_live_")
    any_store.record_review("T-1", "approve", Status.APPROVED, "ana", "ks_live_", None, resolved)
    assert any_store.document_revision() == 3  # the approved answer joined the corpus


def _call(stage: str) -> dict[str, object]:
    return {
        "stage": stage,
        "model": "m",
        "prompt": f"{stage}@1",
        "status": "ok",
        "prompt_tokens": 10,
        "completion_tokens": 2,
        "latency_ms": 5.0,
        "cache_hit": False,
        "retries": 0,
        "error": None,
        "messages": None,
        "reply": None,
    }


def test_the_last_trace_batch_commits_with_the_outcome_or_not_at_all(any_store: Store) -> None:
    any_store.add_tickets([Ticket("T-1", "Keys", "Which prefix?")])
    stale = any_store.begin_attempt("T-1")
    current = any_store.begin_attempt("T-1")  # the ticket was taken over
    outcome = Outcome("T-1", Status.ROUTED, "bug_report", None, None, None, (), "offline")

    def batch(attempt: int) -> TraceBatch:
        events = [(0, TraceEvent("safety", "pass", {}, 1.0)), (1, TraceEvent("stage", "x", {}, 1))]
        return TraceBatch("T-1", attempt, events, [_call("classify")])

    with pytest.raises(StaleAttemptError):
        any_store.stage_outcome(outcome, stale, batch(stale))
    assert any_store.trace("T-1", stale) == [] and model_call_records(any_store, "T-1") == []
    assert outcome_counts(any_store) == {"T-1": 0}

    any_store.stage_outcome(outcome, current, batch(current))
    assert [e["stage"] for e in any_store.trace("T-1", current)] == ["safety", "stage"]
    assert [c["stage"] for c in model_call_records(any_store, "T-1", current)] == ["classify"]
    assert outcome_counts(any_store) == {"T-1": 1}


def test_one_outcome_per_attempt(any_store: Store) -> None:
    import sqlalchemy as sa

    any_store.add_tickets([Ticket("T-1", "s", "b")])
    attempt = any_store.begin_attempt("T-1")
    outcome = Outcome(
        "T-1", Status.ROUTED, "bug_report", Bucket.NOT_A_QUESTION, None, None, (), "x"
    )
    any_store.stage_outcome(outcome, attempt)
    with pytest.raises(sa.exc.IntegrityError):
        any_store.stage_outcome(outcome, attempt)


def test_documents_changed_since_returns_new_and_replaced_documents(any_store: Store) -> None:
    any_store.upsert_documents([Document("kb-a", DocKind.KB, "A", "alpha")])
    docs, first = any_store.documents_changed_since(None)
    assert [d.id for d in docs] == ["kb-a"] and first is not None
    any_store.upsert_documents([Document("kb-b", DocKind.KB, "B", "beta")])
    any_store.upsert_documents([Document("kb-a", DocKind.KB, "A", "alpha, revised")])
    docs, newest = any_store.documents_changed_since(first)
    assert {d.id for d in docs} >= {"kb-b", "kb-a"}
    assert newest is not None and newest >= first
    later, _ = any_store.documents_changed_since(newest)
    assert {d.id for d in later} <= {"kb-a", "kb-b"}  # at most the ones sharing the timestamp
