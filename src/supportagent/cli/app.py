"""The Typer app, its consoles and the helpers every command module shares."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings, load_settings
from supportagent.errors import UserError
from supportagent.store.store import Store

app = typer.Typer(
    help="Drafts grounded answers to support tickets for a human to review. Never sends them.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
console = Console(highlight=False)
err = Console(stderr=True, highlight=False)

T = TypeVar("T")


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
    ctx.obj = load_settings(home=home, engine=engine.value if engine else None)


def settings_of(ctx: typer.Context) -> Settings:
    settings = ctx.obj
    assert isinstance(settings, Settings)
    return settings


def load_knowledge(store: Store, settings: Settings) -> Knowledge:
    """The search index over the store, with a progress bar while passages are embedded."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task("embedding passages", total=None)

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        return Knowledge.from_store(store, settings, progress=progress)


def guard(action: Callable[[], T]) -> T:
    """Run ``action``; a UserError becomes one red line and exit code 1, never a traceback."""
    try:
        return action()
    except UserError as exc:
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(1) from None
