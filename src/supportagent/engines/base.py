"""The Engine protocol: who classifies a ticket, drafts an answer and checks a draft."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from supportagent.domain import Classification, Draft, Hit, SafetyResult, Ticket, Verdict

if TYPE_CHECKING:
    from supportagent.llm.structured import CallRecord


class Engine(Protocol):
    """Three decisions, no side effects. The pipeline hands each one what it needs."""

    name: str

    def classify(self, ticket: Ticket, safety: SafetyResult) -> Classification:
        """Bucket the ticket: answerable, not_a_question or needs_human."""
        ...

    def draft(
        self,
        ticket: Ticket,
        evidence: Sequence[Hit],
        previous: Draft | None = None,
        verdict: Verdict | None = None,
    ) -> Draft:
        """Write an answer from ``evidence`` only; on a revision, fix what ``verdict`` lists."""
        ...

    def check(self, ticket: Ticket, draft: Draft, evidence: Sequence[Hit]) -> Verdict:
        """Judge a draft that already passed the deterministic grounding checks."""
        ...


@runtime_checkable
class MeteredEngine(Protocol):
    """An engine that calls a model and keeps a record of each call for the pipeline.

    Declared here, with the other capabilities, so that the pipeline can ask for it without
    importing the llm engine (and its model client) for an offline run.
    """

    def take_calls(self, ticket_id: str) -> list[CallRecord]: ...
