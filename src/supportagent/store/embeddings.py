"""The embedding cache: vectors kept by (model id, sha256 of the text), so text is embedded once.

A vector is stored as the raw bytes of a float32 array with its dimension beside it. The
retrieval layer never imports the store; it gets a ``StoreVectorCache``, which has the
``get_many`` / ``put_many`` pair that ``retrieval.dense.VectorCache`` describes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import sqlalchemy as sa

from supportagent.store.tables import metadata, upsert_insert

if TYPE_CHECKING:  # the Store imports the migrations, which import this module
    from supportagent.store.store import Store

embedding_cache = sa.Table(
    "embedding_cache",
    metadata,
    sa.Column("model_id", sa.String(200), primary_key=True),
    sa.Column("content_hash", sa.String(64), primary_key=True),
    sa.Column("dimension", sa.Integer, nullable=False),
    sa.Column("vector", sa.LargeBinary, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)

#: Rows per statement, well under SQLite's limit on bound parameters.
_CHUNK = 400
_FLOAT32 = 4


def m004_embedding_cache(conn: sa.Connection) -> None:
    """The embedding cache table."""
    embedding_cache.create(conn, checkfirst=True)


def get_vectors(engine: sa.Engine, model_id: str, keys: Sequence[str]) -> dict[str, bytes]:
    """The cached vectors among ``keys`` for ``model_id`` (missing keys are left out)."""
    found: dict[str, bytes] = {}
    table = embedding_cache
    with engine.connect() as conn:
        for start in range(0, len(keys), _CHUNK):
            chunk = list(keys[start : start + _CHUNK])
            rows = conn.execute(
                sa.select(table.c.content_hash, table.c.dimension, table.c.vector).where(
                    table.c.model_id == model_id, table.c.content_hash.in_(chunk)
                )
            )
            for key, dimension, vector in rows:
                blob = bytes(vector)
                if len(blob) == dimension * _FLOAT32:  # anything else is a damaged row: re-embed
                    found[key] = blob
    return found


def put_vectors(engine: sa.Engine, model_id: str, vectors: Mapping[str, bytes]) -> None:
    """Store vectors (float32 bytes); a key already cached keeps its first vector."""
    if not vectors:
        return
    now = datetime.now(UTC)
    rows = []
    for key, blob in vectors.items():
        if len(blob) % _FLOAT32:
            raise ValueError(f"vector for {key} is {len(blob)} bytes, not float32 values")
        rows.append(
            {
                "model_id": model_id,
                "content_hash": key,
                "dimension": len(blob) // _FLOAT32,
                "vector": blob,
                "created_at": now,
            }
        )
    insert = upsert_insert(engine.dialect.name)
    with engine.begin() as conn:
        for start in range(0, len(rows), _CHUNK):
            statement = insert(embedding_cache).on_conflict_do_nothing(
                index_elements=["model_id", "content_hash"]
            )
            conn.execute(statement, rows[start : start + _CHUNK])


def count_vectors(engine: sa.Engine, model_id: str | None = None) -> int:
    """How many vectors the cache holds, for one model or for all."""
    query = sa.select(sa.func.count()).select_from(embedding_cache)
    if model_id is not None:
        query = query.where(embedding_cache.c.model_id == model_id)
    with engine.connect() as conn:
        return int(conn.execute(query).scalar_one())


class StoreVectorCache:
    """The store's embedding cache, in the shape ``retrieval.dense.VectorCache`` asks for."""

    def __init__(self, store: Store) -> None:
        self._engine = store.engine

    def get_many(self, model_id: str, keys: Sequence[str]) -> dict[str, bytes]:
        return get_vectors(self._engine, model_id, keys)

    def put_many(self, model_id: str, vectors: Mapping[str, bytes]) -> None:
        put_vectors(self._engine, model_id, vectors)
