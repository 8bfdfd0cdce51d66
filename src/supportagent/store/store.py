"""The Store: every read and write of tickets, documents, outcomes, traces and reviews."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa

from supportagent.domain import (
    DocKind,
    Document,
    Outcome,
    Status,
    Ticket,
    TraceEvent,
)
from supportagent.errors import ConflictError, NotFoundError
from supportagent.store import tables as t
from supportagent.store.audit import ReviewDetails, record_review_decision, record_staged
from supportagent.store.audit_payload import StagedAttempt, usage_of
from supportagent.store.audit_seal import AuditSeal
from supportagent.store.claims import StaleAttemptError, ticket_claims
from supportagent.store.documents import DocumentClash, write_documents
from supportagent.store.llm_records import model_call_row, model_calls
from supportagent.store.migrations import migrate
from supportagent.store.records import AttemptHistory, TraceBatch
from supportagent.store.serde import (
    draft_to_json,
    safety_to_json,
    trace_event_row,
    trace_event_to_json,
)


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class StagedRecord:
    """A ticket with its latest staged outcome, as the review queue and the UI show it."""

    ticket: Ticket
    outcome_id: int
    attempt: int
    status: Status
    reason_code: str
    bucket: str | None
    engine: str
    draft: dict[str, Any] | None
    safety: dict[str, Any] | None
    staged_at: datetime


@dataclass(frozen=True, slots=True)
class AddReport:
    added: int
    updated: int
    skipped_existing: tuple[str, ...]
    #: Documents not written: they would have replaced one they must not silently replace.
    refused: tuple[DocumentClash, ...] = ()
    #: Documents written over such a one, on request (``replace=True``), each audited.
    replaced: tuple[DocumentClash, ...] = ()


class BundleRefused(Exception):
    """Raised inside :meth:`Store.add_bundle` to roll it back; ``clashes`` says why."""

    def __init__(self, clashes: tuple[DocumentClash, ...]) -> None:
        super().__init__(f"{len(clashes)} document(s) would replace others")
        self.clashes = clashes


class Store:
    """SQLAlchemy Core over SQLite (default) or PostgreSQL."""

    def __init__(self, url: str, audit: AuditSeal | None = None) -> None:
        kwargs: dict[str, Any] = {}
        if url.startswith("sqlite"):
            kwargs["connect_args"] = {"timeout": 30, "check_same_thread": False}
        if url in {"sqlite://", "sqlite:///:memory:"}:
            # One shared connection, or every checkout would see a new empty database.
            kwargs["poolclass"] = sa.pool.StaticPool
        self.engine = sa.create_engine(url, **kwargs)
        #: Held around every write transaction. SQLite admits one writer at a time, and its own
        #: busy wait sleeps up to 100 ms between tries, so threads that write often (a scheduler
        #: running many tickets) queue on this lock instead. PostgreSQL needs no such thing.
        self.write_lock: AbstractContextManager[Any] = contextlib.nullcontext()
        if url.startswith("sqlite"):
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
            self.write_lock = threading.RLock()
        self.url = url
        #: The key and head file that seal the audit chain (``store/audit_seal.py``).
        self.audit = audit or AuditSeal()

    @contextlib.contextmanager
    def begin(self) -> Iterator[sa.Connection]:
        """A write transaction: commits when the block ends, rolls back if it raises."""
        with self.write_lock, self.engine.begin() as conn:
            yield conn

    def migrate(self) -> list[str]:
        return migrate(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    # --- tickets -------------------------------------------------------------------------

    def add_tickets(self, tickets: Sequence[Ticket]) -> AddReport:
        """Insert new tickets in one transaction; ids already in the store are skipped."""
        with self.begin() as conn:
            return self._insert_tickets(conn, tickets)

    def add_bundle(
        self, docs: Sequence[Document], tickets: Sequence[Ticket], *, replace: bool = False
    ) -> tuple[AddReport, AddReport]:
        """Documents and tickets in one transaction, all or nothing (``ingest folder``).

        A document that would silently replace one it must not (see :meth:`upsert_documents`)
        rolls everything back: :class:`BundleRefused` names the clashes. Tickets already in
        the store are skipped, as :meth:`add_tickets` does.
        """
        with self.begin() as conn:
            written = write_documents(conn, docs, replace=replace, actor="ingest", seal=self.audit)
            if written.refused:
                raise BundleRefused(written.refused)
            if written.added or written.updated:
                _bump_documents(conn)
            ticket_report = self._insert_tickets(conn, tickets)
        if written.head is not None:
            self.audit.note(*written.head)
        doc_report = AddReport(written.added, written.updated, (), replaced=written.replaced)
        return doc_report, ticket_report

    def _insert_tickets(self, conn: sa.Connection, tickets: Sequence[Ticket]) -> AddReport:
        now = _now()
        existing = self._existing_ids(conn, t.tickets, [tk.id for tk in tickets])
        rows = [
            {
                "id": tk.id,
                "subject": tk.subject,
                "body": tk.body,
                "priority": tk.priority,
                "customer": tk.customer,
                "created_at": tk.created_at,
                "received_at": now,
                "status": Status.NEW.value,
                "attempts": 0,
                "updated_at": now,
            }
            for tk in tickets
            if tk.id not in existing
        ]
        if rows:
            conn.execute(t.tickets.insert(), rows)
        skipped = tuple(tk.id for tk in tickets if tk.id in existing)
        return AddReport(added=len(rows), updated=0, skipped_existing=skipped)

    def get_ticket(self, ticket_id: str) -> Ticket:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(t.tickets).where(t.tickets.c.id == ticket_id)).first()
        if row is None:
            raise NotFoundError(
                f"No ticket with id {ticket_id!r}. `supportagent list-data` lists them."
            )
        return _ticket(row._mapping)

    def ticket_status(self, ticket_id: str) -> Status:
        with self.engine.connect() as conn:
            status = conn.execute(
                sa.select(t.tickets.c.status).where(t.tickets.c.id == ticket_id)
            ).scalar()
        if status is None:
            raise NotFoundError(f"No ticket with id {ticket_id!r}.")
        return Status(status)

    def list_tickets(self, statuses: Iterable[Status] | None = None) -> list[tuple[Ticket, Status]]:
        query = sa.select(t.tickets).order_by(
            t.tickets.c.priority.desc(), t.tickets.c.received_at, t.tickets.c.id
        )
        if statuses is not None:
            query = query.where(t.tickets.c.status.in_([s.value for s in statuses]))
        with self.engine.connect() as conn:
            return [(_ticket(r._mapping), Status(r.status)) for r in conn.execute(query)]

    def unhandled_ticket_ids(self) -> list[str]:
        """Tickets the agent has not staged yet, most urgent and oldest first."""
        query = (
            sa.select(t.tickets.c.id)
            .where(t.tickets.c.status.in_([Status.NEW.value, Status.IN_PROGRESS.value]))
            .order_by(t.tickets.c.priority.desc(), t.tickets.c.received_at, t.tickets.c.id)
        )
        with self.engine.connect() as conn:
            return list(conn.execute(query).scalars())

    def status_counts(self) -> dict[str, int]:
        query = sa.select(t.tickets.c.status, sa.func.count()).group_by(t.tickets.c.status)
        with self.engine.connect() as conn:
            return {status: count for status, count in conn.execute(query).all()}

    def begin_attempt(self, ticket_id: str) -> int:
        """Mark a ticket in progress and return the number of this attempt (1-based)."""
        with self.begin() as conn:
            row = conn.execute(
                sa.select(t.tickets.c.attempts).where(t.tickets.c.id == ticket_id)
            ).first()
            if row is None:
                raise NotFoundError(f"No ticket with id {ticket_id!r}.")
            attempt = int(row.attempts) + 1
            conn.execute(
                t.tickets.update()
                .where(t.tickets.c.id == ticket_id)
                .values(attempts=attempt, status=Status.IN_PROGRESS.value, updated_at=_now())
            )
        return attempt

    # --- documents -----------------------------------------------------------------------

    def upsert_documents(
        self, docs: Sequence[Document], *, replace: bool = False, actor: str = "ingest"
    ) -> AddReport:
        """Insert or replace documents by id, all in one transaction.

        A document of another kind, or an answer a reviewer approved, is never replaced
        silently: such documents are refused (``AddReport.refused``), or with ``replace``
        written over it with an audit event each, naming ``actor``.
        """
        with self.begin() as conn:
            written = write_documents(conn, docs, replace=replace, actor=actor, seal=self.audit)
            if written.added or written.updated:
                _bump_documents(conn)
        if written.head is not None:
            self.audit.note(*written.head)
        return AddReport(
            added=written.added,
            updated=written.updated,
            skipped_existing=(),
            refused=written.refused,
            replaced=written.replaced,
        )

    def documents(self, kind: DocKind | None = None) -> list[Document]:
        query = sa.select(t.documents).order_by(t.documents.c.id)
        if kind is not None:
            query = query.where(t.documents.c.kind == kind.value)
        with self.engine.connect() as conn:
            return [_document(r._mapping) for r in conn.execute(query)]

    def documents_changed_since(
        self, since: datetime | None
    ) -> tuple[list[Document], datetime | None]:
        """Documents added or replaced at or after ``since`` (all when None), and the newest time.

        A process's search index polls this to pick up what other processes added (an answer
        approved in the web app, a KB re-ingest) without a restart. ``>=`` rather than ``>``,
        because two writes can share a timestamp; re-adding an unchanged document is a no-op.
        """
        query = sa.select(t.documents).order_by(t.documents.c.added_at, t.documents.c.id)
        if since is not None:
            query = query.where(t.documents.c.added_at >= since)
        with self.engine.connect() as conn:
            rows = [r._mapping for r in conn.execute(query)]
        newest = max((r["added_at"] for r in rows), default=since)
        return [_document(r) for r in rows], newest

    def document_revision(self) -> int:
        """A number that goes up with every document write: one row to poll for changes."""
        with self.engine.connect() as conn:
            return int(
                conn.execute(
                    sa.select(t.counters.c.value).where(t.counters.c.name == "documents")
                ).scalar_one()
            )

    def document_counts(self) -> dict[str, int]:
        query = sa.select(t.documents.c.kind, sa.func.count()).group_by(t.documents.c.kind)
        with self.engine.connect() as conn:
            return {kind: count for kind, count in conn.execute(query).all()}

    # --- traces and outcomes -------------------------------------------------------------

    def append_trace(self, batch: TraceBatch) -> None:
        """Append a batch of trace events and model-call records in one transaction."""
        if batch.events or batch.model_calls:
            with self.begin() as conn:
                _write_trace(conn, batch)

    def stage_outcome(
        self,
        outcome: Outcome,
        attempt: int,
        trace: TraceBatch | None = None,
        history: AttemptHistory | None = None,
    ) -> int:
        """Store the outcome and move the ticket to its status, atomically; returns the row id.

        ``trace``: the attempt's last trace events and call records, committed with the outcome
        (the audit event that staging appends covers the whole trace). ``history``: all of the
        attempt's events and call records, when the caller holds them, so that the audit event
        is built without reading them back.
        Staging releases the attempt's claim in the same transaction.
        Raises StaleAttemptError (and stores nothing) when ``attempt`` is no longer the ticket's
        latest: its claim expired and another worker took the ticket over.
        """
        with self.begin() as conn:
            if trace is not None:
                _write_trace(conn, trace)
            row = {
                "ticket_id": outcome.ticket_id,
                "attempt": attempt,
                "status": outcome.status.value,
                "reason_code": outcome.reason_code,
                "bucket": outcome.bucket.value if outcome.bucket else None,
                "engine": outcome.engine,
                "draft": draft_to_json(outcome.draft) if outcome.draft else None,
                "safety": safety_to_json(outcome.safety) if outcome.safety else None,
                "staged_at": _now(),
            }
            result = conn.execute(t.outcomes.insert(), row)
            # The attempt number is the fencing token: a newer claim or attempt wins.
            fenced = conn.execute(
                t.tickets.update()
                .where(t.tickets.c.id == outcome.ticket_id, t.tickets.c.attempts == attempt)
                .values(status=outcome.status.value, updated_at=_now())
            )
            if fenced.rowcount != 1:
                raise StaleAttemptError(outcome.ticket_id, attempt)
            # Staging ends the attempt: its claim (if a scheduler holds one) goes with it.
            conn.execute(
                ticket_claims.delete().where(
                    ticket_claims.c.ticket_id == outcome.ticket_id,
                    ticket_claims.c.attempt == attempt,
                )
            )
            key = result.inserted_primary_key
            assert key is not None
            outcome_id = int(key[0])
            staged = None
            if history is not None:
                staged = StagedAttempt(
                    {**row, "id": outcome_id},
                    [trace_event_row(event) for event in history.events],
                    usage_of(history.model_calls),
                )
            # The decision joins the audit log in the same transaction.
            head = record_staged(conn, outcome_id, staged=staged, seal=self.audit)
        self.audit.note(*head)
        return outcome_id

    def trace(self, ticket_id: str, attempt: int | None = None) -> list[dict[str, Any]]:
        """The trace of one attempt (default: the latest) as JSON-ready dicts."""
        if attempt is None:
            attempt = self._latest_attempt(ticket_id)
        query = (
            sa.select(t.trace_events)
            .where(t.trace_events.c.ticket_id == ticket_id, t.trace_events.c.attempt == attempt)
            .order_by(t.trace_events.c.seq)
        )
        with self.engine.connect() as conn:
            return [
                trace_event_to_json(
                    TraceEvent(r.stage, r.status, dict(r.detail), float(r.duration_ms))
                )
                for r in conn.execute(query)
            ]

    def latest_outcome(self, ticket_id: str) -> StagedRecord | None:
        records = self._staged(t.outcomes.c.ticket_id == ticket_id, latest_only=True)
        return records[0] if records else None

    def staged(self, status: Status | None = None, limit: int | None = None) -> list[StagedRecord]:
        """Latest outcome per ticket, newest first; optionally only tickets in ``status``."""
        where = t.tickets.c.status == status.value if status else sa.true()
        return self._staged(where, latest_only=True, limit=limit)

    def _staged(
        self, where: sa.ColumnElement[bool], latest_only: bool, limit: int | None = None
    ) -> list[StagedRecord]:
        latest = (
            sa.select(t.outcomes.c.ticket_id, sa.func.max(t.outcomes.c.attempt).label("attempt"))
            .group_by(t.outcomes.c.ticket_id)
            .subquery()
        )
        query = (
            sa.select(t.outcomes, t.tickets)
            .join(t.tickets, t.tickets.c.id == t.outcomes.c.ticket_id)
            .join(
                latest,
                sa.and_(
                    latest.c.ticket_id == t.outcomes.c.ticket_id,
                    latest.c.attempt == t.outcomes.c.attempt,
                ),
            )
            .where(where)
            .order_by(t.outcomes.c.staged_at.desc(), t.outcomes.c.id.desc())
        )
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        records = []
        for row in rows:
            m = row._mapping
            records.append(
                StagedRecord(
                    ticket=_ticket({c.name: m[t.tickets.c[c.name]] for c in t.tickets.columns}),
                    outcome_id=int(m[t.outcomes.c.id]),
                    attempt=int(m[t.outcomes.c.attempt]),
                    status=Status(m[t.tickets.c.status]),
                    reason_code=m[t.outcomes.c.reason_code],
                    bucket=m[t.outcomes.c.bucket],
                    engine=m[t.outcomes.c.engine],
                    draft=m[t.outcomes.c.draft],
                    safety=m[t.outcomes.c.safety],
                    staged_at=m[t.outcomes.c.staged_at],
                )
            )
        return records

    def _latest_attempt(self, ticket_id: str) -> int:
        with self.engine.connect() as conn:
            attempt = conn.execute(
                sa.select(sa.func.max(t.trace_events.c.attempt)).where(
                    t.trace_events.c.ticket_id == ticket_id
                )
            ).scalar()
        if attempt is None:
            self.get_ticket(ticket_id)  # raises NotFoundError for an unknown id
            return 0
        return int(attempt)

    # --- reviews -------------------------------------------------------------------------

    def record_review(
        self,
        ticket_id: str,
        decision: str,
        new_status: Status,
        reviewer: str,
        final_text: str | None,
        reason: str | None,
        resolved_doc: Document | None,
        *,
        details: ReviewDetails | None = None,
    ) -> int:
        """Record a decision on the pending draft, its resolved record and its audit event,
        atomically. ``details``: the original draft, the edit, or an existing record to link.

        The status update is conditional on ``pending_review``, so of two reviewers deciding at
        once exactly one wins; the other gets a ConflictError.
        """
        now = _now()
        with self.begin() as conn:
            changed = conn.execute(
                t.tickets.update()
                .where(
                    t.tickets.c.id == ticket_id,
                    t.tickets.c.status == Status.PENDING_REVIEW.value,
                )
                .values(status=new_status.value, updated_at=now)
            ).rowcount
            if changed != 1:
                status = conn.execute(
                    sa.select(t.tickets.c.status).where(t.tickets.c.id == ticket_id)
                ).scalar()
                if status is None:
                    raise NotFoundError(f"No ticket with id {ticket_id!r}.")
                last = conn.execute(
                    sa.select(t.reviews.c.reviewer, t.reviews.c.decided_at)
                    .where(t.reviews.c.ticket_id == ticket_id)
                    .order_by(t.reviews.c.id.desc())
                ).first()
                by = (
                    f" (decided by {last.reviewer} at {last.decided_at:%Y-%m-%d %H:%M:%S} UTC)"
                    if last is not None
                    else ""
                )
                raise ConflictError(
                    f"Ticket {ticket_id} is {status}, not pending_review{by}: "
                    "only a pending draft can be reviewed, and only once."
                )
            outcome_id = conn.execute(
                sa.select(sa.func.max(t.outcomes.c.id)).where(t.outcomes.c.ticket_id == ticket_id)
            ).scalar()
            linked = details.linked_doc_id if details else None
            if resolved_doc is not None:
                if conn.execute(
                    sa.select(t.documents.c.id).where(t.documents.c.id == resolved_doc.id)
                ).first():
                    raise ConflictError(
                        f"A document with id {resolved_doc.id} already exists; "
                        "re-ingest it under another id, then review again."
                    )
                conn.execute(
                    t.documents.insert().values(
                        id=resolved_doc.id,
                        kind=resolved_doc.kind.value,
                        title=resolved_doc.title,
                        body=resolved_doc.body,
                        source=resolved_doc.source,
                        linked_docs=list(resolved_doc.linked_docs),
                        meta=resolved_doc.meta,
                        added_at=now,
                    )
                )
                _bump_documents(conn)
            review = {
                "outcome_id": outcome_id,
                "ticket_id": ticket_id,
                "decision": decision,
                "reviewer": reviewer,
                "final_text": final_text,
                "reason": reason,
                "resolved_doc_id": resolved_doc.id if resolved_doc else linked,
                "decided_at": now,
            }
            result = conn.execute(t.reviews.insert().values(**review))
            key = result.inserted_primary_key
            assert key is not None
            review_id = int(key[0])
            head = record_review_decision(
                conn, review_id, review, details, resolved_doc is not None, seal=self.audit
            )
        self.audit.note(*head)
        return review_id

    def reviews(self, ticket_id: str | None = None) -> list[dict[str, Any]]:
        query = sa.select(t.reviews).order_by(t.reviews.c.id)
        if ticket_id is not None:
            query = query.where(t.reviews.c.ticket_id == ticket_id)
        with self.engine.connect() as conn:
            return [dict(r._mapping) for r in conn.execute(query)]

    # --- helpers -------------------------------------------------------------------------

    @staticmethod
    def _existing_ids(conn: sa.Connection, table: sa.Table, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            found.update(conn.execute(sa.select(table.c.id).where(table.c.id.in_(chunk))).scalars())
        return found


def _write_trace(conn: sa.Connection, batch: TraceBatch) -> None:
    now = _now()
    if batch.events:
        conn.execute(
            t.trace_events.insert(),
            [
                {
                    "ticket_id": batch.ticket_id,
                    "attempt": batch.attempt,
                    "seq": seq,
                    "created_at": now,
                    **trace_event_row(event),
                }
                for seq, event in batch.events
            ],
        )
    if batch.model_calls:
        conn.execute(
            model_calls.insert(),
            [model_call_row(batch.ticket_id, batch.attempt, call) for call in batch.model_calls],
        )


def _bump_documents(conn: sa.Connection) -> None:
    conn.execute(
        t.counters.update()
        .where(t.counters.c.name == "documents")
        .values(value=t.counters.c.value + 1)
    )


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    # The busy timeout first: switching a new file to WAL needs its lock, and processes that
    # start together on one new file must wait for each other there too.
    cursor.execute("PRAGMA busy_timeout=30000")
    _set_wal(cursor)
    # In WAL mode NORMAL never corrupts the database and loses nothing when a process dies;
    # only an OS crash or power cut can undo the last commits. FULL would fsync every commit,
    # which was a third of a ticket's time outside the model (docs/scaling.md).
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _set_wal(cursor: Any, attempts: int = 50) -> None:
    """``journal_mode=WAL``, retried: while another process opens the same new file, SQLite
    may answer "database is locked" at once, without waiting the busy timeout."""
    for attempt in range(attempts):
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.05 * (attempt + 1))


def _ticket(m: Any) -> Ticket:
    return Ticket(
        id=m["id"],
        subject=m["subject"],
        body=m["body"],
        priority=int(m["priority"]),
        customer=m["customer"],
        created_at=m["created_at"],
    )


def _document(m: Any) -> Document:
    return Document(
        id=m["id"],
        kind=DocKind(m["kind"]),
        title=m["title"],
        body=m["body"],
        source=m["source"],
        linked_docs=tuple(m["linked_docs"] or ()),
        meta=dict(m["meta"] or {}),
    )
