"""Model-call records and the response cache: their tables, migration and functions.

A call record holds stage, model, prompt version, tokens, latency, cache hit and retries, and
the prompt and reply only when prompts are traced. Never a key: nothing here ever sees one.
The response cache maps a digest of (prompt version, model, messages) to a validated reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from supportagent.store.tables import metadata

if TYPE_CHECKING:  # the Store imports the migrations, which import this module
    from supportagent.store.store import Store

model_calls = sa.Table(
    "model_calls",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("ticket_id", sa.String(128), nullable=False, index=True),
    sa.Column("attempt", sa.Integer, nullable=False),
    sa.Column("stage", sa.String(32), nullable=False),
    sa.Column("model", sa.String(128), nullable=False),
    sa.Column("prompt", sa.String(64), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("prompt_tokens", sa.Integer, nullable=False),
    sa.Column("completion_tokens", sa.Integer, nullable=False),
    sa.Column("latency_ms", sa.Float, nullable=False),
    sa.Column("cache_hit", sa.Boolean, nullable=False),
    sa.Column("retries", sa.Integer, nullable=False),
    sa.Column("error", sa.Text),
    sa.Column("messages", sa.JSON),  # only with SUPPORTAGENT_TRACE_PROMPTS=1
    sa.Column("reply", sa.Text),  # only with SUPPORTAGENT_TRACE_PROMPTS=1
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

response_cache = sa.Table(
    "response_cache",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("prompt", sa.String(64), nullable=False),
    sa.Column("model", sa.String(128), nullable=False),
    sa.Column("entry", sa.JSON, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

_RECORD_FIELDS = (
    "stage",
    "model",
    "prompt",
    "status",
    "prompt_tokens",
    "completion_tokens",
    "latency_ms",
    "cache_hit",
    "retries",
    "error",
    "messages",
    "reply",
)


def m003_model_calls(conn: sa.Connection) -> None:
    """Model-call records and the response cache."""
    for table in (model_calls, response_cache):
        table.create(conn, checkfirst=True)


def model_call_row(ticket_id: str, attempt: int, call: Mapping[str, Any]) -> dict[str, Any]:
    """The ``model_calls`` row for one call record (the JSON form of ``CallRecord``)."""
    missing = [f for f in _RECORD_FIELDS if f not in call]
    if missing:
        raise ValueError(f"model call record lacks {', '.join(missing)}")
    values = {f: call[f] for f in _RECORD_FIELDS}
    return {"ticket_id": ticket_id, "attempt": attempt, "created_at": datetime.now(UTC), **values}


def record_model_call(store: Store, ticket_id: str, attempt: int, call: Mapping[str, Any]) -> None:
    """Append one call record on its own (the pipeline batches them with its trace)."""
    row = model_call_row(ticket_id, attempt, call)
    with store.begin() as conn:
        conn.execute(model_calls.insert().values(**row))


def model_call_records(
    store: Store, ticket_id: str | None = None, attempt: int | None = None
) -> list[dict[str, Any]]:
    """Call records in the order they were made; optionally of one ticket (and attempt)."""
    query = sa.select(model_calls).order_by(model_calls.c.id)
    if ticket_id is not None:
        query = query.where(model_calls.c.ticket_id == ticket_id)
    if attempt is not None:
        query = query.where(model_calls.c.attempt == attempt)
    with store.engine.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(query)]


def model_call_totals(store: Store, ticket_id: str | None = None) -> dict[str, int]:
    """Calls sent, cache hits, prompt and completion tokens (cache hits spend no tokens)."""
    sent = sa.and_(model_calls.c.cache_hit.is_(False), model_calls.c.status.in_(("ok", "invalid")))
    query = sa.select(
        sa.func.count().filter(sent),
        sa.func.count().filter(model_calls.c.cache_hit.is_(True)),
        sa.func.coalesce(sa.func.sum(model_calls.c.prompt_tokens), 0),
        sa.func.coalesce(sa.func.sum(model_calls.c.completion_tokens), 0),
    )
    if ticket_id is not None:
        query = query.where(model_calls.c.ticket_id == ticket_id)
    with store.engine.connect() as conn:
        calls, hits, prompt, completion = conn.execute(query).one()
    return {
        "calls": int(calls),
        "cache_hits": int(hits),
        "prompt_tokens": int(prompt),
        "completion_tokens": int(completion),
    }


class StoreResponseCache:
    """The response cache in the store; implements ``llm.structured.ResponseCache``."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, key: str) -> dict[str, Any] | None:
        with self.store.engine.connect() as conn:
            entry = conn.execute(
                sa.select(response_cache.c.entry).where(response_cache.c.key == key)
            ).scalar()
        return dict(entry) if entry is not None else None

    def put(self, key: str, entry: Mapping[str, Any]) -> None:
        """Keep ``entry`` under ``key``; when another worker got there first, theirs stays."""
        try:
            with self.store.begin() as conn:
                conn.execute(
                    response_cache.insert().values(
                        key=key,
                        prompt=str(entry.get("prompt", "")),
                        model=str(entry.get("model", "")),
                        entry=dict(entry),
                        created_at=datetime.now(UTC),
                    )
                )
        except sa.exc.IntegrityError:
            pass  # the same question answered twice at once; one answer is enough

    def __len__(self) -> int:
        with self.store.engine.connect() as conn:
            return int(
                conn.execute(sa.select(sa.func.count()).select_from(response_cache)).scalar() or 0
            )
