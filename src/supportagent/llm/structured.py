"""Structured replies: ask for JSON, validate it with a pydantic model, repair once, record all.

:class:`StructuredCaller` is what an engine uses to talk to a model. For each question it
looks in the response cache, reserves the call in the budget (refused calls are never sent;
each retry of a sent call is counted and may be refused too), sends it, reads the reply
tolerantly (:mod:`supportagent.llm.parsing`), and on a reply that does not validate asks once
more with the validation error. Every call, cached or sent, refused or failed, leaves a
:class:`CallRecord` for the pipeline to store and trace.
"""

from __future__ import annotations

import functools
import hashlib
import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel

from supportagent.errors import ModelError, UserError
from supportagent.llm.budget import Budget, Reservation, estimate_tokens
from supportagent.llm.chat import ChatModel, ChatReply, ChatRequest, ToolCall, ToolSpec
from supportagent.llm.parsing import ReplyInvalid, extract_json, parse_reply
from supportagent.llm.prompts import Prompt

__all__ = [
    "Answer",
    "CallRecord",
    "ReplyInvalid",
    "ResponseCache",
    "StructuredCaller",
    "cache_key",
    "extract_json",
    "parse_reply",
    "reply_schema",
]

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One model call as the store and the trace keep it. Never holds a key.

    ``messages`` and ``reply`` are filled only when prompts are traced
    (``SUPPORTAGENT_TRACE_PROMPTS=1``).
    """

    stage: str
    model: str
    prompt: str
    status: str  # ok | invalid | refused | failed
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: Wall time of the call: every request sent for it and every wait between them.
    latency_ms: float = 0.0
    cache_hit: bool = False
    retries: int = 0
    error: str | None = None
    messages: tuple[dict[str, str], ...] | None = None
    reply: str | None = None
    #: HTTP requests sent for this call (1 + retries; 0 when cached or refused).
    requests: int = 0
    #: The endpoint profile the request was shaped for, and why that profile.
    profile: str | None = None
    profile_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["latency_ms"] = round(self.latency_ms, 1)
        data["messages"] = list(self.messages) if self.messages is not None else None
        return data


class ResponseCache(Protocol):
    """Where validated replies are kept, keyed by :func:`cache_key`."""

    def get(self, key: str) -> dict[str, Any] | None: ...

    def put(self, key: str, entry: Mapping[str, Any]) -> None: ...


def cache_key(prompt_ref: str, model: str, request: ChatRequest) -> str:
    """A digest of everything that shapes a reply: prompt version, model, messages, schema."""
    material = {
        "prompt": prompt_ref,
        "model": model,
        "messages": list(request.messages),
        "schema": request.schema,
        "tools": [t.name for t in request.tools],
    }
    canonical = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Answer(Generic[T]):
    value: T
    tool_calls: tuple[ToolCall, ...]


@dataclass(frozen=True, slots=True)
class _Sent:
    request: ChatRequest
    reply: ChatReply
    key: str
    cache_hit: bool
    requests: int = 1
    #: Estimated prompt tokens of requests that timed out before the one that answered.
    lost_tokens: int = 0


class StructuredCaller:
    """Cache, budget, call, validate, repair once; records every call per ticket."""

    def __init__(
        self,
        model: ChatModel,
        budget: Budget,
        repair: Prompt,
        *,
        cache: ResponseCache | None = None,
        trace_prompts: bool = False,
    ) -> None:
        self.model, self.budget, self.repair = model, budget, repair
        self.cache = cache
        self.trace_prompts = trace_prompts
        endpoint = getattr(model, "endpoint", None)
        profile = getattr(endpoint, "profile", None)
        self.profile: str | None = getattr(profile, "name", None)
        self.profile_reason: str | None = getattr(endpoint, "profile_reason", None) or None
        self._records: dict[str, list[CallRecord]] = {}
        self._lock = threading.Lock()

    def take_records(self, ticket_id: str) -> list[CallRecord]:
        """The calls made for ``ticket_id`` since the last time they were taken."""
        with self._lock:
            return self._records.pop(ticket_id, [])

    def ask(
        self,
        ticket_id: str,
        prompt: Prompt,
        variables: Mapping[str, Any],
        reply_model: type[T],
        *,
        tools: Sequence[ToolSpec] = (),
        schema: dict[str, Any] | None = None,
    ) -> Answer[T]:
        """Ask ``prompt`` for a ``reply_model``; ModelError(model_output_invalid) after a repair.

        ``schema``: the JSON schema sent for constrained decoding, when it is narrower than
        the reply model's own (the passage ids a draft may cite, say).
        """
        schema = schema if schema is not None else reply_schema(reply_model)
        messages = prompt.render(**variables)
        request = ChatRequest(messages, schema, prompt.name, tuple(tools), prompt.max_tokens)
        first = self._send(ticket_id, prompt, request)
        try:
            value = parse_reply(first.reply.text, reply_model)
        except ReplyInvalid as error:
            problem = _explain(error, first.reply, prompt)
            self._record(ticket_id, prompt, first, "invalid", problem)
        else:
            self._record(ticket_id, prompt, first, "ok")
            self._keep(prompt, [first])
            return Answer(value, first.reply.tool_calls)

        asked_for = ", ".join(c.name for c in first.reply.tool_calls)
        repair_request = ChatRequest(
            (
                *messages,
                {"role": "assistant", "content": first.reply.text},
                *self.repair.render(error=problem, tool_calls=asked_for)[1:],
            ),
            schema,
            prompt.name,
            (),
            prompt.max_tokens,
        )
        second = self._send(ticket_id, prompt, repair_request)
        try:
            value = parse_reply(second.reply.text, reply_model)
        except ReplyInvalid as error:
            problem = _explain(error, second.reply, prompt)
            self._record(ticket_id, prompt, second, "invalid", problem)
            raise ModelError(
                f"The model's {prompt.name} reply did not validate, even after a repair: {problem}",
                reason_code="model_output_invalid",
            ) from None
        self._record(ticket_id, prompt, second, "ok")
        self._keep(prompt, [first, second])
        return Answer(value, (*first.reply.tool_calls, *second.reply.tool_calls))

    def _send(self, ticket_id: str, prompt: Prompt, request: ChatRequest) -> _Sent:
        key = cache_key(prompt.ref, self.model.model, request)
        if self.cache is not None and (entry := self.cache.get(key)) is not None:
            return _Sent(request, _from_cache(entry), key, True, 0)
        chars = sum(len(m["content"]) for m in request.messages)
        try:
            reservation = self.budget.reserve(
                ticket_id, estimate_tokens(chars, len(request.messages)), request.max_tokens
            )
        except (ModelError, UserError) as refused:
            self._add(ticket_id, self._base(prompt, request, "refused", error=str(refused)))
            raise
        meter = _BudgetMeter(self.budget, reservation)
        started = time.monotonic()
        try:
            reply = self.model.complete(request, meter)
        except (ModelError, UserError) as failed:
            self.budget.settle(reservation, 0, 0)
            record = self._base(prompt, request, "failed", error=str(failed))
            elapsed = (time.monotonic() - started) * 1000
            self._add(
                ticket_id,
                _replace(
                    record,
                    latency_ms=elapsed,
                    retries=reservation.requests - 1,
                    requests=reservation.requests,
                    prompt_tokens=meter.lost_tokens,
                ),
            )
            raise
        self.budget.settle(reservation, reply.prompt_tokens, reply.completion_tokens)
        return _Sent(request, reply, key, False, reservation.requests, meter.lost_tokens)

    def _keep(self, prompt: Prompt, sent: Sequence[_Sent]) -> None:
        """Cache replies that led to a valid answer, so the same question costs nothing again."""
        if self.cache is None:
            return
        for item in sent:
            if item.cache_hit:
                continue
            reply = item.reply
            self.cache.put(
                item.key,
                {
                    "prompt": prompt.ref,
                    "model": self.model.model,
                    "text": reply.text,
                    "tool_calls": [
                        {"name": c.name, "arguments": c.arguments} for c in reply.tool_calls
                    ],
                    "prompt_tokens": reply.prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                },
            )

    def _record(
        self, ticket_id: str, prompt: Prompt, sent: _Sent, status: str, error: str | None = None
    ) -> None:
        reply = sent.reply
        # A cache hit spends nothing: its tokens were paid for by the run that stored it.
        spent = not sent.cache_hit
        record = CallRecord(
            stage=prompt.name,
            model=self.model.model,
            prompt=prompt.ref,
            status=status,
            prompt_tokens=reply.prompt_tokens + sent.lost_tokens if spent else 0,
            completion_tokens=reply.completion_tokens if spent else 0,
            latency_ms=reply.latency_ms if spent else 0.0,
            cache_hit=sent.cache_hit,
            retries=reply.retries if spent else 0,
            error=error,
            messages=sent.request.messages if self.trace_prompts else None,
            reply=reply.text if self.trace_prompts else None,
            requests=sent.requests,
            profile=self.profile,
            profile_reason=self.profile_reason,
        )
        self._add(ticket_id, record)

    def _base(self, prompt: Prompt, request: ChatRequest, status: str, error: str) -> CallRecord:
        return CallRecord(
            stage=prompt.name,
            model=self.model.model,
            prompt=prompt.ref,
            status=status,
            error=error,
            messages=request.messages if self.trace_prompts else None,
            profile=self.profile,
            profile_reason=self.profile_reason,
        )

    def _add(self, ticket_id: str, record: CallRecord) -> None:
        with self._lock:
            self._records.setdefault(ticket_id, []).append(record)


class _BudgetMeter:
    """Counts a call's retries in the budget (which may refuse them) and its timed-out requests."""

    def __init__(self, budget: Budget, reservation: Reservation) -> None:
        self.budget, self.reservation = budget, reservation
        self.lost_tokens = 0

    def before_retry(self) -> None:
        self.budget.retry(self.reservation)

    def timed_out(self) -> None:
        self.budget.timed_out(self.reservation)
        self.lost_tokens += self.reservation.prompt_estimate


def _explain(error: ReplyInvalid, reply: ChatReply, prompt: Prompt) -> str:
    """The validation error, and why the reply broke off when it hit the token limit."""
    if reply.finish_reason == "length":
        return (
            f"the reply was cut off at the limit of {prompt.max_tokens} tokens; answer more "
            f"briefly ({error})"
        )
    return str(error)


def _replace(record: CallRecord, **changes: Any) -> CallRecord:
    return CallRecord(**{**asdict(record), **changes})


def reply_schema(reply_model: type[BaseModel]) -> dict[str, Any]:
    """A reply model's JSON schema (a copy; pydantic builds it anew on every call)."""
    schema: dict[str, Any] = json.loads(_schema_text(reply_model))
    return schema


@functools.cache
def _schema_text(reply_model: type[BaseModel]) -> str:
    return json.dumps(reply_model.model_json_schema(), ensure_ascii=False)


def _from_cache(entry: Mapping[str, Any]) -> ChatReply:
    return ChatReply(
        text=str(entry.get("text", "")),
        tool_calls=tuple(
            ToolCall(str(c["name"]), dict(c.get("arguments") or {}))
            for c in entry.get("tool_calls", [])
        ),
        prompt_tokens=int(entry.get("prompt_tokens", 0)),
        completion_tokens=int(entry.get("completion_tokens", 0)),
        model=str(entry.get("model", "")),
    )
