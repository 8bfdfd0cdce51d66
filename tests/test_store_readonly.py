"""The store read with ``sqlite3`` for a one-shot ``triage`` (``store/readonly.py``): the same
rows as ``Store`` reads, and no read-only path where the store must be written first."""

from __future__ import annotations

from pathlib import Path

import pytest

from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings, load_settings
from supportagent.domain import DocKind, Document
from supportagent.runtime import load_demo, mapped_knowledge, open_store
from supportagent.store.embeddings import get_vectors
from supportagent.store.migrations import MIGRATIONS
from supportagent.store.readonly import MIGRATION_NAMES, open_readonly
from supportagent.store.store import Store


def test_the_reader_knows_every_migration() -> None:
    assert tuple(name for name, _ in MIGRATIONS) == MIGRATION_NAMES


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(home=tmp_path / "home", engine="offline", embedder="none")


def _demo_store(settings: Settings) -> Store:
    store = open_store(settings)
    load_demo(store)
    return store


def test_the_reader_reads_the_documents_and_vectors_as_the_store_does(
    settings: Settings,
) -> None:
    store = _demo_store(settings)
    store.upsert_documents(
        [
            Document(
                "kb-extra",
                DocKind.KB,
                "Ünïcode title",
                "# Extra\n\nA body.",
                linked_docs=("kb-a", "kb-b"),
                meta={"n": 1, "nested": {"x": [1, 2.5, None]}},
            )
        ]
    )
    from supportagent.store.embeddings import put_vectors

    vectors = {"a" * 64: b"\x00" * 16, "b" * 64: b"\x01" * 12}
    put_vectors(store.engine, "model-x", vectors)
    reader = open_readonly(settings.home / "supportagent.db")
    assert reader is not None
    documents, newest, revision = reader.documents()
    expected, expected_newest = store.documents_changed_since(None)
    assert documents == expected
    assert newest == expected_newest
    assert revision == store.document_revision()
    keys = ["a" * 64, "b" * 64, "c" * 64]
    assert reader.vectors("model-x", keys) == get_vectors(store.engine, "model-x", keys)
    assert reader.vectors("model-y", keys) == {}
    reader.close()
    store.close()


def test_no_reader_for_a_missing_or_unmigrated_database(tmp_path: Path) -> None:
    assert open_readonly(tmp_path / "absent.db") is None
    store = Store(f"sqlite:///{tmp_path / 'empty.db'}")
    with store.engine.begin() as conn:  # a database, but not SupportAgent's
        conn.exec_driver_sql("CREATE TABLE other (x INTEGER)")
    store.close()
    assert open_readonly(tmp_path / "empty.db") is None


def test_the_store_is_opened_when_the_index_is_not_that_of_its_documents(
    settings: Settings,
) -> None:
    assert mapped_knowledge(settings) is None  # no database yet
    store = _demo_store(settings)
    assert mapped_knowledge(settings) is None  # no index yet: opening the store builds it
    assert not (settings.home / "index").exists()  # and the read-only try wrote none
    Knowledge.from_store(store, settings)  # builds and saves the index
    warm = mapped_knowledge(settings)
    assert warm is not None
    assert warm.retriever.index_status == "mapped"
    store.upsert_documents([Document("kb-new", DocKind.KB, "New", "# New\n\nNew text.")])
    assert mapped_knowledge(settings) is None  # the documents changed: rebuild through the store
    store.close()


def test_another_database_is_always_read_through_the_store(
    settings: Settings, tmp_path: Path
) -> None:
    other = settings.model_copy(update={"database_url": f"sqlite:///{tmp_path / 'x.db'}"})
    store = _demo_store(other)
    Knowledge.from_store(store, other)
    assert mapped_knowledge(other) is None
    store.close()


def test_a_database_the_reader_cannot_read_is_left_to_the_store(settings: Settings) -> None:
    import sqlite3

    store = _demo_store(settings)
    Knowledge.from_store(store, settings)
    store.close()
    path = settings.home / "supportagent.db"
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE documents RENAME COLUMN meta TO meta_renamed")
    conn.commit()
    conn.close()
    assert mapped_knowledge(settings) is None
