"""The audit log: append-only, hash-chained events for every decision of the agent and reviewers.

Each event keeps the hash of the event before it, and its own hash covers its content and that
link, so an edited or deleted row breaks the chain at a place ``audit_verify`` names. A one-row
chain head holds the last sequence number and hash; every append locks it (a row lock on
PostgreSQL, the database's single writer lock on SQLite), so appends from many processes extend
one chain and never fork it.

What a chain alone cannot show is a rewrite of every hash from the edited row to the head by
someone with write access. An anchor (``seq:hash``, printed by ``supportagent audit verify``)
kept outside the database rules that out for every event up to it.
"""

from __future__ import annotations

import csv
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO

import sqlalchemy as sa

from supportagent.store import tables as t
from supportagent.store.audit_payload import (
    CSV_COLUMNS,
    StagedAttempt,
    agent_payload,
    csv_row,
    model_usage,
    review_payload,
)

#: The ``prev_hash`` of the first event.
GENESIS = "0" * 64
HEAD_ID = 1

audit_metadata = sa.MetaData()

audit_events = sa.Table(
    "audit_events",
    audit_metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    # ISO text, not a DateTime: the hash covers exactly these characters on every database.
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("ticket_id", sa.String(128), nullable=False, index=True),
    sa.Column("event", sa.String(32), nullable=False),
    sa.Column("actor", sa.String(160), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("prev_hash", sa.String(64), nullable=False),
    sa.Column("hash", sa.String(64), nullable=False),
)

audit_head = sa.Table(
    "audit_head",
    audit_metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("last_seq", sa.Integer, nullable=False),
    sa.Column("last_hash", sa.String(64), nullable=False),
)

#: The columns migration 002 adds to ``reviews`` (the rest of that table is in ``tables.py``).
review_extras = sa.Table(
    "reviews",
    sa.MetaData(),
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("original_draft", sa.Text),
    sa.Column("diff", sa.Text),
    sa.Column("edit_chars", sa.Integer),
    sa.Column("edit_ratio", sa.Float),
    sa.Column("resolved_added", sa.Boolean),
)
_REVIEW_COLUMN_DDL = (
    ("original_draft", "TEXT"),
    ("diff", "TEXT"),
    ("edit_chars", "INTEGER"),
    ("edit_ratio", "DOUBLE PRECISION"),
    ("resolved_added", "BOOLEAN"),
)
_STATUS_OF_DECISION = {"approve": "approved", "amend": "amended", "reject": "handed_off"}


@dataclass(frozen=True, slots=True)
class ReviewDetails:
    """What a review keeps beside the decision: the draft as staged and how it was changed."""

    original_draft: str | None = None
    diff: str | None = None
    edit_chars: int | None = None
    edit_ratio: float | None = None
    #: An existing resolved record the final answer nearly repeats; linked instead of copied.
    linked_doc_id: str | None = None


# --- writing -----------------------------------------------------------------------------


def event_hash(
    seq: int, prev_hash: str, created_at: str, ticket_id: str, event: str, actor: str, payload: str
) -> str:
    """SHA-256 over an event's fields and the hash of the event before it."""
    fields = [seq, prev_hash, created_at, ticket_id, event, actor, payload]
    data = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def append_event(
    conn: sa.Connection,
    event: str,
    ticket_id: str,
    actor: str,
    payload: Mapping[str, Any],
    created_at: datetime | None = None,
) -> tuple[int, str]:
    """Append one event inside the caller's transaction; returns its sequence number and hash."""
    if conn.dialect.name == "sqlite":
        # Take the writer lock before reading the head (callers usually hold it already).
        conn.execute(
            audit_head.update()
            .where(audit_head.c.id == HEAD_ID)
            .values(last_seq=audit_head.c.last_seq)
        )
    head = conn.execute(
        sa.select(audit_head.c.last_seq, audit_head.c.last_hash)
        .where(audit_head.c.id == HEAD_ID)
        .with_for_update()
    ).one()
    seq, prev_hash = int(head.last_seq) + 1, str(head.last_hash)
    stamp = _iso(created_at or datetime.now(UTC))
    text = json.dumps(
        dict(payload), ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
    )
    digest = event_hash(seq, prev_hash, stamp, ticket_id, event, actor, text)
    conn.execute(
        audit_events.insert().values(
            seq=seq,
            created_at=stamp,
            ticket_id=ticket_id,
            event=event,
            actor=actor,
            payload=text,
            prev_hash=prev_hash,
            hash=digest,
        )
    )
    conn.execute(
        audit_head.update().where(audit_head.c.id == HEAD_ID).values(last_seq=seq, last_hash=digest)
    )
    return seq, digest


def record_staged(
    conn: sa.Connection,
    outcome_id: int,
    *,
    with_usage: bool = True,
    staged: StagedAttempt | None = None,
) -> int:
    """The agent's decision on one ticket attempt (an ``outcomes`` row) as an audit event.

    Runs inside the transaction that staged the outcome, so the two commit together.
    ``staged``: what the caller just wrote, in memory; without it the outcome, its trace and
    ``with_usage`` its model-call records (their table arrives in migration 003) are read.
    """
    if staged is None:
        staged = _read_staged(conn, outcome_id, with_usage)
    outcome = staged.outcome
    payload = agent_payload(outcome, staged.trace, staged.usage)
    payload["outcome_id"] = outcome_id
    actor = f"agent:{outcome['engine']}"
    ticket_id = str(outcome["ticket_id"])
    seq, _ = append_event(conn, "agent.staged", ticket_id, actor, payload, outcome["staged_at"])
    return seq


def _read_staged(conn: sa.Connection, outcome_id: int, with_usage: bool) -> StagedAttempt:
    outcome = dict(
        conn.execute(sa.select(t.outcomes).where(t.outcomes.c.id == outcome_id)).mappings().one()
    )
    ticket_id, attempt = str(outcome["ticket_id"]), int(outcome["attempt"])
    query = (
        sa.select(
            t.trace_events.c.stage,
            t.trace_events.c.status,
            t.trace_events.c.detail,
            t.trace_events.c.duration_ms,
        )
        .where(t.trace_events.c.ticket_id == ticket_id, t.trace_events.c.attempt == attempt)
        .order_by(t.trace_events.c.seq)
    )
    trace = [dict(row) for row in conn.execute(query).mappings()]
    usage = model_usage(conn, ticket_id, attempt) if with_usage else None
    return StagedAttempt(outcome, trace, usage)


def record_review_decision(
    conn: sa.Connection,
    review_id: int,
    review: Mapping[str, Any],
    details: ReviewDetails | None,
    resolved_added: bool,
) -> int:
    """Store a review's extra columns and append its audit event, in the caller's transaction."""
    extras = {
        "original_draft": details.original_draft if details else None,
        "diff": details.diff if details else None,
        "edit_chars": details.edit_chars if details else None,
        "edit_ratio": details.edit_ratio if details else None,
        "resolved_added": resolved_added,
    }
    conn.execute(review_extras.update().where(review_extras.c.id == review_id).values(extras))
    status = _STATUS_OF_DECISION.get(str(review["decision"]), str(review["decision"]))
    payload = review_payload({**review, **extras}, status)
    payload["review_id"] = review_id
    seq, _ = append_event(
        conn,
        f"review.{review['decision']}",
        review["ticket_id"],
        str(review["reviewer"]),
        payload,
        review["decided_at"],
    )
    return seq


# --- reading -----------------------------------------------------------------------------


def read_events(engine: sa.Engine, ticket_id: str | None = None) -> list[dict[str, Any]]:
    """Events in chain order (optionally one ticket's), each with its payload under ``data``."""
    return list(_stream_events(engine, ticket_id))


def _stream_events(engine: sa.Engine, ticket_id: str | None = None) -> Iterator[dict[str, Any]]:
    query = sa.select(audit_events).order_by(audit_events.c.seq)
    if ticket_id is not None:
        query = query.where(audit_events.c.ticket_id == ticket_id)
    with engine.connect() as conn:
        for row in conn.execute(query).mappings():
            event = dict(row)
            event["data"] = _decode(event["payload"])
            yield event


def read_reviews(engine: sa.Engine) -> list[dict[str, Any]]:
    """Every review with the columns migration 002 added, oldest first."""
    extra = review_extras.alias("review_extras")
    query = (
        sa.select(t.reviews, *(c for c in extra.c if c.name != "id"))
        .join(extra, extra.c.id == t.reviews.c.id)
        .order_by(t.reviews.c.id)
    )
    with engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def export_csv(engine: sa.Engine, out: TextIO) -> int:
    """Write every event as one CSV row (see :data:`CSV_COLUMNS`); returns the row count."""
    writer = csv.DictWriter(out, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
    writer.writeheader()
    count = 0
    for event in _stream_events(engine):
        writer.writerow(csv_row(event, event["data"]))
        count += 1
    return count


# --- migration 002 -----------------------------------------------------------------------


def m002_audit_events(conn: sa.Connection) -> None:
    """The audit log and its head; reviews keep the original draft and the diff.

    Decisions made before this migration are appended in the order they were made.
    """
    audit_events.create(conn, checkfirst=True)
    audit_head.create(conn, checkfirst=True)
    if conn.execute(sa.select(audit_head.c.id)).first() is None:
        conn.execute(audit_head.insert().values(id=HEAD_ID, last_seq=0, last_hash=GENESIS))
    present = {c["name"] for c in sa.inspect(conn).get_columns("reviews")}
    for name, ddl_type in _REVIEW_COLUMN_DDL:
        if name not in present:
            conn.execute(sa.text(f"ALTER TABLE reviews ADD COLUMN {name} {ddl_type}"))
    _backfill(conn)


def _backfill(conn: sa.Connection) -> None:
    if conn.execute(sa.select(audit_events.c.seq).limit(1)).first() is not None:
        return
    outcomes = [dict(r) for r in conn.execute(sa.select(t.outcomes)).mappings()]
    reviews = [dict(r) for r in conn.execute(sa.select(t.reviews)).mappings()]
    decisions = [(_utc(o["staged_at"]), 0, o["id"], o) for o in outcomes]
    decisions += [(_utc(r["decided_at"]), 1, r["id"], r) for r in reviews]
    for when, kind, row_id, row in sorted(decisions, key=lambda d: d[:3]):
        if kind == 0:
            record_staged(conn, row_id, with_usage=False)  # no model-call records before 003
        else:
            added = row["resolved_doc_id"] is not None  # before 002, every link was a new record
            record_review_decision(conn, row_id, {**row, "decided_at": when}, None, added)


def _utc(value: datetime) -> datetime:
    # SQLite hands back naive datetimes; everything this project writes is UTC.
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _iso(value: datetime) -> str:
    return _utc(value).astimezone(UTC).isoformat(timespec="microseconds")


def _decode(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
