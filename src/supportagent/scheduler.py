"""The outer loop: claim tickets, run up to K at once within hard caps, resume where it stopped.

State lives in the store, so a run can stop anywhere and the next one continues: every ticket
is claimed under a lease (``store/claims.py``) before it runs, each stage result commits on its
own, and only the attempt that holds the current claim can stage an outcome. A worker killed
mid-ticket leaves a lease that expires; the next run, or another worker, takes the ticket over.

Threads run the tickets (the pipeline is synchronous and waits on model calls); this module's
main loop claims, renews leases, enforces the caps and collects results.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import sqlalchemy as sa

from supportagent.agent.pipeline import Pipeline
from supportagent.domain import Outcome
from supportagent.llm.budget import Budget, RunBudgetExhausted
from supportagent.run_report import (
    ERRORS,
    INBOX_EMPTY,
    STOPPED,
    Caps,
    InFlight,
    RunSummary,
    Snapshot,
)
from supportagent.store.claims import Claim, Claims, StaleAttemptError
from supportagent.store.failures import describe_database_failure
from supportagent.store.store import Store

__all__ = ["ERRORS", "INBOX_EMPTY", "STOPPED", "Caps", "RunSummary", "Scheduler", "run_inbox"]

#: A run (not a worker) gives up after this many tickets in a row fail unexpectedly.
MAX_CONSECUTIVE_ERRORS = 3
#: A worker leaves a ticket that failed alone for this long before trying it again.
RETRY_FAILED_AFTER = 600.0


class ClaimLost(Exception):
    """This worker no longer holds the ticket: its lease lapsed or it was handed back."""


@dataclass(frozen=True, slots=True)
class _Result:
    claim: Claim
    kind: Literal["done", "lost", "capped", "failed"]
    outcome: Outcome | None = None
    error: BaseException | None = None


@dataclass(slots=True)
class _Slot:
    claim: Claim
    stage: str
    started: float


def store_of(pipeline: Pipeline) -> Store:
    """The database the pipeline writes to, where tickets are claimed: a ``Store`` (only the
    one-shot ``triage`` runs a pipeline over a scratch store, and never schedules it)."""
    store = pipeline.store
    if not isinstance(store, Store):
        raise TypeError(f"a scheduler needs a Store, not {type(store).__name__}")
    return store


class Scheduler:
    """Claims open tickets and runs up to ``concurrency`` of them at once, until told to stop.

    ``follow``: keep polling for new tickets (a worker) instead of ending when the inbox is
    empty. ``wait_for_held``: before ending, wait for tickets that other workers hold (their
    leases either end in a staged result or expire and the ticket comes back).
    """

    def __init__(
        self,
        pipeline: Pipeline,
        *,
        claims: Claims | None = None,
        concurrency: int = 1,
        caps: Caps | None = None,
        budget: Budget | None = None,
        follow: bool = False,
        wait_for_held: bool = False,
        poll_seconds: float = 1.0,
        grace_seconds: float = 30.0,
        stop: threading.Event | None = None,
        fail_fast: bool = False,
        keep_outcomes: bool = True,
        on_start: Callable[[str], None] | None = None,
        on_stage: Callable[[str, str], None] | None = None,
        on_done: Callable[[Outcome], None] | None = None,
        on_event: Callable[[str], None] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.pipeline = pipeline
        self.store = store_of(pipeline)
        self.claims = claims or Claims(self.store)
        self.concurrency = concurrency
        self.caps = caps or Caps()
        engine_budget = getattr(pipeline.engine, "budget", None)
        self.budget = budget or (engine_budget if isinstance(engine_budget, Budget) else None)
        self.follow, self.wait_for_held = follow, wait_for_held
        self.poll_seconds, self.grace_seconds = poll_seconds, grace_seconds
        self.stop = stop or threading.Event()
        self.fail_fast, self.keep_outcomes = fail_fast, keep_outcomes
        self._on_start, self._on_stage, self._on_done = on_start, on_stage, on_done
        self._on_event = on_event or (lambda _message: None)
        self.summary = RunSummary()
        self._lock = threading.Lock()
        self._slots: dict[str, _Slot] = {}
        # Claims this worker no longer holds, and why: "lost" (lease lapsed) or "handed back".
        self._dropped: dict[tuple[str, int], str] = {}
        self._consecutive_errors = 0
        self._failed: dict[str, float] = {}  # ticket -> when it may be tried again
        self._held_elsewhere = 0
        self._stopping: str | None = None
        self._first_error: BaseException | None = None
        self._t0 = self._next_renew = self._next_look = time.monotonic()
        self._deadline: float | None = None

    # --- the loop ------------------------------------------------------------------------

    def run(self) -> RunSummary:
        """Work until the inbox is empty (or, following, until stopped) or a cap is reached."""
        self._t0 = time.monotonic()
        results: queue.Queue[_Result] = queue.Queue()
        jobs: queue.Queue[Claim | None] = queue.Queue()
        threads = [
            threading.Thread(target=self._thread, args=(jobs, results), daemon=True)
            for _ in range(self.concurrency)
        ]
        for thread in threads:
            thread.start()
        self._next_renew = self._t0 + self.claims.lease_seconds / 3
        try:
            while not self._step(jobs, results):
                pass
        finally:
            self._hand_back_all("interrupted")  # only non-empty if the loop itself failed
            for _ in threads:
                jobs.put(None)
        self._account()
        if self.fail_fast and self._first_error is not None:
            raise self._first_error
        return self.summary

    def snapshot(self) -> Snapshot:
        now = time.monotonic()
        with self._lock:
            in_flight = tuple(
                InFlight(s.claim.ticket_id, s.claim.attempt, s.stage, now - s.started)
                for s in self._slots.values()
            )
            s = self.summary
            return Snapshot(
                in_flight=in_flight,
                processed=s.processed,
                by_status=dict(s.by_status),
                handed_back=len(s.handed_back),
                lost=len(s.lost),
                errors=len(s.errors),
                caps=self.caps,
                api_calls=self.budget.run.requests if self.budget else 0,
                tokens=self.budget.run.tokens if self.budget else 0,
                held_elsewhere=self._held_elsewhere,
                stopping=self._stopping,
                seconds=now - self._t0,
            )

    # --- steps of the loop ---------------------------------------------------------------

    def _step(self, jobs: queue.Queue[Claim | None], results: queue.Queue[_Result]) -> bool:
        """One turn: renew leases, claim into free threads, collect results. True: run over."""
        now, claimed = time.monotonic(), False
        try:
            if now >= self._next_renew:
                self._renew()
                self._next_renew = now + self.claims.lease_seconds / 3
            if self._stopping is None and self.stop.is_set():
                self._stopping, self._deadline = STOPPED, now + self.grace_seconds
            if self._stopping is None and now >= self._next_look:
                claimed, dry = self._fill(jobs)
                if dry:
                    self._next_look = now + self.poll_seconds
                    if not self._slots and self._finished():
                        return True
        except sa.exc.DBAPIError as exc:
            if not self.follow:
                raise
            # A worker outlives a database restart; its leases protect the tickets meanwhile.
            why = describe_database_failure(exc, self.store.url)
            self._on_event(f"database unavailable: {why} Trying again.")
            self._next_look = now + self.poll_seconds
        if not self._slots and self._stopping is not None:
            self.summary.stopped_by = self._stopping
            return True
        if self._deadline is not None and now >= self._deadline:
            self._hand_back_all("shutdown")
            self.summary.stopped_by = STOPPED
            return True
        if self._slots:
            self._collect(results, 0.0 if claimed else 0.2)
        else:
            self.stop.wait(max(0.0, self._next_look - time.monotonic()))
        return False

    def _fill(self, jobs: queue.Queue[Claim | None]) -> tuple[bool, bool]:
        """Claim while a thread is free and no cap forbids it: (claimed any, inbox looked dry)."""
        claimed = False
        while len(self._slots) < self.concurrency:
            cap = self._cap_reached()
            if cap is not None:
                # A cap stops the run only while there is work it holds back.
                if self.claims.backlog(self._excluded()).free:
                    self._stopping = cap
                    return claimed, False
                return claimed, True
            claim = self.claims.claim_next(exclude=self._excluded())
            if claim is None:
                return claimed, True
            with self._lock:
                self._slots[claim.ticket_id] = _Slot(claim, "claimed", time.monotonic())
            if self._on_start is not None:
                self._on_start(claim.ticket_id)
            jobs.put(claim)
            claimed = True
        return claimed, False

    def _cap_reached(self) -> str | None:
        max_tickets = self.caps.max_tickets
        if max_tickets is not None and self.summary.processed + len(self._slots) >= max_tickets:
            return "max_tickets"
        if self.budget is not None and self.budget.exhausted:
            return _budget_cap(self.budget)
        return None

    def _excluded(self) -> list[str]:
        """Tickets that failed here recently; a worker tries them again after a while."""
        now = time.monotonic()
        self._failed = {tid: until for tid, until in self._failed.items() if until > now}
        return list(self._failed)

    def _finished(self) -> bool:
        """Nothing left to claim and nothing in flight: is the run over?"""
        if self.follow:
            return False
        if not self.wait_for_held:
            return True
        backlog = self.claims.backlog(self._excluded())
        self._held_elsewhere = backlog.held
        return backlog.free == 0 and backlog.held == 0

    def _collect(self, results: queue.Queue[_Result], timeout: float) -> None:
        try:
            result = results.get(timeout=timeout) if timeout > 0 else results.get_nowait()
        except queue.Empty:
            return
        while True:
            self._settle(result)
            try:
                result = results.get_nowait()
            except queue.Empty:
                return

    def _settle(self, result: _Result) -> None:
        claim, summary = result.claim, self.summary
        key = (claim.ticket_id, claim.attempt)
        with self._lock:
            self._slots.pop(claim.ticket_id, None)
            dropped = self._dropped.pop(key, None)
        if result.kind == "done":
            assert result.outcome is not None  # staging released the claim
            with self._lock:
                summary.processed += 1
                summary.by_status[result.outcome.status.value] += 1
                if self.keep_outcomes:
                    summary.outcomes.append(result.outcome)
            self._consecutive_errors = 0
            self._on_event(f"{claim.ticket_id}: {result.outcome.status.value}")
            if self._on_done is not None:
                self._on_done(result.outcome)
        elif result.kind == "lost":
            if dropped != "handed back":  # already counted when it was handed back
                summary.lost.append(claim.ticket_id)
            self._on_event(f"{claim.ticket_id}: taken over by another worker")
        elif result.kind == "capped":
            self._release(claim)
            summary.handed_back.append(claim.ticket_id)
            cap = _budget_cap(self.budget) if self.budget else "model budget"
            self._stopping = self._stopping or cap
            self._on_event(f"{claim.ticket_id}: handed back, {result.error}")
        else:
            self._release(claim)
            self._failed_once(claim.ticket_id, result.error)

    def _failed_once(self, ticket_id: str, error: BaseException | None) -> None:
        """Record a ticket's unexpected failure; a run stops after a few, a worker backs off."""
        message = self._describe(error)
        self.summary.errors.append((ticket_id, message))
        self._on_event(f"{ticket_id}: failed, {message}")
        self._consecutive_errors += 1
        if self.fail_fast and self._first_error is None:
            self._first_error = error
            self._stopping = self._stopping or ERRORS
        if not self.follow:
            self._failed[ticket_id] = float("inf")
            if self._consecutive_errors >= MAX_CONSECUTIVE_ERRORS:
                self._stopping = self._stopping or ERRORS
            return
        now = time.monotonic()
        self._failed[ticket_id] = now + RETRY_FAILED_AFTER
        # Failing ticket after ticket (a model endpoint down): wait longer before each claim.
        pause = min(60.0, self.poll_seconds * 2 ** min(self._consecutive_errors, 8))
        self._next_look = max(self._next_look, now + pause)

    def _describe(self, error: BaseException | None) -> str:
        # A database error's own text holds the SQL and its parameters (ticket text): never
        # repeat it; say what failed instead.
        if isinstance(error, sa.exc.SQLAlchemyError):
            return describe_database_failure(error, self.store.url)
        return f"{type(error).__name__}: {error}"

    def _release(self, claim: Claim) -> None:
        """Give a claim up; if the database is away, its lease runs out on its own."""
        try:
            self.claims.release(claim)
        except sa.exc.DBAPIError as exc:
            why = describe_database_failure(exc, self.store.url)
            self._on_event(f"{claim.ticket_id}: could not release its claim: {why}")

    def _renew(self) -> None:
        with self._lock:
            held = [s.claim for s in self._slots.values()]
        if not held:
            return
        for claim in self.claims.renew(held):
            with self._lock:
                self._dropped[(claim.ticket_id, claim.attempt)] = "lost"

    def _hand_back_all(self, why: str) -> None:
        """Release every claim still in flight, so another worker can start it at once."""
        with self._lock:
            slots = list(self._slots.values())
            self._slots.clear()
            for slot in slots:
                self._dropped[(slot.claim.ticket_id, slot.claim.attempt)] = "handed back"
        for slot in slots:
            self._release(slot.claim)
            self.summary.handed_back.append(slot.claim.ticket_id)
            self._on_event(f"{slot.claim.ticket_id}: handed back ({why})")

    def _account(self) -> None:
        self.summary.seconds = time.monotonic() - self._t0
        if self.budget is not None:
            used = self.budget.used()
            # Every request sent, retries included: what the caps count and a provider bills.
            self.summary.api_calls = used.requests
            self.summary.retries = used.retries
            self.summary.tokens = used.tokens

    # --- the worker threads --------------------------------------------------------------

    def _thread(self, jobs: queue.Queue[Claim | None], results: queue.Queue[_Result]) -> None:
        while (claim := jobs.get()) is not None:
            results.put(self._work(claim))

    def _work(self, claim: Claim) -> _Result:
        key = (claim.ticket_id, claim.attempt)

        def notify(stage: str) -> None:
            with self._lock:
                if key in self._dropped:
                    raise ClaimLost(claim.ticket_id)
                slot = self._slots.get(claim.ticket_id)
                if slot is not None:
                    slot.stage = stage
            if self._on_stage is not None:
                self._on_stage(claim.ticket_id, stage)

        try:
            outcome = self.pipeline.run(claim.ticket_id, on_stage=notify, attempt=claim.attempt)
        except (ClaimLost, StaleAttemptError):
            return _Result(claim, "lost")
        except RunBudgetExhausted as exc:
            return _Result(claim, "capped", error=exc)
        except Exception as exc:
            return _Result(claim, "failed", error=exc)
        return _Result(claim, "done", outcome)


def _budget_cap(budget: Budget) -> str:
    """Which of the budget's caps stopped the run (requests are checked before tokens)."""
    reached = budget.cap_reached()
    if reached is not None:
        return reached
    # A refusal comes before the cap is reached: the next request would have passed it.
    return "max_api_calls" if budget.max_calls is not None else "max_tokens"


def run_inbox(
    pipeline: Pipeline,
    *,
    max_tickets: int | None = None,
    on_start: Callable[[str], None] | None = None,
    on_done: Callable[[Outcome], None] | None = None,
    on_stage: Callable[[str, str], None] | None = None,
    stop: threading.Event | None = None,
    concurrency: int = 1,
    budget: Budget | None = None,
    lease_seconds: float = 30.0,
) -> RunSummary:
    """Run every unhandled ticket, most urgent and oldest first, until a cap or ``stop``.

    ``on_stage(ticket_id, stage)`` hears each stage as it starts (the web UI's live phase).
    Tickets other workers hold are left to them. An unexpected error in a ticket stops the run
    and is raised once the claims are released.
    """
    scheduler = Scheduler(
        pipeline,
        claims=Claims(store_of(pipeline), lease_seconds=lease_seconds),
        concurrency=concurrency,
        caps=Caps(max_tickets=max_tickets),
        budget=budget,
        stop=stop,
        fail_fast=True,
        on_start=on_start,
        on_stage=on_stage,
        on_done=on_done,
    )
    return scheduler.run()
