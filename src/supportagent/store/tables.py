"""SQLAlchemy Core tables. The same schema serves SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from supportagent.domain import (
    MAX_CREATED_AT_CHARS,
    MAX_CUSTOMER_CHARS,
    MAX_DOCUMENT_ID_CHARS,
    MAX_ID_CHARS,
)

metadata = sa.MetaData()


def upsert_insert(dialect: str) -> Any:
    """The ``insert`` with ``on_conflict_*`` of the named dialect (``postgresql`` or SQLite).

    Imported here, when a write needs it, not with the module: the PostgreSQL dialect alone
    cost a one-shot command on SQLite about 40 ms of its start-up.
    """
    if dialect == "postgresql":
        from sqlalchemy.dialects import postgresql

        return postgresql.insert
    from sqlalchemy.dialects import sqlite

    return sqlite.insert


schema_migrations = sa.Table(
    "schema_migrations",
    metadata,
    sa.Column("name", sa.String(128), primary_key=True),
    sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False),
)

tickets = sa.Table(
    "tickets",
    metadata,
    sa.Column("id", sa.String(MAX_ID_CHARS), primary_key=True),
    sa.Column("subject", sa.Text, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("priority", sa.Integer, nullable=False, default=0),
    # The readers hold values to these widths (ingest/rows.py), so both databases agree.
    sa.Column("customer", sa.String(MAX_CUSTOMER_CHARS)),
    sa.Column("created_at", sa.String(MAX_CREATED_AT_CHARS)),
    sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("status", sa.String(32), nullable=False, index=True),
    sa.Column("attempts", sa.Integer, nullable=False, default=0),
    sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
)

documents = sa.Table(
    "documents",
    metadata,
    sa.Column("id", sa.String(MAX_DOCUMENT_ID_CHARS), primary_key=True),  # widened in 008
    sa.Column("kind", sa.String(16), nullable=False, index=True),
    sa.Column("title", sa.Text, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("source", sa.Text, nullable=False, default=""),
    sa.Column("linked_docs", sa.JSON, nullable=False),
    sa.Column("meta", sa.JSON, nullable=False),
    sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
)

outcomes = sa.Table(
    "outcomes",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("ticket_id", sa.String(128), sa.ForeignKey("tickets.id"), nullable=False),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("reason_code", sa.String(64), nullable=False),
    sa.Column("bucket", sa.String(32)),
    sa.Column("engine", sa.String(32), nullable=False),
    sa.Column("draft", sa.JSON),
    sa.Column("safety", sa.JSON),
    sa.Column("staged_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("ticket_id", "attempt", name="uq_outcome_ticket_attempt"),
)

trace_events = sa.Table(
    "trace_events",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("ticket_id", sa.String(128), sa.ForeignKey("tickets.id"), nullable=False),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("stage", sa.String(32), nullable=False),
    sa.Column("status", sa.String(32), nullable=False),
    sa.Column("detail", sa.JSON, nullable=False),
    sa.Column("duration_ms", sa.Float, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("ticket_id", "attempt", "seq", name="uq_trace_ticket_attempt_seq"),
)

reviews = sa.Table(
    "reviews",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("outcome_id", sa.Integer, sa.ForeignKey("outcomes.id"), nullable=False),
    sa.Column("ticket_id", sa.String(128), sa.ForeignKey("tickets.id"), nullable=False),
    sa.Column("decision", sa.String(16), nullable=False),
    sa.Column("reviewer", sa.String(128), nullable=False),
    sa.Column("final_text", sa.Text),
    sa.Column("reason", sa.Text),
    sa.Column("resolved_doc_id", sa.String(MAX_DOCUMENT_ID_CHARS)),  # widened in 008
    sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("outcome_id", name="uq_review_outcome"),
)

#: Named counters that other processes poll: ``documents`` goes up with every document write,
#: so a search index learns that something changed from one row, whatever the corpus size.
counters = sa.Table(
    "counters",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("value", sa.BigInteger, nullable=False),
)
