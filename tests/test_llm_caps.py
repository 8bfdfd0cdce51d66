"""Caps count every request sent, retries included, on every path (issue 14, items 3 and 4).

`--max-api-calls 10` against an endpoint failing every other request once sent 20 requests;
`--max-api-calls 2` with timeouts sent 10 and reported "2/2, tokens 0, 0 retries"; `POST
/triage` ignored SUPPORTAGENT_MAX_API_CALLS. Each of those, replayed against the stub.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from llm_stub import KEY, EvidenceModel, Received, StubLLM, StubReply
from supportagent.cli import app
from supportagent.config import load_settings
from supportagent.domain import DocKind, Document, Ticket
from supportagent.llm.budget import Budget, RunBudgetExhausted
from supportagent.runtime import open_store
from supportagent.store.store import Store
from supportagent.web.app import create_app

KB = [
    Document(
        "kb-limits",
        DocKind.KB,
        "Rate limits",
        "# Rate limits\n\nThe Starter plan allows 50 requests per second. When you pass the "
        "limit the API answers 429 with a Retry-After header.",
    )
]


def tickets(n: int) -> list[Ticket]:
    return [
        Ticket(f"C-{i:03d}", "Rate limit", f"How many requests per second on Starter? (ref {i})")
        for i in range(n)
    ]


@pytest.fixture
def cli_store(monkeypatch: pytest.MonkeyPatch, llm_stub: StubLLM) -> Iterator[Store]:
    env = {
        "SUPPORTAGENT_ENGINE": "llm",
        "SUPPORTAGENT_LLM_BASE_URL": llm_stub.url,
        "SUPPORTAGENT_LLM_MODEL": "stub-model",
        "SUPPORTAGENT_LLM_API_KEY": KEY,
        "SUPPORTAGENT_EMBEDDER": "none",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    store = open_store(load_settings())
    store.upsert_documents(KB)
    store.add_tickets(tickets(8))
    yield store
    store.close()


def failing_every_other(stub: StubLLM) -> None:
    model, turn = EvidenceModel(), itertools.count()

    def answer(request: Received) -> StubReply:
        if next(turn) % 2 == 0:
            return StubReply(status=503, raw={"error": {"message": "overloaded, try again"}})
        return model(request)

    stub.model = answer


def test_a_request_cap_holds_when_every_other_request_fails(
    llm_stub: StubLLM, cli_store: Store
) -> None:
    failing_every_other(llm_stub)
    result = CliRunner().invoke(app, ["schedule", "--max-api-calls", "10"])
    assert result.exit_code == 3, result.output  # a cap stop
    assert len(llm_stub.requests) == 10  # it sent 20 when retries were not counted
    assert "stopped by: max_api_calls" in result.output
    # Requests 1, 3, 5, 7 and 9 failed, and each was retried by the next one.
    assert "model requests 10/10 (5 retries)" in result.output


def test_a_request_cap_holds_when_requests_time_out_and_tokens_count_them(
    llm_stub: StubLLM, cli_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # vLLM drops a request whose client left, so timeouts are retried there: each retry is
    # a request the cap must count (a provider computes, and bills, every one of them).
    monkeypatch.setenv("SUPPORTAGENT_LLM_PROFILE", "vllm")
    monkeypatch.setenv("SUPPORTAGENT_LLM_TIMEOUT", "0.3")
    model = EvidenceModel()
    llm_stub.model = lambda request: StubReply(content=model(request).content, delay=1.0)
    result = CliRunner().invoke(app, ["schedule", "--max-api-calls", "2"])
    assert result.exit_code == 3 and len(llm_stub.requests) == 2, result.output  # it sent 10
    assert "stopped by: max_api_calls" in result.output
    line = next(x for x in result.output.splitlines() if x.startswith("model requests"))
    assert line.startswith("model requests 2/2 (1 retries), tokens ")
    assert int(line.rsplit(" ", 1)[-1]) > 0  # the timed-out prompts, estimated, not 0


def test_a_retry_that_would_pass_the_cap_is_refused_before_it_is_sent() -> None:
    budget = Budget(max_calls=2)
    reservation = budget.reserve("T-1", 100, 50)
    budget.retry(reservation)
    with pytest.raises(RunBudgetExhausted, match=r"2 model requests \(retries included\)"):
        budget.retry(reservation)
    budget.timed_out(reservation)
    used = budget.used()
    assert (used.calls, used.requests, used.retries) == (1, 2, 1)
    assert used.prompt_tokens == used.estimated_tokens == 100
    assert budget.exhausted and budget.cap_reached() == "max_api_calls"
    assert "model requests: 2 (1 retry) for 1 calls; tokens: 100 prompt" in used.describe()


def _web(settings: Any, store: Store, work: bool) -> TestClient:
    return TestClient(create_app(settings, store, work=work), base_url="http://127.0.0.1")


@pytest.mark.parametrize("work", [False, True])
def test_triage_obeys_the_run_cap_and_the_status_shows_what_it_spent(
    llm_stub: StubLLM, tmp_path: Path, work: bool
) -> None:
    settings = load_settings(
        home=tmp_path / "home",
        engine="llm",
        llm_base_url=llm_stub.url,
        llm_model="stub-model",
        llm_api_key=KEY,
        embedder="none",
        max_api_calls=3,
    )
    store = open_store(settings)
    store.upsert_documents(KB)
    answers = []
    with _web(settings, store, work) as client:
        for i in range(6):
            text = f"Rate limit\nHow many requests per second on Starter? (ref {i})"
            answers.append(client.post("/triage", json={"ticket_text": text}))
        status = client.get("/api/agent/status").json()
    store.close()
    assert len(llm_stub.requests) == 3  # six requests made 18 model calls before
    codes = [a.status_code for a in answers]
    assert codes[0] == 200 and codes[-1] == 429, [a.text for a in answers]
    assert "model requests" in answers[-1].json()["detail"]
    caps = status["caps"]
    assert (caps["api_calls_used"], caps["max_api_calls"], caps["capped"]) == (3, 3, True)
    assert caps["tokens_used"] > 0
    assert json.dumps(status).count(KEY) == 0
