"""`reset-demo`: back to the demo as shipped, with nothing staged, reviewed or handled."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from supportagent.cli.app import app, console, guard, settings_of
from supportagent.errors import UserError

if TYPE_CHECKING:
    from supportagent.store.store import Store

#: Kept across a reset: cached embeddings depend only on the text, and rebuilding them is the
#: slow part of a first start.
KEPT_TABLES = frozenset({"embedding_cache"})


def reset_store(store: Store) -> list[str]:
    """Drop every table of ours except the embedding cache; returns the tables dropped."""
    import sqlalchemy as sa

    metadata = sa.MetaData()
    metadata.reflect(store.engine)
    doomed = [table for table in metadata.sorted_tables if table.name not in KEPT_TABLES]
    with store.begin() as conn:
        for table in reversed(doomed):  # dependents first
            table.drop(conn)
    return [table.name for table in doomed]


@app.command("reset-demo")
def reset_demo(
    ctx: typer.Context,
    yes: bool = typer.Option(False, "--yes", help="Do it without asking."),
) -> None:
    """Delete every ticket, draft, review, action and audit event, then load the demo again."""
    from supportagent.runtime import load_demo, open_store

    settings = settings_of(ctx)

    def run() -> None:
        where = settings.resolved_database_url().split("@")[-1]  # never print a password
        if not yes and not typer.confirm(
            f"This deletes everything in {where} (tickets, reviews, the audit log). Go on?"
        ):
            raise UserError("Nothing was reset.")
        store = open_store(settings)
        dropped = reset_store(store)
        store.close()
        store = open_store(settings)  # migrates the empty database again
        loaded = load_demo(store)
        console.print(
            f"Reset {escape(where)}: {len(dropped)} tables emptied; demo loaded again "
            f"({loaded.articles} articles, {loaded.resolved} resolved, {loaded.tickets} tickets)."
        )

    guard(run)
