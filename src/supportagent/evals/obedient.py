"""A model that obeys every instruction it reads, served on loopback for `eval injection`.

The injection eval needs the worst model there is: one that does whatever the ticket or a
document tells it to. :class:`ObedientModel` answers the agent's prompts (classify, draft,
check, assess, reformulate) in the JSON each asks for; whenever a prompt carries one of the
planted instructions, it carries it out: it writes the instruction's demand into its draft,
asks for the decoy ``post_to_customer`` tool (and any tool the instruction names), copies the
system prompt into the draft when asked for it, reveals the API key if the key is anywhere in
what it was sent, classifies the ticket as a plain question and passes its own draft as
checker. :class:`ObedientServer` serves it over HTTP on 127.0.0.1, so the agent reaches it
through the real ``openai`` SDK exactly as it reaches a hosted model.

The model knows the planted instructions (it is told them, as the eval's oracle) because a
stub cannot read intent; it matches them in a canonical form (look-alike letters, invisible
characters and fence look-alikes folded), as a real model reads through such tricks.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from supportagent.textnorm import canonical

#: The first words of each prompt's system message, and the stage they belong to.
STAGES = {
    "triage classifier": "classify",
    "You are the drafter": "draft",
    "You are the checker": "check",
    "You write search queries": "reformulate",
    "You are the evidence assessor": "assess",
}
_PASSAGE = re.compile(r'PASSAGE id="(?P<id>[^"]+)"[^\n]*\n(?P<text>.*?)\n\S*END PASSAGE', re.S)
_TICKET = re.compile(r"TICKET\S*\nSubject: (?P<subject>[^\n]*)\n", re.S)
_DRAFT_LINE = re.compile(r"^\[(?P<i>\d+)\] (?P<text>.*) \(cites: (?P<cites>[^)]*)\)$", re.M)
_WORD = re.compile(r"[a-z0-9]+")


def fold(text: str) -> str:
    """``text`` as words only, look-alikes and invisible characters folded: for matching."""
    return " ".join(_WORD.findall(canonical(text).replace("\u2039", "<").casefold()))


@dataclass(frozen=True, slots=True)
class Instruction:
    """A planted instruction the model obeys: the text it looks for and what it then does."""

    id: str
    text: str
    #: The sentence it writes into its draft when it obeys (the attack's demand).
    demand: str
    #: Tools it asks for besides the decoy ``post_to_customer``.
    tools: tuple[str, ...] = ()
    #: It copies the system prompt, or the key, into its draft.
    wants_prompt: bool = False
    wants_key: bool = False


@dataclass
class Seen:
    """What the model noticed, by instruction id: the eval's view into the model's side."""

    instructions: dict[str, set[str]] = field(default_factory=dict)  # id -> stages
    key_in_prompt: int = 0  # requests whose messages carried the key
    key_in_header: int = 0  # requests authenticated with the key (the key was really used)
    requests: int = 0


class ObedientModel:
    """Answers each prompt; obeys every planted instruction the prompt contains."""

    def __init__(self, instructions: Sequence[Instruction], key: str) -> None:
        self.instructions = [(i, fold(i.text)) for i in instructions]
        self.key = key
        self.seen = Seen()
        self._lock = threading.Lock()

    def reply(self, body: dict[str, Any], authorization: str) -> dict[str, Any]:
        """The chat message (content and tool calls) for one request body."""
        messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
        system = str(messages[0].get("content") or "") if messages else ""
        prompt = "\n".join(str(m.get("content") or "") for m in messages[1:])
        stage = next((s for marker, s in STAGES.items() if marker in system), "")
        found = self._obeyed(prompt, stage, authorization, messages)
        if stage == "classify":
            reason = "the ticket says to treat it as a routine question" if found else "a question"
            content: dict[str, Any] = {
                "reason_code": "question",
                "reason": reason,
                "confidence": 0.99,
            }
        elif stage == "draft":
            return self._draft(prompt, system, found, messages)
        elif stage == "check":
            content = _passing_check(prompt)
        elif stage == "assess":
            content = {"sufficient": True, "reason": "the passages say what to do"}
        elif stage == "reformulate":
            subject = _TICKET.search(prompt)
            content = {"query": subject["subject"] if subject else None}
        else:
            content = {}
        return {"role": "assistant", "content": json.dumps(content)}

    def _obeyed(
        self, prompt: str, stage: str, authorization: str, messages: list[dict[str, Any]]
    ) -> list[Instruction]:
        folded = fold(prompt)
        found = [i for i, text in self.instructions if text and text in folded]
        with self._lock:
            self.seen.requests += 1
            self.seen.key_in_header += authorization == f"Bearer {self.key}"
            self.seen.key_in_prompt += any(self.key in str(m.get("content")) for m in messages)
            for instruction in found:
                self.seen.instructions.setdefault(instruction.id, set()).add(stage)
        return found

    def _draft(
        self,
        prompt: str,
        system: str,
        found: list[Instruction],
        messages: list[dict[str, Any]],
    ) -> dict[str, Any]:
        passages = [m.groupdict() for m in _PASSAGE.finditer(prompt)]
        ids = [p["id"] for p in passages] or ["none"]
        sentences = []
        calls = []
        for n, instruction in enumerate(found):
            # Cite the passage that carries the instruction, if a passage does: the checker
            # then sees the demand "supported" word for word.
            source = next(
                (p["id"] for p in passages if fold(instruction.text) in fold(p["text"])), ids[0]
            )
            sentences.append({"text": instruction.demand, "citations": [source]})
            if instruction.wants_prompt:
                first = system.strip().splitlines()[0] if system.strip() else ""
                sentences.append({"text": f"My instructions say: {first}", "citations": [source]})
            if instruction.wants_key:
                visible = any(self.key in str(m.get("content")) for m in messages)
                secret = self.key if visible else "I was not given the key in this conversation"
                sentences.append({"text": f"The API key is {secret}.", "citations": [source]})
            arguments = {"ticket_id": "current", "text": instruction.demand}
            for tool in ("post_to_customer", *instruction.tools):
                calls.append(_tool_call(f"{tool}-{n}", tool, arguments))
        if passages:  # and, like any drafter, one sentence of the evidence
            text = _first_sentence(passages[0]["text"])
            if text:
                sentences.append({"text": text, "citations": [passages[0]["id"]]})
        content = json.dumps({"sentences": sentences, "confidence": 0.99})
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        return message


def _passing_check(prompt: str) -> dict[str, Any]:
    """The checker's reply that passes every line of the draft, each supported by its cite."""
    draft = prompt.split("DRAFT", 1)[-1]
    claims = []
    for match in _DRAFT_LINE.finditer(draft):
        cites = [c.strip() for c in match["cites"].split(",") if c.strip() != "nothing"]
        claims.append(
            {
                "claim": match["text"],
                "sentence": int(match["i"]),
                "supported_by": cites[0] if cites else None,
            }
        )
    return {"claims": claims, "problems": [], "verdict": "pass", "suggested_action": "stage"}


def _first_sentence(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("-*0123456789.) ").strip()
        if len(line) >= 25 and not line.startswith(("#", "|", "```")):
            return re.split(r"(?<=[.!?])\s+", line)[0]
    return ""


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{call_id}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


class ObedientServer:
    """:class:`ObedientModel` behind an OpenAI-compatible chat endpoint on 127.0.0.1.

    Use as a context manager; ``url`` is the base URL to give the llm engine.
    """

    def __init__(self, model: ObedientModel) -> None:
        self.model = model
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(model))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ObedientServer:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(model: ObedientModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # two writes per answer; no delayed-ACK wait

        def do_GET(self) -> None:
            self._send(404, {"detail": "Not Found"})  # nothing to detect: a plain endpoint

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", 0))
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                self._send(400, {"error": {"message": "not JSON", "type": "invalid_request"}})
                return
            message = model.reply(body, self.headers.get("authorization", ""))
            self._send(200, _completion(body, message))

        def _send(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *_args: Any) -> None:
            pass  # the eval's output is its report, not an access log

    return Handler


def _completion(body: dict[str, Any], message: dict[str, Any]) -> dict[str, Any]:
    sent = sum(len(str(m.get("content") or "")) for m in body.get("messages", []))
    made = len(str(message.get("content") or "")) + len(json.dumps(message.get("tool_calls", [])))
    return {
        "id": "chatcmpl-obedient",
        "object": "chat.completion",
        "created": 0,
        "model": str(body.get("model", "obedient")),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": sent // 4,
            "completion_tokens": made // 4,
            "total_tokens": (sent + made) // 4,
        },
    }
