"""The outer loop: work through the inbox, skipping handled tickets, within caps."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from dataclasses import dataclass, field

from supportagent.agent.pipeline import Pipeline
from supportagent.domain import Outcome


@dataclass
class RunSummary:
    processed: int = 0
    outcomes: list[Outcome] = field(default_factory=list)
    stopped_by: str = "inbox empty"


def run_inbox(
    pipeline: Pipeline,
    *,
    max_tickets: int | None = None,
    on_start: Callable[[str], None] | None = None,
    on_done: Callable[[Outcome], None] | None = None,
    on_stage: Callable[[str, str], None] | None = None,
    stop: threading.Event | None = None,
) -> RunSummary:
    """Run every unhandled ticket, most urgent and oldest first, until a cap or ``stop``.

    ``on_stage(ticket_id, stage)`` hears each stage as it starts (the web UI's live phase).
    """
    summary = RunSummary()
    for ticket_id in pipeline.store.unhandled_ticket_ids():
        if stop is not None and stop.is_set():
            summary.stopped_by = "stopped"
            break
        if max_tickets is not None and summary.processed >= max_tickets:
            summary.stopped_by = "max_tickets"
            break
        if on_start is not None:
            on_start(ticket_id)
        notify = None if on_stage is None else partial(on_stage, ticket_id)
        outcome = pipeline.run(ticket_id, on_stage=notify)
        summary.processed += 1
        summary.outcomes.append(outcome)
        if on_done is not None:
            on_done(outcome)
    return summary
