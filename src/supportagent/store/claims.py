"""Ticket claims: which worker runs which ticket, under a lease that expires.

A claim is one row per ticket in ``ticket_claims``. Claiming a ticket bumps its ``attempts``
counter in the same transaction, and that attempt number is the claim's fencing token: staging
an outcome succeeds only while the ticket's counter still equals the attempt being staged (see
``Store.stage_outcome``), so a worker whose lease expired and was taken over cannot stage over
the new owner, even if it wakes up later.

On PostgreSQL, candidates are locked with ``FOR UPDATE SKIP LOCKED`` so that many workers on
many machines take different tickets without waiting on each other, and lease times come from
the database's clock so that the machines' clocks need not agree. On SQLite, the conditional
insert-or-update below runs under SQLite's single writer lock, which serialises claimers on
one machine.

This module must not import ``store.store`` at run time: the Store imports it.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from supportagent.domain import Status
from supportagent.store import tables as t

if TYPE_CHECKING:
    from supportagent.store.store import Store

ticket_claims = sa.Table(
    "ticket_claims",
    t.metadata,
    sa.Column("ticket_id", sa.String(128), sa.ForeignKey("tickets.id"), primary_key=True),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("worker", sa.String(200), nullable=False),
    sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False, index=True),
)

#: Statuses of tickets the agent still has to handle.
OPEN_STATUSES = (Status.NEW.value, Status.IN_PROGRESS.value)


def m005_ticket_claims(conn: sa.Connection) -> None:
    """Claims with an expiring lease, one row per claimed ticket."""
    ticket_claims.create(conn, checkfirst=True)


class StaleAttemptError(Exception):
    """Staging refused: the ticket was claimed again since this attempt began (lease lost)."""

    def __init__(self, ticket_id: str, attempt: int) -> None:
        super().__init__(
            f"attempt {attempt} of ticket {ticket_id} is no longer current: another worker "
            "took the ticket over after this worker's lease expired"
        )
        self.ticket_id = ticket_id
        self.attempt = attempt


@dataclass(frozen=True, slots=True)
class Claim:
    """A ticket held by one worker; ``attempt`` is the fencing token for staging."""

    ticket_id: str
    attempt: int
    worker: str


@dataclass(frozen=True, slots=True)
class Backlog:
    """Open tickets: how many nobody holds, and how many are held under a live lease."""

    free: int
    held: int


def worker_name() -> str:
    """A name unique to this process, readable in the claims table: ``host:pid:random``."""
    return f"{socket.gethostname()[:120]}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _pg(conn: sa.Connection) -> bool:
    return conn.dialect.name == "postgresql"


def _now(conn: sa.Connection) -> sa.ColumnElement[datetime]:
    """The current time: the database server's on PostgreSQL (shared by every machine)."""
    if _pg(conn):
        return sa.func.clock_timestamp(type_=sa.DateTime(timezone=True))
    return sa.literal(datetime.now(UTC), sa.DateTime(timezone=True))


def _expiry(conn: sa.Connection, lease_seconds: float) -> sa.ColumnElement[datetime]:
    if _pg(conn):
        interval = sa.func.make_interval(0, 0, 0, 0, 0, 0, sa.literal(lease_seconds, sa.Float))
        return sa.func.clock_timestamp(type_=sa.DateTime(timezone=True)) + interval
    return sa.literal(datetime.now(UTC) + timedelta(seconds=lease_seconds), sa.DateTime(True))


class Claims:
    """Claim, renew and release tickets for one worker process."""

    def __init__(self, store: Store, worker: str | None = None, lease_seconds: float = 30.0):
        if lease_seconds <= 0:
            raise ValueError(f"lease_seconds must be positive, got {lease_seconds}")
        self.store, self.engine = store, store.engine
        self.worker = worker or worker_name()
        self.lease_seconds = lease_seconds

    def claim_next(self, exclude: Collection[str] = ()) -> Claim | None:
        """Claim the most urgent, oldest open ticket nobody holds; None when there is none."""
        for _ in range(5):  # on PostgreSQL another claimer can win between our read and write
            with self.store.write_lock, self.engine.connect() as conn:
                transaction = conn.begin()
                if not _pg(conn):
                    # Take SQLite's writer lock before reading, so claimers queue up here.
                    conn.exec_driver_sql("BEGIN IMMEDIATE")
                candidate = self._candidate(conn, exclude)
                if candidate is None:
                    transaction.rollback()
                    return None
                claim = self._try_claim(conn, candidate[0], int(candidate[1]))
                if claim is None:
                    transaction.rollback()
                    continue
                transaction.commit()
                return claim
        return None

    def renew(self, claims: Iterable[Claim]) -> list[Claim]:
        """Extend the lease of each claim; return the ones that were lost to another worker."""
        lost: list[Claim] = []
        with self.store.begin() as conn:
            expiry = _expiry(conn, self.lease_seconds)
            for claim in claims:
                changed = conn.execute(
                    ticket_claims.update()
                    .where(
                        ticket_claims.c.ticket_id == claim.ticket_id,
                        ticket_claims.c.attempt == claim.attempt,
                    )
                    .values(expires_at=expiry)
                ).rowcount
                if changed != 1:
                    lost.append(claim)
        return lost

    def release(self, claim: Claim) -> None:
        """Give the ticket up unfinished (it failed, or is handed back); a no-op once lost.

        The ticket goes back to ``new``: nobody works on it any more, and the next run or
        worker takes it as a new attempt. (Staging releases a claim by itself.)
        """
        with self.store.begin() as conn:
            held = conn.execute(
                ticket_claims.delete().where(
                    ticket_claims.c.ticket_id == claim.ticket_id,
                    ticket_claims.c.attempt == claim.attempt,
                )
            ).rowcount
            if held:
                conn.execute(
                    t.tickets.update()
                    .where(
                        t.tickets.c.id == claim.ticket_id,
                        t.tickets.c.attempts == claim.attempt,
                        t.tickets.c.status == Status.IN_PROGRESS.value,
                    )
                    .values(status=Status.NEW.value, updated_at=datetime.now(UTC))
                )

    def backlog(self, exclude: Collection[str] = ()) -> Backlog:
        """Open tickets, free to claim or held by a live lease (ours or another worker's)."""
        with self.engine.connect() as conn:
            held = _active_claim(conn)
            query = sa.select(sa.func.count().filter(~held), sa.func.count().filter(held)).where(
                t.tickets.c.status.in_(OPEN_STATUSES)
            )
            if exclude:
                query = query.where(t.tickets.c.id.not_in(list(exclude)))
            free, busy = conn.execute(query).one()
        return Backlog(int(free or 0), int(busy or 0))

    def active(self) -> list[dict[str, Any]]:
        """Every live claim: ticket, attempt, worker, claimed_at, expires_at."""
        with self.engine.connect() as conn:
            query = (
                sa.select(ticket_claims)
                .where(ticket_claims.c.expires_at >= _now(conn))
                .order_by(ticket_claims.c.claimed_at)
            )
            return [dict(row._mapping) for row in conn.execute(query)]

    def requeue_escalated(self) -> int:
        """Put every escalated ticket back in the inbox, on purpose; returns how many."""
        with self.store.begin() as conn:
            escalated = sa.select(t.tickets.c.id).where(
                t.tickets.c.status == Status.ESCALATED.value
            )
            conn.execute(ticket_claims.delete().where(ticket_claims.c.ticket_id.in_(escalated)))
            return int(
                conn.execute(
                    t.tickets.update()
                    .where(t.tickets.c.status == Status.ESCALATED.value)
                    .values(status=Status.NEW.value, updated_at=datetime.now(UTC))
                ).rowcount
            )

    # --- internals -----------------------------------------------------------------------

    def _candidate(self, conn: sa.Connection, exclude: Collection[str]) -> Any:
        query = (
            sa.select(t.tickets.c.id, t.tickets.c.attempts)
            .where(t.tickets.c.status.in_(OPEN_STATUSES), ~_active_claim(conn))
            .order_by(t.tickets.c.priority.desc(), t.tickets.c.received_at, t.tickets.c.id)
            .limit(1)
        )
        if exclude:
            query = query.where(t.tickets.c.id.not_in(list(exclude)))
        if _pg(conn):
            # Rows another claimer has locked are skipped, not waited for.
            query = query.with_for_update(skip_locked=True, of=t.tickets)
        return conn.execute(query).first()

    def _try_claim(self, conn: sa.Connection, ticket_id: str, attempts: int) -> Claim | None:
        """Write the claim and bump the attempt counter; None if another claimer won."""
        attempt = attempts + 1
        insert = t.upsert_insert(conn.dialect.name)
        values = {
            "ticket_id": ticket_id,
            "attempt": attempt,
            "worker": self.worker,
            "claimed_at": _now(conn),
            "expires_at": _expiry(conn, self.lease_seconds),
        }
        # An existing row is taken over only once its lease has run out: this conditional
        # write is what decides between two claimers.
        statement = (
            insert(ticket_claims)
            .values(**values)
            .on_conflict_do_update(
                index_elements=[ticket_claims.c.ticket_id],
                set_={k: v for k, v in values.items() if k != "ticket_id"},
                where=ticket_claims.c.expires_at < _now(conn),
            )
            .returning(ticket_claims.c.attempt)
        )
        if conn.execute(statement).first() is None:
            return None
        # Compare-and-set on the attempt counter: fails if anyone began an attempt meanwhile.
        changed = conn.execute(
            t.tickets.update()
            .where(
                t.tickets.c.id == ticket_id,
                t.tickets.c.attempts == attempts,
                t.tickets.c.status.in_(OPEN_STATUSES),
            )
            .values(attempts=attempt, status=Status.IN_PROGRESS.value, updated_at=datetime.now(UTC))
        ).rowcount
        return Claim(ticket_id, attempt, self.worker) if changed == 1 else None


def _active_claim(conn: sa.Connection) -> sa.ColumnElement[bool]:
    """True for a ticket someone holds under a lease that has not yet expired."""
    return (
        sa.exists()
        .where(
            ticket_claims.c.ticket_id == t.tickets.c.id,
            ticket_claims.c.expires_at >= _now(conn),
        )
        .correlate(t.tickets)
    )
