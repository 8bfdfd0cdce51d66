"""The web app's pages and the pure functions behind them; the background agent's live phase."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from supportagent.agent.knowledge import Knowledge
from supportagent.config import Settings
from supportagent.domain import DocKind, Passage, Status, Ticket
from supportagent.runtime import load_demo
from supportagent.scheduler import run_inbox
from supportagent.store.store import Store
from supportagent.web.app import create_app
from supportagent.web.charts import bar_chart
from supportagent.web.review_view import highlight, next_after, queue_order, review_item
from supportagent.web.trace_view import latencies, model_calls, revisions, timeline, token_totals
from supportagent.web.worker import PHASES, AgentWorker

XSS = "<script>alert(1)</script>"
ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"
BASE = "http://127.0.0.1"


def client_for(settings: Settings, store: Store, *, work: bool = False) -> TestClient:
    return TestClient(create_app(settings, store, work=work), base_url=BASE)


def wait_until_idle(client: TestClient, timeout: float = 90.0) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    counts: dict[str, int] = {}
    while time.monotonic() < deadline:
        counts = client.get("/api/agent/status").json()["counts"]
        if not counts.get("new") and not counts.get("in_progress"):
            return dict(counts)
        time.sleep(0.1)
    raise AssertionError(f"the agent did not finish the inbox: {counts}")


# --- pages --------------------------------------------------------------------------------


def test_health_and_empty_monitor(settings: Settings, store: Store) -> None:
    with client_for(settings, store) as client:
        assert client.get("/health").json() == {"status": "ok"}
        page = client.get("/")
        assert page.status_code == 200 and "No tickets yet" in page.text
        assert "agent not running" in page.text
        assert client.get("/review").text.count("No drafts are waiting") == 1


def test_background_agent_stages_the_inbox_and_pages_escape_ticket_text(
    settings: Settings, store: Store
) -> None:
    load_demo(store)
    store.add_tickets([Ticket("T-XSS", f"Webhook question {XSS}", f"How do I verify? {XSS}")])
    with client_for(settings, store, work=True) as client:
        counts = wait_until_idle(client)
        assert counts.get("pending_review", 0) > 0
        deadline = time.monotonic() + 30  # the count of handled tickets follows the staging
        while client.get("/api/agent/status").json()["processed"] < sum(counts.values()):
            assert time.monotonic() < deadline, "the worker did not count every staged ticket"
            time.sleep(0.05)
        status = client.get("/api/agent/status").json()
        assert status["working"] and status["processed"] == sum(counts.values())
        for path in ("/", "/monitor/live", "/tickets/T-XSS", "/tickets/T-2020", "/review"):
            page = client.get(path).text
            assert XSS not in page, path
        assert ESCAPED in client.get("/").text
        assert ESCAPED in client.get("/tickets/T-2020").text
        review = client.get("/review?ticket=T-2020").text
        assert 'data-ticket="T-2020"' in review and ESCAPED in review


def test_ticket_arriving_while_running_is_picked_up(settings: Settings, store: Store) -> None:
    load_demo(store)
    with client_for(settings, store, work=True) as client:
        wait_until_idle(client)
        store.add_tickets([Ticket("T-LATE", "Rate limits", "What is the rate limit on Starter?")])
        wait_until_idle(client)
        assert store.ticket_status("T-LATE") is not Status.NEW


def test_monitor_shows_counters_caps_rows_and_activity(
    settings: Settings, demo_store: Store
) -> None:
    with client_for(settings, demo_store) as client:
        live = client.get("/monitor/live").text
    counters = dict(re.findall(r'data-count="(\w+)" href="[^"]*"><b>(\d+)</b>', live))
    counts = demo_store.status_counts()
    assert counters["pending_review"] == str(counts["pending_review"])
    assert counters["escalated"] == str(counts["escalated"])
    assert counters["new"] == "0" and counters["reviewed"] == "0"
    assert live.count('<tr id="row-') == 25 and 'id="monitor-next"' in live  # paged
    assert 'id="cap-calls"' in live
    with client_for(settings, demo_store) as client:
        found = client.get("/monitor/live?q=T-2001").text
    assert 'id="row-T-2001"' in found and "of 1<" in found
    assert "agent: drafted" in live  # recent activity, the reason in words
    for phase in PHASES:
        assert f'<li class="">{phase}</li>' in live  # nothing in hand: no stage lit


def test_review_page_shows_claims_evidence_highlights_and_confidences(
    settings: Settings, demo_store: Store
) -> None:
    with client_for(settings, demo_store) as client:
        page = client.get("/review?ticket=T-2001").text
    assert 'data-ticket="T-2001"' in page
    assert page.count('class="claim supported"') >= 1
    assert re.search(r'<mark data-claim="0"[^>]*>[^<]+</mark>', page)
    assert "evidence (similarity)" in page and "<meter" in page
    assert 'name="csrf_token"' in page and 'id="approve-button"' in page


def test_ticket_page_is_a_timeline_of_every_stage(settings: Settings, demo_store: Store) -> None:
    with client_for(settings, demo_store) as client:
        page = client.get("/tickets/T-2001").text
        stages = re.findall(r'data-stage="(\w+)"', page)
        assert stages[:2] == ["tool", "safety"] and stages[-1] == "stage"
        for stage in ("classify", "retrieve", "evidence", "draft", "check"):
            assert stage in stages
        assert "signals (rank · score)" in page  # the retrieval explanation
        assert "the offline engine classifies, drafts and checks without a model" in page
        assert client.get("/tickets/T-2001?attempt=1").status_code == 200
        missing = client.get("/tickets/T-NOPE")
        assert missing.status_code == 404 and "No ticket" in missing.text
        assert "<!doctype html>" in missing.text
        assert client.get("/tickets/a..b").status_code == 422


def test_a_ticket_near_a_risk_says_so_on_its_page(settings: Settings, demo_store: Store) -> None:
    with client_for(settings, demo_store) as client:
        page = client.get("/tickets/T-2034").text
    assert "Near a risk" in page and "comes near security_incident" in page
    assert "No safety concern." not in page


def test_stats_page_draws_svg_charts_and_lists_gaps(settings: Settings, demo_store: Store) -> None:
    with client_for(settings, demo_store) as client:
        page = client.get("/stats").text
        data = client.get("/api/stats").json()
    assert page.count("<svg") == 4
    assert "What the agent did" in page and "no article covers it" in page  # reasons in words
    weak = data["stats"]["escalated_by_reason"]["weak_evidence"]
    assert weak > 0 and f">{weak}</text>" in page  # the bar's value label
    assert data["gaps"] and 'id="gaps"' in page
    first = data["gaps"][0]["tickets"][0]["ticket_id"]
    assert f'href="/tickets/{first}"' in page


def test_unknown_page_is_a_404_page(settings: Settings, store: Store) -> None:
    with client_for(settings, store) as client:
        response = client.get("/nowhere", headers={"accept": "text/html"})
    assert response.status_code == 404 and "<h1>404</h1>" in response.text


# --- the worker's live phase ----------------------------------------------------------


def test_worker_reports_each_stage_of_the_ticket_in_hand(
    settings: Settings, demo_store: Store
) -> None:
    worker = AgentWorker(settings, demo_store, Knowledge.from_store(demo_store))
    seen: list[tuple[str | None, str | None]] = []

    def on_stage(ticket_id: str, stage: str) -> None:
        worker.on_stage(ticket_id, stage)
        snap = worker.snapshot()
        seen.append((snap.current, snap.phase))

    demo_store.add_tickets(
        [Ticket("T-0", "Rate limit on Growth?", "How many requests per second?")]
    )
    run_inbox(
        worker.pipeline,
        max_tickets=1,
        on_start=worker.on_start,
        on_stage=on_stage,
        on_done=worker.on_done,
    )
    assert seen == [("T-0", phase) for phase in PHASES]
    assert demo_store.ticket_status("T-0") is Status.PENDING_REVIEW
    snap = worker.snapshot()
    assert snap.current is None and snap.phase is None and snap.processed == 1
    assert not snap.running  # never started


def test_worker_stops_at_its_ticket_cap(settings: Settings, store: Store) -> None:
    load_demo(store)
    app = create_app(settings, store, work=True, max_tickets=5)
    with TestClient(app, base_url=BASE) as client:
        deadline = time.monotonic() + 60
        while not client.get("/api/agent/status").json()["caps"]["capped"]:
            assert time.monotonic() < deadline, "the worker never reached its cap"
            time.sleep(0.1)
        status = client.get("/api/agent/status").json()
        assert status["caps"]["tickets_used"] == 5 and status["caps"]["max_tickets"] == 5
        assert status["counts"]["new"] == 47 - 5
        assert "stopped at the ticket cap" in client.get("/monitor/live").text


# --- pure functions -------------------------------------------------------------------


def test_highlight_finds_verbatim_loose_and_paraphrased_claims() -> None:
    text = "Plans differ. The Growth plan allows 50 requests per second. Bursts are fine."
    segments = highlight(text, [(0, "The Growth plan allows 50 requests per second.")])
    assert [s.claim for s in segments] == [None, 0, None]
    assert "".join(s.text for s in segments) == text
    loose = highlight(text, [(1, "the growth  plan allows 50 requests per second")])
    assert [s.text for s in loose if s.claim == 1] == [
        "The Growth plan allows 50 requests per second"
    ]
    para = highlight(text, [(2, "Growth allows 50 requests each second")])
    assert [s.text for s in para if s.claim == 2] == [
        "The Growth plan allows 50 requests per second."
    ]
    assert all(s.claim is None for s in highlight(text, [(3, "Refunds take ten days.")]))
    assert highlight("", [(0, "x")]) == ()


def test_highlight_never_overlaps_and_keeps_markup_as_text() -> None:
    text = f"{XSS} Keys rotate every 90 days."
    segments = highlight(text, [(0, "Keys rotate every 90 days."), (1, "rotate every 90 days")])
    assert "".join(s.text for s in segments) == text
    assert [s.claim for s in segments if s.claim is not None] == [0]


def test_bar_chart_geometry() -> None:
    chart = bar_chart("t", [("a", 10.0), ("b", 5.0), ("c", 0.0)], keys=["x"])
    assert [b.width for b in chart.bars] == [chart.plot_width, chart.plot_width / 2, 0.0]
    assert [b.y for b in chart.bars] == [0, 26, 52] and chart.bars[0].key == "x"
    assert [b.display for b in chart.bars] == ["10", "5", "0"]
    assert bar_chart("empty", []).empty
    assert all(b.width == 0 for b in bar_chart("zeros", [("a", 0.0)]).bars)


def test_trace_views_count_model_calls_tokens_and_latency() -> None:
    events = [
        {"stage": "safety", "status": "pass", "detail": {}, "duration_ms": 1.0},
        {"stage": "retrieve", "status": "ok", "detail": {"hits": []}, "duration_ms": 4.0},
        {
            "stage": "model",
            "status": "ok",
            "detail": {
                "call": "draft",
                "model": "m",
                "prompt_tokens": 100,
                "completion_tokens": 20,
                "latency_ms": 250.0,
                "cache_hit": False,
            },
            "duration_ms": 251.0,
        },
        {
            "stage": "model",
            "status": "ok",
            "detail": {
                "call": "check",
                "prompt_tokens": 50,
                "completion_tokens": 5,
                "cache_hit": True,
            },
            "duration_ms": 1.0,
        },
        {"stage": "draft", "status": "revision 0", "detail": {"sentences": []}, "duration_ms": 2.0},
        {"stage": "check", "status": "fail", "detail": {"problems": []}, "duration_ms": 3.0},
        {"stage": "draft", "status": "revision 1", "detail": {"sentences": []}, "duration_ms": 2.0},
    ]
    calls = model_calls(events)
    assert [(c.purpose, c.tokens, c.latency_ms, c.cache_hit) for c in calls] == [
        ("draft", 120, 250.0, False),
        ("check", 55, 1.0, True),
    ]
    assert token_totals(events) == {"calls": 1, "prompt": 100, "response": 20, "total": 120}
    assert latencies(events) == {"retrieval_ms": 4.0, "generation_ms": 259.0, "total_ms": 264.0}
    items = timeline(events)
    assert [i.elapsed_ms for i in items][:3] == [1.0, 5.0, 256.0]
    assert items[0].tone == "ok" and items[5].tone == "warn"
    assert [r["check"] is not None for r in revisions(events)] == [True, False]


def test_review_item_ties_claims_problems_and_passages(
    settings: Settings, demo_store: Store
) -> None:
    record = demo_store.latest_outcome("T-2001")
    assert record is not None
    events = demo_store.trace("T-2001")
    passages = {"kb-x#y": Passage("kb-x#y", "kb-x", DocKind.KB, "Title", ("Title",), "A b c.")}
    item = review_item(record, events, passages.get)
    assert [c.index for c in item.claims] == list(range(len(record.draft["sentences"])))
    assert all(c.supported for c in item.claims)
    cited = {cite for c in item.claims for cite in c.citations}
    assert cited <= {e.id for e in item.evidence}
    assert all(e.segments == () for e in item.evidence)  # none of them is in this lookup
    # the offline classifier's fixed confidence says nothing: it is not shown as a meter
    assert [m.name for m in item.meters] == ["evidence (similarity)", "draft confidence"]
    assert all(m.tooltip and m.low < m.high for m in item.meters)
    assert "[" not in item.plain_answer


def test_queue_order_and_next_after(demo_store: Store) -> None:
    queue = queue_order(demo_store.staged(Status.PENDING_REVIEW))
    priorities = [r.ticket.priority for r in queue]
    assert priorities == sorted(priorities, reverse=True)
    assert next_after(["a", "b", "c"], "b") == "c"
    assert next_after(["a", "b", "c"], "c") == "b"
    assert next_after(["a"], "a") is None
    assert next_after(["a", "b"], "zz") == "a"


def test_templates_never_mark_data_safe() -> None:
    folder = Path(__file__).parents[1] / "src/supportagent/web/templates"
    for template in folder.glob("*.html"):
        text = template.read_text(encoding="utf-8")
        assert "|safe" not in text and "autoescape false" not in text, template.name


@pytest.mark.parametrize("path", ["/static/app.js", "/static/app.css"])
def test_static_assets_are_served(settings: Settings, store: Store, path: str) -> None:
    with client_for(settings, store) as client:
        assert client.get(path).status_code == 200
