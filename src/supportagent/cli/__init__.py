"""The `supportagent` command line. Each module below registers its commands on one Typer app.

How a command module stays lazy (so `supportagent --help` starts at once; the test
``tests/test_cli_imports.py`` holds every module here to it):

* At module level import only the standard library, ``typer``, ``rich`` (``rich.markup``,
  ``rich.console``) and ``supportagent.cli.app`` / ``supportagent.errors``. Never openai,
  sqlalchemy, numpy, onnxruntime, fastapi, bm25s, pydantic(-settings), nor a module of ours that
  pulls them in (``runtime``, ``store``, ``agent``, ``retrieval``, ``evals``, ``engines``, ...).
* Import what a command needs in the first lines of its function body.
* Typer reads a command's signature when it runs, so the parameters' annotations must be
  runtime types (``str``, ``Path``, an enum defined in the module, ``typer.Context``); types
  used only by helpers go under ``if TYPE_CHECKING:``.
* Register the module with one import line below.
"""

from __future__ import annotations

from supportagent.cli import audit as audit
from supportagent.cli import core as core
from supportagent.cli import demo as demo
from supportagent.cli import eval_injection as eval_injection
from supportagent.cli import eval_report as eval_report
from supportagent.cli import eval_run as eval_run
from supportagent.cli import eval_triage as eval_triage
from supportagent.cli import evaluate as evaluate
from supportagent.cli import schedule as schedule
from supportagent.cli.app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
