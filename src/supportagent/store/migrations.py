"""Named migrations, applied in order and recorded in ``schema_migrations``.

A migration is a function of a connection. Add new ones at the end of ``MIGRATIONS``; never
edit or reorder one that has shipped.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import sqlalchemy as sa

from supportagent.domain import MAX_DOCUMENT_ID_CHARS
from supportagent.store import tables as t
from supportagent.store.audit_migrations import m002_audit_events, m007_audit_seal
from supportagent.store.claims import m005_ticket_claims
from supportagent.store.embeddings import m004_embedding_cache
from supportagent.store.escalations import m009_escalation_actions
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


def m008_document_ids(conn: sa.Connection) -> None:
    """Document ids up to 160 characters, so that ``AR-`` plus a 128-character ticket id fits.

    PostgreSQL refused such a resolved record, and with it the approval; SQLite does not hold
    strings to their declared width, so only PostgreSQL needs the change.
    """
    if conn.dialect.name == "postgresql":
        width = MAX_DOCUMENT_ID_CHARS
        for table, column in (("documents", "id"), ("reviews", "resolved_doc_id")):
            conn.execute(
                sa.text(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE VARCHAR({width})")
            )


MIGRATIONS: list[tuple[str, Migration]] = [
    ("001_initial", m001_initial),
    ("002_audit_events", m002_audit_events),
    ("003_model_calls", m003_model_calls),
    ("004_embedding_cache", m004_embedding_cache),
    ("005_ticket_claims", m005_ticket_claims),
    ("006_counters", m006_counters),
    ("007_audit_seal", m007_audit_seal),
    ("008_document_ids", m008_document_ids),
    ("009_escalation_actions", m009_escalation_actions),
]


#: Arbitrary key for PostgreSQL's advisory lock, so that workers starting together migrate once.
_PG_LOCK_KEY = 0x5A6E7401


def _serialise(conn: sa.Connection) -> None:
    """Hold the lock that makes processes starting together migrate one after another.

    PostgreSQL: an advisory lock for the transaction. SQLite: the database's writer lock, taken
    before the first read (``BEGIN IMMEDIATE``), so that two processes cannot both find a table
    missing and both create it; SQLite's DDL is transactional, so the loser then sees it done.
    """
    if conn.dialect.name == "postgresql":
        conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_LOCK_KEY})
    elif conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN IMMEDIATE")


def migrate(engine: sa.Engine) -> list[str]:
    """Apply every migration not yet applied; return the names applied now."""
    if _all_applied(engine):
        return []  # the usual case: no lock taken, so a busy or read-only database opens at once
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


def _all_applied(engine: sa.Engine) -> bool:
    with engine.connect() as conn:
        if not sa.inspect(conn).has_table(t.schema_migrations.name):
            return False
        done = set(conn.execute(sa.select(t.schema_migrations.c.name)).scalars())
    return all(name in done for name, _ in MIGRATIONS)
