"""What the monitor shows: counts, caps, each ticket's live phase and the recent activity."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from supportagent.config import Settings
from supportagent.domain import Status
from supportagent.llm.budget import Budget
from supportagent.reasons import explain
from supportagent.store.escalations import TicketAction, recent_actions
from supportagent.store.store import Store
from supportagent.store.ticket_list import TicketQuery
from supportagent.web.queue_view import fetch
from supportagent.web.schemas import AgentStatus, Caps
from supportagent.web.worker import WorkerSnapshot

#: The monitor's counters: a label, the CSS key, the statuses each one adds up, and where a
#: click on it goes (the list of those tickets).
COUNT_GROUPS: tuple[tuple[str, str, tuple[Status, ...], str], ...] = (
    ("inbox", "new", (Status.NEW,), "/?status=new#tickets"),
    ("in progress", "in_progress", (Status.IN_PROGRESS,), "/?status=in_progress#tickets"),
    ("in review", "pending_review", (Status.PENDING_REVIEW,), "/review"),
    ("routed", "routed", (Status.ROUTED,), "/escalations?status=routed"),
    ("escalated", "escalated", (Status.ESCALATED,), "/escalations?status=escalated"),
    (
        "reviewed",
        "reviewed",
        (Status.APPROVED, Status.AMENDED, Status.HANDED_OFF),
        "/?status=approved,amended,handed_off#tickets",
    ),
    ("handled", "handled", (Status.HANDLED,), "/escalations?status=handled"),
)
#: Tickets per page of the monitor's list.
PAGE_ROWS = 25
ACTIVITY_ROWS = 15


@dataclass(frozen=True, slots=True)
class Counter:
    label: str
    key: str
    value: int
    href: str


@dataclass(frozen=True, slots=True)
class TicketRow:
    id: str
    subject: str
    status: str
    phase: str | None
    note: str
    #: The reason (or status) in one sentence: the note's tooltip.
    why: str = ""


@dataclass(frozen=True, slots=True)
class Activity:
    at: datetime
    ticket_id: str
    what: str
    tone: str


def counters(counts: dict[str, int]) -> list[Counter]:
    return [
        Counter(label, key, sum(counts.get(s.value, 0) for s in statuses), href)
        for label, key, statuses, href in COUNT_GROUPS
    ]


def caps(snapshot: WorkerSnapshot | None, settings: Settings, budget: Budget | None = None) -> Caps:
    """The caps and what is used of them; with the run's budget, every model request sent
    (retries and /triage included) and the tokens as sent."""
    used = budget.used() if budget is not None else None
    return Caps(
        max_tickets=snapshot.max_tickets if snapshot else None,
        tickets_used=snapshot.processed if snapshot else 0,
        max_api_calls=settings.max_api_calls,
        api_calls_used=used.requests if used else (snapshot.model_calls if snapshot else 0),
        max_tokens=settings.max_tokens,
        tokens_used=used.tokens if used else (snapshot.tokens if snapshot else 0),
        capped=bool(snapshot and snapshot.capped) or bool(budget and budget.exhausted),
    )


def agent_status(
    store: Store,
    snapshot: WorkerSnapshot | None,
    settings: Settings,
    budget: Budget | None = None,
) -> AgentStatus:
    return AgentStatus(
        working=bool(snapshot and snapshot.running),
        current_ticket=snapshot.current if snapshot else None,
        phase=snapshot.phase if snapshot else None,
        processed=snapshot.processed if snapshot else 0,
        error=snapshot.error if snapshot else None,
        counts=store.status_counts(),
        caps=caps(snapshot, settings, budget),
    )


def ticket_rows(
    store: Store, snapshot: WorkerSnapshot | None, query: TicketQuery, routing: Mapping[str, str]
) -> tuple[int, list[TicketRow]]:
    """One page of tickets: the one in hand first, then the waiting, then the latest staged."""
    current = snapshot.current if snapshot else None
    total, rows = fetch(store, query, routing)
    out = []
    for row in rows:
        item = row.item
        mine = item.id == current and snapshot is not None
        phase = snapshot.phase if mine and snapshot else None
        if item.status == Status.IN_PROGRESS.value:
            note = "" if mine else "in progress elsewhere (another worker, or interrupted)"
        elif item.status == Status.NEW.value:
            note = "waiting"
        else:
            note = row.reason_label
            if row.destination:
                note += f" → {row.destination}"
        out.append(TicketRow(item.id, item.subject, item.status, phase, note, row.reason))
    return total, out


_DECIDED = {"approve": "approved", "amend": "amended", "reject": "rejected"}


def recent_activity(store: Store) -> list[Activity]:
    """The latest staged outcomes and review decisions, newest first."""
    items = [
        Activity(r.staged_at, r.ticket.id, f"agent: {explain(r.reason_code).label}", r.status.value)
        for r in store.staged(limit=ACTIVITY_ROWS)
    ]
    for action in recent_actions(store, ACTIVITY_ROWS):
        items.append(Activity(action.at, action.ticket_id, _action_text(action), "handled"))
    for review in store.reviews()[-ACTIVITY_ROWS:]:
        decision = str(review["decision"])
        why = f": {review['reason']}" if review.get("reason") else ""
        what = f"{review['reviewer']} {_DECIDED.get(decision, decision)} it{why}"
        items.append(Activity(review["decided_at"], review["ticket_id"], what, decision))
    items.sort(key=lambda a: _sortable(a.at), reverse=True)
    return items[:ACTIVITY_ROWS]


def _action_text(action: TicketAction) -> str:
    if action.action == "assign":
        return f"{action.actor} assigned it to {action.text}"
    if action.action == "note":
        return f"{action.actor} added a note"
    if action.action == "reply":
        return f"{action.actor} replied"
    return f"{action.actor} marked it handled"


def _sortable(at: datetime) -> float:
    """Seconds since the epoch; SQLite hands back naive UTC times, PostgreSQL aware ones."""
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()
