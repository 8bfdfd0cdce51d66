"""One-shot triage of a ticket text: the whole pipeline, without touching the inbox."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings
from supportagent.domain import Ticket
from supportagent.engines.offline import OfflineEngine
from supportagent.llm.budget import Budget
from supportagent.runtime import build_engine, build_pipeline
from supportagent.store.scratch import ScratchStore
from supportagent.store.serde import draft_to_json, safety_to_json

if TYPE_CHECKING:
    from supportagent.store.store import Store


def triage_text(
    settings: Settings,
    knowledge: Knowledge,
    text: str,
    *,
    budget: Budget | None = None,
    ticket_id: str | None = None,
) -> dict[str, Any]:
    """Run ``text`` through the pipeline against ``knowledge``; return the structured result.

    The ticket lives in a private in-memory store, so a one-shot question leaves no trace in
    the team's inbox: kept in Python objects for the offline engine (``store/scratch.py``), in
    an in-memory SQLite database for a model engine, whose response cache is kept in a
    ``Store`` (the same question twice in one run costs one call). ``budget``: the run's, when
    the caller has one (the web app), so that one-shot questions count against the same caps;
    default: the settings' caps, afresh. ``ticket_id``: the ticket's own id (a row of
    ``triage --batch``); default: one made from the text.
    """
    text = text.strip()
    subject, _, body = text.partition("\n")
    ticket_id = ticket_id or "TRIAGE-" + hashlib.sha256(text.encode()).hexdigest()[:12]
    ticket = Ticket(ticket_id, subject[:200], body if body else subject)
    engine = build_engine(settings, budget=budget)
    scratch: ScratchStore | Store
    if isinstance(engine, OfflineEngine):
        scratch = ScratchStore((ticket,))
    else:
        from supportagent.store.store import Store  # SQLAlchemy: not for an offline triage

        scratch = Store("sqlite://")
        scratch.migrate()
        scratch.add_tickets([ticket])
    pipeline = build_pipeline(settings, scratch, engine, knowledge)
    outcome = pipeline.run(ticket_id)
    trace = scratch.trace(ticket_id)
    scratch.close()
    retrieval = [e["detail"] for e in trace if e["stage"] == "retrieve"]
    return {
        "ticket_id": ticket_id,
        "engine": outcome.engine,
        "status": outcome.status.value,
        "reason_code": outcome.reason_code,
        "bucket": outcome.bucket.value if outcome.bucket else None,
        "safety": safety_to_json(outcome.safety) if outcome.safety else None,
        "retrieval": retrieval,
        "answer": outcome.draft.answer if outcome.draft else None,
        "draft": draft_to_json(outcome.draft) if outcome.draft else None,
        "citations": list(outcome.draft.citations) if outcome.draft else [],
        # The document the answer cites first, as the Support Triage Agent's API named it.
        "cited_doc_id": (
            outcome.draft.citations[0].split("#", 1)[0]
            if outcome.draft and outcome.draft.citations
            else None
        ),
        "confidence": outcome.draft.confidence if outcome.draft else None,
        "trace": trace,
    }
