"""Escalations are work: the queue (API and page), and assign, note, reply, handled."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from supportagent import escalation
from supportagent.config import Settings
from supportagent.domain import DocKind, Outcome, Status, Ticket
from supportagent.errors import ConflictError, UserError
from supportagent.reasons import pinned_codes
from supportagent.store.audit import read_events
from supportagent.store.audit_verify import verify
from supportagent.store.escalations import actions
from supportagent.store.store import Store
from supportagent.store.ticket_list import TicketQuery, list_tickets
from supportagent.web.app import create_app

BASE = "http://127.0.0.1"


@pytest.fixture
def client(settings: Settings, demo_store: Store) -> Iterator[TestClient]:
    with TestClient(create_app(settings, demo_store, work=False), base_url=BASE) as c:
        yield c


def open_ids(store: Store) -> set[str]:
    return {
        r.ticket.id
        for r in store.staged()
        if r.status in {Status.ESCALATED, Status.ROUTED, Status.HANDED_OFF}
    }


def test_the_queue_pages_through_every_escalation_most_urgent_first(
    client: TestClient, demo_store: Store
) -> None:
    seen, offset, total = [], 0, None
    while True:
        body = client.get(
            f"/api/tickets?status=escalated,routed,handed_off&limit=7&offset={offset}"
        ).json()
        total = body["total"]
        seen += body["items"]
        offset += 7
        if offset >= total:
            break
    assert total == len(open_ids(demo_store)) > 7  # more than one page
    assert [i["id"] for i in seen] == list(dict.fromkeys(i["id"] for i in seen))
    assert {i["id"] for i in seen} == open_ids(demo_store)
    first = seen[0]
    assert set(first) >= {"id", "subject", "status", "reason_code", "reason", "priority"}
    assert set(first) >= {"staged_at", "assignee"}
    # self-harm and security, nobody has taken them: on top, pinned
    pinned = [i for i in seen if i["pinned"]]
    assert {i["reason_code"] for i in pinned} <= pinned_codes()
    assert "T-2008" in {i["id"] for i in pinned}
    assert seen[: len(pinned)] == pinned
    rest = seen[len(pinned) :]
    assert [i["priority"] for i in rest] == sorted((i["priority"] for i in rest), reverse=True)
    assert all(i["reason"] for i in seen)  # a sentence, never only a code
    routed = next(i for i in seen if i["reason_code"] == "bug_report")
    assert routed["destination"] == "engineering"


def test_queue_filters(client: TestClient) -> None:
    only = client.get("/api/tickets?status=escalated&reason=money_specific").json()
    assert only["total"] == len(only["items"]) > 0
    assert {i["reason_code"] for i in only["items"]} == {"money_specific"}
    top = client.get("/api/tickets?status=escalated&priority=3").json()["items"]
    assert top and all(i["priority"] == 3 for i in top)
    found = client.get("/api/tickets?q=leaked").json()["items"]
    assert [i["id"] for i in found] == ["T-2016"]
    assert client.get("/api/tickets?q=100%25").json()["total"] == 0  # % is literal
    assert client.get("/api/tickets?status=escalated&min_age_hours=1").json()["total"] == 0
    assert client.get("/api/tickets?status=escalated&min_age_hours=0").json()["total"] > 0
    assert client.get("/api/tickets?status=bogus").status_code == 422
    assert client.get("/api/tickets?limit=0").status_code == 422
    everything = client.get("/api/tickets?limit=200").json()
    assert everything["total"] == 47 and len(everything["items"]) == 47


def test_age_filter_on_both_databases(any_store: Store) -> None:
    any_store.add_tickets([Ticket("T-1", "Old", "x"), Ticket("T-2", "New", "y")])
    later = datetime.now(UTC) + timedelta(hours=5)
    old = list_tickets(any_store, TicketQuery(min_age_hours=4), now=later)
    assert old.total == 2
    assert list_tickets(any_store, TicketQuery(min_age_hours=6), now=later).total == 0
    assert list_tickets(any_store, TicketQuery(text="old")).total == 1


def _escalate(store: Store, ticket_id: str, reason: str, priority: int = 0) -> None:
    store.add_tickets([Ticket(ticket_id, f"subject {ticket_id}", "body", priority=priority)])
    attempt = store.begin_attempt(ticket_id)
    outcome = Outcome(ticket_id, Status.ESCALATED, reason, None, None, None, (), "offline")
    store.stage_outcome(outcome, attempt)


def test_actions_on_both_databases_are_audited(any_store: Store) -> None:
    _escalate(any_store, "T-SH", "safety_self_harm")
    _escalate(any_store, "T-MO", "money_specific", priority=3)
    order = [i.id for i in list_tickets(any_store, TicketQuery(), pinned_codes()).items]
    assert order == ["T-SH", "T-MO"]  # pinned beats priority until someone takes it
    escalation.assign(any_store, "T-SH", "  Dana   Lee ", "lead")
    order = list_tickets(any_store, TicketQuery(), pinned_codes()).items
    assert [i.id for i in order] == ["T-MO", "T-SH"] and order[1].assignee == "Dana Lee"
    escalation.note(any_store, "T-SH", "Called the customer.\r\nWill follow up.", "dana")
    done = escalation.handled(any_store, "T-SH", "dana", "followed up by phone")
    assert any_store.ticket_status("T-SH") is Status.HANDLED and "marked handled" in done.effect
    with pytest.raises(ConflictError, match="only an escalated, routed or handed-off"):
        escalation.assign(any_store, "T-SH", "Sam", "lead")
    escalation.note(any_store, "T-SH", "closing note", "dana")  # notes are still welcome
    kinds = [a.action for a in actions(any_store, "T-SH")]
    assert kinds == ["assign", "note", "handled", "note"]
    assert actions(any_store, "T-SH")[1].text == "Called the customer.\nWill follow up."
    events = [e for e in read_events(any_store.engine, "T-SH") if e["event"].startswith("esc")]
    assert [e["event"] for e in events] == [
        "escalation.assign",
        "escalation.note",
        "escalation.handled",
        "escalation.note",
    ]
    assert events[0]["actor"] == "lead" and events[0]["data"]["assignee"] == "Dana Lee"
    assert verify(any_store.engine).intact
    with pytest.raises(UserError, match="empty"):
        escalation.note(any_store, "T-MO", "  \r\n ", "dana")


def test_a_reply_becomes_a_resolved_record_found_by_the_next_triage(
    client: TestClient, demo_store: Store
) -> None:
    text = "Hi,\r\n\r\nThe Quokka plan includes zanzibar exports.\r\nBest, the team"
    body = {"text": text, "actor": "dana"}
    done = client.post("/api/tickets/T-2006/reply", json=body)
    assert done.status_code == 200, done.text
    assert done.json()["status"] == "handled" and done.json()["resolved_doc_id"] == "AR-T-2006"
    assert "searchable now" in done.json()["effect"]
    doc = next(d for d in demo_store.documents(DocKind.RESOLVED) if d.id == "AR-T-2006")
    assert "\r" not in doc.meta["answer"] and "\n\n" in doc.meta["answer"]
    found = client.post("/triage", json={"ticket_text": "zanzibar exports quokka?"}).json()
    assert "AR-T-2006" in [h["doc_id"] for step in found["retrieval"] for h in step["hits"]]
    again = client.post("/api/tickets/T-2006/reply", json=body)
    assert again.status_code == 409
    assert client.post("/api/tickets/T-2001/assign", json={"assignee": "x"}).status_code == 409
    assert client.post("/api/tickets/T-404/note", json={"text": "x"}).status_code == 404
    assert client.post("/api/tickets/T-2005/note", json={"text": ""}).status_code == 422
    assert client.post("/api/tickets/T-2005/assign", json={"assignee": "Sam"}).status_code == 200
    queue = client.get("/api/tickets?q=T-2005").json()["items"]
    assert queue[0]["assignee"] == "Sam"


def test_ticket_page_forms_act_and_show_on_the_timeline(
    client: TestClient, demo_store: Store
) -> None:
    page = client.get("/tickets/T-2008").text
    assert 'id="handle"' in page and "Take it now" in page  # the next step, in words
    token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page)
    assert token
    data = {"csrf_token": token.group(1), "reviewer": "Ana", "text": "Ana"}
    assigned = client.post("/tickets/T-2008/assign", data=data, follow_redirects=False)
    assert assigned.status_code == 303
    landing = client.get(assigned.headers["location"]).text
    assert "T-2008 assigned to Ana." in landing and 'data-action="assign"' in landing
    empty = client.post("/tickets/T-2008/reply", data={**data, "text": "  "})
    assert empty.status_code == 400 and "empty" in empty.text
    kept = client.post("/tickets/T-2008/assign", data={**data, "text": "x" * 200})
    assert kept.status_code == 422 or "x" * 129 in kept.text  # a refused form keeps its text
    routed = client.get("/tickets/T-2013").text
    assert 'Routed to <b id="destination">engineering</b>' in routed
    queue = client.get("/escalations").text
    assert 'id="q-T-2016"' in queue and "take it now" in queue
    assert "nobody has taken it" in queue
    routed_count = demo_store.status_counts().get("routed", 0)
    assert routed_count > 0
    page_of_routed = client.get("/escalations?status=routed").text
    assert page_of_routed.count('class="queue-item') == routed_count
