"""The Support Triage Agent's CLI on ours: --batch, --interactive, and the CSV triage log.

Runs the real CLI (Typer's runner, and one real subprocess fed on stdin) against a small KB
in a temporary home; every run must append one row per ticket with exactly the log's columns.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from supportagent.cli import app
from supportagent.config import Settings
from supportagent.triage_log import TRIAGE_LOG_COLUMNS, log_row, mask_secrets, safe_cell
from supportagent.web.app import create_app

SUPPORTAGENT = Path(sys.executable).with_name("supportagent")
runner = CliRunner()

KB = {
    "tokens.md": "---\nid: kb-tokens\ntitle: API tokens\n---\n# API tokens\n\n## Expiry\n\n"
    "API tokens expire 90 days after they are created. Rotate a token under Settings > "
    "Developer.\n",
    "exports.md": "---\nid: kb-exports\ntitle: '=HYPERLINK(\"http://x.example\")'\n---\n"
    "# Exports\n\n## Download links\n\nExport download links work for 7 days.\n",
}
QUESTION = "How long are API tokens valid before they expire?"
LEAK = "Our live API token was leaked in a public GitHub repository!"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir()
    for name, text in KB.items():
        (folder / name).write_text(text, encoding="utf-8")
    result = runner.invoke(app, ["ingest", "kb", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


def _log(settings: Settings) -> list[dict[str, str]]:
    path = settings.home / "triage-log.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == TRIAGE_LOG_COLUMNS
        return list(reader)


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


@pytest.mark.parametrize("suffix", [".csv", ".json", ".jsonl"])
def test_batch_triages_every_row_and_logs_each(
    kb: Path, settings: Settings, tmp_path: Path, suffix: str
) -> None:
    rows: list[dict[str, Any]] = [
        {"id": "B-1", "ticket_text": QUESTION},
        {"id": "B-2", "subject": "Leak", "body": LEAK},
        {"ticket_text": "When do export download links stop working?"},  # no id: row-N
    ]
    path = tmp_path / f"batch{suffix}"
    if suffix == ".csv":
        lines = ["id,subject,body,ticket_text"]
        lines += [
            ",".join(json.dumps(r.get(k, "")) for k in ("id", "subject", "body", "ticket_text"))
            for r in rows
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    elif suffix == ".json":
        path.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code, out = _invoke("triage", "--batch", str(path), "--delay", "0.01")
    assert code == 0, out
    assert "Triage" in out and "Outcomes" in out and "3 tickets triaged" in out
    log = _log(settings)
    assert [r["ticket_id"] for r in log[:2]] == ["B-1", "B-2"]
    assert log[2]["ticket_id"].startswith("row-")
    answered, leaked = log[0], log[1]
    assert answered["cited_doc_id"] == "kb-tokens" and "90 days" in answered["response"]
    assert answered["auto_escalated"] == "false" and answered["low_confidence"] == "false"
    assert float(answered["top_rrf_score"]) > 0
    # The ranked search's documents, best first (not the linked or per-question extras).
    assert answered["retrieved_doc_ids"].split(";")[0] == "kb-tokens"
    assert answered["top_doc_title"] == "API tokens"
    assert leaked["safety_category"] == "security_incident"
    assert leaked["auto_escalated"] == "true" and leaked["matched_rule"]
    assert leaked["response"] == "" and leaked["retrieved_doc_ids"] == ""
    # The second run appends under the same header.
    assert _invoke("triage", "--batch", str(path))[0] == 0
    assert len(_log(settings)) == 6


def test_batch_json_prints_one_result_a_line_and_reports_bad_rows(
    kb: Path, settings: Settings, tmp_path: Path
) -> None:
    path = tmp_path / "batch.jsonl"
    path.write_text(f'{{"id": "J-1", "ticket_text": "{QUESTION}"}}\n{{broken\n', "utf-8")
    result = runner.invoke(app, ["triage", "--batch", str(path), "--json"])
    assert result.exit_code == 1  # a rejected row
    printed = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [p["ticket_id"] for p in printed] == ["J-1"]
    assert printed[0]["cited_doc_id"] == "kb-tokens"
    assert f"{path}:2" in result.output
    assert len(_log(settings)) == 1


def test_one_ticket_is_logged_and_options_are_checked(kb: Path, settings: Settings) -> None:
    code, out = _invoke("triage", "--ticket", QUESTION, "--confidence-threshold", "0.2")
    assert code == 0, out
    assert "pending_review" in out
    (row,) = _log(settings)
    assert row["ticket_id"].startswith("TRIAGE-") and row["cited_doc_id"] == "kb-tokens"
    for bad in (["triage"], ["triage", "--ticket", "x", "--interactive"]):
        code, out = _invoke(*bad)
        assert code == 1 and "exactly one of --ticket" in out and "Traceback" not in out
    code, out = _invoke("triage", "--ticket", "x", "--delay", "1")
    assert code == 1 and "--delay only applies to --batch" in out


def test_csv_injection_is_defused_and_no_secret_reaches_the_log(
    kb: Path, settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = {
        "DEEPSEEK_API_KEY": "sk-deepseek-0123456789abcdef0123",
        "SUPPORTAGENT_TOKEN": "web-token-never-logged-42",
        "SUPPORTAGENT_AUDIT_KEY": "audit-key-never-logged-0123456789abcdef",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("SUPPORTAGENT_ENGINE", "offline")
    code, out = _invoke("triage", "--ticket", "When do export download links stop working?")
    assert code == 0, out
    text = (settings.home / "triage-log.csv").read_text(encoding="utf-8")
    assert not any(value in text for value in secrets.values())
    (row,) = _log(settings)
    assert row["top_doc_title"] == '\'=HYPERLINK("http://x.example")'


def test_log_cells_are_safe_strings() -> None:
    assert [safe_cell(v) for v in ("=1+1", "+1", "-2", "@SUM(A1)", "\tx", "ok")] == [
        "'=1+1",
        "'+1",
        "'-2",
        "'@SUM(A1)",
        "'\tx",
        "ok",
    ]
    assert [safe_cell(v) for v in (None, True, False, ["a", "b"], 0.5)] == [
        "",
        "true",
        "false",
        "a;b",
        "0.5",
    ]
    assert safe_cell(-1.5) == "'-1.5"
    masked = mask_secrets("Use sk-live_ABCDEFGHIJKLMNOPqrst or Bearer abcdefghijklmnopqrstuv.")
    assert "ABCDEFGH" not in masked and "abcdefghijklmnop" not in masked
    assert masked.count("[redacted]") == 2
    assert mask_secrets("Tokens expire after 90 days.") == "Tokens expire after 90 days."


def test_a_model_run_logs_its_tokens_and_cache_hits() -> None:
    call = {"prompt_tokens": 120, "completion_tokens": 30, "cache_hit": False, "model": "m"}
    cached = {**call, "cache_hit": True}
    result = {
        "ticket_id": "T-1",
        "status": "escalated",
        "reason_code": "uncertain",
        "bucket": "needs_human",
        "engine": "llm",
        "safety": None,
        "draft": None,
        "trace": [
            {"stage": "model", "status": "ok", "detail": call, "duration_ms": 5.0},
            {"stage": "model", "status": "ok", "detail": cached, "duration_ms": 1.0},
        ],
    }
    row = log_row(result)
    assert list(row) == list(TRIAGE_LOG_COLUMNS)
    assert (row["prompt_tokens"], row["response_tokens"], row["cache_hit"]) == (
        "240",
        "60",
        "false",
    )


def test_interactive_reads_tickets_from_stdin_until_ctrl_d(
    kb: Path, settings: Settings, tmp_path: Path
) -> None:
    env = {**os.environ, "SUPPORTAGENT_HOME": str(settings.home)}
    feed = f"{QUESTION}\n\n{LEAK}\nA ticket on two lines\\\nabout export download links\n"
    proc = subprocess.run(
        [str(SUPPORTAGENT), "triage", "--interactive", "--json"],
        input=feed,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [r["status"] for r in results[:2]] == ["pending_review", "escalated"]
    assert results[0]["cited_doc_id"] == "kb-tokens"
    joined = "A ticket on two lines\nabout export download links"
    assert len(results) == 3
    assert results[2]["ticket_id"] == "TRIAGE-" + hashlib.sha256(joined.encode()).hexdigest()[:12]
    assert "ticket>" in proc.stderr and "3 ticket(s) triaged" in proc.stderr
    assert len(_log(settings)) == 3


def test_post_triage_answers_answer_cited_doc_id_and_confidence(
    settings: Settings, demo_store: Any
) -> None:
    with TestClient(create_app(settings, demo_store, work=False), base_url="http://127.0.0.1") as c:
        body = c.post("/triage", json={"ticket_text": "How do I rotate my API key?"}).json()
    assert body["status"] == "pending_review"
    assert body["answer"] and body["confidence"] is not None
    assert body["cited_doc_id"] == body["citations"][0].split("#", 1)[0]
    assert {"safety", "retrieval", "tokens", "latencies", "trace", "bucket"} <= set(body)
