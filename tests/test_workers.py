"""Many workers as real processes on one real PostgreSQL (and SQLite), and the hard model caps.

Workers run the real `supportagent worker` command with the offline engine over a tiny KB this
file writes, or the llm engine against the local stub model server (tests/llm_stub.py).
Signals are real: SIGTERM asks for a clean stop, SIGKILL kills mid-ticket.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from llm_stub import KEY, EvidenceModel, Received, StubLLM, StubReply, tokens
from store_checks import outcome_counts
from supportagent.cli import app
from supportagent.domain import DocKind, Document, Status, Ticket
from supportagent.store.claims import ticket_claims
from supportagent.store.store import Store

SUPPORTAGENT = Path(sys.executable).with_name("supportagent")
KB = [
    Document(
        "kb-keys",
        DocKind.KB,
        "API keys",
        "# API keys\n\n## Rotating a key\n\nCreate a new key in the dashboard under Settings, "
        "then delete the old key once no request uses it. Each key starts with ks_live_.",
    ),
    Document(
        "kb-limits",
        DocKind.KB,
        "Rate limits",
        "# Rate limits\n\nThe Starter plan allows 50 requests per second. When you pass the "
        "limit the API answers 429 with a Retry-After header.",
    ),
]
TEXTS = [
    ("Rotating an API key", "How do I rotate an API key without downtime?"),
    ("Rate limit", "How many requests per second does the Starter plan allow?"),
    ("Key prefix", "What do API keys start with, and where do I create a new key?"),
    ("Export crashes", "The export button crashes with error 500 every time."),
]


def make_tickets(n: int, prefix: str) -> list[Ticket]:
    # A number in every body keeps each prompt unique, so no reply comes from the cache.
    return [
        Ticket(f"{prefix}-{i:03d}", TEXTS[i % 4][0], f"{TEXTS[i % 4][1]} (ref {prefix}{i})")
        for i in range(n)
    ]


@pytest.fixture
def seeded(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Store]]:
    """A migrated store with the tiny KB: PostgreSQL, unless parametrized with "sqlite"."""
    url = (
        f"sqlite:///{tmp_path / 'workers.db'}"
        if getattr(request, "param", "postgresql") == "sqlite"
        else request.getfixturevalue("pg_url")
    )
    store = Store(url)
    store.migrate()
    store.upsert_documents(KB)
    yield url, store
    store.close()


#: BM25 only, so that each process starts fast: these tests are about the workers, not search.
FAST = {"SUPPORTAGENT_EMBEDDER": "none", "PYTHONUNBUFFERED": "1"}


def env_for(url: str, **extra: str) -> dict[str, str]:
    return {**os.environ, **FAST, "SUPPORTAGENT_DATABASE_URL": url, **extra}


def llm_env(stub: StubLLM) -> dict[str, str]:
    return {
        "SUPPORTAGENT_ENGINE": "llm",
        "SUPPORTAGENT_LLM_BASE_URL": stub.url,
        "SUPPORTAGENT_LLM_MODEL": "stub-model",
        "SUPPORTAGENT_LLM_API_KEY": KEY,
    }


class Worker:
    """One `supportagent worker` process, its output kept in a file."""

    def __init__(self, env: dict[str, str], log: Path, *args: str) -> None:
        self.log = log
        _LOGS.append(log)
        with log.open("w") as out:
            self.proc = subprocess.Popen(
                [str(SUPPORTAGENT), "worker", "--poll", "0.2", "--lease", "2", *args],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        _PROCS.append(self.proc)

    def terminate(self, timeout: float = 60) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout)

    def handled(self) -> list[str]:
        """Ticket ids this worker reported staged."""
        lines = self.log.read_text().splitlines()
        return [line.split()[1].rstrip(":") for line in lines if _staged_line(line)]


def stop_all(workers: list[Worker]) -> list[int]:
    """SIGTERM every worker at once, then collect their exit codes."""
    for worker in workers:
        worker.proc.send_signal(signal.SIGTERM)
    return [worker.proc.wait(60) for worker in workers]


def _staged_line(line: str) -> bool:
    parts = line.split()
    return len(parts) == 3 and parts[2] in {s.value for s in Status}


def wait_until(check: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    logs = "".join(f"\n--- {log}\n{log.read_text()[-2000:]}" for log in _LOGS)
    raise AssertionError(f"timed out waiting for {what}{logs}")


#: The processes a test started, and their output files (shown when a wait times out).
_PROCS: list[subprocess.Popen[bytes]] = []
_LOGS: list[Path] = []


@pytest.fixture(autouse=True)
def _no_process_outlives_its_test() -> Iterator[None]:
    yield
    for proc in _PROCS:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    _PROCS.clear()
    _LOGS.clear()


def _stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped by a signal (state ``T`` in /proc)."""
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    return stat.rsplit(")", 1)[1].split()[0] in ("T", "t")


def open_count(store: Store) -> int:
    return len(store.unhandled_ticket_ids())


def assert_each_staged_once(store: Store, n: int) -> None:
    counts = outcome_counts(store)
    assert len(counts) == n and set(counts.values()) == {1}, counts
    assert open_count(store) == 0


def claims_of(store: Store, pid: int) -> list[tuple[str, int]]:
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(ticket_claims.c.ticket_id, ticket_claims.c.attempt).where(
                ticket_claims.c.worker.like(f"%:{pid}:%")
            )
        ).all()
    return [(r.ticket_id, r.attempt) for r in rows]


# --- many workers ------------------------------------------------------------------------


def test_four_workers_stage_two_hundred_tickets_once_each_also_those_added_mid_run(
    seeded: tuple[str, Store], tmp_path: Path
) -> None:
    url, store = seeded
    store.add_tickets(make_tickets(100, "W"))
    workers = [Worker(env_for(url), tmp_path / f"w{i}.log") for i in range(4)]
    wait_until(lambda: open_count(store) < 100, "the workers to get going")
    inbox = tmp_path / "inbox.jsonl"  # fifty more through the CLI while they work...
    rows = [
        f'{{"id": "{tk.id}", "subject": "{tk.subject}", "body": "{tk.body}"}}'
        for tk in make_tickets(50, "CLI")
    ]
    inbox.write_text("\n".join(rows) + "\n", encoding="utf-8")
    subprocess.run(
        [str(SUPPORTAGENT), "ingest", "tickets", str(inbox)], env=env_for(url), check=True
    )
    store.add_tickets(make_tickets(50, "API"))  # ...and fifty straight into the store
    wait_until(lambda: len(outcome_counts(store)) == 200 and open_count(store) == 0, "200 staged")
    assert stop_all(workers) == [0, 0, 0, 0]
    assert_each_staged_once(store, 200)
    handled = [tid for w in workers for tid in w.handled()]
    assert sorted(handled) == sorted(outcome_counts(store))  # no ticket run to the end twice
    assert sum(1 for w in workers if w.handled()) >= 2  # the work was shared
    assert "stopped (stopped)" in workers[0].log.read_text()


def test_a_worker_killed_mid_ticket_loses_nothing_and_stages_nothing_twice(
    seeded: tuple[str, Store], tmp_path: Path
) -> None:
    url, store = seeded
    store.add_tickets(make_tickets(80, "K"))
    workers = [Worker(env_for(url), tmp_path / f"w{i}.log") for i in range(3)]
    wait_until(lambda: open_count(store) <= 70, "the workers to get going")
    victim = workers[0].proc
    held: list[tuple[str, int]] = []
    for _ in range(200):  # freeze the victim at a moment it holds a claim, then kill it
        victim.send_signal(signal.SIGSTOP)
        # SIGSTOP is delivered, not obeyed at once: read its claims only once it has stopped,
        # or it may stage the ticket between our reading and its stopping.
        wait_until(lambda: _stopped(victim.pid), "the victim to stop", timeout=10)
        # Only claims on tickets not yet staged: frozen between staging and releasing its
        # claim, the victim holds a claim on a ticket that is already done.
        held = [
            (ticket_id, attempt)
            for ticket_id, attempt in claims_of(store, victim.pid)
            if store.ticket_status(ticket_id) in {Status.NEW, Status.IN_PROGRESS}
        ]
        if held:
            break
        victim.send_signal(signal.SIGCONT)
        time.sleep(0.02)
    assert held, "the victim never held a claim"
    victim.kill()
    victim.wait(30)
    wait_until(lambda: open_count(store) == 0, "the survivors to finish, orphans included")
    assert stop_all(workers[1:]) == [0, 0]
    assert_each_staged_once(store, 80)
    for ticket_id, attempt in held:  # taken over once the dead worker's lease ran out
        latest = store.latest_outcome(ticket_id)
        assert latest is not None and latest.attempt > attempt


@pytest.mark.parametrize("seeded", ["sqlite"], indirect=True)
def test_two_workers_share_one_sqlite_file(seeded: tuple[str, Store], tmp_path: Path) -> None:
    url, store = seeded
    workers = [Worker(env_for(url), tmp_path / f"w{i}.log") for i in range(2)]
    # Both running before the tickets arrive: on a busy machine one worker could otherwise
    # finish all 30 before the other has even started, and be stopped mid-start.
    wait_until(lambda: all("started" in w.log.read_text() for w in workers), "both workers")
    store.add_tickets(make_tickets(30, "S"))
    wait_until(lambda: open_count(store) == 0, "every ticket to be staged")
    assert stop_all(workers) == [0, 0]
    assert_each_staged_once(store, 30)


def test_schedule_stops_resumes_and_shuts_down_on_sigterm(
    seeded: tuple[str, Store], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, store = seeded
    for name, value in env_for(url).items():
        monkeypatch.setenv(name, value)
    store.add_tickets(make_tickets(40, "R"))
    options = ["--concurrency", "2", "--lease", "2"]
    capped = CliRunner().invoke(app, ["schedule", *options, "--max-tickets", "15"])
    assert capped.exit_code == 3 and "stopped by: max_tickets" in capped.output, capped.output
    assert open_count(store) == 25
    log = tmp_path / "schedule.log"
    _LOGS.append(log)
    with log.open("w") as out:
        command = [str(SUPPORTAGENT), "schedule", *options]
        run = subprocess.Popen(command, env=env_for(url), stdout=out, stderr=subprocess.STDOUT)
    _PROCS.append(run)
    wait_until(lambda: open_count(store) <= 22, "the second run to get going")
    run.send_signal(signal.SIGTERM)  # it finishes the tickets in flight, then exits
    assert run.wait(60) == 0
    assert "stopped by: stopped" in log.read_text() or open_count(store) == 0
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(ticket_claims)).scalar() == 0
    final = CliRunner().invoke(app, ["schedule", *options])
    assert final.exit_code == 0 and "stopped by: inbox empty" in final.output, final.output
    assert_each_staged_once(store, 40)


# --- the llm engine: SIGTERM with a model call in flight, and the hard caps ----------------


def slow(seconds: float) -> Callable[[Received], StubReply]:
    model = EvidenceModel()
    return lambda request: replace(model(request), delay=seconds)


def test_sigterm_hands_back_or_finishes_the_ticket_in_flight(
    seeded: tuple[str, Store], tmp_path: Path, llm_stub: StubLLM
) -> None:
    url, store = seeded
    store.add_tickets(make_tickets(1, "H"))
    env = env_for(url, **llm_env(llm_stub))
    llm_stub.model = slow(30)  # a model call that outlasts the grace period
    hasty = Worker(env, tmp_path / "hasty.log", "--grace", "0.5")
    wait_until(lambda: len(llm_stub.requests) >= 1, "a model call in flight")
    assert hasty.terminate(timeout=30) == 0
    assert "H-000: handed back (shutdown)" in hasty.log.read_text()
    assert store.ticket_status("H-000") is Status.NEW  # handed back into the inbox
    assert not claims_of(store, hasty.proc.pid) and not store.staged()

    llm_stub.model = slow(0.5)
    sent = len(llm_stub.requests)
    patient = Worker(env, tmp_path / "patient.log", "--grace", "60")
    wait_until(lambda: len(llm_stub.requests) > sent, "the handed-back ticket to be taken")
    assert patient.terminate() == 0  # after finishing the ticket in flight
    assert patient.handled() == ["H-000"]
    assert_each_staged_once(store, 1)
    assert store.latest_outcome("H-000").attempt == 2  # type: ignore[union-attr]


@pytest.fixture
def counted(llm_stub: StubLLM) -> list[tuple[Received, StubReply]]:
    """Every request that reached the stub model server, with the reply it got."""
    model, seen = EvidenceModel(), []

    def answer(request: Received) -> StubReply:
        reply = model(request)
        seen.append((request, reply))
        return reply

    llm_stub.model = answer
    return seen


def stub_tokens(request: Received, reply: StubReply) -> int:
    """Tokens as the stub server bills them (tests/llm_stub.py)."""
    prompt = sum(tokens(str(m.get("content") or "")) for m in request.messages)
    return prompt + tokens(reply.content or "")


@pytest.mark.parametrize("cap", [1, 7])
def test_an_api_cap_of_n_lets_at_most_n_requests_reach_the_model(
    cap: int, llm_stub: StubLLM, counted: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**llm_env(llm_stub), **FAST}.items():
        monkeypatch.setenv(name, value)
    runner = CliRunner()
    store = _cli_store()
    store.add_tickets(make_tickets(12, "C"))
    args = ["schedule", "--max-api-calls", str(cap), "--concurrency", "4"]
    first = runner.invoke(app, args)
    assert first.exit_code == 3, first.output  # a cap stop, with tickets left
    assert "stopped by: max_api_calls" in first.output and len(counted) == cap
    assert f"model requests {cap}/{cap}" in first.output
    second = runner.invoke(app, args)  # the next run continues where the first stopped
    assert "stopped by: max_api_calls" in second.output and len(counted) == 2 * cap
    assert set(outcome_counts(store).values()) <= {0, 1}


def test_a_token_cap_is_never_passed(
    llm_stub: StubLLM, counted: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {**llm_env(llm_stub), **FAST}.items():
        monkeypatch.setenv(name, value)
    store = _cli_store()
    store.add_tickets(make_tickets(12, "C"))
    result = CliRunner().invoke(app, ["schedule", "--max-tokens", "6000", "--concurrency", "4"])
    assert result.exit_code == 3 and "stopped by: max_tokens" in result.output, result.output
    assert counted and sum(stub_tokens(req, reply) for req, reply in counted) <= 6000


def _cli_store() -> Store:
    from supportagent.config import load_settings
    from supportagent.runtime import open_store

    store = open_store(load_settings())
    store.upsert_documents(KB)
    return store


def _blas_threads_after(env_value: str | None) -> str:
    """What OPENBLAS_NUM_THREADS is after the worker's setting runs in a fresh interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if env_value is not None:
        env["OPENBLAS_NUM_THREADS"] = env_value
    code = (
        "import os, sys\n"
        "from supportagent.cli.schedule import one_blas_thread\n"
        "assert 'numpy' not in sys.modules, 'numpy was imported before the worker could set it'\n"
        "one_blas_thread()\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_a_worker_runs_one_blas_thread_unless_the_environment_says_otherwise() -> None:
    assert _blas_threads_after(None) == "1"
    assert _blas_threads_after("4") == "4"
