"""A one-shot ``supportagent triage --ticket`` decides as the pipeline does in process (issue 17).

Start-up work is cut from the one-shot path (imports deferred, rule programs and corpus facts
kept on disk, the store read without SQLAlchemy and the ticket's run kept in a scratch store
in memory), so this holds the command to the same bucket, reason and trace as
``triage_text`` in a long-lived process over the ``Store``, on demo tickets of each kind,
with the index warm; and the scratch store in memory to the SQLite one it replaced.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from supportagent.agent.knowledge import Knowledge
from supportagent.config import load_settings
from supportagent.domain import Ticket
from supportagent.runtime import demo_path, load_demo, open_store
from supportagent.triage import triage_text

#: A plain question, a safety escalation, a bug report, a Spanish ticket, a conflict.
TICKETS = ("T-2001", "T-2008", "T-2013", "T-2014", "T-2017")
SRC = Path(__file__).resolve().parents[1] / "src"


def _ticket_text(ticket_id: str) -> str:
    for line in (demo_path() / "inbox.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["id"] == ticket_id:
            return f"{row['subject']}\n{row['body']}"
    raise AssertionError(f"no demo ticket {ticket_id}")


def _without_timings(value: Any) -> Any:
    """The trace with its durations dropped: the only part that differs from run to run."""
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if not k.endswith("_ms")}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("oneshot") / "home"
    store = open_store(load_settings(home=home, engine="offline"))
    load_demo(store)
    store.close()
    yield home


def _cli(home: Path, text: str, *python_options: str) -> tuple[dict[str, Any], str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
        "SUPPORTAGENT_HOME": str(home),
        "SUPPORTAGENT_ENGINE": "offline",
        "SUPPORTAGENT_TRIAGE_LOG": "off",
    }
    done = subprocess.run(
        [
            sys.executable,
            *python_options,
            "-m",
            "supportagent",
            "triage",
            "--json",
            "--ticket",
            text,
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=home.parent,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result, done.stderr


def test_the_one_shot_command_matches_the_pipeline_in_process(
    demo_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = {ticket_id: _ticket_text(ticket_id) for ticket_id in TICKETS}
    _cli(demo_home, texts[TICKETS[0]])  # the first run embeds the corpus and writes the index
    from_cli = {ticket_id: _cli(demo_home, text)[0] for ticket_id, text in texts.items()}

    monkeypatch.chdir(demo_home.parent)
    settings = load_settings(home=demo_home, engine="offline")
    store = open_store(settings)
    knowledge = Knowledge.from_store(store, settings)
    in_process = {
        ticket_id: triage_text(settings, knowledge, text) for ticket_id, text in texts.items()
    }
    store.close()

    statuses = {ticket_id: result["status"] for ticket_id, result in in_process.items()}
    # Each kind of ticket takes its own way through the pipeline.
    assert statuses["T-2001"] == "pending_review"
    assert statuses["T-2008"] == "escalated"
    assert statuses["T-2013"] == "routed"
    for ticket_id in TICKETS:
        cli, here = from_cli[ticket_id], in_process[ticket_id]
        for key in ("ticket_id", "bucket", "status", "reason_code", "citations", "answer"):
            assert cli[key] == here[key], (ticket_id, key)
        assert _without_timings(cli["trace"]) == _without_timings(here["trace"]), ticket_id
        assert [event["stage"] for event in cli["trace"]][-1] == "stage"


def test_a_warm_one_shot_triage_reads_the_store_without_sqlalchemy(demo_home: Path) -> None:
    text = _ticket_text(TICKETS[0])
    _cli(demo_home, text)  # warm: the index matches the documents
    result, imports = _cli(demo_home, text, "-X", "importtime")
    assert result["status"] == "pending_review"
    assert "sqlalchemy" not in imports
    assert "supportagent.store.readonly" in imports


def test_the_scratch_store_in_memory_gives_what_the_sqlite_one_gave(
    demo_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from supportagent import triage
    from supportagent.store.store import Store

    def sqlite_scratch(tickets: tuple[Ticket, ...]) -> Store:
        store = Store("sqlite://")
        store.migrate()
        store.add_tickets(list(tickets))
        return store

    monkeypatch.chdir(demo_home.parent)
    settings = load_settings(home=demo_home, engine="offline")
    store = open_store(settings)
    knowledge = Knowledge.from_store(store, settings)
    texts = [_ticket_text(ticket_id) for ticket_id in TICKETS]
    in_memory = [triage_text(settings, knowledge, text) for text in texts]
    monkeypatch.setattr(triage, "ScratchStore", sqlite_scratch)
    in_sqlite = [triage_text(settings, knowledge, text) for text in texts]
    store.close()
    for here, there in zip(in_memory, in_sqlite, strict=True):
        assert _without_timings(here) == _without_timings(there), here["ticket_id"]
        durations = [event["duration_ms"] for event in here["trace"]]
        assert all(isinstance(d, float) for d in durations)
