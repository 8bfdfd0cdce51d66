"""A local OpenAI-compatible chat server for tests: scripted replies, every request recorded.

The real ``openai`` SDK talks to it over real HTTP on 127.0.0.1. Each request takes the next
scripted reply; when the script is empty, :class:`EvidenceModel` answers: it reads the ticket,
the passages and the draft out of the messages it was sent, the way a model would, and replies
with JSON in the shape each prompt asks for. Its replies are parsed and validated by the code
under test like any model's.
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KEY = "sk-stub-SECRET-7f3a9c1e5b2d4f60"

_PASSAGE = re.compile(
    r'<<<PASSAGE id="(?P<id>[^"]+)" kind="(?P<kind>[^"]+)"[^\n]*>>>\n'
    r"(?P<text>.*?)\n<<<END PASSAGE>>>",
    re.DOTALL,
)
_TICKET = re.compile(
    r"<<<TICKET>>>\nSubject: (?P<subject>[^\n]*)\n\n(?P<body>.*?)\n<<<END TICKET>>>",
    re.DOTALL,
)
_DRAFT = re.compile(r"<<<DRAFT>>>\n(?P<lines>.*?)\n<<<END DRAFT>>>", re.DOTALL)
_DRAFT_LINE = re.compile(r"^\[(?P<i>\d+)\] (?P<text>.*) \(cites: (?P<cites>[^)]*)\)$")
_WORD = re.compile(r"[a-z0-9][a-z0-9-]{3,}")
_STAGES = {
    "triage classifier": "classify",
    "You are the drafter": "draft",
    "You are the checker": "check",
    "You write search queries": "reformulate",
    "You are the evidence assessor": "assess",
}


@dataclass
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))

    @property
    def stage(self) -> str:
        system = self.messages[0]["content"] if self.messages else ""
        return next((stage for marker, stage in _STAGES.items() if marker in system), "?")

    @property
    def prompt(self) -> str:
        """The first user message: the ticket, passages and draft the prompt put there."""
        return next((m["content"] for m in self.messages if m["role"] == "user"), "")

    @property
    def is_repair(self) -> bool:
        return any(m["role"] == "assistant" for m in self.messages)


@dataclass
class StubReply:
    """What the server sends back. ``content``/``tool_calls`` make a chat completion."""

    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    status: int = 200
    raw: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


Responder = Callable[[Received], StubReply]


def as_json(value: Any) -> StubReply:
    return StubReply(content=json.dumps(value))


def fenced(value: Any) -> StubReply:
    return StubReply(content="Here you go:\n```json\n" + json.dumps(value, indent=2) + "\n```")


def error(status: int, retry_after: str | None = None) -> StubReply:
    headers = {"retry-after": retry_after} if retry_after is not None else {}
    message = {"error": {"message": f"stub says {status}", "type": "stub_error", "code": None}}
    return StubReply(status=status, raw=message, headers=headers)


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{name}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def tokens(text: str) -> int:
    """How the stub counts tokens: four characters each, like a rough tokenizer."""
    return math.ceil(len(text) / 4)


class EvidenceModel:
    """Answers every prompt from what the prompt contains, like a careful model would."""

    def __init__(self, buckets: Callable[[str, str], tuple[str, str]] | None = None) -> None:
        self.buckets = buckets or (lambda _subject, _body: ("answerable", "question"))

    def __call__(self, request: Received) -> StubReply:
        answer = getattr(self, f"_{request.stage}", None)
        if answer is None:
            return error(400)
        return as_json(answer(request))

    def _classify(self, request: Received) -> dict[str, Any]:
        ticket = _TICKET.search(request.prompt)
        subject, body = (ticket["subject"], ticket["body"]) if ticket else ("", "")
        _bucket, code = self.buckets(subject, body)
        return {"reason": "stub", "reason_code": code, "confidence": 0.9}

    def _draft(self, request: Received) -> dict[str, Any]:
        return {"sentences": draft_sentences(request.prompt), "confidence": 0.8}

    def _check(self, request: Received) -> dict[str, Any]:
        claims = [
            {"claim": s["text"], "sentence": i, "supported_by": (s["citations"] or [None])[0]}
            for i, s in enumerate(draft_lines(request.prompt))
        ]
        return {"claims": claims, "problems": [], "verdict": "pass", "suggested_action": "stage"}

    def _assess(self, request: Received) -> dict[str, Any]:
        """Enough when a passage shares a word of four letters or more with the subject."""
        ticket = _TICKET.search(request.prompt)
        subject = set(_WORD.findall(ticket["subject"].lower())) if ticket else set()
        text = " ".join(p["text"] for p in passages(request.prompt)).lower()
        shared = sorted(w for w in subject if w in set(_WORD.findall(text)))
        return {
            "sufficient": bool(shared),
            "reason": f"passages mention {', '.join(shared)}" if shared else "off topic",
        }

    def _reformulate(self, request: Received) -> dict[str, Any]:
        ticket = _TICKET.search(request.prompt)
        return {"query": ticket["subject"].lower() if ticket else None}


def passages(prompt: str) -> list[dict[str, str]]:
    return [m.groupdict() for m in _PASSAGE.finditer(prompt)]


def draft_lines(prompt: str) -> list[dict[str, Any]]:
    found = _DRAFT.search(prompt)
    lines = []
    for line in (found["lines"] if found else "").splitlines():
        if m := _DRAFT_LINE.match(line.strip()):
            cites = [c.strip() for c in m["cites"].split(",") if c.strip() and c != "nothing"]
            lines.append({"text": m["text"], "citations": cites})
    return lines


def draft_sentences(prompt: str, limit: int = 2) -> list[dict[str, Any]]:
    """The passage sentences sharing most words with the ticket, each citing its passage.

    Sentences of a previous draft named in the prompt are not used again, so a revision
    differs from the draft the checker objected to.
    """
    ticket = _TICKET.search(prompt)
    wanted = (
        set(_WORD.findall((ticket["subject"] + " " + ticket["body"]).lower())) if ticket else set()
    )
    scored = []
    for rank, p in enumerate(passages(prompt)):
        for sentence in _sentences(p["text"]):
            if f"] {sentence} (cites:" in prompt:
                continue
            overlap = len(wanted & set(_WORD.findall(sentence.lower())))
            scored.append((-overlap, rank, sentence, p["id"]))
    scored.sort()
    return [{"text": s, "citations": [pid]} for _, _, s, pid in scored[:limit]]


def _sentences(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        line = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line).strip()
        if not line or line.startswith(("#", "|", "```")):
            continue
        out.extend(s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z])", line))
    return [s for s in out if len(s) >= 25 and not s.endswith("?")]


#: What each kind of server answers about itself (GET path -> JSON body), as the real ones do:
#: llama-cpp-python 0.3, llama.cpp's llama-server, vLLM and Ollama. Other paths answer 404.
PERSONAS: dict[str, dict[str, Any]] = {
    "llama-cpp-python": {
        "/v1/models": {
            "object": "list",
            "data": [
                {"id": "qwen2.5-1.5b", "object": "model", "owned_by": "me", "permissions": []}
            ],
        },
    },
    "llama-server": {
        "/v1/models": {
            "object": "list",
            "data": [
                {
                    "id": "qwen2.5-1.5b-instruct-q4_k_m.gguf",
                    "object": "model",
                    "created": 1767225600,
                    "owned_by": "llamacpp",
                    "meta": {"n_ctx_train": 32768, "n_vocab": 151936},
                }
            ],
        },
        "/props": {
            "default_generation_settings": {"n_ctx": 4096, "temperature": 0.8},
            "total_slots": 1,
            "model_path": "qwen2.5-1.5b-instruct-q4_k_m.gguf",
        },
        "/health": {"status": "ok"},
    },
    "vllm": {
        "/v1/models": {
            "object": "list",
            "data": [
                {
                    "id": "Qwen/Qwen2.5-7B-Instruct",
                    "object": "model",
                    "created": 1767225600,
                    "owned_by": "vllm",
                    "root": "Qwen/Qwen2.5-7B-Instruct",
                    "max_model_len": 32768,
                }
            ],
        },
        "/version": {"version": "0.11.0"},
    },
    "ollama": {
        "/v1/models": {
            "object": "list",
            "data": [
                {
                    "id": "qwen2.5:7b-instruct",
                    "object": "model",
                    "created": 0,
                    "owned_by": "library",
                }
            ],
        },
        "/api/version": {"version": "0.12.3"},
    },
}

#: llama-cpp-python's answer to ``response_format: {"type": "json_schema"}`` (HTTP 500).
LLAMA_CPP_PYTHON_REJECTS_JSON_SCHEMA = {
    "error": {
        "message": (
            "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
            "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': "
            "'json_schema'}\n\n  File \"llama_cpp/server/app.py\", line 376, in "
            "create_chat_completion\n    POST /v1/chat/completions"
        ),
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}


class StubLLM:
    """The server. Use as a context manager; ``url`` is the base URL for the SDK.

    ``persona``: answer GET requests (and reject what it rejects) like that kind of server.
    ``single_slot``: serve one chat request at a time, finishing each even when its client
    has gone, as llama-cpp-python does; ``busy_seconds`` adds up the time spent serving.
    """

    def __init__(
        self,
        model: Responder | None = None,
        *,
        persona: str | None = None,
        single_slot: bool = False,
    ) -> None:
        self.model: Responder = model or EvidenceModel()
        self.persona = persona
        self.gets: list[str] = []
        #: Seconds a GET waits before its answer (llama-cpp-python answers none while busy).
        self.get_delay = 0.0
        self.slot = threading.Lock() if single_slot else None
        self.busy_seconds = 0.0
        self.script: deque[StubReply | Responder] = deque()
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def push(self, *replies: StubReply | Responder) -> None:
        """Script the next replies, in order; afterwards ``model`` answers again."""
        self.script.extend(replies)

    def stages(self) -> list[str]:
        return [r.stage for r in self.requests]

    def __enter__(self) -> StubLLM:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def respond(self, request: Received) -> StubReply:
        with self._lock:
            self.requests.append(request)
            item = self.script.popleft() if self.script else self.model
        return item if isinstance(item, StubReply) else item(request)


def _handler(stub: StubLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in two writes; with Nagle's algorithm on, the second waits
        # for the client's delayed ACK (40 ms on Linux), which would add to every call.
        disable_nagle_algorithm = True

        def do_GET(self) -> None:
            stub.gets.append(self.path)
            if stub.get_delay:
                time.sleep(stub.get_delay)
            answers = PERSONAS.get(stub.persona or "", {})
            if self.path in answers:
                self._send(200, answers[self.path], {})
            else:
                self._send(404, {"detail": "Not Found"}, {})

        def do_POST(self) -> None:  # the name http.server calls
            length = int(self.headers.get("content-length", 0))
            body = json.loads(self.rfile.read(length) or b"{}")
            request = Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            if stub.slot is None:
                reply, payload = self._serve(request)
            else:
                with stub.slot:  # one at a time; a request whose client left is still served
                    started = time.monotonic()
                    reply, payload = self._serve(request)
                    stub.busy_seconds += time.monotonic() - started
            self._send(reply.status, payload, reply.headers)

        def _serve(self, request: Received) -> tuple[StubReply, dict[str, Any]]:
            format_type = (request.body.get("response_format") or {}).get("type")
            if stub.persona == "llama-cpp-python" and format_type == "json_schema":
                with stub._lock:
                    stub.requests.append(request)
                return StubReply(status=500), LLAMA_CPP_PYTHON_REJECTS_JSON_SCHEMA
            reply = stub.respond(request)
            if reply.delay:
                time.sleep(reply.delay)
            return reply, reply.raw if reply.raw is not None else _completion(request, reply)

        def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
            reply = StubReply(status=status, headers=headers)
            data = json.dumps(payload).encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (the timeout test)

        def log_message(self, *_args: Any) -> None:
            pass

    return Handler


def _completion(request: Received, reply: StubReply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    prompt_tokens = sum(tokens(str(m.get("content") or "")) for m in request.messages)
    completion_tokens = tokens(reply.content or "")
    if reply.tool_calls:
        completion_tokens += tokens(json.dumps(reply.tool_calls))
    return {
        "id": f"chatcmpl-stub-{id(reply)}",
        "object": "chat.completion",
        "created": 0,
        "model": request.body.get("model", "stub"),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


# --- wiring the code under test to the stub ---------------------------------------------------


class Sleeps(list[float]):
    """Stands in for ``time.sleep`` in retry tests: records each wait instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def stub_settings(stub: StubLLM, home: Any, **overrides: Any) -> Any:
    """Settings that point the llm engine at ``stub`` with the test key."""
    from supportagent.config import load_settings

    values: dict[str, Any] = {
        "home": home,
        "engine": "llm",
        "llm_base_url": stub.url,
        "llm_model": "stub-model",
        "llm_api_key": KEY,
    }
    values.update(overrides)
    return load_settings(**values)


def stub_engine(
    settings: Any,
    *,
    sleep: Callable[[float], None] | None = None,
    retry: Any = None,
    budget: Any = None,
    demo_forbidden_post: bool = False,
) -> Any:
    """The real LLMEngine over the real OpenAI client, with fast retries that do not sleep."""
    from supportagent.engines.llm import LLMEngine
    from supportagent.llm.budget import Budget
    from supportagent.llm.chat import OpenAIChatModel
    from supportagent.llm.profiles import resolve_endpoint
    from supportagent.llm.retry import RetryPolicy

    model = OpenAIChatModel(
        resolve_endpoint(settings),
        timeout=settings.llm_timeout,
        retry=retry or RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05),
        sleep=sleep if sleep is not None else Sleeps(),
    )
    return LLMEngine(
        model,
        budget=budget or Budget(settings.max_api_calls, settings.max_tokens),
        trace_prompts=settings.trace_prompts,
        redact_pii=settings.redact_pii,
        demo_forbidden_post=demo_forbidden_post,
    )


#: What the stub classifier answers for each kind of demo ticket that is not a question.
_DEMO_CODES = {
    "bug": "bug_report",
    "feature": "feature_request",
    "outage": "outage",
    "account": "account_specific",
}


def demo_classifier() -> Callable[[str, str], tuple[str, str]]:
    """Bucket and reason code for each demo ticket, looked up by subject in the demo labels."""
    from supportagent.ingest import read_tickets
    from supportagent.labels import read_labels
    from supportagent.runtime import demo_path

    labels = read_labels(demo_path() / "labels.jsonl")
    tickets = read_tickets(demo_path() / "inbox.jsonl").records
    by_subject = {t.subject.strip(): labels[t.id] for t in tickets}

    def classify(subject: str, _body: str) -> tuple[str, str]:
        label = by_subject[subject.strip()]
        bucket = label.expected_bucket.value
        default = {"answerable": "question", "needs_human": "unclear"}.get(bucket, "feedback")
        return bucket, _DEMO_CODES.get(label.kind or "", default)

    return classify
