"""The JSON API through FastAPI's test client: triage, tickets, queue, review, traces, limits."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from supportagent.config import Settings
from supportagent.domain import DocKind, Status
from supportagent.store.store import Store
from supportagent.web.app import create_app
from supportagent.web.security import MAX_BODY_BYTES

BASE = "http://127.0.0.1"


@pytest.fixture
def client(settings: Settings, demo_store: Store) -> Iterator[TestClient]:
    with TestClient(create_app(settings, demo_store, work=False), base_url=BASE) as c:
        yield c


def pending(client: TestClient) -> list[str]:
    return [item["ticket_id"] for item in client.get("/api/queue").json()]


def test_triage_returns_the_structured_result(client: TestClient) -> None:
    text = "Rate limit on the Growth plan?\nHow many requests per second are we allowed?"
    response = client.post("/triage", json={"ticket_text": text})
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "pending_review" and body["bucket"] == "answerable"
    assert body["safety"]["category"] and body["safety"]["auto_escalate"] is False
    hits = body["retrieval"][0]["hits"]
    assert hits and {"rank", "score", "signals", "title"} <= set(hits[0])
    assert body["answer"] and body["citations"]
    assert all(c in body["answer"] for c in body["citations"])
    assert 0 < body["confidence"] <= 1
    assert body["tokens"] == {"calls": 0, "prompt": 0, "response": 0, "total": 0}
    assert body["latencies"]["total_ms"] >= body["latencies"]["retrieval_ms"] > 0
    assert [e["stage"] for e in body["trace"]][-1] == "stage"
    # one-shot: nothing joins the inbox
    assert client.get("/api/agent/status").json()["counts"].get("new", 0) == 0


def test_triage_escalates_a_safety_case_without_an_answer(client: TestClient) -> None:
    text = "Someone is using our stolen card on your platform, these charges are fraud"
    body = client.post("/triage", json={"ticket_text": text}).json()
    assert body["status"] == "escalated" and body["answer"] is None
    assert body["safety"]["auto_escalate"] is True


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"ticket_text": ""},
        {"ticket_text": "a\x00b"},
        {"ticket_text": "\ud800"},
        {"ticket_text": "ok", "extra": 1},
        {"ticket_text": "x" * 20_001},
        {"ticket_text": 5},
    ],
)
def test_triage_rejects_bad_bodies_with_422(client: TestClient, payload: object) -> None:
    raw = json.dumps(payload).encode()  # ASCII escapes: a lone surrogate travels as an escape
    response = client.post("/triage", content=raw, headers={"content-type": "application/json"})
    assert response.status_code == 422
    assert "Traceback" not in response.text


def test_malformed_json_is_a_422(client: TestClient) -> None:
    response = client.post(
        "/triage", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422


def test_added_ticket_reaches_review_through_the_background_agent(
    settings: Settings, demo_store: Store
) -> None:
    with TestClient(create_app(settings, demo_store, work=True), base_url=BASE) as client:
        ticket = {"id": "T-API-1", "subject": "SDK", "body": "What is the pip install command?"}
        created = client.post("/api/tickets", json=ticket)
        assert created.status_code == 201 and created.json() == {"id": "T-API-1", "status": "new"}
        assert client.post("/api/tickets", json=ticket).status_code == 409
        deadline = time.monotonic() + 60
        while demo_store.ticket_status("T-API-1") in {Status.NEW, Status.IN_PROGRESS}:
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert "T-API-1" in pending(client)


@pytest.mark.parametrize(
    "ticket",
    [
        {"id": "../etc", "body": "x"},
        {"id": "a b", "body": "x"},
        {"id": "", "body": "x"},
        {"id": "T-1", "body": ""},
        {"id": "T-1", "body": "x", "priority": 99},
        {"id": "T-1"},
    ],
)
def test_bad_tickets_are_422(client: TestClient, ticket: dict[str, object]) -> None:
    assert client.post("/api/tickets", json=ticket).status_code == 422


def test_queue_lists_pending_drafts_with_their_drafts(
    client: TestClient, demo_store: Store
) -> None:
    queue = client.get("/api/queue").json()
    assert len(queue) == demo_store.status_counts()["pending_review"]
    first = queue[0]
    assert first["status"] == "pending_review" and first["draft"]["sentences"]
    assert first["draft"]["citations"]


def test_approve_amend_reject_and_their_conflicts(client: TestClient, demo_store: Store) -> None:
    first, second, third = pending(client)[:3]
    approved = client.post(f"/api/review/{first}/approve", json={"reviewer": "dana"})
    assert approved.status_code == 200
    assert approved.json() == {
        "ticket_id": first,
        "decision": "approve",
        "status": "approved",
        "resolved_doc_id": f"AR-{first}",
        "linked_existing": False,
        "effect": f"{first} approved: added to the knowledge base as AR-{first}, searchable now.",
    }
    assert client.post(f"/api/review/{first}/approve", json={}).status_code == 409
    resolved = {d.id for d in demo_store.documents(DocKind.RESOLVED)}
    assert f"AR-{first}" in resolved

    amended = client.post(f"/api/review/{second}/amend", json={"text": "Use pip install kestrel."})
    assert amended.status_code == 200 and amended.json()["status"] == "amended"
    assert client.post(f"/api/review/{third}/amend", json={"text": "   "}).status_code == 400
    assert client.post(f"/api/review/{third}/reject", json={}).status_code == 422
    rejected = client.post(f"/api/review/{third}/reject", json={"reason": "wrong plan"})
    assert rejected.status_code == 200 and rejected.json()["status"] == "handed_off"
    assert demo_store.reviews(first)[0]["reviewer"] == "dana"
    assert demo_store.reviews(third)[0]["reviewer"] == "api"
    assert {first, second, third}.isdisjoint(pending(client))


def test_an_approved_answer_is_found_by_the_next_triage(client: TestClient) -> None:
    first = pending(client)[0]
    client.post(f"/api/review/{first}/amend", json={"text": "Zanzibar quokka answer."})
    body = client.post("/triage", json={"ticket_text": "zanzibar quokka?"}).json()
    ids = [h["doc_id"] for step in body["retrieval"] for h in step["hits"]]
    assert f"AR-{first}" in ids


def test_review_of_unknown_or_bad_ids(client: TestClient) -> None:
    assert client.post("/api/review/T-404/approve", json={}).status_code == 404
    assert client.post("/api/review/a..b/approve", json={}).status_code == 422
    assert client.post("/api/review/T-2005/approve", json={}).status_code == 409  # escalated
    bad_reviewer = client.post(
        f"/api/review/{pending(client)[0]}/approve", json={"reviewer": "<x>"}
    )
    assert bad_reviewer.status_code == 422


def test_trace_endpoint(client: TestClient) -> None:
    body = client.get("/api/tickets/T-2001/trace").json()
    assert body["ticket_id"] == "T-2001" and body["status"] == "pending_review"
    assert body["attempt"] == 1 and body["events"][0]["stage"] == "tool"
    assert body["model_calls"] == [] and body["latencies"]["total_ms"] > 0
    assert client.get("/api/tickets/T-2001/trace?attempt=1").json()["events"] == body["events"]
    assert client.get("/api/tickets/T-2001/trace?attempt=7").status_code == 404
    assert client.get("/api/tickets/T-404/trace").status_code == 404
    assert client.get("/api/tickets/a..b/trace").status_code == 422
    assert client.get("/api/tickets/a%20b/trace").status_code == 422


def test_form_posts_to_the_api_need_the_csrf_token(client: TestClient) -> None:
    ticket = pending(client)[0]
    response = client.post(f"/api/review/{ticket}/approve", data={"reviewer": "x"})
    assert response.status_code == 403 and "CSRF" in response.json()["detail"]
    # no content type at all is what a cross-site fetch can send: it needs the token too
    assert client.post(f"/api/review/{ticket}/approve").status_code == 403
    assert client.post("/triage", content=b'{"ticket_text": "hi"}').status_code == 403


def test_cross_site_requests_may_not_change_anything(client: TestClient) -> None:
    ticket = pending(client)[0]
    foreign = client.post(
        f"/api/review/{ticket}/approve", json={}, headers={"origin": "https://evil.example"}
    )
    assert foreign.status_code == 403
    cross = client.post(
        f"/api/review/{ticket}/approve", json={}, headers={"sec-fetch-site": "cross-site"}
    )
    assert cross.status_code == 403
    assert ticket in pending(client)
    same = client.post(f"/api/review/{ticket}/approve", json={}, headers={"origin": BASE})
    assert same.status_code == 200


def test_oversize_bodies_are_413(client: TestClient) -> None:
    big = b'{"ticket_text": "' + b"a" * (MAX_BODY_BYTES + 1) + b'"}'
    declared = client.post("/triage", content=big, headers={"content-type": "application/json"})
    assert declared.status_code == 413

    def chunks() -> Iterator[bytes]:
        yield b'{"ticket_text": "'
        for _ in range(MAX_BODY_BYTES // 1024 + 2):
            yield b"a" * 1024
        yield b'"}'

    streamed = client.post(
        "/triage", content=chunks(), headers={"content-type": "application/json"}
    )
    assert streamed.status_code == 413
    assert "too large" in streamed.json()["detail"]


def test_only_loopback_host_names_are_served_without_a_token(client: TestClient) -> None:
    assert client.get("/health", headers={"host": "evil.example"}).status_code == 400
    assert client.get("/health", headers={"host": "localhost:5050"}).status_code == 200
    assert client.get("/health", headers={"host": "[::1]:5050"}).status_code == 200


def test_security_headers(client: TestClient) -> None:
    page = client.get("/")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["x-frame-options"] == "DENY"
    assert (
        "HttpOnly" in page.headers["set-cookie"] and "SameSite=Strict" in page.headers["set-cookie"]
    )


def test_openapi_lists_the_design_endpoints(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in (
        "/health",
        "/triage",
        "/api/tickets",
        "/api/agent/status",
        "/api/queue",
        "/api/review/{ticket_id}/approve",
        "/api/review/{ticket_id}/amend",
        "/api/review/{ticket_id}/reject",
        "/api/tickets/{ticket_id}/trace",
    ):
        assert path in paths, path
    assert "/review" not in paths  # pages stay out of the API schema
    assert client.get("/docs").status_code == 200
