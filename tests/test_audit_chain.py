"""The audit chain across processes and upgrades, on real SQLite and PostgreSQL."""

from __future__ import annotations

import multiprocessing
import queue
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from supportagent.domain import Bucket, Draft, DraftSentence, Outcome, Status, Ticket
from supportagent.review import amend, reject
from supportagent.store import tables as t
from supportagent.store.audit import audit_events, read_events
from supportagent.store.audit_seal import AuditSeal
from supportagent.store.audit_verify import verify
from supportagent.store.migrations import m001_initial
from supportagent.store.store import Store


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_upgrading_an_old_database_backfills_its_past_decisions(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'old.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    # A database as the walking skeleton left it: migration 001 only, decisions already made.
    engine = sa.create_engine(url)
    start = datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)
    later = start.replace(second=6), start.replace(second=7)
    draft = {
        "answer": "Wait. [kb-a#x]",
        "confidence": 0.8,
        "citations": ["kb-a#x"],
        "sentences": [{"text": "Wait.", "citations": ["kb-a#x"]}],
        "revision": 0,
    }
    with engine.begin() as conn:
        t.schema_migrations.create(conn)
        m001_initial(conn)
        conn.execute(t.schema_migrations.insert().values(name="001_initial", applied_at=start))
        conn.execute(
            t.tickets.insert(),
            [
                {
                    "id": tid,
                    "subject": "s",
                    "body": "b",
                    "priority": 0,
                    "received_at": start,
                    "status": status,
                    "attempts": 1,
                    "updated_at": start,
                }
                for tid, status in (("T-1", "approved"), ("T-2", "routed"))
            ],
        )
        conn.execute(
            t.outcomes.insert(),
            [
                {
                    "ticket_id": "T-1",
                    "attempt": 1,
                    "status": "pending_review",
                    "reason_code": "drafted",
                    "bucket": "answerable",
                    "engine": "offline",
                    "draft": draft,
                    "safety": None,
                    "staged_at": start,
                },
                {
                    "ticket_id": "T-2",
                    "attempt": 1,
                    "status": "routed",
                    "reason_code": "bug_report",
                    "bucket": "not_a_question",
                    "engine": "offline",
                    "draft": None,
                    "safety": None,
                    "staged_at": later[0],
                },
            ],
        )
        hit = {"id": "kb-a#x", "doc_id": "kb-a", "title": "A", "score": 0.03}
        conn.execute(
            t.trace_events.insert().values(
                ticket_id="T-1",
                attempt=1,
                seq=0,
                stage="retrieve",
                status="ok",
                detail={"hits": [hit]},
                duration_ms=4.0,
                created_at=start,
            )
        )
        outcome_id = conn.execute(
            sa.select(t.outcomes.c.id).where(t.outcomes.c.ticket_id == "T-1")
        ).scalar()
        conn.execute(
            t.reviews.insert().values(
                outcome_id=outcome_id,
                ticket_id="T-1",
                decision="approve",
                reviewer="ana",
                final_text="Wait.",
                reason=None,
                resolved_doc_id="AR-T-1",
                decided_at=later[1],
            )
        )
    engine.dispose()

    store = Store(url)
    assert "002_audit_events" in store.migrate()
    events = read_events(store.engine)
    assert [(e["ticket_id"], e["event"]) for e in events] == [
        ("T-1", "agent.staged"),
        ("T-2", "agent.staged"),
        ("T-1", "review.approve"),
    ]
    assert events[0]["created_at"] == "2024-01-02T03:04:05.000000+00:00"
    assert events[0]["data"]["retrieved_doc_ids"] == ["kb-a"]
    assert events[0]["data"]["top_score"] == 0.03
    assert events[2]["data"]["resolved_added"] is True and events[2]["actor"] == "ana"
    # New decisions continue the same chain.
    store.add_tickets([Ticket("T-3", "s", "b")])
    attempt = store.begin_attempt("T-3")
    routed = Outcome("T-3", Status.ROUTED, "outage", Bucket.NOT_A_QUESTION, None, None, (), "x")
    store.stage_outcome(routed, attempt)
    last = read_events(store.engine)[-1]
    assert (last["seq"], last["prev_hash"]) == (4, events[2]["hash"])
    assert verify(store.engine).intact
    store.close()


# --- many writers, one chain ---------------------------------------------------------------------


def _stage_pending(store: Store, ticket: Ticket, sentence: str) -> None:
    store.add_tickets([ticket])
    attempt = store.begin_attempt(ticket.id)
    draft = Draft((DraftSentence(sentence, ("kb-contacts#import",)),), 0.7)
    outcome = Outcome(
        ticket.id, Status.PENDING_REVIEW, "drafted", Bucket.ANSWERABLE, draft, None, (), "offline"
    )
    store.stage_outcome(outcome, attempt)


_KEY = b"many-writers-" + b"x" * 40


def _seal(head_file: str) -> AuditSeal:
    return AuditSeal(_KEY, Path(head_file), head_file_complete=True)


def _append_worker(
    url: str, head_file: str, ticket_ids: list[str], barrier: Any, results: Any
) -> None:
    """Stage and review tickets in one process while others do the same, all sealing with one
    key and writing one head file."""
    store = Store(url, audit=_seal(head_file))
    try:
        barrier.wait(timeout=120)
        for ticket_id in ticket_ids:
            ticket = Ticket(ticket_id, f"Import {ticket_id}", "How do I import contacts?")
            _stage_pending(store, ticket, f"Upload the CSV from the Contacts page ({ticket_id}).")
            if int(ticket_id.rsplit("-", 1)[1]) % 2:
                amend(store, None, ticket_id, f"Use the Contacts page ({ticket_id}).", "w")
            else:
                reject(store, ticket_id, "no", "w")
        results.put(("ok", ""))
    except Exception as exc:
        results.put(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        store.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_appends_from_four_processes_keep_one_intact_chain(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = (
        f"sqlite:///{tmp_path / 'chain.db'}"
        if backend == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    head_file = str(tmp_path / "audit-head.log")
    store = Store(url, audit=_seal(head_file))
    store.migrate()
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(4), ctx.Queue()
    batches = [[f"P{p}-{i}" for i in range(5)] for p in range(4)]
    procs = [
        ctx.Process(target=_append_worker, args=(url, head_file, batch, barrier, results))
        for batch in batches
    ]
    for proc in procs:
        proc.start()
    try:
        outcomes = [results.get(timeout=300) for _ in procs]
    except queue.Empty:
        pytest.fail("the writers did not finish")
    finally:
        for proc in procs:
            proc.join(timeout=60)
    assert outcomes == [("ok", "")] * 4, outcomes
    report = verify(store.engine, seal=store.audit)
    assert report.intact, report.problems
    assert report.events == report.head_seq == 4 * 5 * 2
    # Every append's line reached the head file whole, whichever process wrote it.
    lines = Path(head_file).read_text().splitlines()
    assert sorted(int(line.split()[0]) for line in lines) == list(range(1, 41))
    assert "every event and the head carry a valid MAC" in " ".join(report.proves)
    with store.engine.connect() as conn:
        seqs = list(conn.execute(sa.select(audit_events.c.seq).order_by("seq")).scalars())
        reviews = conn.execute(sa.select(sa.func.count()).select_from(t.reviews)).scalar()
    assert seqs == list(range(1, 41)) and reviews == 20
    # Each ticket's staged event comes before its decision.
    for batch in batches:
        for ticket_id in batch:
            kinds = [e["event"] for e in read_events(store.engine, ticket_id)]
            assert kinds[0] == "agent.staged" and kinds[1].startswith("review.")
    store.close()
