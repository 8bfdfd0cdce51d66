"""The `supportagent` command line. Each module below registers its commands on one Typer app."""

from __future__ import annotations

from supportagent.cli import audit as audit
from supportagent.cli import core as core
from supportagent.cli import demo as demo
from supportagent.cli import eval_injection as eval_injection
from supportagent.cli import eval_run as eval_run
from supportagent.cli import eval_triage as eval_triage
from supportagent.cli import evaluate as evaluate
from supportagent.cli import schedule as schedule
from supportagent.cli.app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
