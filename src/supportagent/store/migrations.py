"""Named migrations, applied in order and recorded in ``schema_migrations``.

A migration is a function of a connection. Add new ones at the end of ``MIGRATIONS``; never
edit or reorder one that has shipped.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import sqlalchemy as sa

from supportagent.store import tables as t
from supportagent.store.audit import m002_audit_events
from supportagent.store.claims import m005_ticket_claims
from supportagent.store.embeddings import m004_embedding_cache
from supportagent.store.escalations import m007_escalation_actions
from supportagent.store.llm_records import m003_model_calls

Migration = Callable[[sa.Connection], None]


def m001_initial(conn: sa.Connection) -> None:
    """Tickets, documents, staged outcomes, traces and reviews."""
    for table in (t.tickets, t.documents, t.outcomes, t.trace_events, t.reviews):
        table.create(conn, checkfirst=True)


def m006_counters(conn: sa.Connection) -> None:
    """A revision counter for documents (see ``tables.counters``), seeded with their count."""
    t.counters.create(conn, checkfirst=True)
    count = conn.execute(sa.select(sa.func.count()).select_from(t.documents)).scalar_one()
    conn.execute(t.counters.insert().values(name="documents", value=count))


MIGRATIONS: list[tuple[str, Migration]] = [
    ("001_initial", m001_initial),
    ("002_audit_events", m002_audit_events),
    ("003_model_calls", m003_model_calls),
    ("004_embedding_cache", m004_embedding_cache),
    ("005_ticket_claims", m005_ticket_claims),
    ("006_counters", m006_counters),
    ("007_escalation_actions", m007_escalation_actions),
]


#: Arbitrary key for PostgreSQL's advisory lock, so that workers starting together migrate once.
_PG_LOCK_KEY = 0x5A6E7401


def _serialise(conn: sa.Connection) -> None:
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})


def migrate(engine: sa.Engine) -> list[str]:
    """Apply every migration not yet applied; return the names applied now."""
    applied_now: list[str] = []
    with engine.begin() as conn:
        _serialise(conn)
        t.schema_migrations.create(conn, checkfirst=True)
    for name, migration in MIGRATIONS:
        with engine.begin() as conn:
            _serialise(conn)
            done = conn.execute(
                sa.select(t.schema_migrations.c.name).where(t.schema_migrations.c.name == name)
            ).first()
            if done:
                continue
            migration(conn)
            conn.execute(
                t.schema_migrations.insert().values(name=name, applied_at=datetime.now(UTC))
            )
            applied_now.append(name)
    return applied_now
