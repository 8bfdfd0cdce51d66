"""The CSV log of `supportagent triage`: one row per ticket, appended by every run.

The columns are those of the Support Triage Agent's audit log, so its readers keep working;
``top_rrf_score`` holds our fused score. A row is built from the structured result that
``triage_text`` returns (the same one ``POST /triage`` and ``--json`` give), never from the
settings, so no key can reach it; cells a spreadsheet would run as a formula are defused, and
anything shaped like a key in the answer is masked.
"""

from __future__ import annotations

import csv
import io
import os
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from supportagent.errors import UserError
from supportagent.store.audit_payload import agent_payload, usage_of

#: Exactly these columns, in this order.
TRIAGE_LOG_COLUMNS: tuple[str, ...] = (
    "ticket_id",
    "timestamp",
    "safety_category",
    "safety_severity",
    "matched_rule",
    "auto_escalated",
    "retrieved_doc_ids",
    "top_doc_title",
    "top_rrf_score",
    "low_confidence",
    "cited_doc_id",
    "llm_confidence",
    "prompt_tokens",
    "response_tokens",
    "cache_hit",
    "retrieval_latency_ms",
    "generation_latency_ms",
    "response",
)

#: A spreadsheet runs a cell that starts with one of these as a formula.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
#: Strings shaped like credentials: provider keys (sk-..., sk_live_...), bearer tokens, and
#: ``api_key=...`` / ``token: ...`` pairs. A draft has no business quoting one.
_SECRET_SHAPES = re.compile(
    r"\b(?:sk|pk|rk)[-_](?:live_|test_|proj-)?[A-Za-z0-9_-]{16,}"
    r"|\bBearer\s+[A-Za-z0-9._~+/=-]{16,}"
    r"|\b(?:api[_-]?key|secret|token|password)\s*[:=]\s*\S{8,}",
    re.IGNORECASE,
)
REDACTED = "[redacted]"


def log_row(result: Mapping[str, Any], *, now: datetime | None = None) -> dict[str, str]:
    """One log row from a triage result (``triage_text``'s dict), every cell a safe string."""
    trace: Sequence[Mapping[str, Any]] = result.get("trace", [])
    calls = [e["detail"] for e in trace if e.get("stage") == "model"]
    outcome = {
        "attempt": 1,
        "status": result["status"],
        "reason_code": result["reason_code"],
        "bucket": result.get("bucket"),
        "engine": result.get("engine", ""),
        "draft": result.get("draft"),
        "safety": result.get("safety"),
    }
    payload = agent_payload(outcome, trace, usage_of(c for c in calls if _is_call_record(c)))
    # retrieved_doc_ids and top_doc_title come from the payload as they are: like the audit
    # export's, they describe the ranked search the evidence gate judged.
    values: dict[str, Any] = {
        "ticket_id": result["ticket_id"],
        "timestamp": (now or datetime.now(UTC)).isoformat(timespec="seconds"),
        "top_rrf_score": payload["top_score"],
        "cited_doc_id": payload["cited_doc_ids"],
        "llm_confidence": payload["confidence"],
        "response": mask_secrets(str(payload["response"])),
    }
    for name in TRIAGE_LOG_COLUMNS:
        values.setdefault(name, payload.get(name))
    return {name: safe_cell(values[name]) for name in TRIAGE_LOG_COLUMNS}


def _is_call_record(detail: Mapping[str, Any]) -> bool:
    return all(k in detail for k in ("prompt_tokens", "completion_tokens", "cache_hit"))


def mask_secrets(text: str) -> str:
    """``text`` with anything shaped like a key or token replaced by ``[redacted]``."""
    return _SECRET_SHAPES.sub(REDACTED, text)


def safe_cell(value: Any) -> str:
    """A value as a CSV cell: lists joined with ``;``, and a formula start defused with ``'``."""
    if value is None:
        text = ""
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, list | tuple):
        text = ";".join(str(v) for v in value)
    elif isinstance(value, float):
        text = f"{value:.6g}"
    else:
        text = str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


_APPEND_LOCK = threading.Lock()


def append_rows(path: Path, rows: Iterable[Mapping[str, str]]) -> int:
    """Append ``rows`` to the log at ``path`` (header first when the file is new); the count.

    The file is created readable by its owner only (ticket answers are customer data). A file
    that exists with other columns is refused rather than mixed.
    """
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(TRIAGE_LOG_COLUMNS), lineterminator="\n")
    count = 0
    for row in rows:
        writer.writerow(row)
        count += 1
    if not count:
        return 0
    # The web API appends from several threads: one at a time, so the header is written once
    # and rows never interleave.
    with _APPEND_LOCK:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > 0:
            _check_header(path)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8", newline="") as handle:
            if handle.tell() == 0:
                handle.write(",".join(TRIAGE_LOG_COLUMNS) + "\n")
            handle.write(buffer.getvalue())
    return count


def _check_header(path: Path) -> None:
    with path.open(encoding="utf-8", newline="") as handle:
        header = handle.readline().rstrip("\r\n")
    if header != ",".join(TRIAGE_LOG_COLUMNS):
        raise UserError(
            f"{path}: exists with other columns than the triage log's; move it aside, or set "
            "SUPPORTAGENT_TRIAGE_LOG to another file"
        )
