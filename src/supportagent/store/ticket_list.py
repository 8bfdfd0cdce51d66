"""Listing tickets a page at a time: filtered by status, reason, priority, age and text.

One query serves the escalation queue (most urgent first) and the monitor (what is moving now
first). Each ticket comes with its latest staged reason and its assignee, if anyone took it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal

import sqlalchemy as sa

from supportagent.domain import Status
from supportagent.store import tables as t
from supportagent.store.escalations import latest_assignee

if TYPE_CHECKING:
    from supportagent.store.store import Store

Order = Literal["urgency", "recent"]
MAX_LIMIT = 200


@dataclass(frozen=True, slots=True)
class TicketQuery:
    statuses: tuple[str, ...] = ()
    reason: str | None = None
    priority: int | None = None
    #: Words to find in the id, subject or body (case-insensitive).
    text: str | None = None
    #: Only tickets staged (or, before staging, received) at least this many hours ago.
    min_age_hours: float | None = None
    order: Order = "urgency"
    limit: int = 50
    offset: int = 0


@dataclass(frozen=True, slots=True)
class TicketListItem:
    id: str
    subject: str
    status: str
    reason_code: str | None
    priority: int
    received_at: datetime
    staged_at: datetime | None
    assignee: str | None
    #: A pinned reason (self-harm, security) nobody has taken yet: it stays on top.
    pinned: bool


@dataclass(frozen=True, slots=True)
class TicketPage:
    total: int
    items: Sequence[TicketListItem]


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def list_tickets(
    store: Store,
    query: TicketQuery,
    pinned_codes: Collection[str] = (),
    now: datetime | None = None,
) -> TicketPage:
    """One page of tickets matching ``query``, and how many match in all."""
    latest = (
        sa.select(t.outcomes.c.ticket_id, sa.func.max(t.outcomes.c.attempt).label("attempt"))
        .group_by(t.outcomes.c.ticket_id)
        .subquery()
    )
    outcome = (
        sa.select(t.outcomes.c.ticket_id, t.outcomes.c.reason_code, t.outcomes.c.staged_at)
        .join(
            latest,
            sa.and_(
                latest.c.ticket_id == t.outcomes.c.ticket_id,
                latest.c.attempt == t.outcomes.c.attempt,
            ),
        )
        .subquery()
    )
    assigned = latest_assignee()
    tk = t.tickets.c
    pinned = sa.case(
        (
            sa.and_(
                outcome.c.reason_code.in_(list(pinned_codes) or [""]),
                assigned.c.assignee.is_(None),
                tk.status == Status.ESCALATED.value,
            ),
            1,
        ),
        else_=0,
    )
    since = sa.func.coalesce(outcome.c.staged_at, tk.received_at)
    where: list[sa.ColumnElement[bool]] = []
    if query.statuses:
        where.append(tk.status.in_(query.statuses))
    if query.reason:
        where.append(outcome.c.reason_code == query.reason)
    if query.priority is not None:
        where.append(tk.priority == query.priority)
    if query.text and query.text.strip():
        pattern = _like(query.text.strip())
        where.append(
            sa.or_(
                tk.id.ilike(pattern, escape="\\"),
                tk.subject.ilike(pattern, escape="\\"),
                tk.body.ilike(pattern, escape="\\"),
            )
        )
    if query.min_age_hours is not None:
        cutoff = (now or datetime.now(UTC)) - timedelta(hours=query.min_age_hours)
        if store.engine.dialect.name == "sqlite":  # SQLite keeps naive UTC times
            cutoff = cutoff.astimezone(UTC).replace(tzinfo=None)
        where.append(since <= cutoff)
    base = (
        sa.select(
            tk.id,
            tk.subject,
            tk.status,
            tk.priority,
            tk.received_at,
            outcome.c.reason_code,
            outcome.c.staged_at,
            assigned.c.assignee,
            pinned.label("pinned"),
        )
        .select_from(
            t.tickets.outerjoin(outcome, outcome.c.ticket_id == tk.id).outerjoin(
                assigned, assigned.c.ticket_id == tk.id
            )
        )
        .where(sa.and_(sa.true(), *where))
    )
    if query.order == "urgency":
        ordered = base.order_by(pinned.desc(), tk.priority.desc(), since.asc(), tk.id)
    else:
        moving = sa.case(
            (tk.status == Status.IN_PROGRESS.value, 0), (tk.status == Status.NEW.value, 1), else_=2
        )
        ordered = base.order_by(moving, since.desc(), tk.id)
    limit = max(1, min(query.limit, MAX_LIMIT))
    with store.engine.connect() as conn:
        total = conn.execute(sa.select(sa.func.count()).select_from(base.subquery())).scalar_one()
        rows = conn.execute(ordered.limit(limit).offset(max(query.offset, 0))).mappings().all()
    items = [
        TicketListItem(
            id=r["id"],
            subject=r["subject"],
            status=r["status"],
            reason_code=r["reason_code"],
            priority=int(r["priority"]),
            received_at=r["received_at"],
            staged_at=r["staged_at"],
            assignee=r["assignee"],
            pinned=bool(r["pinned"]),
        )
        for r in rows
    ]
    return TicketPage(int(total), items)
