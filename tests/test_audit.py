"""The audit log over real SQLite and PostgreSQL: content, chain, tampering, CSV, concurrency."""

from __future__ import annotations

import csv
import io
import itertools
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from supportagent.agent.knowledge import Knowledge
from supportagent.agent.pipeline import Pipeline, PipelineConfig
from supportagent.cli import app
from supportagent.domain import (
    Bucket,
    DocKind,
    Document,
    Outcome,
    Status,
    Ticket,
)
from supportagent.engines.offline import OfflineEngine
from supportagent.review import approve, reject
from supportagent.store.audit import (
    GENESIS,
    audit_events,
    audit_head,
    event_hash,
    export_csv,
    model_usage,
    read_events,
)
from supportagent.store.audit_payload import CSV_COLUMNS, ModelUsage, agent_payload
from supportagent.store.audit_verify import verify
from supportagent.store.llm_records import record_model_call
from supportagent.store.store import Store

#: The columns ../shared/design.md promises, in its order.
DESIGN_COLUMNS = [
    "ticket_id",
    "timestamp",
    "safety_category",
    "safety_severity",
    "matched_rule",
    "auto_escalated",
    "bucket",
    "retrieved_doc_ids",
    "top_doc_title",
    "top_score",
    "low_confidence",
    "cited_doc_ids",
    "llm_confidence",
    "prompt_tokens",
    "response_tokens",
    "cache_hit",
    "retrieval_latency_ms",
    "generation_latency_ms",
    "status",
    "response",
]
KB = [
    Document(
        "kb-rate-limits",
        DocKind.KB,
        "Rate limits",
        "# Rate limits\n\n## Handling 429\n\nWhen you exceed the limit the API answers 429 with a "
        "Retry-After header. Wait the number of seconds in Retry-After before retrying.",
    ),
    Document(
        "kb-webhooks",
        DocKind.KB,
        "Webhook signatures",
        "# Webhook signatures\n\nEvery webhook carries an X-Kestrel-Signature header. "
        "Verify the signature with your signing secret before trusting the payload.",
    ),
]
TICKETS = [
    Ticket("T-1", "429 rate limit", "How long should I wait after a 429 rate limit?"),
    Ticket("T-2", "Dashboard bug", "The dashboard crashes with an error when I click export."),
    Ticket("T-3", "Leaked key", "Our live API key was leaked in a public GitHub repo!"),
    Ticket("T-4", "Webhook signature", "How do I verify the X-Kestrel-Signature header?"),
]


def _run_history(store: Store) -> Knowledge:
    """Four tickets through the real pipeline, then an approval and a rejection."""
    store.upsert_documents(KB)
    knowledge = Knowledge.from_store(store)
    store.add_tickets(TICKETS)
    pipeline = Pipeline(store, knowledge, OfflineEngine(), PipelineConfig())
    for ticket in TICKETS:
        pipeline.run(ticket.id)
    assert store.ticket_status("T-1") is Status.PENDING_REVIEW
    assert store.ticket_status("T-4") is Status.PENDING_REVIEW
    approve(store, knowledge, "T-1", reviewer="ana")
    reject(store, "T-4", '=HYPERLINK("x") cites the wrong header', reviewer="bo")
    return knowledge


def test_every_decision_is_a_chained_event_with_its_content(any_store: Store) -> None:
    _run_history(any_store)
    events = list(read_events(any_store.engine))
    assert [(e["ticket_id"], e["event"]) for e in events] == [
        ("T-1", "agent.staged"),
        ("T-2", "agent.staged"),
        ("T-3", "agent.staged"),
        ("T-4", "agent.staged"),
        ("T-1", "review.approve"),
        ("T-4", "review.reject"),
    ]
    assert [e["seq"] for e in events] == [1, 2, 3, 4, 5, 6]
    assert events[0]["prev_hash"] == GENESIS
    for before, after in itertools.pairwise(events):
        assert after["prev_hash"] == before["hash"]

    drafted, routed, escalated = (e["data"] for e in events[:3])
    assert drafted["status"] == "pending_review" and drafted["bucket"] == "answerable"
    assert "kb-rate-limits" in drafted["retrieved_doc_ids"]
    assert drafted["top_score"] > 0 and drafted["top_doc_title"]
    assert drafted["low_confidence"] is False and drafted["evidence_coverage"] >= 0.4
    assert drafted["cited_doc_ids"] == ["kb-rate-limits"]
    assert 0 < drafted["confidence"] <= 1 and "Retry-After" in drafted["response"]
    assert drafted["retrieval_latency_ms"] > 0 and drafted["generation_latency_ms"] > 0
    assert drafted["safety_category"] == "general_inquiry" and drafted["auto_escalated"] is False
    # The offline engine makes no model calls: token columns stay empty, not zero.
    assert drafted["prompt_tokens"] is None and drafted["cache_hit"] is None
    assert (routed["status"], routed["reason_code"]) == ("routed", "bug_report")
    assert routed["retrieved_doc_ids"] == [] and routed["retrieval_latency_ms"] is None
    assert escalated["auto_escalated"] is True and escalated["matched_rule"]
    assert events[2]["actor"] == "agent:offline"

    approval, rejection = events[4], events[5]
    assert approval["actor"] == "ana" and approval["data"]["resolved_doc_id"] == "AR-T-1"
    assert approval["data"]["status"] == "approved"
    assert rejection["data"]["status"] == "handed_off" and rejection["data"]["reason"]
    assert rejection["data"]["original_draft"] == drafted_answer(any_store, "T-4")
    assert verify(any_store.engine).intact


def drafted_answer(store: Store, ticket_id: str) -> str:
    record = store.latest_outcome(ticket_id)
    assert record is not None and record.draft is not None
    return str(record.draft["answer"])


def _tamper(store: Store, statement: Any) -> None:
    with store.engine.begin() as conn:
        conn.execute(statement)


def test_verify_names_an_edited_row(any_store: Store) -> None:
    _run_history(any_store)
    _tamper(
        any_store,
        audit_events.update()
        .where(audit_events.c.seq == 5)
        .values(payload=audit_events.c.payload.op("||")(" "), actor="mallory"),
    )
    report = verify(any_store.engine)
    assert not report.intact
    [problem] = report.problems
    assert (problem.seq, problem.kind) == (5, "edited")
    assert "event 5 (review.approve, ticket T-1) was edited" in problem.message


def test_verify_names_an_edited_row_whose_hash_was_recomputed(any_store: Store) -> None:
    _run_history(any_store)
    row = next(e for e in read_events(any_store.engine) if e["seq"] == 2)
    forged = row["payload"].replace("bug_report", "feature_request")
    fields = (row["created_at"], row["ticket_id"], row["event"], row["actor"], forged)
    new_hash = event_hash(2, row["prev_hash"], *fields)
    _tamper(
        any_store,
        audit_events.update().where(audit_events.c.seq == 2).values(payload=forged, hash=new_hash),
    )
    [problem] = verify(any_store.engine).problems
    assert (problem.seq, problem.kind) == (2, "edited")
    assert "event 3 recorded a different hash" in problem.message


def test_verify_names_a_deleted_row_in_the_middle_and_at_the_end(any_store: Store) -> None:
    _run_history(any_store)
    _tamper(any_store, audit_events.delete().where(audit_events.c.seq == 3))
    [problem] = verify(any_store.engine).problems
    assert (problem.seq, problem.kind) == (3, "deleted")
    assert "event 3 is missing (deleted), after event 2 (ticket T-2)" in problem.message

    _tamper(any_store, audit_events.delete().where(audit_events.c.seq == 6))
    problems = verify(any_store.engine).problems
    assert [(p.seq, p.kind) for p in problems] == [(3, "deleted"), (6, "deleted")]
    assert "at the end of the chain" in problems[1].message


def test_an_anchor_catches_a_rewrite_of_the_whole_chain(any_store: Store) -> None:
    _run_history(any_store)
    report = verify(any_store.engine)
    anchor = (report.head_seq, report.head_hash)
    # Rewrite every event from 1 on with fresh hashes, and the head: the chain itself is fine.
    rows = list(read_events(any_store.engine))
    prev = GENESIS
    with any_store.engine.begin() as conn:
        for row in rows:
            actor = "mallory" if row["seq"] == 1 else row["actor"]
            fields = (row["created_at"], row["ticket_id"], row["event"], actor, row["payload"])
            digest = event_hash(row["seq"], prev, *fields)
            conn.execute(
                audit_events.update()
                .where(audit_events.c.seq == row["seq"])
                .values(actor=actor, prev_hash=prev, hash=digest)
            )
            prev = digest
        conn.execute(audit_head.update().values(last_hash=prev))
    assert verify(any_store.engine).intact
    [problem] = verify(any_store.engine, anchor).problems
    assert (problem.seq, problem.kind) == (anchor[0], "anchor")


def test_csv_export_has_the_design_columns_and_one_row_per_event(any_store: Store) -> None:
    _run_history(any_store)
    out = io.StringIO()
    assert export_csv(any_store.engine, out) == 6
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert list(rows[0]) == list(CSV_COLUMNS)
    assert list(CSV_COLUMNS)[: len(DESIGN_COLUMNS)] == DESIGN_COLUMNS
    first = rows[0]
    assert first["ticket_id"] == "T-1" and first["status"] == "pending_review"
    assert "kb-rate-limits" in first["retrieved_doc_ids"].split(";")
    assert first["cited_doc_ids"] == "kb-rate-limits" and float(first["llm_confidence"]) > 0
    assert first["low_confidence"] == "false" and first["prompt_tokens"] == ""
    assert datetime.fromisoformat(first["timestamp"]).tzinfo is not None
    assert rows[2]["auto_escalated"] == "true"
    assert rows[4]["event"] == "review.approve" and rows[4]["actor"] == "ana"
    # Customer or reviewer text that a spreadsheet would run as a formula is neutralised.
    assert rows[5]["reason"].startswith("'=HYPERLINK")


def _call(prompt: int, completion: int, cache_hit: bool) -> dict[str, Any]:
    return {
        "stage": "draft",
        "model": "stub-model",
        "prompt": "draft@1",
        "status": "ok",
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "latency_ms": 12.5,
        "cache_hit": cache_hit,
        "retries": 0,
        "error": None,
        "messages": None,
        "reply": None,
    }


def test_the_staged_event_sums_the_model_calls_of_its_attempt(any_store: Store) -> None:
    any_store.add_tickets([Ticket("T-1", "s", "b"), Ticket("T-2", "s", "b")])
    record_model_call(any_store, "T-1", 1, _call(999, 999, False))  # an earlier attempt
    record_model_call(any_store, "T-2", 2, _call(7, 7, False))  # another ticket
    any_store.begin_attempt("T-1")
    attempt = any_store.begin_attempt("T-1")
    record_model_call(any_store, "T-1", attempt, _call(100, 20, False))
    record_model_call(any_store, "T-1", attempt, _call(50, 5, True))
    outcome = Outcome("T-1", Status.ESCALATED, "x", Bucket.ANSWERABLE, None, None, (), "llm")
    any_store.stage_outcome(outcome, attempt)
    [event] = read_events(any_store.engine, "T-1")
    data = event["data"]
    assert (data["model_calls"], data["prompt_tokens"], data["response_tokens"]) == (2, 150, 25)
    assert data["cache_hit"] is False  # one of the two calls went to the model
    assert event["actor"] == "agent:llm"
    with any_store.engine.connect() as conn:
        assert model_usage(conn, "T-2", 1) is None  # no calls: empty, not zero
    assert agent_payload({**_OUTCOME_ROW}, [], ModelUsage(1, 10, 2, 1))["cache_hit"] is True
    assert agent_payload({**_OUTCOME_ROW}, [], None)["prompt_tokens"] is None


_OUTCOME_ROW = {"attempt": 1, "status": "escalated", "reason_code": "x", "engine": "llm"}


# --- the CLI ------------------------------------------------------------------------------------

runner = CliRunner()


def test_cli_export_and_verify(store: Store, tmp_path: Path) -> None:
    _run_history(store)
    out = tmp_path / "audit.csv"
    result = runner.invoke(app, ["audit", "export", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "Wrote 6 audit events" in result.output
    with out.open(newline="", encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == 6

    result = runner.invoke(app, ["audit", "verify"])
    assert result.exit_code == 0 and "Audit log intact: 6 events" in result.output
    anchor = result.output.split("elsewhere:")[1].split()[0]
    assert runner.invoke(app, ["audit", "verify", "--anchor", anchor]).exit_code == 0

    _tamper(store, audit_events.delete().where(audit_events.c.seq == 2))
    result = runner.invoke(app, ["audit", "verify"])
    assert result.exit_code == 1
    assert "event 2 is missing (deleted)" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["audit", "verify", "--anchor", "nonsense"], "An anchor is SEQ:HASH"),
        (["audit", "export", "--out", "/no/such/folder/a.csv"], "does not exist"),
    ],
)
def test_cli_bad_input_is_one_line(store: Store, args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and message in " ".join(result.output.split())
    assert "Traceback" not in result.output


def test_cli_review_prints_the_diff_and_the_link(store: Store) -> None:
    _run_history(store)
    result = runner.invoke(app, ["review", "approve", "T-1"])
    assert result.exit_code == 1 and "decided by ana" in result.output
    store.add_tickets([Ticket("T-5", "429 again", "How long should I wait after a 429?")])
    Pipeline(store, Knowledge.from_store(store), OfflineEngine(), PipelineConfig()).run("T-5")
    result = runner.invoke(app, ["review", "amend", "T-5", "Wait for Retry-After seconds."])
    assert result.exit_code == 0, result.output
    assert "T-5 amended: added to the knowledge base as AR-T-5" in result.output
    assert "by cli" in result.output and "+Wait for Retry-After seconds." in result.output


def test_the_staged_event_reports_the_ranked_search_not_the_linked_passages_after_it() -> None:
    def retrieve(status: str, *hits: tuple[str, float]) -> dict[str, object]:
        found = [{"id": f"{d}#p", "doc_id": d, "title": d.upper(), "score": s} for d, s in hits]
        return {"stage": "retrieve", "status": status, "detail": {"hits": found}, "duration_ms": 1}

    trace = [
        retrieve("ok", ("kb-a", 0.031), ("kb-b", 0.02)),
        retrieve("linked", ("kb-z", 0.0)),
        retrieve("question", ("kb-y", 0.0)),
    ]
    payload = agent_payload({**_OUTCOME_ROW}, trace, None)
    assert payload["retrieved_doc_ids"] == ["kb-a", "kb-b"]
    assert (payload["top_doc_title"], payload["top_score"]) == ("KB-A", 0.031)
    assert payload["retrieval_latency_ms"] == 3  # every retrieval step's time counts
