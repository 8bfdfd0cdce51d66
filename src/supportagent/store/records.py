"""What the pipeline hands the store, and what it needs of one, without SQLAlchemy.

``TraceBatch`` and ``AttemptHistory`` are what a pipeline run writes; ``PipelineStore`` is
the part of ``Store`` a run uses, which the one-shot ``triage``'s in-memory scratch store
(``store/scratch.py``) also provides. Kept apart from ``store.py`` so that a one-shot
``triage`` that reads a warm index never imports SQLAlchemy (docs/scaling.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from supportagent.domain import Document, TraceEvent

if TYPE_CHECKING:
    from supportagent.domain import Outcome, Ticket


@dataclass(frozen=True, slots=True)
class TraceBatch:
    """Trace events (with their sequence numbers) and model-call records of one attempt."""

    ticket_id: str
    attempt: int
    events: Sequence[tuple[int, TraceEvent]] = ()
    model_calls: Sequence[Mapping[str, Any]] = ()


@dataclass(frozen=True, slots=True)
class AttemptHistory:
    """Every trace event and model-call record of one attempt, in order."""

    events: Sequence[TraceEvent]
    model_calls: Sequence[Mapping[str, Any]]


class DocumentSource(Protocol):
    """Where a search index learns of documents written by other processes."""

    def document_revision(self) -> int: ...

    def documents_changed_since(
        self, since: datetime | None
    ) -> tuple[list[Document], datetime | None]: ...


class PipelineStore(DocumentSource, Protocol):
    """What a pipeline run reads and writes: the ticket, its attempt, trace and outcome."""

    def get_ticket(self, ticket_id: str) -> Ticket: ...

    def begin_attempt(self, ticket_id: str) -> int: ...

    def append_trace(self, batch: TraceBatch) -> None: ...

    def stage_outcome(
        self,
        outcome: Outcome,
        attempt: int,
        trace: TraceBatch | None = None,
        history: AttemptHistory | None = None,
    ) -> int: ...
