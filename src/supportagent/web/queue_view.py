"""The escalation queue and the ticket list: query parameters in, a page of explained rows out.

Shared by ``GET /api/tickets``, the queue page and the monitor, so the three never disagree on
what a filter means or in which order tickets come.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import HTTPException, Query

from supportagent.domain import Status
from supportagent.reasons import describe_status, explain, pinned_codes
from supportagent.store.escalations import OPEN_STATUSES
from supportagent.store.store import Store
from supportagent.store.ticket_list import Order, TicketListItem, TicketQuery, list_tickets
from supportagent.web.schemas import TicketList, TicketListItemModel

#: What the queue shows when no status is chosen: every ticket a person still has to handle.
OPEN = tuple(s.value for s in OPEN_STATUSES)
PAGE_SIZE = 50
#: The age filter's choices on the queue page: label, hours.
AGE_CHOICES = (
    ("any age", None),
    ("over 1 hour", 1.0),
    ("over 1 day", 24.0),
    ("over 1 week", 168.0),
)

StatusParam = Annotated[
    str | None,
    Query(
        max_length=200,
        pattern=r"^[a-z_,]*$",
        description="One status or several, comma-separated (new, escalated, routed, ...).",
    ),
]
ReasonParam = Annotated[str | None, Query(max_length=64, pattern=r"^[a-z_]*$")]
PriorityParam = Annotated[int | None, Query(ge=0, le=9)]
TextParam = Annotated[
    str | None, Query(max_length=200, description="Words in id, subject or body.")
]
AgeParam = Annotated[float | None, Query(ge=0, le=100_000, description="Waiting at least N hours.")]
LimitParam = Annotated[int, Query(ge=1, le=200)]
OffsetParam = Annotated[int, Query(ge=0, le=1_000_000)]


def parse_statuses(value: str | None, default: tuple[str, ...] = ()) -> tuple[str, ...]:
    """``escalated,routed`` → the statuses; an unknown one is a 422 that lists the known."""
    if not value:
        return default
    known = {s.value for s in Status}
    wanted = tuple(dict.fromkeys(part for part in value.split(",") if part))
    unknown = [s for s in wanted if s not in known]
    if unknown:
        raise HTTPException(
            422, f"Unknown status {', '.join(unknown)}: use one of {', '.join(sorted(known))}."
        )
    return wanted


@dataclass(frozen=True, slots=True)
class Row:
    """A ticket as the queue and the monitor list it: the reason in words, its assignee."""

    item: TicketListItem
    reason_label: str
    reason: str
    next_step: str
    destination: str | None
    status_label: str

    @property
    def id(self) -> str:
        return self.item.id


def explained(item: TicketListItem, routing: Mapping[str, str]) -> Row:
    reason = explain(item.reason_code, routing) if item.reason_code else None
    status = describe_status(item.status)
    return Row(
        item,
        reason.label if reason else "",
        reason.sentence if reason else status.sentence,
        reason.next_step if reason else "",
        reason.destination if reason and item.status == Status.ROUTED.value else None,
        status.label,
    )


def fetch(store: Store, query: TicketQuery, routing: Mapping[str, str]) -> tuple[int, list[Row]]:
    page = list_tickets(store, query, pinned_codes())
    return page.total, [explained(item, routing) for item in page.items]


def as_json(total: int, rows: list[Row], query: TicketQuery) -> TicketList:
    return TicketList(
        total=total,
        limit=query.limit,
        offset=query.offset,
        items=[
            TicketListItemModel(
                id=r.item.id,
                subject=r.item.subject,
                status=r.item.status,
                reason_code=r.item.reason_code,
                reason=r.reason,
                next_step=r.next_step,
                destination=r.destination,
                priority=r.item.priority,
                received_at=r.item.received_at,
                staged_at=r.item.staged_at,
                assignee=r.item.assignee,
                pinned=r.item.pinned,
            )
            for r in rows
        ],
    )


@dataclass(frozen=True, slots=True)
class Pager:
    total: int
    limit: int
    offset: int
    previous: str | None
    next: str | None

    @property
    def first(self) -> int:
        return min(self.offset + 1, self.total)

    @property
    def last(self) -> int:
        return min(self.offset + self.limit, self.total)


def pager(path: str, params: Mapping[str, Any], total: int, limit: int, offset: int) -> Pager:
    """Links to the previous and next pages, keeping every other parameter."""
    kept = {k: v for k, v in params.items() if v not in (None, "") and k != "offset"}

    def link(at: int) -> str:
        query = {**kept, **({"offset": at} if at else {})}
        return f"{path}?{urlencode(query)}" if query else path

    previous = link(max(offset - limit, 0)) if offset > 0 else None
    following = link(offset + limit) if offset + limit < total else None
    return Pager(total, limit, offset, previous, following)


def queue_query(
    status: str | None,
    reason: str | None,
    priority: int | None,
    q: str | None,
    min_age_hours: float | None,
    limit: int,
    offset: int,
    *,
    default: tuple[str, ...] = (),
    order: Order = "urgency",
) -> TicketQuery:
    return TicketQuery(
        statuses=parse_statuses(status, default),
        reason=reason or None,
        priority=priority,
        text=q,
        min_age_hours=min_age_hours,
        order=order,
        limit=limit,
        offset=offset,
    )
