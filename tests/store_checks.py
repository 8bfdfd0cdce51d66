"""Checks on what the store holds, shared by the scheduler and worker tests, and throwaway
PostgreSQL databases for the tests and the benchmarks."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from supportagent.store import tables as t
from supportagent.store.store import Store


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
