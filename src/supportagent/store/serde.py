"""Domain objects to and from the JSON kept in the store and returned by the API."""

from __future__ import annotations

from typing import Any

from supportagent.domain import (
    Draft,
    DraftSentence,
    Hit,
    SafetyResult,
    ToolRequest,
    TraceEvent,
)


def draft_to_json(draft: Draft) -> dict[str, Any]:
    return {
        "answer": draft.answer,
        "confidence": draft.confidence,
        "revision": draft.revision,
        "citations": list(draft.citations),
        "sentences": [{"text": s.text, "citations": list(s.citations)} for s in draft.sentences],
        "tool_requests": [{"name": r.name, "arguments": r.arguments} for r in draft.tool_requests],
        "greeting": draft.greeting,
        "closing": draft.closing,
        "unanswered": list(draft.unanswered),
        "flags": list(draft.flags),
        "explanation": draft.explanation,
        # Only when personal data was redacted: older rows and offline drafts stay as they were.
        **({"redacted_answer": draft.redacted_answer} if draft.redacted_answer else {}),
    }


def draft_from_json(data: dict[str, Any]) -> Draft:
    return Draft(
        sentences=tuple(
            DraftSentence(text=s["text"], citations=tuple(s["citations"]))
            for s in data["sentences"]
        ),
        confidence=float(data["confidence"]),
        revision=int(data.get("revision", 0)),
        tool_requests=tuple(
            ToolRequest(name=r["name"], arguments=r.get("arguments", {}))
            for r in data.get("tool_requests", [])
        ),
        greeting=str(data.get("greeting", "")),
        closing=str(data.get("closing", "")),
        unanswered=tuple(str(q) for q in data.get("unanswered", [])),
        flags=tuple(str(f) for f in data.get("flags", [])),
        explanation=str(data.get("explanation", "")),
        redacted_answer=str(data.get("redacted_answer", "")),
    )


def safety_to_json(result: SafetyResult) -> dict[str, Any]:
    return {
        "category": result.category,
        "severity": result.severity,
        "auto_escalate": result.auto_escalate,
        "reason_code": result.reason_code,
        "matched_rule": result.matched_rule,
        "matched_text": result.matched_text,
        "detector": result.detector,
        "score": result.score,
        "explanation": result.explanation,
    }


def safety_from_json(data: dict[str, Any]) -> SafetyResult:
    known = {name: data[name] for name in SafetyResult.__dataclass_fields__ if name in data}
    return SafetyResult(**known)


def hit_to_json(hit: Hit) -> dict[str, Any]:
    """A hit with its explanation: the fused rank and score and each signal's view."""
    return {
        "id": hit.passage.id,
        "doc_id": hit.passage.doc_id,
        "kind": str(hit.passage.kind),
        "title": hit.passage.title,
        "heading_path": list(hit.passage.heading_path),
        "rank": hit.rank,
        "score": round(hit.score, 6),
        "signals": {
            name: {"rank": s.rank, "score": round(s.score, 6)} for name, s in hit.signals.items()
        },
    }


def trace_event_row(event: TraceEvent) -> dict[str, Any]:
    """The columns of a ``trace_events`` row that describe the event itself."""
    return {
        "stage": event.stage,
        "status": event.status,
        "detail": event.detail,
        "duration_ms": event.duration_ms,
    }


def trace_event_to_json(event: TraceEvent) -> dict[str, Any]:
    return {**trace_event_row(event), "duration_ms": round(event.duration_ms, 3)}
