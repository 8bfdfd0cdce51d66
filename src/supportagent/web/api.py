"""The JSON API: health, one-shot triage, adding tickets, the agent's status, review, traces."""

from __future__ import annotations

import logging
from typing import Annotated, Any

import sqlalchemy as sa
from fastapi import APIRouter, Depends, HTTPException, Path, Query

from supportagent.config import Settings
from supportagent.domain import ID_PATTERN, Status, Ticket
from supportagent.errors import UserError
from supportagent.insights import compute_stats, knowledge_gaps
from supportagent.llm.budget import RunBudgetExhausted
from supportagent.llm.chat import ModelUnavailable
from supportagent.review import ReviewResult, amend, approve, reject
from supportagent.store.store import StagedRecord
from supportagent.triage import triage_text
from supportagent.triage_log import append_rows, log_row
from supportagent.web.deps import State, check_id
from supportagent.web.monitor_view import agent_status
from supportagent.web.ratelimit import limit_triage
from supportagent.web.schemas import (
    AgentStatus,
    AmendRequest,
    ApproveRequest,
    Latencies,
    ModelCallModel,
    NewTicket,
    QueueItem,
    RejectRequest,
    ReviewDecision,
    StatsResponse,
    TicketCreated,
    Tokens,
    TraceResponse,
    TriageRequest,
    TriageResult,
)
from supportagent.web.security import require_csrf
from supportagent.web.trace_view import latencies, model_calls, token_totals

log = logging.getLogger(__name__)
router = APIRouter(dependencies=[Depends(require_csrf)])

TicketPath = Annotated[
    str,
    Path(min_length=1, max_length=128, pattern=ID_PATTERN.pattern, description="A ticket id."),
]
_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "A user error: empty text, or an approval whose text differs."},
    404: {"description": "No such ticket."},
    409: {"description": "The ticket is not in a state that allows this."},
    422: {"description": "Invalid id or body."},
}


@router.get("/health", tags=["meta"])
def health() -> dict[str, str]:
    """Liveness: answers without a token, and says nothing about the data."""
    return {"status": "ok"}


@router.post(
    "/triage",
    tags=["agent"],
    dependencies=[Depends(limit_triage)],
    responses={429: {"description": "Too many requests from this client; see Retry-After."}},
)
def triage(body: TriageRequest, state: State) -> TriageResult:
    """Run a ticket text through the whole pipeline without adding it to the inbox.

    Limited per client (30 a minute, 10 at once); beyond that 429 with Retry-After, and the
    wait doubles while a client keeps asking. Its model requests count against the run's caps
    (SUPPORTAGENT_MAX_API_CALLS, SUPPORTAGENT_MAX_TOKENS) together with the background
    agent's: 429 once they are spent, 503 while the model endpoint is failing."""
    try:
        raw = triage_text(state.settings, state.knowledge, body.ticket_text, budget=state.budget)
    except RunBudgetExhausted as exc:
        raise HTTPException(429, str(exc)) from None
    except ModelUnavailable as exc:
        raise HTTPException(503, str(exc)) from None
    _log_triage(state.settings, raw)
    return triage_result(raw)


def _log_triage(settings: Settings, raw: dict[str, Any]) -> None:
    """One row in the triage CSV log, as the CLI's ``triage`` writes. A log that cannot be
    written is reported in the server log; the caller still gets its answer."""
    path = settings.resolved_triage_log()
    if path is None:
        return
    try:
        append_rows(path, [log_row(raw)])
    except (OSError, UserError) as exc:
        log.warning("triage log %s not written: %s", path, exc)


def triage_result(raw: dict[str, Any]) -> TriageResult:
    trace = raw.get("trace", [])
    return TriageResult.model_validate(
        {
            **raw,
            "tokens": Tokens(**token_totals(trace)),
            "latencies": Latencies(**latencies(trace)),
        }
    )


@router.post("/api/tickets", status_code=201, tags=["tickets"], responses={409: _ERRORS[409]})
def add_ticket(body: NewTicket, state: State) -> TicketCreated:
    """Put a ticket in the inbox; the agent picks it up on its next look."""
    ticket = Ticket(
        id=body.id,
        subject=body.subject,
        body=body.body,
        priority=body.priority,
        customer=body.customer,
        created_at=body.created_at,
    )
    try:
        report = state.store.add_tickets([ticket])
    except sa.exc.IntegrityError:  # the same id added by someone else at the same moment
        report = None
    if report is None or report.skipped_existing:
        raise HTTPException(409, f"Ticket {body.id} already exists.")
    return TicketCreated(id=body.id, status=Status.NEW.value)


@router.get("/api/agent/status", tags=["agent"])
def status(state: State) -> AgentStatus:
    """What the background agent is doing, ticket counts by status, and the caps used."""
    snapshot = state.worker.snapshot() if state.worker else None
    return agent_status(state.store, snapshot, state.settings, state.budget)


@router.get("/api/stats", tags=["agent"])
def stats(state: State) -> StatsResponse:
    """Outcome numbers, knowledge gaps, and rejected drafts whose article exists (missed)."""
    report = knowledge_gaps(state.store, state.knowledge, state.settings.confidence_threshold)
    return StatsResponse(stats=compute_stats(state.store).to_json(), **report.to_json())


@router.get("/api/queue", tags=["review"])
def queue(state: State) -> list[QueueItem]:
    """Drafts waiting for a human, newest first."""
    return [queue_item(r) for r in state.store.staged(Status.PENDING_REVIEW)]


def queue_item(record: StagedRecord) -> QueueItem:
    return QueueItem.model_validate(
        {
            "ticket_id": record.ticket.id,
            "subject": record.ticket.subject,
            "status": record.status.value,
            "reason_code": record.reason_code,
            "bucket": record.bucket,
            "priority": record.ticket.priority,
            "draft": record.draft,
            "staged_at": record.staged_at,
        }
    )


def _decision(result: ReviewResult) -> ReviewDecision:
    return ReviewDecision(
        ticket_id=result.ticket_id,
        decision=result.decision,
        status=result.status.value,
        resolved_doc_id=result.resolved_doc_id,
        linked_existing=result.linked_existing,
        effect=result.effect,
    )


@router.post("/api/review/{ticket_id}/approve", tags=["review"], responses=_ERRORS)
def approve_draft(
    ticket_id: TicketPath, state: State, body: ApproveRequest | None = None
) -> ReviewDecision:
    """Accept the draft as written; the answer joins the resolved corpus at once.

    With ``text`` that differs from the draft the approval is refused (400): an edit is saved
    only by amend, never dropped."""
    given = body or ApproveRequest()
    return _decision(
        approve(state.store, state.knowledge, check_id(ticket_id), given.reviewer, given.text)
    )


@router.post("/api/review/{ticket_id}/amend", tags=["review"], responses=_ERRORS)
def amend_draft(ticket_id: TicketPath, body: AmendRequest, state: State) -> ReviewDecision:
    """Accept the draft with your final text (citation marks are dropped)."""
    return _decision(
        amend(state.store, state.knowledge, check_id(ticket_id), body.text, body.reviewer)
    )


@router.post("/api/review/{ticket_id}/reject", tags=["review"], responses=_ERRORS)
def reject_draft(ticket_id: TicketPath, body: RejectRequest, state: State) -> ReviewDecision:
    """Refuse the draft with a reason; the ticket goes to a person."""
    return _decision(reject(state.store, check_id(ticket_id), body.reason, body.reviewer))


@router.get(
    "/api/tickets/{ticket_id}/trace",
    tags=["tickets"],
    responses={404: _ERRORS[404], 422: _ERRORS[422]},
)
def trace(
    ticket_id: TicketPath,
    state: State,
    attempt: Annotated[int | None, Query(ge=1, le=10_000)] = None,
) -> TraceResponse:
    """Every step of one attempt (default: the latest), with model calls and latencies."""
    status = state.store.ticket_status(check_id(ticket_id))
    events = state.store.trace(ticket_id, attempt)
    if attempt is not None and not events:
        raise HTTPException(404, f"Ticket {ticket_id} has no attempt {attempt}.")
    if attempt is None:
        record = state.store.latest_outcome(ticket_id)
        attempt = record.attempt if record and status is not Status.IN_PROGRESS else None
    return TraceResponse.model_validate(
        {
            "ticket_id": ticket_id,
            "status": status.value,
            "attempt": attempt,
            "events": events,
            "model_calls": [
                ModelCallModel.model_validate(c, from_attributes=True) for c in model_calls(events)
            ],
            "latencies": latencies(events),
        }
    )
