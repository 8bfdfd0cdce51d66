"""The escalation queue page and the forms on a ticket's page: assign, note, reply, handled."""

from __future__ import annotations

from typing import Annotated, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from supportagent import escalation
from supportagent.domain import Status
from supportagent.errors import ConflictError, NotFoundError, UserError
from supportagent.reasons import known_codes
from supportagent.web.api import TicketPath
from supportagent.web.deps import State, actor_name, check_id, render
from supportagent.web.queue_view import (
    AGE_CHOICES,
    OPEN,
    PAGE_SIZE,
    AgeParam,
    LimitParam,
    OffsetParam,
    PriorityParam,
    ReasonParam,
    StatusParam,
    TextParam,
    fetch,
    pager,
    queue_query,
)
from supportagent.web.security import require_csrf

router = APIRouter(include_in_schema=False, dependencies=[Depends(require_csrf)])

#: The status filter's choices on the queue page.
STATUS_CHOICES = (
    ("open (escalated, routed, handed off)", ""),
    ("escalated", Status.ESCALATED.value),
    ("routed", Status.ROUTED.value),
    ("handed off", Status.HANDED_OFF.value),
    ("handled", Status.HANDLED.value),
)


@router.get("/escalations", response_class=HTMLResponse)
def escalations(
    request: Request,
    state: State,
    status: StatusParam = None,
    reason: ReasonParam = None,
    priority: PriorityParam = None,
    q: TextParam = None,
    min_age_hours: AgeParam = None,
    offset: OffsetParam = 0,
    limit: LimitParam = PAGE_SIZE,
) -> HTMLResponse:
    """Every ticket a person must handle, most urgent first, filtered and paged."""
    query = queue_query(status, reason, priority, q, min_age_hours, limit, offset, default=OPEN)
    total, rows = fetch(state.store, query, state.routing)
    params = {
        "status": status,
        "reason": reason,
        "priority": priority,
        "q": q,
        "min_age_hours": min_age_hours,
    }
    context = {
        "rows": rows,
        "pager": pager(
            "/escalations",
            {**params, "limit": limit if limit != PAGE_SIZE else None},
            total,
            limit,
            offset,
        ),
        "filter": {k: "" if v is None else v for k, v in params.items()},
        "status_choices": STATUS_CHOICES,
        "age_choices": AGE_CHOICES,
        "reason_codes": sorted(known_codes()),
    }
    return render(request, "escalations.html", context)


Action = Literal["assign", "note", "reply", "handled"]


@router.post("/tickets/{ticket_id}/{action}", response_model=None)
def act(
    request: Request,
    ticket_id: TicketPath,
    action: Action,
    state: State,
    text: Annotated[str, Form(max_length=20_000)] = "",
    reviewer: Annotated[str, Form(max_length=64)] = "",
) -> Response:
    """An action from a ticket's page; the page comes back with what it did."""
    from supportagent.web.pages import ticket_view  # the ticket page lives with the others

    check_id(ticket_id)
    who = actor_name(reviewer)
    try:
        if action == "assign":
            result = escalation.assign(state.store, ticket_id, text, who)
        elif action == "note":
            result = escalation.note(state.store, ticket_id, text, who)
        elif action == "reply":
            result = escalation.reply(state.store, state.knowledge, ticket_id, text, who)
        else:
            result = escalation.handled(state.store, ticket_id, who, text)
    except UserError as exc:
        code = (
            404
            if isinstance(exc, NotFoundError)
            else 409
            if isinstance(exc, ConflictError)
            else 400
        )
        # The page comes back with the text still in its box: nothing typed is lost.
        return ticket_view(
            request, state, ticket_id, error=str(exc), kept=(action, text), status_code=code
        )
    query = urlencode({"done": action, "action": result.action.id})
    return RedirectResponse(f"/tickets/{ticket_id}?{query}#handling", status_code=303)
