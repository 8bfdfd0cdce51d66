"""`supportagent reset-demo` (and `make reset`): back to the shipped demo, on either database."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from supportagent.cli import app as cli
from supportagent.cli.demo import reset_store
from supportagent.domain import Ticket
from supportagent.runtime import load_demo
from supportagent.store.store import Store


def test_reset_store_empties_everything_but_the_embedding_cache(any_store: Store) -> None:
    load_demo(any_store)
    any_store.add_tickets([Ticket("T-EXTRA", "s", "b")])
    dropped = reset_store(any_store)
    assert "tickets" in dropped and "audit_events" in dropped
    assert "embedding_cache" not in dropped
    any_store.migrate()  # the same store comes back empty and usable
    assert any_store.status_counts() == {}
    assert load_demo(any_store).tickets == 47


def test_reset_demo_command_asks_first(tmp_path: Path) -> None:
    home = ["--home", str(tmp_path / "h")]
    runner = CliRunner()
    assert runner.invoke(cli, [*home, "load-demo"]).exit_code == 0
    assert runner.invoke(cli, [*home, "--engine", "offline", "inbox"]).exit_code == 0
    refused = runner.invoke(cli, [*home, "reset-demo"], input="n\n")
    assert refused.exit_code == 1 and "Nothing was reset" in refused.output
    done = runner.invoke(cli, [*home, "reset-demo", "--yes"])
    assert done.exit_code == 0 and "demo loaded again" in done.output
    listing = runner.invoke(cli, [*home, "list-data"]).output
    assert "tickets: new" in listing and "pending_review" not in listing
