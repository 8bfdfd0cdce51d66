"""What the monitor shows: counts, caps, each ticket's live phase and the recent activity."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from supportagent.config import Settings
from supportagent.domain import Status
from supportagent.llm.budget import Budget
from supportagent.store.store import Store
from supportagent.web.schemas import AgentStatus, Caps
from supportagent.web.worker import WorkerSnapshot

#: The monitor's counters: a label, the CSS key, and the statuses each one adds up.
COUNT_GROUPS: tuple[tuple[str, str, tuple[Status, ...]], ...] = (
    ("inbox", "new", (Status.NEW,)),
    ("in progress", "in_progress", (Status.IN_PROGRESS,)),
    ("in review", "pending_review", (Status.PENDING_REVIEW,)),
    ("routed", "routed", (Status.ROUTED,)),
    ("escalated", "escalated", (Status.ESCALATED,)),
    ("reviewed", "reviewed", (Status.APPROVED, Status.AMENDED, Status.HANDED_OFF)),
)
#: Rows of each kind the monitor lists (the rest are a click away in the API).
UPCOMING_ROWS = 25
STAGED_ROWS = 40
ACTIVITY_ROWS = 15


@dataclass(frozen=True, slots=True)
class Counter:
    label: str
    key: str
    value: int


@dataclass(frozen=True, slots=True)
class TicketRow:
    id: str
    subject: str
    status: str
    phase: str | None
    note: str


@dataclass(frozen=True, slots=True)
class Activity:
    at: datetime
    ticket_id: str
    what: str
    tone: str


def counters(counts: dict[str, int]) -> list[Counter]:
    return [
        Counter(label, key, sum(counts.get(s.value, 0) for s in statuses))
        for label, key, statuses in COUNT_GROUPS
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


def ticket_rows(store: Store, snapshot: WorkerSnapshot | None) -> list[TicketRow]:
    """The ticket in hand, then the next ones up, then the latest staged, newest first."""
    current = snapshot.current if snapshot else None
    rows: list[TicketRow] = []
    waiting = store.list_tickets([Status.IN_PROGRESS, Status.NEW])
    waiting.sort(key=lambda pair: (pair[0].id != current, pair[1] is not Status.IN_PROGRESS))
    for ticket, status in waiting[:UPCOMING_ROWS]:
        mine = ticket.id == current and snapshot is not None
        phase = snapshot.phase if mine and snapshot else None
        if status is Status.IN_PROGRESS:
            note = "" if mine else "in progress elsewhere (another worker, or interrupted)"
        else:
            note = "waiting"
        rows.append(TicketRow(ticket.id, ticket.subject, status.value, phase, note))
    for record in store.staged(limit=STAGED_ROWS):
        if record.status in {Status.NEW, Status.IN_PROGRESS}:
            continue  # a re-run in hand is listed above
        rows.append(
            TicketRow(
                record.ticket.id,
                record.ticket.subject,
                record.status.value,
                None,
                record.reason_code,
            )
        )
    return rows


_DECIDED = {"approve": "approved", "amend": "amended", "reject": "rejected"}


def recent_activity(store: Store) -> list[Activity]:
    """The latest staged outcomes and review decisions, newest first."""
    items = [
        Activity(r.staged_at, r.ticket.id, f"agent staged it: {r.reason_code}", r.status.value)
        for r in store.staged(limit=ACTIVITY_ROWS)
    ]
    for review in store.reviews()[-ACTIVITY_ROWS:]:
        decision = str(review["decision"])
        why = f": {review['reason']}" if review.get("reason") else ""
        what = f"{review['reviewer']} {_DECIDED.get(decision, decision)} it{why}"
        items.append(Activity(review["decided_at"], review["ticket_id"], what, decision))
    items.sort(key=lambda a: _sortable(a.at), reverse=True)
    return items[:ACTIVITY_ROWS]


def _sortable(at: datetime) -> float:
    """Seconds since the epoch; SQLite hands back naive UTC times, PostgreSQL aware ones."""
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()
