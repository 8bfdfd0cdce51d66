"""The audit log: append-only, hash-chained events for every decision of the agent and reviewers.

Each event keeps the hash of the event before it, and its own hash covers its content and that
link, so an edited or deleted row breaks the chain at a place ``audit_verify`` names. A one-row
chain head holds the last sequence number and hash; every append locks it (a row lock on
PostgreSQL, the database's single writer lock on SQLite), so appends from many processes extend
one chain and never fork it.

What a chain alone cannot show is a rewrite of every hash from the edited row to the head by
someone with write access, or a tail cut off with the head moved back. ``audit_seal`` anchors
the chain outside the table (a keyed MAC on every event and the head, an append-only head file),
and an anchor (``seq:hash``, printed by ``supportagent audit verify``) kept elsewhere rules it
out for every event up to it.
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
    ModelUsage,
    StagedAttempt,
    agent_payload,
    csv_row,
    review_payload,
)
from supportagent.store.audit_seal import AuditSeal
from supportagent.store.llm_records import model_calls

#: The ``prev_hash`` of the first event.
GENESIS = "0" * 64
HEAD_ID = 1
#: The event that records tampering found while appending, and who appends it.
TAMPER_EVENT = "audit.tamper"
SYSTEM_ACTOR = "supportagent"
#: A seal with neither key nor head file: the plain hash chain.
NO_SEAL = AuditSeal()
#: Rows set aside that a tamper event lists one by one (all of them stay in the quarantine).
_MAX_LISTED = 20

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
    # HMAC of ``hash`` under SUPPORTAGENT_AUDIT_KEY; NULL when written without a key (007).
    sa.Column("mac", sa.String(64)),
)

audit_head = sa.Table(
    "audit_head",
    audit_metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("last_seq", sa.Integer, nullable=False),
    sa.Column("last_hash", sa.String(64), nullable=False),
    sa.Column("mac", sa.String(64)),  # HMAC of "seq:hash" under the key (007)
)

#: Rows found past the chain head, moved here whole by the append that found them (007).
audit_quarantine = sa.Table(
    "audit_quarantine",
    audit_metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("found_at", sa.String(40), nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("created_at", sa.String(40), nullable=False),
    sa.Column("ticket_id", sa.String(128), nullable=False),
    sa.Column("event", sa.String(32), nullable=False),
    sa.Column("actor", sa.String(160), nullable=False),
    sa.Column("payload", sa.Text, nullable=False),
    sa.Column("prev_hash", sa.String(64), nullable=False),
    sa.Column("hash", sa.String(64), nullable=False),
    sa.Column("mac", sa.String(64)),
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
    *,
    seal: AuditSeal | None = None,
) -> tuple[int, str]:
    """Append one event inside the caller's transaction; returns its sequence number and hash.

    A chain head row that is missing, or rows someone put past the head, are never a reason to
    fail: the head is rebuilt, or those rows are set aside in ``audit_quarantine``, and an
    ``audit.tamper`` event saying so goes into the chain first (``audit_verify`` reports it).
    """
    seal = seal or NO_SEAL
    seq, prev_hash = _locked_head(conn, seal)
    stamp = _iso(created_at or datetime.now(UTC))
    return _write(conn, seal, seq + 1, prev_hash, stamp, ticket_id, event, actor, payload)


def _write(
    conn: sa.Connection,
    seal: AuditSeal,
    seq: int,
    prev_hash: str,
    stamp: str,
    ticket_id: str,
    event: str,
    actor: str,
    payload: Mapping[str, Any],
) -> tuple[int, str]:
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
            mac=seal.event_mac(digest),
        )
    )
    conn.execute(
        audit_head.update()
        .where(audit_head.c.id == HEAD_ID)
        .values(last_seq=seq, last_hash=digest, mac=seal.head_mac(seq, digest))
    )
    return seq, digest


def _locked_head(conn: sa.Connection, seal: AuditSeal) -> tuple[int, str]:
    """The chain head, locked for this transaction, with what tampering left there dealt with."""
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
    ).first()
    if head is None:
        last = conn.execute(
            sa.select(audit_events.c.seq, audit_events.c.hash)
            .order_by(audit_events.c.seq.desc())
            .limit(1)
        ).first()
        seq, digest = (int(last.seq), str(last.hash)) if last else (0, GENESIS)
        conn.execute(audit_head.insert().values(id=HEAD_ID, last_seq=seq, last_hash=digest))
        why = f"the chain head row was missing; it was rebuilt from event {seq}"
        return _record_tamper(conn, seal, seq, digest, why, [])
    seq, digest = int(head.last_seq), str(head.last_hash)
    intruders = [
        dict(row)
        for row in conn.execute(
            sa.select(audit_events).where(audit_events.c.seq > seq).order_by(audit_events.c.seq)
        ).mappings()
    ]
    if not intruders:
        return seq, digest
    # Rows past the head were not appended here (every append moves the head with it), and the
    # next sequence number is taken: move them aside, keeping them whole as evidence.
    found_at = _iso(datetime.now(UTC))
    conn.execute(audit_quarantine.insert(), [{**row, "found_at": found_at} for row in intruders])
    conn.execute(audit_events.delete().where(audit_events.c.seq > seq))
    count = len(intruders)
    rows = "1 row" if count == 1 else f"{count} rows"
    why = (
        f"{rows} past the chain head (event {seq}) that SupportAgent did not append; "
        "set aside in the audit_quarantine table"
    )
    return _record_tamper(conn, seal, seq, digest, why, intruders)


def _record_tamper(
    conn: sa.Connection,
    seal: AuditSeal,
    seq: int,
    digest: str,
    why: str,
    found: list[dict[str, Any]],
) -> tuple[int, str]:
    payload = {
        "status": "tamper",
        "reason": why,
        "found_count": len(found),
        "found": [_summary(row) for row in found[:_MAX_LISTED]],
    }
    stamp = _iso(datetime.now(UTC))
    return _write(conn, seal, seq + 1, digest, stamp, "", TAMPER_EVENT, SYSTEM_ACTOR, payload)


def _summary(row: Mapping[str, Any]) -> dict[str, Any]:
    """What a tamper event keeps of a row it set aside (the row itself is in the quarantine)."""
    payload = str(row["payload"])
    return {
        "seq": int(row["seq"]),
        "event": str(row["event"]),
        "ticket_id": str(row["ticket_id"]),
        "actor": str(row["actor"]),
        "created_at": str(row["created_at"]),
        "hash": str(row["hash"]),
        "payload_sha256": hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest(),
    }


def record_staged(
    conn: sa.Connection,
    outcome_id: int,
    *,
    with_usage: bool = True,
    staged: StagedAttempt | None = None,
    seal: AuditSeal | None = None,
) -> tuple[int, str]:
    """The agent's decision on one ticket attempt (an ``outcomes`` row) as an audit event.

    Runs inside the transaction that staged the outcome, so the two commit together.
    ``staged``: what the caller just wrote, in memory; without it the outcome, its trace and
    ``with_usage`` its model-call records (their table arrives in migration 003) are read.
    Returns the new head (sequence number and hash), for ``AuditSeal.note`` after the commit.
    """
    if staged is None:
        staged = _read_staged(conn, outcome_id, with_usage)
    outcome = staged.outcome
    payload = agent_payload(outcome, staged.trace, staged.usage)
    payload["outcome_id"] = outcome_id
    actor = f"agent:{outcome['engine']}"
    ticket_id = str(outcome["ticket_id"])
    stamp = outcome["staged_at"]
    return append_event(conn, "agent.staged", ticket_id, actor, payload, stamp, seal=seal)


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
    seal: AuditSeal | None = None,
) -> tuple[int, str]:
    """Store a review's extra columns and append its audit event, in the caller's transaction.

    Returns the new head (sequence number and hash)."""
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
    return append_event(
        conn,
        f"review.{review['decision']}",
        review["ticket_id"],
        str(review["reviewer"]),
        payload,
        review["decided_at"],
        seal=seal,
    )


# --- reading -----------------------------------------------------------------------------


def read_events(engine: sa.Engine, ticket_id: str | None = None) -> list[dict[str, Any]]:
    """Events in chain order (optionally one ticket's), each with its payload under ``data``."""
    return list(_stream_events(engine, ticket_id))


def _stream_events(
    engine: sa.Engine, ticket_id: str | None = None, *, chain_only: bool = False
) -> Iterator[dict[str, Any]]:
    query = sa.select(audit_events).order_by(audit_events.c.seq)
    if ticket_id is not None:
        query = query.where(audit_events.c.ticket_id == ticket_id)
    if chain_only:
        # Rows past the head are not part of the log (see ``append_event``).
        head = sa.select(audit_head.c.last_seq).where(audit_head.c.id == HEAD_ID)
        query = query.where(audit_events.c.seq <= head.scalar_subquery())
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
    """Write every event of the chain, up to its head, as one CSV row (see :data:`CSV_COLUMNS`);
    returns the row count. Rows past the head are left out: nothing appended them."""
    writer = csv.DictWriter(out, fieldnames=list(CSV_COLUMNS), lineterminator="\n")
    writer.writeheader()
    count = 0
    for event in _stream_events(engine, chain_only=True):
        writer.writerow(csv_row(event, event["data"]))
        count += 1
    return count


def as_utc(value: datetime) -> datetime:
    # SQLite hands back naive datetimes; everything this project writes is UTC.
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _iso(value: datetime) -> str:
    return as_utc(value).astimezone(UTC).isoformat(timespec="microseconds")


def _decode(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def model_usage(conn: sa.Connection, ticket_id: str, attempt: int) -> ModelUsage | None:
    """Sum the model-call records of one attempt, or None when it made no calls."""
    calls = model_calls.c
    row = conn.execute(
        sa.select(
            sa.func.count(),
            sa.func.coalesce(sa.func.sum(calls.prompt_tokens), 0),
            sa.func.coalesce(sa.func.sum(calls.completion_tokens), 0),
            sa.func.count().filter(calls.cache_hit.is_(True)),
        ).where(calls.ticket_id == ticket_id, calls.attempt == attempt)
    ).one()
    if not row[0]:
        return None
    return ModelUsage(int(row[0]), int(row[1]), int(row[2]), int(row[3]))
