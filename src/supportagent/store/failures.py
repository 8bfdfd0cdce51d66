"""Database failures in words: what is wrong and what to do, in one line, for the edge to print.

SQLAlchemy's own message carries the SQL statement and its parameters, which hold ticket text;
nothing here ever repeats it. The SQLite result code (``sqlite_errorname``) and PostgreSQL's
SQLSTATE decide the message. A connection that PostgreSQL refuses has no SQLSTATE, so there
the first line of libpq's message (which names the server, never data) is shown.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import sqlalchemy as sa

_SQLITE: dict[str, str] = {
    "SQLITE_FULL": "{where} is full: the disk has no space left. Free some space and run "
    "again (the failed write was rolled back)",
    "SQLITE_READONLY": "{where} is read-only. Make the file and its folder writable (SQLite "
    "also writes -wal and -shm files beside it), or set SUPPORTAGENT_HOME to a writable folder",
    "SQLITE_CANTOPEN": "cannot open {where}. Check that its folder exists and is writable "
    "(SUPPORTAGENT_HOME)",
    "SQLITE_NOTADB": "{where} is not a SQLite database. Point SUPPORTAGENT_HOME at the right "
    "folder, or move the file away to start afresh",
    "SQLITE_CORRUPT": "{where} is damaged (corrupt or cut short). Restore it from a backup "
    "(`sqlite3 FILE .recover` may save what is left), or move it away to start afresh",
    "SQLITE_BUSY": "{where} stayed locked by another process for 30 seconds. Run again when "
    "that process has finished",
    "SQLITE_LOCKED": "{where} stayed locked by another process for 30 seconds. Run again when "
    "that process has finished",
    "SQLITE_IOERR_SHORT_READ": "{where} is damaged (cut short: it ends before its own pages "
    "do). Restore it from a backup, or move it away to start afresh",
    "SQLITE_IOERR": "the disk failed while reading or writing {where} (an input/output error). "
    "Check the disk and the file system, then run again",
    "SQLITE_PERM": "{where} may not be opened by this user. Fix the file's permissions",
    "SQLITE_NOMEM": "SQLite ran out of memory on {where}. Free some memory and run again",
}

#: PostgreSQL SQLSTATE codes, or their two-character class, and what to say.
_POSTGRES: dict[str, str] = {
    "3D000": "PostgreSQL has no database named in SUPPORTAGENT_DATABASE_URL ({where}). Create "
    "it (createdb NAME) or fix the URL",
    "28P01": "PostgreSQL refused the login at {where}: check the user and password in "
    "SUPPORTAGENT_DATABASE_URL",
    "28000": "PostgreSQL refused the login at {where}: check the user in "
    "SUPPORTAGENT_DATABASE_URL and the server's pg_hba.conf",
    "53100": "the PostgreSQL server at {where} is out of disk space. Free some space and run "
    "again (the failed write was rolled back)",
    "53200": "the PostgreSQL server at {where} is out of memory. Run again later",
    "53300": "the PostgreSQL server at {where} has no connection slot free. Stop some "
    "processes or raise max_connections",
    "25006": "the PostgreSQL server at {where} is read-only (a standby, or "
    "default_transaction_read_only). Point SUPPORTAGENT_DATABASE_URL at the primary",
    "42501": "the PostgreSQL user in SUPPORTAGENT_DATABASE_URL lacks a permission it needs on "
    "{where}. Grant it rights on the database (or use the database's owner)",
    "57P01": "the PostgreSQL server at {where} shut down. Run again once it is back",
    "57P02": "the PostgreSQL server at {where} crashed. Run again once it is back",
    "57P03": "the PostgreSQL server at {where} is starting up or shutting down. Run again in "
    "a moment",
    "08": "the connection to PostgreSQL at {where} was lost. Run again once the server is "
    "reachable",
    "22001": "a value was longer than its column in PostgreSQL at {where} allows. Shorten "
    "it (the failed write was rolled back)",
    "22021": "a value was not valid text for PostgreSQL at {where} (a NUL character or a "
    "bad encoding). Remove it from the input",
}
_CONNECTION_HINTS = (
    ('role "', "28000"),
    ("password authentication failed", "28P01"),
    ("no pg_hba.conf entry", "28000"),
    ("does not exist", "3D000"),
)


def describe_database_failure(exc: BaseException, url: str) -> str:
    """One line for a failure of the database at ``url``: what is wrong and what to do."""
    where = describe_database(url)
    if isinstance(exc, sa.exc.ArgumentError | sa.exc.NoSuchModuleError):
        return (
            f"SUPPORTAGENT_DATABASE_URL is not a database URL SupportAgent can use ({where}): "
            "give sqlite:///PATH or postgresql://USER@HOST:PORT/NAME"
        )
    orig: Any = getattr(exc, "orig", None)
    if isinstance(orig, sqlite3.Error):
        return _sqlite(orig, where)
    sqlstate = getattr(orig, "sqlstate", None)
    if sqlstate is None and isinstance(exc, sa.exc.OperationalError) and _is_postgres(url):
        return _refused_connection(str(orig), where)
    if isinstance(sqlstate, str):
        template = _POSTGRES.get(sqlstate) or _POSTGRES.get(sqlstate[:2])
        if template is not None:
            return _sentence(template.format(where=where))
        return _sentence(
            f"PostgreSQL at {where} refused a statement (error {sqlstate}, "
            f"{type(orig).__name__}); the failed write was rolled back. If it happens again, "
            "report it with this line"
        )
    kind = type(orig).__name__ if orig is not None else type(exc).__name__
    return _sentence(
        f"the database ({where}) failed ({kind}); the failed write was rolled back. If it "
        "happens again, report it with this line"
    )


def describe_database(url: str) -> str:
    """Which database ``url`` names, without user or password: a file, or host, port and name
    (the only other backend that gets this far is PostgreSQL)."""
    try:
        parsed = sa.engine.make_url(url)
    except sa.exc.ArgumentError:
        return "an unreadable URL"
    if parsed.get_backend_name() == "sqlite":
        return f"the SQLite database {parsed.database or '(in memory)'}"
    host = parsed.host or "localhost"
    port = f":{parsed.port}" if parsed.port else ""
    return f"{host}{port}/{parsed.database or ''}"


def _sqlite(error: sqlite3.Error, where: str) -> str:
    name = str(getattr(error, "sqlite_errorname", "") or "")
    template = _SQLITE.get(name) or _SQLITE.get("_".join(name.split("_")[:2]))
    if template is not None:
        return _sentence(template.format(where=where))
    return _sentence(
        f"{where} failed ({name or type(error).__name__}); the failed write was rolled back. "
        "If it happens again, report it with this line"
    )


def _refused_connection(message: str, where: str) -> str:
    for words, sqlstate in _CONNECTION_HINTS:
        if words in message:
            return _sentence(_POSTGRES[sqlstate].format(where=where))
    # libpq's first line names the server and why ("Connection refused"), never any data.
    first = message.strip().splitlines()[0] if message.strip() else "no answer"
    return _sentence(
        f"cannot connect to PostgreSQL at {where} ({first.removeprefix('connection failed: ')})."
        " Is the server running? Check SUPPORTAGENT_DATABASE_URL"
    )


def _is_postgres(url: str) -> bool:
    return url.startswith(("postgresql", "postgres"))


def _sentence(text: str) -> str:
    text = text[0].upper() + text[1:] if text else text
    return text if text.endswith(".") else text + "."
