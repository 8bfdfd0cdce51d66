"""The Typer app, its consoles and the helpers every command module shares.

Only typer, rich and the standard library are imported here: this module is loaded for every
invocation, `--help` included, so anything heavier is imported by the helper that needs it
(see the comment in ``cli/__init__.py``).
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable
from contextvars import ContextVar
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from supportagent.cli import _heap
from supportagent.errors import UserError

if TYPE_CHECKING:
    from supportagent.agent.knowledge import Knowledge
    from supportagent.config import Settings
    from supportagent.store.store import Store

app = typer.Typer(
    help="Drafts grounded answers to support tickets for a human to review. Never sends them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
console = Console(highlight=False)
err = Console(stderr=True, highlight=False)

T = TypeVar("T")
#: This invocation's settings, so that ``guard`` can name the database a failure came from.
_current_settings: ContextVar[Settings | None] = ContextVar("settings", default=None)


class EngineChoice(StrEnum):
    auto = "auto"
    offline = "offline"
    llm = "llm"


@app.callback()
def main_options(
    ctx: typer.Context,
    home: Path | None = typer.Option(None, help="Data directory (env SUPPORTAGENT_HOME)."),
    engine: EngineChoice | None = typer.Option(None, help="offline or llm (default: auto)."),
) -> None:
    """Global options; every command reads settings from here, the environment and .env."""
    import pydantic

    from supportagent.config import load_settings

    try:
        ctx.obj = load_settings(home=home, engine=engine.value if engine else None)
        _current_settings.set(ctx.obj)
        _heap.settled()  # the console script's start-up is over: see cli/_heap.py
    except pydantic.ValidationError as exc:
        # The value itself is left out: it may be a key.
        for problem in exc.errors():
            name = "SUPPORTAGENT_" + "_".join(str(p) for p in problem["loc"]).upper()
            err.print(f"[red]error:[/red] {escape(name)}: {escape(problem['msg'])}")
        raise typer.Exit(1) from None


def settings_of(ctx: typer.Context) -> Settings:
    from supportagent.config import Settings

    settings = ctx.obj
    assert isinstance(settings, Settings)
    return settings


def load_knowledge(store: Store, settings: Settings) -> Knowledge:
    """The search index over the store, with a progress bar while passages are embedded."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from supportagent.agent.knowledge import Knowledge

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task("embedding passages", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return Knowledge.from_store(store, settings, progress=progress)


def guard(action: Callable[[], T]) -> T:
    """Run ``action``; a UserError, a database failure or an environment failure (disk full,
    read-only files) becomes one red line and exit code 1, never a traceback, and never the
    SQL or its parameters (which hold ticket text)."""
    try:
        return action()
    except UserError as exc:
        message = str(exc)
    except OSError as exc:
        message = describe_os_failure(exc)
    except Exception as exc:
        if not _is_database_failure(exc):
            raise
        from supportagent.store.failures import describe_database_failure

        message = describe_database_failure(exc, _database_url())
    err.print(f"[red]error:[/red] {escape(message)}", soft_wrap=True)  # one line, unwrapped
    raise typer.Exit(1)


def _is_database_failure(exc: Exception) -> bool:
    """True for a SQLAlchemy error. SQLAlchemy is not imported to find out: an error of its
    kind can only come from a run that already imported it."""
    sqlalchemy = sys.modules.get("sqlalchemy")
    return sqlalchemy is not None and isinstance(exc, sqlalchemy.exc.SQLAlchemyError)


def _database_url() -> str:
    settings = _current_settings.get()
    return settings.resolved_database_url() if settings is not None else ""


_OS_HINTS = {
    errno.ENOSPC: "free some space and run again",
    errno.EROFS: "the file system is read-only; use a writable folder (SUPPORTAGENT_HOME)",
    errno.EACCES: "check the permissions, or use a folder you can write to",
    errno.EPERM: "check the permissions, or use a folder you can write to",
    errno.ENOENT: "check the path",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder, not a file",
}


def describe_os_failure(exc: OSError) -> str:
    """An operating-system failure (disk full, read-only file system) as one line."""
    what = f" {exc.filename}" if exc.filename else ""
    hint = _OS_HINTS.get(exc.errno or 0, "check the disk and the path, then run again")
    return f"Cannot use{what}: {exc.strerror or exc}; {hint}."
