"""The outer loop in one process: claims and leases, caps, stop and resume, concurrency.

Real stores (SQLite, and PostgreSQL where ``any_store`` says so), the real pipeline with the
offline engine; a wrapper engine only adds a hook before classification, to hold a ticket in
flight or make it fail.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from store_checks import outcome_counts
from supportagent.agent.knowledge import Knowledge
from supportagent.agent.pipeline import Pipeline
from supportagent.cli import app
from supportagent.cli.schedule import _view
from supportagent.domain import (
    Classification,
    DocKind,
    Document,
    Draft,
    Hit,
    Outcome,
    SafetyResult,
    Status,
    Ticket,
    Verdict,
)
from supportagent.engines.offline import OfflineEngine
from supportagent.llm.budget import Budget
from supportagent.run_report import Caps, InFlight, Snapshot
from supportagent.scheduler import Scheduler, run_inbox
from supportagent.store.claims import Claims, StaleAttemptError, ticket_claims
from supportagent.store.store import Store

KB = [
    Document(
        "kb-keys",
        DocKind.KB,
        "API keys",
        "# API keys\n\n## Rotating a key\n\nCreate a new key in the dashboard under Settings, "
        "then delete the old key once no request uses it.",
    ),
    Document(
        "kb-limits",
        DocKind.KB,
        "Rate limits",
        "# Rate limits\n\nThe Starter plan allows 50 requests per second. When you pass the "
        "limit the API answers 429 with a Retry-After header.",
    ),
]
SUBJECTS = [
    ("Rotating an API key", "How do I rotate an API key without downtime?"),
    ("Rate limit", "How many requests per second does the Starter plan allow?"),
    ("Export crashes", "The export button crashes with error 500 every time. Bug?"),
    ("Helm chart", "Do you publish a helm chart for kubernetes?"),
]


def tickets(n: int, prefix: str = "T") -> list[Ticket]:
    return [
        Ticket(f"{prefix}-{i:03d}", *SUBJECTS[i % len(SUBJECTS)], priority=i % 3) for i in range(n)
    ]


class HookedEngine:
    """The offline engine, with ``before(ticket)`` called as each classification starts."""

    name = "offline"

    def __init__(self, before: Callable[[Ticket], None]) -> None:
        self.inner, self.before = OfflineEngine(), before

    def classify(self, ticket: Ticket, safety: SafetyResult) -> Classification:
        self.before(ticket)
        return self.inner.classify(ticket, safety)

    def draft(
        self,
        ticket: Ticket,
        evidence: Sequence[Hit],
        previous: Draft | None = None,
        verdict: Verdict | None = None,
    ) -> Draft:
        return self.inner.draft(ticket, evidence, previous, verdict)

    def check(self, ticket: Ticket, draft: Draft, evidence: Sequence[Hit]) -> Verdict:
        return self.inner.check(ticket, draft, evidence)


def pipeline(store: Store, engine: Any = None) -> Pipeline:
    # BM25 only: these tests are about the loop around the pipeline, not about retrieval.
    return Pipeline(store, Knowledge(KB, embedder=None), engine or OfflineEngine())


def assert_each_staged_once(store: Store) -> None:
    counts = outcome_counts(store)
    assert counts and set(counts.values()) == {1}, counts
    assert not store.unhandled_ticket_ids()


def expire(store: Store, ticket_id: str) -> None:
    """Make a claim's lease run out now, as if its worker had stopped renewing it long ago."""
    with store.engine.begin() as conn:
        conn.execute(
            ticket_claims.update()
            .where(ticket_claims.c.ticket_id == ticket_id)
            .values(expires_at=datetime(2000, 1, 1, tzinfo=UTC))
        )


# --- claims --------------------------------------------------------------------------------


def test_claims_give_each_ticket_to_one_claimer_most_urgent_first(any_store: Store) -> None:
    any_store.add_tickets(tickets(6))
    a, b = Claims(any_store, "a"), Claims(any_store, "b")
    got = [c for c in (a.claim_next() if i % 2 else b.claim_next() for i in range(7)) if c]
    assert [c.ticket_id for c in got] == ["T-002", "T-005", "T-001", "T-004", "T-000", "T-003"]
    assert {c.attempt for c in got} == {1}
    assert a.backlog().free == 0 and a.backlog().held == 6
    assert {s for _, s in any_store.list_tickets()} == {Status.IN_PROGRESS}


def test_an_expired_lease_is_taken_over_and_the_old_attempt_cannot_stage(any_store: Store) -> None:
    any_store.add_tickets(tickets(1))
    old, new = Claims(any_store, "old", lease_seconds=60), Claims(any_store, "new")
    first = old.claim_next()
    assert first is not None and new.claim_next() is None  # held under a live lease
    expire(any_store, first.ticket_id)
    second = new.claim_next()
    assert second is not None and second.attempt == first.attempt + 1
    assert old.renew([first]) == [first]  # the old owner learns it lost the ticket
    outcome = Outcome("T-000", Status.ROUTED, "bug_report", None, None, None, (), "offline")
    with pytest.raises(StaleAttemptError):
        any_store.stage_outcome(outcome, first.attempt)
    assert outcome_counts(any_store) == {"T-000": 0}
    any_store.stage_outcome(outcome, second.attempt)  # staging releases the claim too
    assert outcome_counts(any_store) == {"T-000": 1} and new.active() == []


# --- runs ----------------------------------------------------------------------------------


def test_run_inbox_handles_each_ticket_once_and_reports_stages(store: Store) -> None:
    store.add_tickets(tickets(8))
    stages: list[tuple[str, str]] = []
    summary = run_inbox(pipeline(store), on_stage=lambda tid, s: stages.append((tid, s)))
    assert (summary.processed, summary.stopped_by) == (8, "inbox empty")
    assert ("T-000", "safety") in stages and ("T-000", "stage") in stages
    assert run_inbox(pipeline(store)).processed == 0
    assert_each_staged_once(store)


def test_k_tickets_run_at_once(store: Store) -> None:
    store.add_tickets(tickets(8))
    barrier = threading.Barrier(4, timeout=30)  # breaks unless four tickets are in flight
    summary = Scheduler(
        pipeline(store, HookedEngine(lambda _t: barrier.wait())), concurrency=4
    ).run()
    assert summary.errors == [] and summary.processed == 8
    assert_each_staged_once(store)


def test_max_tickets_stops_the_run_and_the_next_run_continues(any_store: Store) -> None:
    any_store.add_tickets(tickets(10))
    first = Scheduler(pipeline(any_store), concurrency=3, caps=Caps(max_tickets=4)).run()
    assert (first.processed, first.stopped_by) == (4, "max_tickets")
    second = Scheduler(pipeline(any_store), concurrency=3).run()
    assert (second.processed, second.stopped_by) == (6, "inbox empty")
    assert_each_staged_once(any_store)
    assert {tk.id for tk, _ in any_store.list_tickets()} == {
        o.ticket_id for o in first.outcomes + second.outcomes
    }


def test_stop_finishes_the_tickets_in_flight_and_a_new_run_resumes(store: Store) -> None:
    store.add_tickets(tickets(12))
    stop = threading.Event()
    done: list[Outcome] = []

    def on_done(outcome: Outcome) -> None:
        done.append(outcome)
        if len(done) == 3:
            stop.set()

    first = Scheduler(pipeline(store), concurrency=2, stop=stop, on_done=on_done).run()
    assert first.stopped_by == "stopped" and 3 <= first.processed < 12
    assert first.handed_back == [] and Claims(store).active() == []
    second = Scheduler(pipeline(store), concurrency=2).run()
    assert first.processed + second.processed == 12
    assert_each_staged_once(store)


def test_shutdown_hands_back_a_ticket_that_outlives_the_grace_period(store: Store) -> None:
    store.add_tickets(tickets(1))
    entered, release = threading.Event(), threading.Event()

    def hold(_ticket: Ticket) -> None:
        entered.set()
        release.wait(30)

    stop = threading.Event()
    scheduler = Scheduler(pipeline(store, HookedEngine(hold)), stop=stop, grace_seconds=0.1)
    runner = threading.Thread(target=lambda: setattr(runner, "summary", scheduler.run()))
    runner.start()
    assert entered.wait(30)
    stop.set()
    runner.join(30)
    summary = runner.summary  # type: ignore[attr-defined]
    assert (summary.stopped_by, summary.handed_back) == ("stopped", ["T-000"])
    # Handed back: no claim, and the ticket is back in the inbox, not left "in progress".
    assert Claims(store).active() == [] and store.ticket_status("T-000") is Status.NEW
    release.set()  # the abandoned thread stops at its next stage and stages nothing
    assert Scheduler(pipeline(store)).run().processed == 1
    assert_each_staged_once(store)
    assert store.latest_outcome("T-000").attempt == 2  # type: ignore[union-attr]


def test_a_ticket_taken_over_after_its_lease_expired_is_staged_once(store: Store) -> None:
    store.add_tickets(tickets(3))
    takeovers: list[int] = []

    def steal(ticket: Ticket) -> None:
        if ticket.id == "T-001" and not takeovers:
            expire(store, ticket.id)  # this worker stalled past its lease...
            thief = Claims(store, "thief").claim_next()  # ...and another worker took over
            assert thief is not None and thief.ticket_id == "T-001"
            takeovers.append(thief.attempt)
            pipeline(store).run(thief.ticket_id, attempt=thief.attempt)

    summary = Scheduler(pipeline(store, HookedEngine(steal))).run()
    assert summary.lost == ["T-001"] and summary.processed == 2
    assert_each_staged_once(store)
    assert store.latest_outcome("T-001").attempt == takeovers[0] == 2  # type: ignore[union-attr]


def test_the_next_run_waits_for_a_dead_workers_lease_and_takes_the_ticket(store: Store) -> None:
    store.add_tickets(tickets(2))
    dead = Claims(store, "dead", lease_seconds=1.0).claim_next()  # never renewed nor released
    assert dead is not None
    summary = Scheduler(pipeline(store), wait_for_held=True, poll_seconds=0.1).run()
    assert (summary.processed, summary.stopped_by) == (2, "inbox empty")
    assert store.latest_outcome(dead.ticket_id).attempt == 2  # type: ignore[union-attr]
    assert_each_staged_once(store)


def test_retry_escalated_runs_only_the_escalated_tickets_again(store: Store) -> None:
    store.add_tickets(tickets(8))
    Scheduler(pipeline(store)).run()
    before = dict(store.status_counts())
    assert before.get("escalated", 0) > 0 and len(before) > 1
    assert Claims(store).requeue_escalated() == before["escalated"]
    again = Scheduler(pipeline(store)).run()
    assert again.processed == before["escalated"]
    assert {o.ticket_id for o in again.outcomes} == {
        o.ticket.id for o in store.staged() if o.attempt == 2
    }


def test_a_failing_ticket_is_reported_handed_back_and_the_rest_go_on(store: Store) -> None:
    store.add_tickets(tickets(4))

    def boom(ticket: Ticket) -> None:
        if ticket.id == "T-001":
            raise RuntimeError("boom")

    summary = Scheduler(pipeline(store, HookedEngine(boom))).run()
    assert summary.errors == [("T-001", "RuntimeError: boom")] and summary.processed == 3
    # Released when it failed: back to "new", so the run's end leaves nothing "in progress".
    assert store.ticket_status("T-001") is Status.NEW and Claims(store).active() == []
    with pytest.raises(RuntimeError, match="boom"):
        run_inbox(pipeline(store, HookedEngine(boom)))  # the web worker shows the error


def test_failures_in_a_row_stop_a_run_but_a_worker_backs_off_and_goes_on(store: Store) -> None:
    store.add_tickets(tickets(6))

    def down(_ticket: Ticket) -> None:
        raise ConnectionError("endpoint down")

    run = Scheduler(pipeline(store, HookedEngine(down))).run()
    assert run.stopped_by == "errors" and len(run.errors) == 3 and run.processed == 0
    stop, failures = threading.Event(), []

    def on_event(message: str) -> None:
        failures.extend([message] if "failed" in message else [])
        if len(failures) == 6:
            stop.set()

    engine = HookedEngine(down)
    worker = Scheduler(
        pipeline(store, engine), follow=True, poll_seconds=0.01, stop=stop, on_event=on_event
    ).run()
    assert worker.stopped_by == "stopped" and len(worker.errors) == 6  # every ticket was tried
    assert Claims(store).active() == [] and not store.staged()


def test_the_run_budget_stops_the_run_and_no_call_passes_it(store: Store) -> None:
    """A scripted metered engine: one budgeted call per classification (the stub server test
    for the real llm engine is in test_workers.py)."""
    store.add_tickets(tickets(12))
    budget = Budget(max_calls=5)
    spent: list[str] = []

    def call(ticket: Ticket) -> None:
        for _ in range(2):  # two calls a ticket against a cap of five: one is always refused
            budget.reserve(ticket.id, 10, 10)  # raises RunBudgetExhausted rather than pass 5
            spent.append(ticket.id)

    engine = HookedEngine(call)
    summary = Scheduler(pipeline(store, engine), concurrency=3, budget=budget).run()
    assert summary.stopped_by == "max_api_calls" and len(spent) == 5 == summary.api_calls
    assert summary.handed_back and Claims(store).active() == []
    assert all(store.ticket_status(tid) is Status.NEW for tid in summary.handed_back)
    rest = Scheduler(pipeline(store)).run()  # no cap: continues with what is left
    assert summary.processed + rest.processed == 12
    assert_each_staged_once(store)


# --- CLI and live view -------------------------------------------------------------------


def test_schedule_command_caps_resume_and_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUPPORTAGENT_EMBEDDER", "none")
    runner = CliRunner()
    kb = tmp_path / "kb"
    kb.mkdir()
    for doc in KB:
        (kb / f"{doc.id}.md").write_text(doc.body, encoding="utf-8")
    inbox = tmp_path / "inbox.jsonl"
    lines = [
        f'{{"id": "{tk.id}", "subject": "{tk.subject}", "body": "{tk.body}"}}' for tk in tickets(6)
    ]
    inbox.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert runner.invoke(app, ["ingest", "kb", str(kb)]).exit_code == 0
    assert runner.invoke(app, ["ingest", "tickets", str(inbox)]).exit_code == 0
    first = runner.invoke(app, ["schedule", "--max-tickets", "4", "--concurrency", "2"])
    assert first.exit_code == 3, first.output  # stopped by a cap, tickets still waiting
    assert "4 tickets handled" in first.output and "stopped by: max_tickets" in first.output
    second = runner.invoke(app, ["schedule", "--concurrency", "2"])
    assert "2 tickets handled" in second.output and "stopped by: inbox empty" in second.output
    retry = runner.invoke(app, ["schedule", "--retry-escalated"])
    assert retry.exit_code == 0 and "escalated tickets put back in the inbox" in retry.output
    bad = runner.invoke(app, ["schedule", "--concurrency", "0"])
    assert bad.exit_code != 0 and "Traceback" not in bad.output
    monkeypatch.setenv("SUPPORTAGENT_DATABASE_URL", "postgresql://bob:hunter2@127.0.0.1:1/x")
    down = runner.invoke(app, ["worker"])
    assert down.exit_code == 1 and "Cannot connect to PostgreSQL at 127.0.0.1:1/x" in down.output
    assert "hunter2" not in down.output and "Traceback" not in down.output


def test_live_view_shows_tickets_in_flight_their_stage_and_the_caps() -> None:
    snapshot = Snapshot(
        in_flight=(InFlight("T-7", 2, "draft", 1.5),),
        processed=3,
        by_status={"pending_review": 2, "escalated": 1},
        handed_back=0,
        lost=0,
        errors=0,
        caps=Caps(max_tickets=10, max_api_calls=50),
        api_calls=17,
        tokens=4200,
        held_elsewhere=0,
        stopping="max_api_calls",
        seconds=4.0,
    )
    console = Console(record=True, width=120)
    console.print(_view(snapshot))
    text = console.export_text()
    assert "T-7" in text and "draft" in text
    assert "tickets 4/10" in text and "model requests 17/50" in text and "tokens 4200" in text
    assert "pending_review 2" in text and "stopping: max_api_calls" in text


def test_renewal_keeps_a_slow_ticket_claimed_past_its_lease(store: Store) -> None:
    store.add_tickets(tickets(1))
    rival = Claims(store, "rival")
    seen: list[object] = []

    def slow(_ticket: Ticket) -> None:
        deadline = time.monotonic() + 2.5  # well past the 0.9 s lease: only renewal holds it
        while time.monotonic() < deadline:
            seen.append(rival.claim_next())
            time.sleep(0.1)

    claims = Claims(store, "slow", lease_seconds=0.9)
    summary = Scheduler(pipeline(store, HookedEngine(slow)), claims=claims).run()
    assert summary.processed == 1 and summary.lost == [] and set(seen) == {None}
    assert_each_staged_once(store)
