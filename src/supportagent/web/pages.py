"""The HTML pages: monitor, review workspace, ticket timeline, stats; and the review forms."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from supportagent.domain import Status, is_valid_id
from supportagent.errors import ConflictError, NotFoundError, UserError
from supportagent.review import amend, approve, reject
from supportagent.web.api import TicketPath
from supportagent.web.deps import AppState, State, check_id, render
from supportagent.web.monitor_view import caps, counters, recent_activity, ticket_rows
from supportagent.web.review_view import next_after, queue_order, review_item
from supportagent.web.security import require_csrf
from supportagent.web.stats_view import stats_context
from supportagent.web.trace_view import latencies, model_calls, revisions, timeline
from supportagent.web.worker import PHASES

router = APIRouter(include_in_schema=False, dependencies=[Depends(require_csrf)])

_REVIEWER = re.compile(r"^[\w .@-]{1,64}$")
_DONE = {"approve": "approved", "amend": "amended", "reject": "rejected"}
OptionalId = Annotated[str | None, Query(max_length=128)]


def _monitor(state: AppState) -> dict[str, Any]:
    snapshot = state.worker.snapshot() if state.worker else None
    return {
        "snapshot": snapshot,
        "counters": counters(state.store.status_counts()),
        "caps": caps(snapshot, state.settings, state.budget),
        "phases": PHASES,
        "rows": ticket_rows(state.store, snapshot),
        "activity": recent_activity(state.store),
    }


@router.get("/", response_class=HTMLResponse)
def monitor(request: Request, state: State) -> HTMLResponse:
    return render(request, "monitor.html", _monitor(state))


@router.get("/monitor/live", response_class=HTMLResponse)
def monitor_live(request: Request, state: State) -> HTMLResponse:
    """The live part of the monitor, fetched by the page every second or so."""
    return render(request, "_monitor_live.html", _monitor(state))


def _review(
    request: Request,
    state: AppState,
    ticket: str | None,
    notice: str | None = None,
    error: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    queue = queue_order(state.store.staged(Status.PENDING_REVIEW))
    ids = [r.ticket.id for r in queue]
    current = next((r for r in queue if r.ticket.id == ticket), queue[0] if queue else None)
    item = None
    position = 0
    if current is not None:
        events = state.store.trace(current.ticket.id, current.attempt)
        item = review_item(current, events, state.knowledge.retriever.get_passage)
        position = ids.index(current.ticket.id)
    context = {
        "queue": queue,
        "item": item,
        "position": position,
        "next_id": ids[position + 1] if current and position + 1 < len(ids) else None,
        "prev_id": ids[position - 1] if current and position > 0 else None,
        "notice": notice,
        "error": error,
    }
    return render(request, "review.html", context, status_code)


@router.get("/review", response_class=HTMLResponse)
def review_page(
    request: Request,
    state: State,
    ticket: OptionalId = None,
    done: OptionalId = None,
    decision: Annotated[Literal["approve", "amend", "reject"] | None, Query()] = None,
) -> HTMLResponse:
    notice = f"{done} {_DONE[decision]}." if done and decision and is_valid_id(done) else None
    return _review(request, state, ticket, notice)


@router.post("/review/{ticket_id}/{decision}", response_model=None)
def decide(
    request: Request,
    ticket_id: TicketPath,
    decision: Literal["approve", "amend", "reject"],
    state: State,
    text: Annotated[str, Form(max_length=20_000)] = "",
    reason: Annotated[str, Form(max_length=2_000)] = "",
    reviewer: Annotated[str, Form(max_length=64)] = "",
) -> Response:
    """A decision from the review page; on success the next draft comes up."""
    check_id(ticket_id)
    who = reviewer.strip() if _REVIEWER.fullmatch(reviewer.strip()) else "web"
    queue = [r.ticket.id for r in queue_order(state.store.staged(Status.PENDING_REVIEW))]
    upcoming = next_after(queue, ticket_id)
    try:
        if decision == "approve":
            approve(state.store, state.knowledge, ticket_id, who)
        elif decision == "amend":
            amend(state.store, state.knowledge, ticket_id, text, who)
        else:
            reject(state.store, ticket_id, reason, who)
    except (ConflictError, NotFoundError) as exc:
        code = 404 if isinstance(exc, NotFoundError) else 409
        return _review(request, state, upcoming, error=str(exc), status_code=code)
    except UserError as exc:
        return _review(request, state, ticket_id, error=str(exc), status_code=400)
    query = {"done": ticket_id, "decision": decision}
    if upcoming:
        query["ticket"] = upcoming
    return RedirectResponse(f"/review?{urlencode(query)}", status_code=303)


@router.get("/tickets/{ticket_id}", response_class=HTMLResponse)
def ticket_page(
    request: Request,
    ticket_id: TicketPath,
    state: State,
    attempt: Annotated[int | None, Query(ge=1, le=10_000)] = None,
) -> HTMLResponse:
    """The whole trace of one attempt as a timeline, with the ticket and its reviews."""
    store = state.store
    ticket = store.get_ticket(check_id(ticket_id))
    status = store.ticket_status(ticket_id)
    record = store.latest_outcome(ticket_id)
    events = store.trace(ticket_id, attempt)
    context = {
        "ticket": ticket,
        "status": status.value,
        "record": record,
        "attempt": attempt or (record.attempt if record else None),
        "attempts": list(range(1, record.attempt + 1)) if record else [],
        "items": timeline(events),
        "calls": model_calls(events),
        "latencies": latencies(events),
        "revisions": revisions(events),
        "reviews": store.reviews(ticket_id),
    }
    return render(request, "ticket.html", context)


@router.get("/stats", response_class=HTMLResponse)
def stats_page(request: Request, state: State) -> HTMLResponse:
    return render(request, "stats.html", stats_context(state.store, state.knowledge))
