"""A ticket's trace as the web app shows it: a timeline, its model calls, its latencies.

Pure functions over the JSON trace events that the store returns
(``{"stage", "status", "detail", "duration_ms"}``); nothing here reads the store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Trace stages that record a call to a model.
MODEL_STAGES = frozenset({"model", "llm", "model_call"})
#: Detail keys that carry token counts; an event with any of them is a model call.
PROMPT_KEYS = ("prompt_tokens", "input_tokens")
RESPONSE_KEYS = ("response_tokens", "completion_tokens", "output_tokens")
#: Stages whose time counts as retrieval, and as generation (drafting and checking).
RETRIEVAL_STAGES = frozenset({"retrieve", "evidence", "reformulate"})
GENERATION_STAGES = frozenset({"draft", "check", "revise"}) | MODEL_STAGES

_TONES = {
    "ok": ("pass", "ok", "sufficient", "allowed", "pending_review", "approved", "amended"),
    "warn": ("weak", "fail", "retry", "unchanged", "handed_off", "flagged"),
    "bad": ("denied", "escalate", "escalated"),
    "info": ("routed",),
}
TONE_OF_STATUS = {status: tone for tone, statuses in _TONES.items() for status in statuses}


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One call to a model, as its trace event recorded it."""

    stage: str
    purpose: str
    model: str | None
    prompt_tokens: int
    response_tokens: int
    latency_ms: float
    cache_hit: bool | None
    status: str = ""
    requests: int = 0
    retries: int = 0
    error: str | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.response_tokens


@dataclass(frozen=True, slots=True)
class TimelineItem:
    seq: int
    stage: str
    status: str
    tone: str
    detail: Mapping[str, Any]
    duration_ms: float
    elapsed_ms: float


def _int(detail: Mapping[str, Any], keys: Sequence[str]) -> int:
    for key in keys:
        value = detail.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return int(value)
    return 0


def is_model_call(event: Mapping[str, Any]) -> bool:
    detail = event.get("detail") or {}
    return event.get("stage") in MODEL_STAGES or any(
        key in detail for key in (*PROMPT_KEYS, *RESPONSE_KEYS, "total_tokens")
    )


def model_calls(events: Sequence[Mapping[str, Any]]) -> list[ModelCall]:
    """The model calls among ``events`` (the offline engine makes none)."""
    calls = []
    for event in events:
        if not is_model_call(event):
            continue
        detail = event.get("detail") or {}
        latency = detail.get("latency_ms")
        cache_hit = detail.get("cache_hit")
        calls.append(
            ModelCall(
                stage=str(event.get("stage")),
                purpose=str(detail.get("call") or detail.get("purpose") or event.get("status")),
                model=str(detail["model"]) if detail.get("model") else None,
                prompt_tokens=_int(detail, PROMPT_KEYS),
                response_tokens=_int(detail, RESPONSE_KEYS),
                latency_ms=float(latency)
                if isinstance(latency, int | float)
                else float(event.get("duration_ms") or 0.0),
                cache_hit=cache_hit if isinstance(cache_hit, bool) else None,
                status=str(event.get("status") or ""),
                requests=_int(detail, ("requests",)),
                retries=_int(detail, ("retries",)),
                error=str(detail["error"]) if detail.get("error") else None,
            )
        )
    return calls


def timeline(events: Sequence[Mapping[str, Any]]) -> list[TimelineItem]:
    """The events in order, each with its tone and the time elapsed since the run began."""
    items, elapsed = [], 0.0
    for seq, event in enumerate(events):
        duration = float(event.get("duration_ms") or 0.0)
        elapsed += duration
        status = str(event.get("status"))
        items.append(
            TimelineItem(
                seq=seq,
                stage=str(event.get("stage")),
                status=status,
                tone=TONE_OF_STATUS.get(status, "muted"),
                detail=event.get("detail") or {},
                duration_ms=round(duration, 2),
                elapsed_ms=round(elapsed, 2),
            )
        )
    return items


def latencies(events: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """Milliseconds spent retrieving, generating (drafting and checking) and in all."""
    retrieval = generation = total = 0.0
    for event in events:
        duration = float(event.get("duration_ms") or 0.0)
        total += duration
        if event.get("stage") in RETRIEVAL_STAGES:
            retrieval += duration
        elif event.get("stage") in GENERATION_STAGES:
            generation += duration
    return {
        "retrieval_ms": round(retrieval, 3),
        "generation_ms": round(generation, 3),
        "total_ms": round(total, 3),
    }


def token_totals(events: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Calls sent to a model and the tokens they spent (answers from the cache spend none)."""
    calls = [c for c in model_calls(events) if not c.cache_hit]
    prompt = sum(c.prompt_tokens for c in calls)
    response = sum(c.response_tokens for c in calls)
    return {"calls": len(calls), "prompt": prompt, "response": response, "total": prompt + response}


def revisions(events: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each draft with the check that judged it: how the answer changed and why."""
    out: list[dict[str, Any]] = []
    for event in events:
        if event.get("stage") == "draft":
            out.append({"draft": event.get("detail") or {}, "check": None})
        elif event.get("stage") == "check" and out and out[-1]["check"] is None:
            out[-1]["check"] = event.get("detail") or {}
    return out
