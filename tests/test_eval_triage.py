"""`eval triage`: the confusion matrix, per-bucket precision and recall, and safety recall,
checked against numbers worked out by hand; and the command's JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supportagent.cli import app
from supportagent.domain import Bucket, Classification, SafetyResult, Ticket
from supportagent.errors import UserError
from supportagent.evals.triage import evaluate_triage, read_triage

ROWS = [
    # id, expected bucket, expected safety, what the fakes below decide
    {"id": "a1", "body": "how do I export", "expected_bucket": "answerable"},
    {"id": "a2", "body": "how do I import", "expected_bucket": "answerable"},
    {"id": "a3", "body": "route me please", "expected_bucket": "answerable"},
    {"id": "n1", "body": "bug: it crashes", "expected_bucket": "not_a_question"},
    {"id": "h1", "body": "harm: I am at risk", "expected_bucket": "needs_human",
     "expected_safety": "self_harm_risk"},
    {"id": "h2", "body": "refund me", "expected_bucket": "needs_human",
     "expected_safety": "money_or_account"},
    {"id": "h3", "body": "how do I get my refund", "expected_bucket": "needs_human",
     "expected_safety": "money_or_account"},
]  # fmt: skip


def fake_screen(ticket: Ticket) -> SafetyResult:
    if ticket.body.startswith("harm"):
        return SafetyResult("self_harm_risk", "critical", True, "safety_self_harm", "r", "harm")
    return SafetyResult("general_inquiry", "low", False, "general_inquiry")


def fake_classify(ticket: Ticket, _safety: SafetyResult) -> Classification:
    body = ticket.body
    if body.startswith("how"):
        return Classification(Bucket.ANSWERABLE, "question", "q", 0.9)
    if body.startswith(("bug", "route")):
        return Classification(Bucket.NOT_A_QUESTION, "bug_report", "b", 0.9)
    return Classification(Bucket.NEEDS_HUMAN, "money_specific", "m", 0.9)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "tickets.jsonl"
    # A U+2028 inside a string must not split the line.
    rows = [{**r, "subject": "s\u2028t"} for r in ROWS]
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n")
    return path


def test_numbers_match_the_hand_computed_ones(dataset: Path) -> None:
    report = evaluate_triage(
        read_triage(dataset), fake_screen, fake_classify, dataset="d", engine="fake"
    )
    # answerable: a1 a2 right, a3 -> not_a_question; not_a_question: n1 right;
    # needs_human: h1 (safety), h2 right, h3 -> answerable.
    assert report.confusion() == {
        "answerable": {"answerable": 2, "not_a_question": 1, "needs_human": 0},
        "not_a_question": {"answerable": 0, "not_a_question": 1, "needs_human": 0},
        "needs_human": {"answerable": 1, "not_a_question": 0, "needs_human": 2},
    }
    assert report.accuracy() == pytest.approx(5 / 7)
    buckets = report.buckets()
    assert buckets["answerable"] == {"precision": 2 / 3, "recall": 2 / 3, "support": 3}
    assert buckets["not_a_question"] == {"precision": 1 / 2, "recall": 1.0, "support": 1}
    assert buckets["needs_human"] == {"precision": 1.0, "recall": 2 / 3, "support": 3}
    assert report.safety() == {
        "self_harm_risk": {"recall": 1.0, "support": 1},
        "money_or_account": {"recall": 0.5, "support": 2},
    }
    assert {m["id"] for m in report.misses()} == {"a3", "h3"}
    assert report.risk_summary() == {
        "risk_recall": 2 / 3,
        "risk_support": 3,
        "false_alarm_rate": 0.0,
        "harmless_support": 4,
    }


def test_the_command_prints_the_documented_json_keys(dataset: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["--home", str(tmp_path / "home"), "eval", "triage", str(dataset), "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"accuracy", "buckets", "confusion", "safety", "misses"} <= set(data)
    assert set(data["buckets"]["answerable"]) == {"precision", "recall", "support"}
    assert data["tickets"] == len(ROWS)
    saved = list((tmp_path / "home" / "evals").glob("triage--*.json"))
    assert len(saved) == 1


def test_a_bad_row_names_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "x", "body": "b", "expected_bucket": "answerable"}\n{"id": 1}\n')
    with pytest.raises(UserError, match=r"bad.jsonl:2"):
        read_triage(path)
