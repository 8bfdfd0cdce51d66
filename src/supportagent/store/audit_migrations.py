"""Migrations of the audit log: 002 creates it (and backfills past decisions), 007 seals it."""

from __future__ import annotations

import sqlalchemy as sa

from supportagent.store import tables as t
from supportagent.store.audit import (
    GENESIS,
    HEAD_ID,
    as_utc,
    audit_events,
    audit_head,
    audit_quarantine,
    record_review_decision,
    record_staged,
)

_REVIEW_COLUMN_DDL = (
    ("original_draft", "TEXT"),
    ("diff", "TEXT"),
    ("edit_chars", "INTEGER"),
    ("edit_ratio", "DOUBLE PRECISION"),
    ("resolved_added", "BOOLEAN"),
)


def m002_audit_events(conn: sa.Connection) -> None:
    """The audit log and its head; reviews keep the original draft and the diff.

    Decisions made before this migration are appended in the order they were made.
    """
    audit_events.create(conn, checkfirst=True)
    audit_head.create(conn, checkfirst=True)
    if conn.execute(sa.select(audit_head.c.id)).first() is None:
        conn.execute(audit_head.insert().values(id=HEAD_ID, last_seq=0, last_hash=GENESIS))
    _add_columns(conn, "reviews", _REVIEW_COLUMN_DDL)
    _backfill(conn)


def m007_audit_seal(conn: sa.Connection) -> None:
    """A MAC column on events and on the head, and the quarantine for rows found past the head.

    Databases created since the columns joined the table definitions already have them.
    """
    for table in ("audit_events", "audit_head"):
        _add_columns(conn, table, (("mac", "VARCHAR(64)"),))
    audit_quarantine.create(conn, checkfirst=True)


def _add_columns(conn: sa.Connection, table: str, columns: tuple[tuple[str, str], ...]) -> None:
    present = {c["name"] for c in sa.inspect(conn).get_columns(table)}
    for name, ddl_type in columns:
        if name not in present:
            conn.execute(sa.text(f"ALTER TABLE {table} ADD COLUMN {name} {ddl_type}"))


def _backfill(conn: sa.Connection) -> None:
    if conn.execute(sa.select(audit_events.c.seq).limit(1)).first() is not None:
        return
    outcomes = [dict(r) for r in conn.execute(sa.select(t.outcomes)).mappings()]
    reviews = [dict(r) for r in conn.execute(sa.select(t.reviews)).mappings()]
    decisions = [(as_utc(o["staged_at"]), 0, o["id"], o) for o in outcomes]
    decisions += [(as_utc(r["decided_at"]), 1, r["id"], r) for r in reviews]
    for when, kind, row_id, row in sorted(decisions, key=lambda d: d[:3]):
        if kind == 0:
            record_staged(conn, row_id, with_usage=False)  # no model-call records before 003
        else:
            added = row["resolved_doc_id"] is not None  # before 002, every link was a new record
            record_review_decision(conn, row_id, {**row, "decided_at": when}, None, added)
