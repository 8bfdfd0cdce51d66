"""Reads of the SQLite store with the standard library's ``sqlite3``, for a one-shot ``triage``.

A warm one-shot ``triage`` reads the documents (to check that the index on disk is theirs)
and a few cached vectors (the linked questions, the ticket's query), and writes nothing to
the store. Importing SQLAlchemy and building its engine cost more than the rest of those
reads together (docs/scaling.md), so this module reads the same rows with ``sqlite3``, in
read-only mode, and gives them as ``Store`` does. Every write, every migration and every
other database stays with ``Store``: ``open_readonly`` answers None for a database that is
missing, not fully migrated or cannot be opened, and the caller then opens the ``Store``.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from supportagent.domain import DocKind, Document

#: The names of ``migrations.MIGRATIONS``, in order (a test holds the two lists equal): a
#: database that has applied all of them has the columns read here.
MIGRATION_NAMES = (
    "001_initial",
    "002_audit_events",
    "003_model_calls",
    "004_embedding_cache",
    "005_ticket_claims",
    "006_counters",
    "007_audit_seal",
    "008_document_ids",
    "009_escalation_actions",
)
#: Rows per ``IN (...)`` query, as ``embeddings._CHUNK``.
_CHUNK = 400
_FLOAT32 = 4


class ReadOnlyStore:
    """The documents, their revision and the embedding cache of one SQLite file, read only."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        self._conn = connection

    def close(self) -> None:
        self._conn.close()

    @contextlib.contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Cursor]:
        """One read transaction, so that the documents and their revision agree."""
        cursor = self._conn.cursor()
        cursor.execute("BEGIN")
        try:
            yield cursor
        finally:
            cursor.execute("COMMIT")
            cursor.close()

    def documents(self) -> tuple[list[Document], datetime | None, int]:
        """Every document, in ``Store.documents_changed_since(None)``'s order, the newest
        ``added_at`` and the documents' revision counter, read in one transaction."""
        with self._snapshot() as cursor:
            revision = cursor.execute(
                "SELECT value FROM counters WHERE name = 'documents'"
            ).fetchone()
            rows = cursor.execute(
                "SELECT id, kind, title, body, source, linked_docs, meta, added_at "
                "FROM documents ORDER BY added_at, id"
            ).fetchall()
        documents = [
            Document(
                id=doc_id,
                kind=DocKind(kind),
                title=title,
                body=body,
                source=source,
                linked_docs=tuple(_json(linked) or ()),
                meta=dict(_json(meta) or {}),
            )
            for doc_id, kind, title, body, source, linked, meta, _ in rows
        ]
        newest = max((_datetime(row[7]) for row in rows), default=None)
        return documents, newest, int(revision[0])

    def vectors(self, model_id: str, keys: Sequence[str]) -> dict[str, bytes]:
        """The cached vectors among ``keys``, as ``embeddings.get_vectors`` reads them."""
        found: dict[str, bytes] = {}
        for start in range(0, len(keys), _CHUNK):
            chunk = list(keys[start : start + _CHUNK])
            marks = ", ".join("?" * len(chunk))
            rows = self._conn.execute(
                "SELECT content_hash, dimension, vector FROM embedding_cache "
                f"WHERE model_id = ? AND content_hash IN ({marks})",
                [model_id, *chunk],
            )
            for key, dimension, vector in rows:
                blob = bytes(vector)
                if len(blob) == dimension * _FLOAT32:  # anything else is a damaged row: re-embed
                    found[key] = blob
        return found


class ReadOnlyVectorCache:
    """The store's embedding cache for a process that writes nothing to the store.

    A vector it lacks is embedded and used, not stored: on a warm index that is only the
    ticket's own texts, which the next one-shot ``triage`` embeds again (a few ms) rather
    than each run writing to the database. Every vector the store holds is used as is, so a
    search sees the same vectors as one through ``StoreVectorCache``.
    """

    def __init__(self, store: ReadOnlyStore) -> None:
        self._store = store

    def get_many(self, model_id: str, keys: Sequence[str]) -> dict[str, bytes]:
        return self._store.vectors(model_id, keys)

    def put_many(self, model_id: str, vectors: Mapping[str, bytes]) -> None:
        return None  # read only: see the class's docstring


def open_readonly(path: Path) -> ReadOnlyStore | None:
    """The SQLite file at ``path``, opened read only; None when it is missing, when it has not
    applied every migration (``Store.migrate`` must run first) or cannot be read."""
    if not path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
    except sqlite3.Error:
        return None
    try:
        conn.isolation_level = None  # transactions are begun explicitly (``_snapshot``)
        done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
    except sqlite3.Error:
        conn.close()
        return None
    if not set(MIGRATION_NAMES) <= done:
        conn.close()
        return None
    return ReadOnlyStore(conn)


def _json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _datetime(value: str) -> datetime:
    """An ``added_at`` as SQLAlchemy's SQLite ``DateTime`` reads it back."""
    return datetime.fromisoformat(value)
