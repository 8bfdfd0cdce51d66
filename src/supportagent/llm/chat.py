"""Talking to a model: the ChatModel protocol and one OpenAI-compatible client over the SDK.

The client maps a :class:`ChatRequest` onto the endpoint's profile (JSON schema or JSON-object
mode, tools or none, the right token-limit parameter), retries what is worth retrying, and
returns a :class:`ChatReply` with the text, any tool calls, the usage, the requests it took and
the time they took together. It knows nothing of tickets or prompts; a :class:`RequestMeter`
hears of every retry before it is sent, so that the caller's caps count it (and may stop it).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from supportagent.errors import ModelError, UserError
from supportagent.llm.budget import estimate_tokens
from supportagent.llm.profiles import Endpoint, Profile
from supportagent.llm.retry import RetryPolicy, retry_after_seconds

if TYPE_CHECKING:
    import openai

#: HTTP statuses worth another try: the server is busy, overloaded or briefly broken.
RETRYABLE_STATUS = frozenset({408, 409, 429})


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A function the model may ask for. Asking is all it can do: the pipeline's gate decides."""

    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})


@dataclass(frozen=True, slots=True)
class ChatRequest:
    messages: tuple[dict[str, str], ...]
    schema: dict[str, Any] | None = None
    schema_name: str = "reply"
    tools: tuple[ToolSpec, ...] = ()
    max_tokens: int = 1024


@dataclass(frozen=True, slots=True)
class ToolCall:
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ChatReply:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    #: From the first request sent to the reply: every attempt and every wait between them.
    latency_ms: float = 0.0
    retries: int = 0
    finish_reason: str | None = None


class RequestMeter(Protocol):
    """Hears about the requests one call sends, so that caps can count retries."""

    def before_retry(self) -> None:
        """One more request is about to be sent; raise (a UserError) to stop it."""
        ...

    def timed_out(self) -> None:
        """A request sent for this call timed out (the server may have computed it)."""
        ...


class ChatModel(Protocol):
    """One method: send a request, get a reply. Raises ModelError or UserError, nothing else."""

    model: str

    def complete(self, request: ChatRequest, meter: RequestMeter | None = None) -> ChatReply: ...


class ModelUnavailable(UserError):
    """The endpoint kept failing (429, 5xx, timeouts) past the retry budget.

    Nothing is wrong with the ticket, so it is not escalated: the run stops and the ticket
    stays in the inbox for the next run.
    """


def request_params(profile: Profile, model: str, request: ChatRequest) -> dict[str, Any]:
    """The SDK keyword arguments for ``request`` on an endpoint with ``profile`` (pure)."""
    params: dict[str, Any] = {"model": model, "messages": [dict(m) for m in request.messages]}
    params[profile.max_tokens_param] = min(request.max_tokens, profile.max_output_tokens)
    if profile.temperature is not None:
        params["temperature"] = profile.temperature
    if request.schema is not None and profile.output_mode == "json_schema":
        params["response_format"] = {
            "type": "json_schema",
            "json_schema": {
                "name": request.schema_name,
                "schema": request.schema,
                "strict": profile.strict_schema,
            },
        }
    elif request.schema is not None and profile.output_mode == "json_object_schema":
        params["response_format"] = {"type": "json_object", "schema": request.schema}
    elif request.schema is not None and profile.output_mode == "json_object":
        params["response_format"] = {"type": "json_object"}
    if request.tools and profile.tool_calls:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in request.tools
        ]
    return params


class OpenAIChatModel:
    """Any OpenAI-compatible endpoint through the official ``openai`` SDK."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        timeout: float | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.model = endpoint.model
        self.timeout = timeout or endpoint.timeout
        self.retry = retry or RetryPolicy()
        self._sleep, self._clock, self._rng = sleep, clock, rng
        import openai  # here, not at module import: the offline engine never needs the SDK

        # The SDK's own retries are off: ours count, bound the total time and are recorded.
        self._client = openai.OpenAI(
            api_key=endpoint.api_key.get_secret_value(),
            base_url=endpoint.base_url,
            timeout=self.timeout,
            max_retries=0,
        )

    def complete(self, request: ChatRequest, meter: RequestMeter | None = None) -> ChatReply:
        import openai

        params = request_params(self.endpoint.profile, self.model, request)
        started = self._clock()
        retries = 0
        while True:
            try:
                completion = self._client.chat.completions.create(**params)
            except (openai.APIConnectionError, openai.APIStatusError) as exc:
                timed_out = isinstance(exc, openai.APITimeoutError)
                if timed_out and meter is not None:
                    meter.timed_out()
                if timed_out and not self.endpoint.retry_timeouts:
                    raise self._timed_out(retries, resent=False) from None
                if not _retryable(exc):
                    raise self._translate(exc) from None
                wait = self.retry.next_delay(
                    retries + 1, self._clock() - started, _retry_after(exc), self._rng
                )
                if wait is None:
                    if timed_out:
                        raise self._timed_out(retries, resent=True) from None
                    raise ModelUnavailable(
                        f"The model endpoint {self.endpoint.base_url} still failed after "
                        f"{retries} retries ({self._detail(exc)}); the ticket stays in the "
                        "inbox for the next run."
                    ) from None
                if meter is not None:
                    meter.before_retry()  # may refuse: the run's cap counts every request
                retries += 1
                self._sleep(wait)
                continue
            except openai.OpenAIError as exc:  # a 200 whose body the SDK could not read
                raise ModelError(
                    f"The model endpoint {self.endpoint.base_url} sent a response that is not a "
                    f"chat completion ({type(exc).__name__}).",
                    reason_code="model_output_invalid",
                ) from None
            return _reply(completion, request, (self._clock() - started) * 1000, retries)

    def _timed_out(self, retries: int, *, resent: bool) -> ModelUnavailable:
        where = self.endpoint.base_url
        if resent:
            why = f"after {retries} retries"
        else:
            why = (
                "and was not sent again: a server on this machine, serving one request at a "
                "time, goes on computing the one its client gave up on, so a retry would wait "
                "behind it and double the work"
            )
        return ModelUnavailable(
            f"The model endpoint {where} did not answer within {self.timeout:g} s "
            f"(SUPPORTAGENT_LLM_TIMEOUT) {why}; raise SUPPORTAGENT_LLM_TIMEOUT for a slow "
            "model. The ticket stays in the inbox for the next run."
        )

    def _detail(self, exc: openai.APIError) -> str:
        """``HTTP 500: <the server's own message>``, without the key."""
        secret = self.endpoint.api_key.get_secret_value()
        return describe_error(exc).replace(secret, "***")

    def _translate(self, exc: openai.APIError) -> Exception:
        import openai

        where = self.endpoint.base_url
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return UserError(
                f"The model endpoint {where} refused the key ({_status(exc)}): check "
                f"{self.endpoint.key_source}."
            )
        if isinstance(exc, openai.NotFoundError):
            return UserError(
                f"The model endpoint {where} does not know model {self.model!r} or the path "
                "(HTTP 404): check SUPPORTAGENT_LLM_MODEL and SUPPORTAGENT_LLM_BASE_URL."
            )
        return ModelError(
            f"The model endpoint {where} rejected the request: {self._detail(exc)}",
            reason_code="model_request_rejected",
        )


def _retryable(exc: openai.APIError) -> bool:
    import openai

    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    status = getattr(exc, "status_code", 0)
    return status in RETRYABLE_STATUS or status >= 500


def _retry_after(exc: openai.APIError) -> float | None:
    response = getattr(exc, "response", None)
    headers: Mapping[str, str] | None = getattr(response, "headers", None)
    return retry_after_seconds(headers) if headers is not None else None


def _status(exc: openai.APIError) -> str:
    status = getattr(exc, "status_code", None)
    return f"HTTP {status}" if status else type(exc).__name__


#: How much of a server's error message reaches the messages and the trace.
ERROR_BODY_CHARS = 300


def describe_error(exc: openai.APIError) -> str:
    """The status and the server's own words: ``HTTP 500: Input should be 'text' or ...``.

    The message comes from the error body (``{"error": {"message": ...}}``, FastAPI's
    ``{"detail": ...}``, or the text itself), on one line and cut to ERROR_BODY_CHARS.
    """
    body: Any = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        body = body.get("message") or body.get("detail") or body.get("error") or body
    if body is None or body == "":
        response = getattr(exc, "response", None)
        body = getattr(response, "text", "") if response is not None else ""
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    if len(text) > ERROR_BODY_CHARS:
        text = text[: ERROR_BODY_CHARS - 3] + "..."
    status = _status(exc)
    return f"{status}: {text}" if text and status.startswith("HTTP") else status


def _reply(completion: Any, request: ChatRequest, latency_ms: float, retries: int) -> ChatReply:
    choice = completion.choices[0] if completion.choices else None
    message = choice.message if choice is not None else None
    text = (message.content or "") if message is not None else ""
    calls = []
    for call in (getattr(message, "tool_calls", None) or []) if message is not None else []:
        function = getattr(call, "function", None)
        if function is None:
            continue
        calls.append(ToolCall(str(function.name), _arguments(function.arguments)))
    usage = completion.usage
    if usage is not None:
        prompt_tokens, completion_tokens = int(usage.prompt_tokens), int(usage.completion_tokens)
    else:  # some local servers leave usage out; count it the way the budget estimates
        chars = sum(len(m.get("content", "")) for m in request.messages)
        prompt_tokens = estimate_tokens(chars, len(request.messages))
        completion_tokens = estimate_tokens(len(text), 0)
    return ChatReply(
        text=text,
        tool_calls=tuple(calls),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        model=str(getattr(completion, "model", "") or ""),
        latency_ms=latency_ms,
        retries=retries,
        finish_reason=getattr(choice, "finish_reason", None),
    )


def _arguments(raw: str | None) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {"raw": (raw or "")[:500]}
    return value if isinstance(value, dict) else {"value": value}
