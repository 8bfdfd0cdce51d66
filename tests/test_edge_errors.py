"""Database and environment failures at the edge: one line that says what is wrong and what to
do, exit code 1, no traceback, and never the SQL, its parameters or ticket text.

Each failure is real: a full SQLite database (its page limit lowered), a read-only one, files
that are not or no longer SQLite databases, a PostgreSQL port nobody listens on, a database
that does not exist, a URL that is not one, a data directory that is a file.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from supportagent.cli import app
from supportagent.cli.app import describe_os_failure
from supportagent.domain import Ticket
from supportagent.store import store as store_module
from supportagent.store.failures import describe_database_failure
from supportagent.store.store import Store

runner = CliRunner()
SECRET_TEXT = "Contact my lawyer at 555-0100 about invoice 88812"


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def assert_one_clean_line(code: int, output: str, *words: str) -> None:
    assert code == 1, output
    assert "Traceback" not in output and "[SQL:" not in output and "parameters" not in output
    assert SECRET_TEXT not in output
    lines = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, output
    for word in words:
        assert word in lines[0], output


def inbox(tmp_path: Path, count: int = 1, body: str = SECRET_TEXT) -> Path:
    path = tmp_path / "inbox.jsonl"
    rows = [{"id": f"T-{n}", "subject": "Billing", "body": f"{body} {n}"} for n in range(count)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_full_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert invoke("list-data")[0] == 0  # creates and migrates the store
    pragmas = store_module._sqlite_pragmas

    def tiny(dbapi_conn: Any, record: Any) -> None:
        pragmas(dbapi_conn, record)
        dbapi_conn.execute("PRAGMA max_page_count=1")  # no page beyond what the file has

    monkeypatch.setattr(store_module, "_sqlite_pragmas", tiny)
    code, output = invoke("ingest", "tickets", str(inbox(tmp_path, 200, SECRET_TEXT * 20)))
    assert_one_clean_line(code, output, "is full", "Free some space")


def test_a_read_only_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert invoke("list-data")[0] == 0
    db = tmp_path / "home" / "supportagent.db"
    monkeypatch.setenv("SUPPORTAGENT_DATABASE_URL", f"sqlite:///file:{db}?mode=ro&uri=true")
    code, output = invoke("ingest", "tickets", str(inbox(tmp_path)))
    assert_one_clean_line(code, output, "is read-only", "writable")


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_file_that_is_not_or_no_longer_a_database(tmp_path: Path, damage: str) -> None:
    db = tmp_path / "home" / "supportagent.db"
    if damage == "garbage":
        db.parent.mkdir(parents=True)
        db.write_bytes(b"this is not a database" * 500)
        words: tuple[str, ...] = ("is not a SQLite database",)
    else:
        assert invoke("load-demo")[0] == 0
        # Everything into the main file first: with rows still in the write-ahead log, the cut
        # file can be an older but intact database, and the test would depend on timing.
        with sqlite3.connect(db) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for extra in ("-wal", "-shm"):
            Path(f"{db}{extra}").unlink(missing_ok=True)
        os.truncate(db, db.stat().st_size // 3)
        words = ("is damaged", "backup")
    code, output = invoke("list-data")
    assert_one_clean_line(code, output, str(db), *words)


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("postgresql://bob:hunter2@127.0.0.1:1/x", ["Cannot connect to PostgreSQL", "127.0.0.1:1"]),
        ("notaurl", ["must name a SQLite or PostgreSQL database", "it is not a URL"]),
        ("mysql://root@127.0.0.1/db", ["must name a SQLite or PostgreSQL database", "not mysql"]),
    ],
)
def test_database_urls_that_cannot_work(
    url: str, words: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUPPORTAGENT_DATABASE_URL", url)
    code, output = invoke("list-data")
    assert_one_clean_line(code, output, *words)
    assert "hunter2" not in output


def test_an_unknown_postgresql_database(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = sa.engine.make_url(pg_url).set(database="no_such_database_here")
    monkeypatch.setenv("SUPPORTAGENT_DATABASE_URL", missing.render_as_string(hide_password=False))
    code, output = invoke("list-data")
    assert_one_clean_line(code, output, "PostgreSQL has no database", "createdb")


def test_a_data_directory_that_is_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a folder")
    monkeypatch.setenv("SUPPORTAGENT_HOME", str(home))
    code, output = invoke("list-data")
    assert_one_clean_line(code, output, "is a file, not a folder", "SUPPORTAGENT_HOME")


def test_a_setting_that_does_not_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPPORTAGENT_PORT", "not-a-port")
    code, output = invoke("list-data")
    assert_one_clean_line(code, output, "SUPPORTAGENT_PORT", "valid integer")
    assert "not-a-port" not in output  # the value is never echoed: it could be a key


def test_a_write_refused_mid_run_is_named_without_its_parameters(tmp_path: Path) -> None:
    """A database that refuses the staging insert: the run reports the ticket, not the SQL."""
    assert invoke("ingest", "tickets", str(inbox(tmp_path, 2)))[0] == 0
    store = Store(f"sqlite:///{tmp_path / 'home' / 'supportagent.db'}")
    with store.engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE TRIGGER refuse BEFORE INSERT ON outcomes BEGIN SELECT RAISE(ABORT, 'no'); END"
        )
    store.close()
    code, output = invoke("schedule", "--no-live")
    assert code == 1 and "Traceback" not in output
    assert "[SQL:" not in output and SECRET_TEXT not in output
    assert "T-0:" in output and "supportagent.db failed (SQLITE_CONSTRAINT_TRIGGER)" in output
    # The failed tickets are back in the inbox, not left "in progress".
    code, output = invoke("list-data")
    assert "tickets: new" in output and "in_progress" not in output


def test_the_description_never_repeats_the_statement() -> None:
    engine = sa.create_engine("sqlite://")
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE t (id TEXT PRIMARY KEY)")
        conn.execute(sa.text("INSERT INTO t VALUES (:v)"), {"v": SECRET_TEXT})
    with pytest.raises(sa.exc.IntegrityError) as caught, engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO t VALUES (:v)"), {"v": SECRET_TEXT})
    assert SECRET_TEXT in str(caught.value)  # SQLAlchemy's own message carries the parameters
    message = describe_database_failure(caught.value, "sqlite:////data/x.db")
    assert SECRET_TEXT not in message and "INSERT" not in message
    assert message.startswith("The SQLite database /data/x.db failed (SQLITE_CONSTRAINT")


@pytest.mark.parametrize(
    ("number", "words"),
    [(errno.ENOSPC, "free some space"), (errno.EROFS, "read-only"), (errno.EACCES, "permissions")],
)
def test_operating_system_failures_say_what_to_do(number: int, words: str) -> None:
    message = describe_os_failure(OSError(number, os.strerror(number), "/data/audit.csv"))
    assert "/data/audit.csv" in message and words in message


def test_the_store_rolls_a_failed_write_back(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'x.db'}")
    store.migrate()
    store.add_tickets([Ticket("T-1", "s", "b")])
    with pytest.raises(sa.exc.SQLAlchemyError), store.begin() as conn:
        conn.exec_driver_sql("UPDATE tickets SET subject = 'changed'")
        conn.exec_driver_sql("INSERT INTO nothing VALUES (1)")
    assert store.get_ticket("T-1").subject == "s"
    store.close()
