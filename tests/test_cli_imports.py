"""The command line imports only what a command needs when it runs (issue 17, item 3).

A correctness check, not a timing one: importing ``supportagent.cli`` (which registers every
command, as ``supportagent --help`` does) must not load the heavy libraries. Each check runs in
a fresh interpreter, since this test process has imported them all long ago.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("openai", "sqlalchemy", "numpy", "onnxruntime", "fastapi", "bm25s", "pydantic", "asyncio")

_PROBE = """
import json, sys
{statement}
heavy = {heavy!r}
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set(heavy))))
"""


def _heavy_after(statement: str) -> list[str]:
    src = Path(__file__).resolve().parents[1] / "src"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")]),
    }
    code = _PROBE.format(statement=statement, heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_importing_the_cli_loads_no_heavy_library() -> None:
    assert _heavy_after("import supportagent.cli") == []


def test_help_loads_no_heavy_library() -> None:
    statement = (
        "from supportagent.cli import app\n"
        "try:\n"
        "    app(['--help'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass"
    )
    assert _heavy_after(statement) == []


@pytest.mark.parametrize("command", ["triage", "worker", "eval", "audit"])
def test_a_commands_help_loads_no_heavy_library(command: str, tmp_path: Path) -> None:
    # A sub-command's --help runs the global callback (settings) but not the command itself.
    statement = (
        "from supportagent.cli import app\n"
        "try:\n"
        f"    app([{command!r}, '--help'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass"
    )
    loaded = _heavy_after(statement)
    assert not set(loaded) & {"openai", "sqlalchemy", "numpy", "onnxruntime", "fastapi", "bm25s"}


def test_the_command_line_collects_young_objects_in_larger_batches() -> None:
    src = Path(__file__).resolve().parents[1] / "src"
    env = {**os.environ, "PYTHONPATH": str(src)}
    code = (
        "import gc, json; before = gc.get_threshold(); import supportagent.cli; "
        "print(json.dumps([before, gc.get_threshold()]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    before, after = json.loads(done.stdout)
    assert before[0] < 50_000
    # Only the youngest generation's threshold changes; the older ones keep Python's.
    assert after == [50_000, *before[1:]]


def test_only_the_console_script_freezes_the_heap() -> None:
    # An embedding process (tests, servers) runs the settings callback without freezing what
    # it holds; the console script freezes its start-up (cli/_heap.py).
    src = Path(__file__).resolve().parents[1] / "src"
    env = {**os.environ, "PYTHONPATH": str(src)}
    code = (
        "import gc, json\n"
        "from supportagent.cli import _heap, app\n"
        "try:\n"
        "    app(['triage', '--help'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "embedded = gc.get_freeze_count()\n"
        "_heap.own_process()\n"
        "print(json.dumps([embedded, gc.get_freeze_count()]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    embedded, script = json.loads(done.stdout.strip().splitlines()[-1])
    assert embedded == 0
    assert script > 20_000
