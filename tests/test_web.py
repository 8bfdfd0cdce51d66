"""The minimal web app: health, the staged list (escaped), the JSON API, the background agent."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from supportagent.config import Settings
from supportagent.domain import Ticket
from supportagent.runtime import load_demo
from supportagent.store.store import Store
from supportagent.web.app import create_app

XSS = "<script>alert(1)</script>"


def _wait_until_idle(client: TestClient, timeout: float = 60.0) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        counts = client.get("/api/agent/status").json()["counts"]
        if not counts.get("new") and not counts.get("in_progress"):
            return dict(counts)
        time.sleep(0.2)
    raise AssertionError(f"the agent did not finish the inbox: {counts}")


def test_health_and_empty_page(settings: Settings, store: Store) -> None:
    with TestClient(create_app(settings, store, work=False)) as client:
        assert client.get("/health").json() == {"status": "ok"}
        page = client.get("/")
        assert page.status_code == 200 and "Nothing staged yet" in page.text


def test_background_agent_stages_the_inbox_and_the_page_escapes_ticket_text(
    settings: Settings, store: Store
) -> None:
    load_demo(store)
    store.add_tickets([Ticket("T-XSS", f"Webhook question {XSS}", f"How do I verify? {XSS}")])
    with TestClient(create_app(settings, store, work=True)) as client:
        counts = _wait_until_idle(client)
        assert counts.get("pending_review", 0) > 0
        page = client.get("/").text
        assert XSS not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        queue = client.get("/api/queue").json()
        assert queue and all(item["status"] == "pending_review" for item in queue)
        trace = client.get(f"/api/tickets/{queue[0]['ticket_id']}/trace").json()
        assert trace["events"][0]["stage"] == "tool"


def test_ticket_arriving_while_running_is_picked_up(settings: Settings, store: Store) -> None:
    load_demo(store)
    with TestClient(create_app(settings, store, work=True)) as client:
        _wait_until_idle(client)
        store.add_tickets([Ticket("T-LATE", "Rate limits", "What is the rate limit on Starter?")])
        _wait_until_idle(client)
        assert store.ticket_status("T-LATE").value != "new"


def test_trace_of_unknown_or_bad_id(settings: Settings, store: Store) -> None:
    with TestClient(create_app(settings, store, work=False)) as client:
        assert client.get("/api/tickets/T-404/trace").status_code == 404
        assert client.get("/api/tickets/a%20b/trace").status_code == 422
