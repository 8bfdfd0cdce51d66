"""The `supportagent` command line. Each module below registers its commands on one Typer app."""

from __future__ import annotations

from supportagent.cli import core as core
from supportagent.cli.app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
