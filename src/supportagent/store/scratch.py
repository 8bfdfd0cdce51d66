"""The one-shot ``triage``'s private store: one ticket's run kept in memory, then dropped.

``triage_text`` runs a ticket through the pipeline without touching the team's inbox, so the
run's ticket, attempt, trace and outcome go to a store of its own that is discarded at the
end. That used to be a migrated in-memory SQLite database, which cost a one-shot command the
SQLAlchemy import and the migrations; this class keeps the same things in Python objects.
What a caller reads back, the trace, is stored as the SQLite store returns it: each event's
detail goes through JSON on the way in (tuples come back as lists, as from a JSON column), so
a trace read here equals one read from ``Store`` (tested). No audit event, claim or response
cache: nobody reads this store's audit log, it has one ticket and one worker, and a model's
response cache needs a real ``Store`` (``triage_text`` uses one for a model engine).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from supportagent.domain import Document, Outcome, Ticket, TraceEvent
from supportagent.errors import NotFoundError
from supportagent.store.records import AttemptHistory, TraceBatch
from supportagent.store.serde import trace_event_to_json


class ScratchStore:
    """A ``PipelineStore`` in memory for one process's one-shot tickets."""

    def __init__(self, tickets: tuple[Ticket, ...] = ()) -> None:
        self._tickets = {ticket.id: ticket for ticket in tickets}
        self._attempts: dict[str, int] = {}
        #: (ticket id, attempt) -> its events, in order, each detail as read from JSON.
        self._events: dict[tuple[str, int], list[TraceEvent]] = {}
        self.outcomes: list[Outcome] = []

    def get_ticket(self, ticket_id: str) -> Ticket:
        ticket = self._tickets.get(ticket_id)
        if ticket is None:
            raise NotFoundError(f"No ticket with id {ticket_id!r}.")
        return ticket

    def begin_attempt(self, ticket_id: str) -> int:
        self.get_ticket(ticket_id)
        attempt = self._attempts.get(ticket_id, 0) + 1
        self._attempts[ticket_id] = attempt
        return attempt

    def document_revision(self) -> int:
        return 0  # it holds no documents, as the migrated scratch database had none

    def documents_changed_since(
        self, since: datetime | None
    ) -> tuple[list[Document], datetime | None]:
        return [], since

    def append_trace(self, batch: TraceBatch) -> None:
        rows = self._events.setdefault((batch.ticket_id, batch.attempt), [])
        for seq, event in batch.events:
            if seq != len(rows):  # the unique (ticket, attempt, seq) of the table
                raise ValueError(f"trace event {seq} of {batch.ticket_id} is out of order")
            detail = json.loads(json.dumps(event.detail))  # as a JSON column stores it
            rows.append(TraceEvent(event.stage, event.status, detail, float(event.duration_ms)))

    def stage_outcome(
        self,
        outcome: Outcome,
        attempt: int,
        trace: TraceBatch | None = None,
        history: AttemptHistory | None = None,
    ) -> int:
        if trace is not None:
            self.append_trace(trace)
        self.outcomes.append(outcome)
        return len(self.outcomes)

    def trace(self, ticket_id: str, attempt: int | None = None) -> list[dict[str, Any]]:
        """The trace of one attempt (default: the latest), as ``Store.trace`` gives it."""
        attempt = attempt if attempt is not None else self._attempts.get(ticket_id, 0)
        return [trace_event_to_json(event) for event in self._events.get((ticket_id, attempt), [])]

    def close(self) -> None:
        self._events.clear()
