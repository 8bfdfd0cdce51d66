"""The CLI through Typer's runner, against a real SQLite store in a temporary home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supportagent.cli import app

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture
def demo() -> None:
    code, out = invoke("load-demo")
    assert code == 0, out


def test_ingest_reports_bad_rows_loads_good_ones_and_exits_non_zero(tmp_path: Path) -> None:
    tickets = tmp_path / "inbox.jsonl"
    tickets.write_text(
        '{"id": "T-1", "subject": "Keys", "body": "Where are my API keys?"}\n'
        "{not json\n"
        '{"id": "../x", "subject": "s", "body": "b"}\n'
        '{"id": "T-1", "subject": "again", "body": "dup"}\n',
        encoding="utf-8",
    )
    code, out = invoke("ingest", "tickets", str(tickets))
    assert code == 1
    assert "1 tickets added; 3 rejected" in out
    assert f"{tickets}:2" in out and f"{tickets}:3" in out and f"{tickets}:4" in out
    code, out = invoke("list-data")
    assert code == 0 and "T-1" in out


def test_ingesting_the_same_tickets_again_skips_them_with_a_message(tmp_path: Path) -> None:
    tickets = tmp_path / "inbox.jsonl"
    tickets.write_text('{"id": "T-1", "subject": "Keys", "body": "b"}\n', encoding="utf-8")
    assert invoke("ingest", "tickets", str(tickets))[0] == 0
    code, out = invoke("ingest", "tickets", str(tickets))
    assert code == 1 and "already in the store" in out


def test_missing_path_is_one_clear_line(tmp_path: Path) -> None:
    code, out = invoke("ingest", "kb", str(tmp_path / "nope"))
    assert code == 1
    assert "error:" in out and "nope" in out and "Traceback" not in out


def test_unknown_ticket_id_is_a_clear_error(demo: None) -> None:
    code, out = invoke("agent", "T-0000")
    assert code == 1 and "No ticket with id 'T-0000'" in out


def test_agent_demo_shows_the_gate_denying_the_decoy_and_stages_for_review(demo: None) -> None:
    code, out = invoke("agent", "T-2001", "--demo-forbidden-post")
    assert code == 0, out
    assert "GATE DENIED" in out and "post_to_customer" in out
    assert "pending_review" in out


def test_a_ticket_near_a_risk_does_not_read_as_no_safety_concern(demo: None) -> None:
    # T-2034's sentence about proving the sending address comes near a security incident
    # without firing it: the timeline says so, as the classify line that acts on it does.
    code, out = invoke("agent", "T-2034")
    assert code == 0, out
    flat = " ".join(out.split())
    assert "near a risk, not escalated by itself" in flat
    assert "comes near security_incident" in flat
    assert "no safety concern" not in flat


def test_inbox_prints_outcomes_and_bucket_accuracy(demo: None) -> None:
    code, out = invoke("inbox")
    assert code == 0, out
    assert "tickets handled" in out and "Outcomes" in out
    assert "bucket accuracy:" in out
    code, out = invoke("inbox")
    assert "0 tickets handled" in out  # handled tickets are skipped


def test_review_approve_amend_reject_and_second_decision_refused(demo: None) -> None:
    assert invoke("inbox")[0] == 0
    code, out = invoke("review-queue")
    assert code == 0
    pending = [line.split()[0] for line in out.splitlines() if line.startswith("T-")]
    assert len(pending) >= 3, out
    first, second, third = pending[:3]
    code, out = invoke("review", "approve", first, "my own extra text")
    assert code == 1 and f"review amend {first}" in out  # never approves and drops the text
    code, out = invoke("review", "approve", first)
    assert code == 0 and f"added to the knowledge base as AR-{first}, searchable now" in out
    code, out = invoke("review", "amend", second, "Here is the corrected answer.")
    assert code == 0 and f"AR-{second}" in out
    code, out = invoke("review", "reject", third, "Cites the wrong plan.")
    assert code == 0 and "handed_off" in out
    code, out = invoke("review", "approve", first)
    assert code == 1 and "not pending_review" in out
    code, out = invoke("review", "reject", pending[3] if len(pending) > 3 else first)
    assert code == 1


def test_triage_json_is_structured_and_leaves_the_inbox_alone(demo: None) -> None:
    before = invoke("list-data")[1]
    code, out = invoke("triage", "--ticket", "How do I verify webhook signatures?", "--json")
    assert code == 0, out
    result = json.loads(out)
    assert set(result) >= {"status", "reason_code", "safety", "retrieval", "answer", "trace"}
    assert result["safety"]["category"] == "general_inquiry"
    assert result["retrieval"][0]["hits"]
    assert invoke("list-data")[1] == before


def test_triage_escalates_a_safety_ticket(demo: None) -> None:
    code, out = invoke("triage", "--ticket", "Our lawyer will file a lawsuit against you.")
    assert code == 0 and "escalated" in out and "safety_legal_threat" in out
