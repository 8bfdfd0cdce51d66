"""Migrations: processes starting together on a new database migrate it once, without errors."""

from __future__ import annotations

import multiprocessing
import queue
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from supportagent.domain import Bucket, DocKind, Draft, DraftSentence, Outcome, Status, Ticket
from supportagent.review import approve
from supportagent.store import tables as t
from supportagent.store.migrations import MIGRATIONS, migrate
from supportagent.store.store import Store

PROCESSES = 4
ROUNDS = 3


def _start(urls: list[str], barrier: Any, results: Any) -> None:
    """Open each new database at the same moment as the other processes."""
    for url in urls:
        try:
            barrier.wait(timeout=120)
            store = Store(url)
            store.migrate()
            store.close()
            results.put(("ok", ""))
        except Exception as exc:
            results.put(("error", f"{type(exc).__name__}: {exc}"))


def _race(urls: list[str]) -> list[tuple[str, str]]:
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(PROCESSES), ctx.Queue()
    procs = [ctx.Process(target=_start, args=(urls, barrier, results)) for _ in range(PROCESSES)]
    for proc in procs:
        proc.start()
    try:
        return [results.get(timeout=300) for _ in range(PROCESSES * len(urls))]
    except queue.Empty:
        pytest.fail("the processes did not finish")
    finally:
        for proc in procs:
            proc.join(timeout=60)


def _applied(url: str) -> list[str]:
    engine = sa.create_engine(url)
    with engine.connect() as conn:
        names = list(conn.execute(sa.select(t.schema_migrations.c.name)).scalars())
    engine.dispose()
    return sorted(names)


def test_four_processes_starting_on_new_sqlite_files_all_succeed(tmp_path: Path) -> None:
    urls = [f"sqlite:///{tmp_path / f'race-{n}.db'}" for n in range(ROUNDS)]
    assert _race(urls) == [("ok", "")] * (PROCESSES * ROUNDS)
    for url in urls:
        assert _applied(url) == sorted(name for name, _ in MIGRATIONS)


def test_four_processes_starting_on_a_new_postgresql_database_all_succeed(pg_url: str) -> None:
    assert _race([pg_url]) == [("ok", "")] * PROCESSES
    assert _applied(pg_url) == sorted(name for name, _ in MIGRATIONS)


def test_an_up_to_date_database_migrates_without_taking_the_writer_lock(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'busy.db'}"
    Store(url).migrate()
    holder = sa.create_engine(url)
    impatient = sa.create_engine(url, connect_args={"timeout": 0.1})
    with holder.connect() as conn:
        conn.exec_driver_sql("BEGIN IMMEDIATE")  # another process is writing
        assert migrate(impatient) == []  # would fail after 0.1 s if it waited for the lock
        conn.exec_driver_sql("ROLLBACK")
    holder.dispose()
    impatient.dispose()


def _approve_long_id(store: Store) -> str:
    ticket_id = "T" * 128  # the longest id ingest accepts: its answer record is "AR-" + 131
    store.add_tickets([Ticket(ticket_id, "Import", "How do I import contacts?")])
    attempt = store.begin_attempt(ticket_id)
    draft = Draft((DraftSentence("Upload the CSV.", ("kb-x#import",)),), 0.7)
    outcome = Outcome(
        ticket_id, Status.PENDING_REVIEW, "drafted", Bucket.ANSWERABLE, draft, None, (), "offline"
    )
    store.stage_outcome(outcome, attempt)
    return str(approve(store, None, ticket_id, reviewer="ana").resolved_doc_id)


def test_the_answer_to_a_ticket_with_the_longest_id_is_stored_on_both(any_store: Store) -> None:
    doc_id = _approve_long_id(any_store)
    assert len(doc_id) == 131 and any_store.documents(DocKind.RESOLVED)[0].id == doc_id


def test_migration_008_widens_an_older_postgresql_database(pg_url: str) -> None:
    store = Store(pg_url)
    store.migrate()
    with store.engine.begin() as conn:  # as 001 created it before 008 existed
        conn.execute(sa.text("ALTER TABLE documents ALTER COLUMN id TYPE VARCHAR(128)"))
        conn.execute(sa.text("ALTER TABLE reviews ALTER COLUMN resolved_doc_id TYPE VARCHAR(128)"))
        conn.execute(
            t.schema_migrations.delete().where(t.schema_migrations.c.name == "008_document_ids")
        )
    assert store.migrate() == ["008_document_ids"]
    assert len(_approve_long_id(store)) == 131
    store.close()
