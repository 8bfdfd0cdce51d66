"""The `supportagent` command line. Each module below registers its commands on one Typer app.

How a command module stays lazy (so `supportagent --help` starts at once; the test
``tests/test_cli_imports.py`` holds every module here to it):

* At module level import only the standard library, ``typer``, ``rich`` (``rich.markup``,
  ``rich.console``) and ``supportagent.cli.app`` / ``supportagent.errors``. Never openai,
  sqlalchemy, numpy, onnxruntime, fastapi, bm25s, pydantic, nor a module of ours that
  pulls them in (``runtime``, ``store``, ``agent``, ``retrieval``, ``evals``, ``engines``, ...).
* Import what a command needs in the first lines of its function body.
* Typer reads a command's signature when it runs, so the parameters' annotations must be
  runtime types (``str``, ``Path``, an enum defined in the module, ``typer.Context``); types
  used only by helpers go under ``if TYPE_CHECKING:``.
* Register the module with one import line below.
"""

from __future__ import annotations

import gc
import os

from supportagent.cli import _heap as _heap  # first: see its docstring
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
    """The console script: run the command, then leave the heap to the operating system.

    The process ends when the command returns. Frozen, its objects are not traced again by
    the collections the interpreter runs on its way out, which took about 0.25 s CPU of a
    one-shot ``triage`` (a fifth of it). atexit handlers still run and reference counting
    still frees what it frees; only objects caught in reference cycles are left to the
    operating system, and Python never promised those their ``__del__`` at exit. Only the
    script does this, not the app that tests and servers embed.

    Pydantic plugins are off unless ``PYDANTIC_DISABLE_PLUGINS`` says otherwise (pydantic's
    documented switch; set it to, say, ``none`` to have them): finding them reads the
    metadata of every installed distribution on the first validation (typer builds one for
    each option), 0.025 s CPU of a one-shot ``triage``, and SupportAgent uses none.

    On the way to the command the heap is frozen twice more, after the imports and after the
    settings (``_heap.own_process`` and ``_heap.settled``): start-up's objects are not traced
    by the collections the command runs, and a one-shot ``triage`` runs none.
    """
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    _heap.own_process()
    try:
        app()
    finally:
        gc.freeze()


__all__ = ["app", "main"]
