"""The agent at work behind the web app: the shared scheduler on a background thread.

The worker keeps what the monitor shows live: the ticket in hand, the stage it is in, how
many tickets it handled, the model calls and tokens those used, and the last error.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings
from supportagent.domain import Outcome
from supportagent.llm.budget import Budget
from supportagent.runtime import build_engine, build_pipeline
from supportagent.scheduler import run_inbox
from supportagent.store.serde import trace_event_to_json
from supportagent.store.store import Store
from supportagent.web.trace_view import token_totals

#: Seconds between looks at the inbox for newly arrived tickets.
POLL_SECONDS = 1.0
#: The stages a ticket passes through, in order, as the monitor draws them.
PHASES = ("safety", "classify", "retrieve", "draft", "check", "stage")


@dataclass(frozen=True, slots=True)
class WorkerSnapshot:
    """A consistent copy of the worker's state, for one page or API response."""

    running: bool
    current: str | None
    phase: str | None
    processed: int
    model_calls: int
    tokens: int
    max_tickets: int | None
    capped: bool
    error: str | None


class AgentWorker:
    """Works through the inbox on a background thread until stopped or capped."""

    def __init__(
        self,
        settings: Settings,
        store: Store,
        knowledge: Knowledge,
        *,
        max_tickets: int | None = None,
        poll_seconds: float = POLL_SECONDS,
        budget: Budget | None = None,
    ) -> None:
        engine = build_engine(settings, budget=budget)
        self.pipeline = build_pipeline(settings, store, engine, knowledge)
        self.max_tickets = max_tickets
        self.poll_seconds = poll_seconds
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._current: str | None = None
        self._phase: str | None = None
        self._processed = 0
        self._calls = 0
        self._tokens = 0
        self._capped = False
        self._error: str | None = None
        self._thread = threading.Thread(target=self._loop, name="agent-worker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def shutdown(self) -> None:
        self.stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    def snapshot(self) -> WorkerSnapshot:
        with self._lock:
            return WorkerSnapshot(
                running=self._thread.is_alive() and not self.stop.is_set(),
                current=self._current,
                phase=self._phase,
                processed=self._processed,
                model_calls=self._calls,
                tokens=self._tokens,
                max_tickets=self.max_tickets,
                capped=self._capped,
                error=self._error,
            )

    def _loop(self) -> None:
        while not self.stop.is_set():
            with self._lock:
                remaining = None if self.max_tickets is None else self.max_tickets - self._processed
                self._capped = remaining is not None and remaining <= 0
            if self._capped:
                self.stop.wait(self.poll_seconds)
                continue
            try:
                summary = run_inbox(
                    self.pipeline,
                    max_tickets=remaining,
                    on_start=self.on_start,
                    on_stage=self.on_stage,
                    on_done=self.on_done,
                    stop=self.stop,
                )
                processed = summary.processed
            except Exception as exc:  # keep serving the UI; show the failure on the page
                with self._lock:
                    self._error = f"{type(exc).__name__}: {exc}"
                    self._current = self._phase = None
                processed = 0
            if processed == 0:
                self.stop.wait(self.poll_seconds)

    def on_start(self, ticket_id: str) -> None:
        """The scheduler took ``ticket_id``."""
        with self._lock:
            self._current, self._phase = ticket_id, "safety"

    def on_stage(self, ticket_id: str, stage: str) -> None:
        """``ticket_id`` entered ``stage`` (safety, classify, retrieve, draft, check, stage)."""
        with self._lock:
            if self._current == ticket_id:
                self._phase = stage

    def on_done(self, outcome: Outcome) -> None:
        """A ticket was staged; count it and the model calls it made."""
        usage = token_totals([trace_event_to_json(e) for e in outcome.trace])
        with self._lock:
            self._current = self._phase = None
            self._processed += 1
            self._error = None
            self._calls += usage["calls"]
            self._tokens += usage["total"]
