"""What people do with tickets the agent did not draft: assign, note, reply, mark handled.

Each action is a row in ``escalation_actions`` and an ``escalation.<action>`` event in the audit
log, written in one transaction. A reply also becomes a resolved record (like an amendment),
so the next ticket's search finds it; a reply or "handled" moves the ticket to ``handled``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from supportagent.domain import Document, Status
from supportagent.errors import ConflictError, NotFoundError
from supportagent.store import tables as t
from supportagent.store.audit import append_event
from supportagent.store.documents import document_values

if TYPE_CHECKING:  # the store imports the migrations, which import this module
    from supportagent.store.store import Store

#: Tickets a person still has to handle: the agent drafted nothing for them, or a reviewer
#: rejected the draft.
OPEN_STATUSES = (Status.ESCALATED, Status.ROUTED, Status.HANDED_OFF)
ACTIONS = ("assign", "note", "reply", "handled")

escalation_metadata = sa.MetaData()

escalation_actions = sa.Table(
    "escalation_actions",
    escalation_metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("ticket_id", sa.String(128), nullable=False, index=True),
    sa.Column("action", sa.String(16), nullable=False),
    sa.Column("actor", sa.String(128), nullable=False),
    #: The assignee's name, the note, or the reply.
    sa.Column("text", sa.Text),
    sa.Column("resolved_doc_id", sa.String(128)),
    sa.Column("at", sa.DateTime(timezone=True), nullable=False),
)


def m009_escalation_actions(conn: sa.Connection) -> None:
    """What people did with escalated, routed and handed-off tickets."""
    escalation_actions.create(conn, checkfirst=True)


@dataclass(frozen=True, slots=True)
class TicketAction:
    id: int
    ticket_id: str
    action: str
    actor: str
    text: str | None
    resolved_doc_id: str | None
    at: datetime


def record_action(
    store: Store,
    ticket_id: str,
    action: str,
    actor: str,
    text: str | None = None,
    *,
    resolved_doc: Document | None = None,
    linked_doc_id: str | None = None,
) -> TicketAction:
    """Store one action and its audit event atomically; returns the action.

    ``assign``, ``reply`` and ``handled`` need an open ticket (ConflictError otherwise); a
    ``note`` may be added to any ticket the agent has staged. ``reply`` and ``handled`` move the
    ticket to ``handled``, conditionally, so of two people finishing one ticket at once exactly
    one wins.
    """
    if action not in ACTIONS:
        raise ValueError(f"unknown action {action!r}")
    now = datetime.now(UTC)
    with store.begin() as conn:
        status = _status(conn, ticket_id)
        open_values = [s.value for s in OPEN_STATUSES]
        if action != "note" and status not in open_values:
            raise ConflictError(
                f"Ticket {ticket_id} is {status}: only an escalated, routed or handed-off "
                f"ticket can be {'assigned' if action == 'assign' else 'handled'}."
            )
        if action == "note" and status in {Status.NEW.value, Status.IN_PROGRESS.value}:
            raise ConflictError(f"Ticket {ticket_id} is {status}: the agent has not staged it yet.")
        new_status = status
        if action in {"reply", "handled"}:
            changed = conn.execute(
                t.tickets.update()
                .where(t.tickets.c.id == ticket_id, t.tickets.c.status.in_(open_values))
                .values(status=Status.HANDLED.value, updated_at=now)
            ).rowcount
            if changed != 1:
                raise ConflictError(f"Ticket {ticket_id} was handled by someone else just now.")
            new_status = Status.HANDLED.value
        if resolved_doc is not None:
            _insert_document(conn, resolved_doc, now)
        row: dict[str, Any] = {
            "ticket_id": ticket_id,
            "action": action,
            "actor": actor,
            "text": text,
            "resolved_doc_id": resolved_doc.id if resolved_doc else linked_doc_id,
            "at": now,
        }
        key = conn.execute(escalation_actions.insert().values(**row)).inserted_primary_key
        assert key is not None
        payload = {
            "action": action,
            "status": new_status,
            "previous_status": status,
            "assignee": text if action == "assign" else None,
            "note": text if action in {"note", "handled"} else None,
            "response": text if action == "reply" else "",
            "resolved_doc_id": row["resolved_doc_id"],
            "resolved_added": resolved_doc is not None,
        }
        append_event(conn, f"escalation.{action}", ticket_id, actor, payload, now)
    return TicketAction(int(key[0]), **row)


def actions(store: Store, ticket_id: str) -> list[TicketAction]:
    """A ticket's actions, oldest first."""
    query = (
        sa.select(escalation_actions)
        .where(escalation_actions.c.ticket_id == ticket_id)
        .order_by(escalation_actions.c.id)
    )
    with store.engine.connect() as conn:
        return [TicketAction(**dict(r)) for r in conn.execute(query).mappings()]


def latest_assignee() -> sa.Subquery:
    """``ticket_id`` → ``assignee``: the name in each ticket's latest ``assign`` action."""
    last = (
        sa.select(sa.func.max(escalation_actions.c.id).label("id"))
        .where(escalation_actions.c.action == "assign")
        .group_by(escalation_actions.c.ticket_id)
        .subquery()
    )
    return (
        sa.select(escalation_actions.c.ticket_id, escalation_actions.c.text.label("assignee"))
        .join(last, last.c.id == escalation_actions.c.id)
        .subquery()
    )


def assignees(store: Store, ticket_ids: Iterable[str]) -> dict[str, str]:
    ids = list(ticket_ids)
    if not ids:
        return {}
    sub = latest_assignee()
    with store.engine.connect() as conn:
        rows = conn.execute(sa.select(sub).where(sub.c.ticket_id.in_(ids))).all()
    return {r.ticket_id: r.assignee for r in rows if r.assignee}


def _status(conn: sa.Connection, ticket_id: str) -> str:
    status = conn.execute(sa.select(t.tickets.c.status).where(t.tickets.c.id == ticket_id)).scalar()
    if status is None:
        raise NotFoundError(f"No ticket with id {ticket_id!r}.")
    return str(status)


def _insert_document(conn: sa.Connection, doc: Document, now: datetime) -> None:
    if conn.execute(sa.select(t.documents.c.id).where(t.documents.c.id == doc.id)).first():
        raise ConflictError(f"A document with id {doc.id} already exists; the reply was not saved.")
    conn.execute(t.documents.insert().values(id=doc.id, **document_values(doc, now)))
    conn.execute(  # other processes' search indexes poll this counter (Knowledge.sync)
        t.counters.update()
        .where(t.counters.c.name == "documents")
        .values(value=t.counters.c.value + 1)
    )


def recent_actions(store: Store, limit: int) -> list[TicketAction]:
    """The latest actions on any ticket, newest first."""
    query = sa.select(escalation_actions).order_by(escalation_actions.c.id.desc()).limit(limit)
    with store.engine.connect() as conn:
        return [TicketAction(**dict(r)) for r in conn.execute(query).mappings()]
