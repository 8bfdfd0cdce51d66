"""Checks on what the store holds, shared by the scheduler and worker tests, and throwaway
PostgreSQL databases for the tests and the benchmarks."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from supportagent.domain import Bucket, Draft, DraftSentence, Outcome, Status, Ticket
from supportagent.store import tables as t
from supportagent.store.store import Store


def stage_draft(store: Store, ticket_id: str) -> None:
    """A new ticket ``ticket_id`` with one staged draft (and so one audit event)."""
    store.add_tickets([Ticket(ticket_id, "Import", "How do I import contacts?")])
    attempt = store.begin_attempt(ticket_id)
    draft = Draft((DraftSentence(f"Upload the CSV ({ticket_id}).", ("kb-x#import",)),), 0.7)
    outcome = Outcome(
        ticket_id, Status.PENDING_REVIEW, "drafted", Bucket.ANSWERABLE, draft, None, (), "offline"
    )
    store.stage_outcome(outcome, attempt)


def outcome_counts(store: Store) -> dict[str, int]:
    """Staged outcome rows per ticket (every ticket of the store, zero included)."""
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(t.tickets.c.id, sa.func.count(t.outcomes.c.id))
            .select_from(t.tickets.outerjoin(t.outcomes))
            .group_by(t.tickets.c.id)
        ).all()
    return {ticket_id: n for ticket_id, n in rows}


@contextmanager
def temporary_database(admin: sa.Engine, prefix: str) -> Iterator[str]:
    """A new database on the server ``admin`` (an AUTOCOMMIT engine) reaches, dropped after
    the block (even with connections still open); yields its URL."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin.url.set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


#: Tables whose rows one test leaves behind for the next, when tests share a database.
_KEPT = frozenset({"schema_migrations"})


def empty_database(engine: sa.Engine) -> None:
    """Every row gone, as right after the migrations: the audit head at its start, the
    counters at zero. For tests that share one database (see ``pg_module_url``)."""
    from supportagent.store.audit import GENESIS, HEAD_ID, audit_head

    names = [n for n in sa.inspect(engine).get_table_names() if n not in _KEPT]
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":
            listed = ", ".join(f'"{name}"' for name in names)
            conn.execute(sa.text(f"TRUNCATE {listed} RESTART IDENTITY CASCADE"))
        else:
            for name in names:
                conn.execute(sa.text(f'DELETE FROM "{name}"'))
        conn.execute(audit_head.insert().values(id=HEAD_ID, last_seq=0, last_hash=GENESIS))
        conn.execute(t.counters.insert().values(name="documents", value=0))
