"""The JSON API of the ticket list and the escalation actions (assign, note, reply, handled)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends

from supportagent import escalation
from supportagent.escalation import ActionResult
from supportagent.web.api import TicketPath
from supportagent.web.deps import State, check_id
from supportagent.web.queue_view import (
    AgeParam,
    LimitParam,
    OffsetParam,
    PriorityParam,
    ReasonParam,
    StatusParam,
    TextParam,
    as_json,
    fetch,
    queue_query,
)
from supportagent.web.schemas import (
    ActionDone,
    AssignRequest,
    HandledRequest,
    NoteRequest,
    ReplyRequest,
    TicketList,
)
from supportagent.web.security import require_csrf

router = APIRouter(dependencies=[Depends(require_csrf)])

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "Empty or too long text."},
    404: {"description": "No such ticket."},
    409: {"description": "The ticket is not open (not escalated, routed or handed off)."},
    422: {"description": "Invalid id or body."},
}


@router.get("/api/tickets", tags=["tickets"])
def list_tickets(
    state: State,
    status: StatusParam = None,
    reason: ReasonParam = None,
    priority: PriorityParam = None,
    q: TextParam = None,
    min_age_hours: AgeParam = None,
    limit: LimitParam = 50,
    offset: OffsetParam = 0,
) -> TicketList:
    """Tickets, most urgent first: self-harm and security tickets nobody has taken yet, then
    by priority, then the longest waiting. ``status=escalated,routed`` is the escalation queue.
    Each item carries its reason in words and where a routed ticket goes."""
    query = queue_query(status, reason, priority, q, min_age_hours, limit, offset)
    total, rows = fetch(state.store, query, state.routing)
    return as_json(total, rows, query)


def _done(result: ActionResult) -> ActionDone:
    a = result.action
    return ActionDone(
        ticket_id=a.ticket_id,
        action=a.action,
        status=result.status,
        actor=a.actor,
        at=a.at,
        resolved_doc_id=result.resolved_doc_id,
        linked_existing=result.linked_existing,
        effect=result.effect,
    )


@router.post("/api/tickets/{ticket_id}/assign", tags=["escalations"], responses=_ERRORS)
def assign(ticket_id: TicketPath, body: AssignRequest, state: State) -> ActionDone:
    """Give an open ticket to a person (by name); it stops standing out as untaken."""
    return _done(escalation.assign(state.store, check_id(ticket_id), body.assignee, body.actor))


@router.post("/api/tickets/{ticket_id}/note", tags=["escalations"], responses=_ERRORS)
def note(ticket_id: TicketPath, body: NoteRequest, state: State) -> ActionDone:
    """Add a note to a ticket's timeline."""
    return _done(escalation.note(state.store, check_id(ticket_id), body.text, body.actor))


@router.post("/api/tickets/{ticket_id}/reply", tags=["escalations"], responses=_ERRORS)
def reply(ticket_id: TicketPath, body: ReplyRequest, state: State) -> ActionDone:
    """Your own answer to an open ticket: it is handled, and the answer joins the corpus."""
    return _done(
        escalation.reply(state.store, state.knowledge, check_id(ticket_id), body.text, body.actor)
    )


@router.post("/api/tickets/{ticket_id}/handled", tags=["escalations"], responses=_ERRORS)
def handled(ticket_id: TicketPath, body: HandledRequest, state: State) -> ActionDone:
    """Mark an open ticket handled (with an optional note on what was done)."""
    return _done(escalation.handled(state.store, check_id(ticket_id), body.actor, body.note))
