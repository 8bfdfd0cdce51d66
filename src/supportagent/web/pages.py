"""The HTML pages: monitor, review workspace, ticket timeline, stats; and the review forms."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from supportagent.domain import Status, is_valid_id
from supportagent.errors import ConflictError, NotFoundError, UserError
from supportagent.escalation import action_effect
from supportagent.reasons import describe_status, explain
from supportagent.review import amend, approve, reject
from supportagent.store.escalations import OPEN_STATUSES, actions
from supportagent.web.api import TicketPath
from supportagent.web.deps import AppState, State, actor_name, check_id, render
from supportagent.web.monitor_view import PAGE_ROWS, caps, counters, recent_activity, ticket_rows
from supportagent.web.queue_view import OffsetParam, StatusParam, TextParam, pager, queue_query
from supportagent.web.review_view import decision_effect, next_after, queue_order, review_item
from supportagent.web.security import require_csrf
from supportagent.web.stats_view import stats_context
from supportagent.web.trace_view import latencies, model_calls, revisions, timeline
from supportagent.web.worker import PHASES

router = APIRouter(include_in_schema=False, dependencies=[Depends(require_csrf)])

_DONE = {"approve": "approved", "amend": "amended", "reject": "rejected"}
OptionalId = Annotated[str | None, Query(max_length=128)]


def _monitor(state: AppState, status: str | None, q: str | None, offset: int) -> dict[str, Any]:
    snapshot = state.worker.snapshot() if state.worker else None
    query = queue_query(status, None, None, q, None, PAGE_ROWS, offset, order="recent")
    total, rows = ticket_rows(state.store, snapshot, query, state.routing)
    params = {"status": status, "q": q}
    return {
        "snapshot": snapshot,
        "counters": counters(state.store.status_counts()),
        "caps": caps(snapshot, state.settings, state.budget),
        "phases": PHASES,
        "rows": rows,
        "pager": pager("/", params, total, PAGE_ROWS, offset),
        "filter": {"status": status or "", "q": q or ""},
        "activity": recent_activity(state.store),
    }


@router.get("/", response_class=HTMLResponse)
def monitor(
    request: Request,
    state: State,
    status: StatusParam = None,
    q: TextParam = None,
    offset: OffsetParam = 0,
) -> HTMLResponse:
    return render(request, "monitor.html", _monitor(state, status, q, offset))


@router.get("/monitor/live", response_class=HTMLResponse)
def monitor_live(
    request: Request,
    state: State,
    status: StatusParam = None,
    q: TextParam = None,
    offset: OffsetParam = 0,
) -> HTMLResponse:
    """The live part of the monitor, fetched by the page every second or so."""
    return render(request, "_monitor_live.html", _monitor(state, status, q, offset))


def _review(
    request: Request,
    state: AppState,
    ticket: str | None,
    notice: str | None = None,
    error: str | None = None,
    status_code: int = 200,
    answer_text: str | None = None,
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
        # A refused decision shows the reviewer's text again, never the draft over it.
        "answer_text": answer_text if current and current.ticket.id == ticket else None,
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
    notice = None
    if done and decision and is_valid_id(done):
        notice = decision_effect(state.store, done) or f"{done} {_DONE[decision]}."
    return _review(request, state, ticket, notice)


@router.post("/review/{ticket_id}/{decision}", response_model=None)
def decide(
    request: Request,
    ticket_id: TicketPath,
    decision: Literal["approve", "amend", "reject"],
    state: State,
    text: Annotated[str | None, Form(max_length=20_000)] = None,
    reason: Annotated[str, Form(max_length=2_000)] = "",
    reviewer: Annotated[str, Form(max_length=64)] = "",
) -> Response:
    """A decision from the review page; on success the next draft comes up.

    Approve sends the answer box along: an edit in it refuses the approval (the page comes
    back with the edit in place), so an edit is never dropped.
    """
    check_id(ticket_id)
    who = actor_name(reviewer)
    queue = [r.ticket.id for r in queue_order(state.store.staged(Status.PENDING_REVIEW))]
    upcoming = next_after(queue, ticket_id)
    try:
        if decision == "approve":
            approve(state.store, state.knowledge, ticket_id, who, text)
        elif decision == "amend":
            amend(state.store, state.knowledge, ticket_id, text or "", who)
        else:
            reject(state.store, ticket_id, reason, who)
    except (ConflictError, NotFoundError) as exc:
        code = 404 if isinstance(exc, NotFoundError) else 409
        return _review(request, state, upcoming, error=str(exc), status_code=code)
    except UserError as exc:
        return _review(request, state, ticket_id, error=str(exc), status_code=400, answer_text=text)
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
    done: Annotated[str | None, Query(max_length=16)] = None,
    action: Annotated[int | None, Query(ge=1)] = None,
) -> HTMLResponse:
    """The whole trace of one attempt as a timeline, with the ticket, its reviews and what
    people did with it; on an open escalation, the forms to act on it."""
    return ticket_view(request, state, check_id(ticket_id), attempt, action_id=action)


def ticket_view(
    request: Request,
    state: AppState,
    ticket_id: str,
    attempt: int | None = None,
    *,
    action_id: int | None = None,
    error: str | None = None,
    kept: tuple[str, str] | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    store = state.store
    ticket = store.get_ticket(ticket_id)
    status = store.ticket_status(ticket_id)
    record = store.latest_outcome(ticket_id)
    events = store.trace(ticket_id, attempt)
    handling = actions(store, ticket_id)
    done = next((a for a in handling if a.id == action_id), None)
    assignee = next((a.text for a in reversed(handling) if a.action == "assign"), None)
    context = {
        "ticket": ticket,
        "status": status.value,
        "status_text": describe_status(status.value),
        "record": record,
        "reason": explain(record.reason_code, state.routing) if record else None,
        "attempt": attempt or (record.attempt if record else None),
        "attempts": list(range(1, record.attempt + 1)) if record else [],
        "items": timeline(events),
        "calls": model_calls(events),
        "latencies": latencies(events),
        "revisions": revisions(events),
        "reviews": store.reviews(ticket_id),
        "handling": handling,
        "assignee": assignee,
        "open": status in OPEN_STATUSES,
        "notice": action_effect(done) if done else None,
        "error": error,
        "kept": {kept[0]: kept[1]} if kept else {},
    }
    return render(request, "ticket.html", context, status_code)


@router.get("/stats", response_class=HTMLResponse)
def stats_page(request: Request, state: State) -> HTMLResponse:
    context = stats_context(state.store, state.knowledge, state.settings.confidence_threshold)
    return render(request, "stats.html", context)
