"""What an audit event says: the content of the agent's and the reviewers' decisions.

Pure functions over rows, so the same event content comes out of a live decision and out of
the backfill of decisions made before the audit log existed (the sum over the ``model_calls``
table that the backfill needs is ``audit.model_usage``). No SQLAlchemy here: the triage log
(``triage_log.py``) builds its rows with ``agent_payload`` in a one-shot ``triage`` that does
not load it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Columns of ``supportagent audit export``: first those ``design.md`` promises, then ours.
CSV_COLUMNS: tuple[str, ...] = (
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
    # ours
    "seq",
    "event",
    "actor",
    "attempt",
    "engine",
    "reason_code",
    "evidence_coverage",
    "reason",
    "original_draft",
    "edit_chars",
    "resolved_doc_id",
    "prev_hash",
    "hash",
)

_SEARCH_TOOLS = frozenset({"search_docs", "search_resolved"})
_RETRIEVAL_STAGES = frozenset({"retrieve", "evidence", "reformulate"})
# Spreadsheets run a cell that starts with one of these as a formula.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True, slots=True)
class ModelUsage:
    """Model calls made for one ticket attempt, summed from the ``model_calls`` records."""

    calls: int
    prompt_tokens: int
    response_tokens: int
    cache_hits: int


@dataclass(frozen=True, slots=True)
class StagedAttempt:
    """What staging wrote, as the writer holds it, so that the audit event need not read it
    back: the ``outcomes`` row, every trace event of the attempt (as ``trace_events`` rows)
    and the usage summed from its model-call records."""

    outcome: Mapping[str, Any]
    trace: Sequence[Mapping[str, Any]]
    usage: ModelUsage | None


def usage_of(calls: Iterable[Mapping[str, Any]]) -> ModelUsage | None:
    """:func:`audit.model_usage` over call records in memory (the JSON form of ``CallRecord``)."""
    rows = list(calls)
    if not rows:
        return None
    return ModelUsage(
        len(rows),
        sum(int(c["prompt_tokens"]) for c in rows),
        sum(int(c["completion_tokens"]) for c in rows),
        sum(1 for c in rows if c["cache_hit"]),
    )


def agent_payload(
    outcome: Mapping[str, Any], trace: Sequence[Mapping[str, Any]], usage: ModelUsage | None
) -> dict[str, Any]:
    """The content of an ``agent.staged`` event: the outcome and what led to it.

    ``outcome`` is an ``outcomes`` row (draft and safety as JSON dicts); ``trace`` the attempt's
    trace events (stage, status, detail, duration_ms) in order. Values the run did not produce
    (no retrieval for a routed ticket, no model for the offline engine) are ``None``.
    """
    draft: Mapping[str, Any] | None = outcome.get("draft") or None
    safety: Mapping[str, Any] = outcome.get("safety") or {}
    retrieves = [e for e in trace if e["stage"] == "retrieve"]
    # The ranked search the evidence gate judged is the last "retrieve ok"; the events after it
    # add linked articles and per-question passages, unranked, which say nothing of the search.
    searches = [e for e in retrieves if e.get("status") == "ok"] or retrieves
    hits: list[Mapping[str, Any]] = list(searches[-1]["detail"].get("hits", [])) if searches else []
    evidence = [e for e in trace if e["stage"] == "evidence"]
    drafts = [e for e in trace if e["stage"] == "draft"]
    citations = [str(c) for c in draft.get("citations", [])] if draft else []
    retrieval_ms = sum(float(e["duration_ms"]) for e in trace if _is_retrieval(e))
    return {
        "attempt": int(outcome["attempt"]),
        "status": str(outcome["status"]),
        "reason_code": str(outcome["reason_code"]),
        "bucket": outcome.get("bucket"),
        "engine": str(outcome["engine"]),
        "safety_category": safety.get("category"),
        "safety_severity": safety.get("severity"),
        "matched_rule": safety.get("matched_rule"),
        "auto_escalated": safety.get("auto_escalate"),
        "retrieved_doc_ids": _unique(str(h["doc_id"]) for h in hits),
        "retrieved_passages": [str(h["id"]) for h in hits],
        "top_doc_title": hits[0].get("title") if hits else None,
        "top_score": float(hits[0]["score"]) if hits else None,
        "evidence_coverage": evidence[-1]["detail"].get("coverage") if evidence else None,
        "low_confidence": evidence[-1]["status"] == "weak" if evidence else None,
        "reformulations": sum(1 for e in trace if e["stage"] == "reformulate"),
        "citations": citations,
        "cited_doc_ids": _unique(c.split("#", 1)[0] for c in citations),
        "confidence": float(draft["confidence"]) if draft else None,
        "revisions": max(len(drafts) - 1, 0),
        # The draft as the model saw it: personal data stays a placeholder in the audit log.
        "response": str(draft.get("redacted_answer") or draft.get("answer", "")) if draft else "",
        "retrieval_latency_ms": round(retrieval_ms, 3) if retrieves else None,
        "generation_latency_ms": (
            round(sum(float(e["duration_ms"]) for e in drafts), 3) if drafts else None
        ),
        "model_calls": usage.calls if usage else None,
        "prompt_tokens": usage.prompt_tokens if usage else None,
        "response_tokens": usage.response_tokens if usage else None,
        # True only when every call was answered from the cache.
        "cache_hit": usage.cache_hits == usage.calls if usage and usage.calls else None,
    }


def review_payload(review: Mapping[str, Any], status: str) -> dict[str, Any]:
    """The content of a ``review.<decision>`` event: who decided what, on which draft."""
    return {
        "outcome_id": int(review["outcome_id"]),
        "decision": str(review["decision"]),
        "reviewer": str(review["reviewer"]),
        "status": status,
        "reason": review.get("reason"),
        "response": review.get("final_text") or "",
        "original_draft": review.get("original_draft"),
        "diff": review.get("diff"),
        "edit_chars": review.get("edit_chars"),
        "edit_ratio": review.get("edit_ratio"),
        "resolved_doc_id": review.get("resolved_doc_id"),
        "resolved_added": review.get("resolved_added"),
    }


def csv_row(
    event: Mapping[str, Any], payload: Mapping[str, Any], *, neutralise: bool = True
) -> dict[str, str]:
    """One event as a CSV row over :data:`CSV_COLUMNS`; lists are joined with ``;``.

    With ``neutralise``, a text cell that a spreadsheet would run as a formula gets a leading
    apostrophe (customer text ends up in these cells).
    """
    values: dict[str, Any] = {name: payload.get(name) for name in CSV_COLUMNS}
    values.update(
        ticket_id=event["ticket_id"],
        timestamp=event["created_at"],
        seq=event["seq"],
        event=event["event"],
        actor=event["actor"],
        prev_hash=event["prev_hash"],
        hash=event["hash"],
        llm_confidence=payload.get("confidence"),
    )
    row = {name: _cell(value) for name, value in values.items()}
    if neutralise:
        row = {k: "'" + v if v.startswith(_FORMULA_START) else v for k, v in row.items()}
    return row


def _is_retrieval(event: Mapping[str, Any]) -> bool:
    if event["stage"] == "tool":
        return event["detail"].get("tool") in _SEARCH_TOOLS
    return event["stage"] in _RETRIEVAL_STAGES


def _unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ";".join(str(v) for v in value)
    return str(value)
