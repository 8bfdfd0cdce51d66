"""`eval run` on a tiny corpus in a temporary directory, with summary numbers worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from supportagent.cli import app
from supportagent.evals.checker import scores
from supportagent.evals.run import TicketLabel, TicketRun, facts_found, summarize

ARTICLE = """---
id: kb-keys
title: Idempotency keys
---
# Idempotency keys

## How long keys are kept

Acme remembers an idempotency key for 24 hours. A request that reuses a key with a different
body is rejected with HTTP 409.

## Roles

Only a user with the Billing Admin role can download invoices.
"""
TICKETS = [
    {
        "id": "T-1",
        "subject": "Key lifetime",
        "body": "How long does Acme remember an idempotency key?",
        "expected_bucket": "answerable",
        "expected_docs": ["kb-keys"],
        "expected_facts": [["24 hours", "one day"]],
        "split": "tune",
    },
    {
        "id": "T-2",
        "subject": "Roles",
        "body": "Which role is allowed to download invoices?",
        "expected_bucket": "answerable",
        "expected_docs": ["kb-keys"],
        "expected_facts": [["Billing Admin"]],
        "split": "test",
    },
    {
        "id": "T-3",
        "subject": "Dashboard bug",
        "body": "The dashboard crashes with an error when I click export.",
        "expected_bucket": "not_a_question",
        "split": "test",
    },
]


def test_eval_run_on_a_tiny_corpus(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "kb-keys.md").write_text(ARTICLE, encoding="utf-8")
    resolved = tmp_path / "resolved.jsonl"
    resolved.write_text(
        json.dumps(
            {
                "id": "RT-1",
                "question": "Old keys?",
                "answer": "Keys expire.",
                "linked_docs": ["kb-keys"],
            }
        )
        + "\n",
        encoding="utf-8",
    )
    tickets = tmp_path / "tickets.jsonl"
    tickets.write_text("".join(json.dumps(t) + "\n" for t in TICKETS), encoding="utf-8")
    home = tmp_path / "home"
    args = ["--home", str(home), "--engine", "offline", "eval", "run", "--kb", str(kb)]
    args += ["--resolved", str(resolved), "--tickets", str(tickets), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    by_id = {t["id"]: t for t in report["tickets"]}
    assert set(by_id) == {"T-1", "T-2", "T-3"}
    assert set(by_id["T-1"]) == {
        "id", "status", "reason_code", "bucket", "answer", "citations", "flags", "confidence"
    }  # fmt: skip
    assert by_id["T-1"]["status"] == "pending_review" and "24 hours" in by_id["T-1"]["answer"]
    assert by_id["T-1"]["citations"] == ["kb-keys"]
    assert by_id["T-2"]["status"] == "pending_review" and "Billing Admin" in by_id["T-2"]["answer"]
    assert by_id["T-3"]["status"] == "routed" and by_id["T-3"]["answer"] is None
    summary = report["summary"]
    # Worked out by hand: 3/3 buckets, both drafts cite only kb-keys and hold their facts.
    assert summary["bucket_accuracy"] == 1.0
    assert summary["citation_hit_rate"] == 1.0 and summary["citation_precision"] == 1.0
    assert (summary["key_fact_hits"], summary["drafts_with_expected_facts"]) == (2, 2)
    assert summary["escalation_precision"] is None  # nothing escalated
    assert summary["model_calls"] == 0
    assert summary["splits"]["tune"]["tickets"] == 1 and summary["splits"]["test"]["tickets"] == 2
    # Saved as the latest result of this eval under the data home.
    saved = list((home / "evals").glob("run--*.json"))
    assert len(saved) == 1


def _run(
    tid: str, status: str, bucket: str, answer: str | None, cites: tuple[str, ...]
) -> TicketRun:
    return TicketRun(tid, status, "r", bucket, answer, cites, (), None, {"draft": 2.0})


def test_summary_numbers_by_hand() -> None:
    runs = [
        _run("A", "pending_review", "answerable", "Kept for 24 hours.", ("kb-1", "RT-9")),
        _run("B", "escalated", "needs_human", None, ()),
        _run("C", "escalated", "answerable", None, ()),
        _run("D", "pending_review", "answerable", "Up to 8 times.", ("kb-2",)),
    ]
    labels = {
        "A": TicketLabel("answerable", ("kb-1",), (("24 hours",), ("409",))),
        "B": TicketLabel("needs_human"),
        "C": TicketLabel("answerable", conflict="c1", expected_facts=(("x",),)),
        "D": TicketLabel("needs_human", ("kb-2",), (("8 times", "eight"),), conflict="c2"),
    }
    s = summarize(runs, labels)
    assert s["bucket_accuracy"] == 0.75  # A, B and C right, D wrong
    assert s["escalation_precision"] == 0.5 and s["escalation_recall"] == 0.5
    assert s["citation_hit_rate"] == 1.0 and s["citation_precision"] == round(2 / 3, 4)
    assert (s["key_fact_hits"], s["drafts_with_expected_facts"]) == (1, 2)
    assert s["conflicts_one_sided"] == []
    assert s["ms_per_ticket"] == 2.0


def test_key_facts_need_every_group() -> None:
    assert facts_found("Kept for 24 HOURS, then a 409.", [["24 hours", "a day"], ["409"]])
    assert not facts_found("Kept for 24 hours.", [["24 hours"], ["409"]])


def test_checker_scores_by_hand() -> None:
    s = scores(
        ["unsupported", "supported", "unsupported", "supported"],
        ["unsupported", "unsupported", "supported", "supported"],
    )
    assert s["balanced_accuracy"] == 0.5
    assert s["precision_unsupported"] == 0.5 and s["recall_unsupported"] == 0.5
