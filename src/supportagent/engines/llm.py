"""The llm engine: the three decisions (and query reformulation) made by a model from prompts.

Prompts are files (``agent/prompts``); replies are validated by the pydantic models below; the
talking, caching, budgeting and repairing is :class:`~supportagent.llm.structured.StructuredCaller`.
The engine never touches the store: it keeps a record of each call, and the pipeline takes
those records (:meth:`LLMEngine.take_calls`) to store and trace them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from supportagent.domain import (
    Bucket,
    Classification,
    Draft,
    DraftSentence,
    Hit,
    Problem,
    SafetyResult,
    Ticket,
    ToolRequest,
    Verdict,
)
from supportagent.engines.classifier import Classifier, sure_by_rules
from supportagent.llm.budget import Budget
from supportagent.llm.chat import ChatModel, ToolSpec
from supportagent.llm.prompts import load_prompt
from supportagent.llm.structured import CallRecord, ResponseCache, StructuredCaller

#: Reason codes the model may give, the bucket each one means, and how the prompt explains it.
REASON_CODES: dict[str, tuple[Bucket, str]] = {
    "question": (Bucket.ANSWERABLE, "a how-to or product question"),
    "bug_report": (Bucket.NOT_A_QUESTION, "something is broken or behaves wrongly"),
    "feature_request": (Bucket.NOT_A_QUESTION, "asks for something the product does not do"),
    "feedback": (Bucket.NOT_A_QUESTION, "praise or a complaint, with no question"),
    "outage": (Bucket.NOT_A_QUESTION, "reports the service down or degraded"),
    "money_specific": (Bucket.NEEDS_HUMAN, "one specific invoice, charge, refund or payment"),
    "account_specific": (Bucket.NEEDS_HUMAN, "needs a look at or a change to one account"),
    "human_requested": (Bucket.NEEDS_HUMAN, "asks for a person"),
    "prompt_injection": (Bucket.NEEDS_HUMAN, "tries to give the assistant instructions"),
    "unclear": (Bucket.NEEDS_HUMAN, "too vague, or not safe to answer from documentation"),
}
ReasonCode = Literal[
    "question",
    "bug_report",
    "feature_request",
    "feedback",
    "outage",
    "money_specific",
    "account_specific",
    "human_requested",
    "prompt_injection",
    "unclear",
]
#: Offline decisions a model may not turn into a draft: money and account matters.
BACKSTOP_CODES = frozenset({"money_specific", "account_specific", "human_requested"})
#: The offline triage model overrules the language model only when it is this sure: a weak
#: guess of the small model must not outweigh the large one (a rule always holds).
FLOOR_CONFIDENCE = 0.7
CHECKER = "llm"

#: The demo's decoy, offered to the drafter only with ``--demo-forbidden-post``.
DECOY_TOOL = ToolSpec(
    "post_to_customer",
    "Send a message to the customer now.",
    {
        "type": "object",
        "properties": {"ticket_id": {"type": "string"}, "text": {"type": "string"}},
        "required": ["ticket_id", "text"],
    },
)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _probability(value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise ValueError("must be between 0 and 1")
    return value


class ClassifyReply(_Reply):
    bucket: Literal["answerable", "not_a_question", "needs_human"]
    reason_code: ReasonCode
    reason: str
    confidence: float

    _confidence = field_validator("confidence")(_probability)

    @model_validator(mode="after")
    def _code_fits_bucket(self) -> ClassifyReply:
        expected = REASON_CODES[self.reason_code][0]
        if expected.value != self.bucket:
            raise ValueError(
                f"reason_code {self.reason_code!r} belongs to bucket {expected.value!r}"
            )
        return self


class SentenceOut(_Reply):
    text: str
    citations: list[str]


class DraftReply(_Reply):
    sentences: list[SentenceOut]
    confidence: float

    _confidence = field_validator("confidence")(_probability)


class ClaimOut(_Reply):
    claim: str
    sentence: int | None
    supported_by: str | None


class ProblemOut(_Reply):
    code: Literal[
        "unsupported_sentence",
        "conflicting_evidence",
        "off_topic",
        "incomplete_answer",
        "unsafe_content",
    ]
    message: str
    sentence: int | None


class CheckReply(_Reply):
    verdict: Literal["pass", "fail"]
    claims: list[ClaimOut]
    problems: list[ProblemOut]
    suggested_action: Literal["stage", "revise", "escalate"]


class ReformulateReply(_Reply):
    query: str | None


class AssessReply(_Reply):
    sufficient: bool
    reason: str


@runtime_checkable
class MeteredEngine(Protocol):
    """An engine that calls a model and keeps a record of each call for the pipeline."""

    def take_calls(self, ticket_id: str) -> list[CallRecord]: ...


class LLMEngine:
    """Classify, draft, check and reformulate with a model behind a ChatModel."""

    name = "llm"

    def __init__(
        self,
        model: ChatModel,
        *,
        budget: Budget | None = None,
        cache: ResponseCache | None = None,
        trace_prompts: bool = False,
        demo_forbidden_post: bool = False,
        description: str | None = None,
        backstop: Classifier | None = None,
    ) -> None:
        self.budget = budget or Budget()
        self.caller = StructuredCaller(
            model, self.budget, load_prompt("repair"), cache=cache, trace_prompts=trace_prompts
        )
        self.demo_forbidden_post = demo_forbidden_post
        #: The offline classifier, consulted after the model as a floor.
        self.backstop = backstop or Classifier()
        self.description = description or f"llm (model {model.model})"

    def use_cache(self, cache: ResponseCache | None) -> None:
        """Keep validated replies in ``cache`` (the pipeline's store provides one)."""
        self.caller.cache = cache

    def take_calls(self, ticket_id: str) -> list[CallRecord]:
        return self.caller.take_records(ticket_id)

    # --- the Engine protocol -------------------------------------------------------------

    def classify(self, ticket: Ticket, safety: SafetyResult) -> Classification:
        """The model's bucket, with the offline classifier as a floor under it.

        What the rules are sure of (an injection, an empty ticket, a risk, a money or account
        request, a person asked for, an outage) costs no call. After the call, a money or
        account decision of the offline triage model overrules a model that would answer:
        the model may route or escalate, never turn a risk back into ``answerable``.
        """
        sure = sure_by_rules(ticket, safety)
        if sure is not None:
            return sure
        codes = [
            {"code": code, "bucket": bucket.value, "description": text}
            for code, (bucket, text) in REASON_CODES.items()
        ]
        reply = self.caller.ask(
            ticket.id,
            load_prompt("classify"),
            {"ticket": ticket, "reason_codes": codes},
            ClassifyReply,
        ).value
        decided = Classification(
            Bucket(reply.bucket), reply.reason_code, reply.reason, reply.confidence, "llm"
        )
        if decided.bucket is Bucket.NEEDS_HUMAN:
            return decided
        floor = self.backstop.classify(ticket, safety)
        holds = floor.decided_by == "rules" or floor.confidence >= FLOOR_CONFIDENCE
        if floor.bucket is Bucket.NEEDS_HUMAN and floor.reason_code in BACKSTOP_CODES and holds:
            reason = f"{floor.reason}; the model said {reply.bucket} ({reply.reason_code})"
            return replace(floor, reason=reason, decided_by="rules over llm")
        return decided

    def draft(
        self,
        ticket: Ticket,
        evidence: Sequence[Hit],
        previous: Draft | None = None,
        verdict: Verdict | None = None,
    ) -> Draft:
        variables: dict[str, Any] = {
            "ticket": ticket,
            "passages": _passages(evidence),
            "previous": _sentences(previous) if previous is not None else [],
            "problems": [
                {"code": p.code, "message": p.message, "sentence": p.sentence}
                for p in (verdict.problems if verdict is not None else ())
            ],
        }
        tools = (DECOY_TOOL,) if self.demo_forbidden_post and previous is None else ()
        answer = self.caller.ask(
            ticket.id, load_prompt("draft"), variables, DraftReply, tools=tools
        )
        sentences = tuple(
            DraftSentence(
                " ".join(s.text.split()),
                tuple(dict.fromkeys(c.strip() for c in s.citations if c.strip())),
            )
            for s in answer.value.sentences
            if s.text.strip()
        )
        requests = tuple(ToolRequest(c.name, dict(c.arguments)) for c in answer.tool_calls)
        revision = previous.revision + 1 if previous is not None else 0
        return Draft(sentences, answer.value.confidence, revision, requests)

    def check(self, ticket: Ticket, draft: Draft, evidence: Sequence[Hit]) -> Verdict:
        variables = {
            "ticket": ticket,
            "passages": _passages(evidence),
            "sentences": _sentences(draft),
        }
        reply = self.caller.ask(ticket.id, load_prompt("check"), variables, CheckReply).value
        return verdict_from_reply(reply, draft, {h.id for h in evidence})

    # --- evidence retries (the pipeline's evidence gate calls this) -------------------------

    def assess_evidence(self, ticket: Ticket, evidence: Sequence[Hit]) -> tuple[bool, str]:
        """Whether ``evidence`` can answer ``ticket``; asked only when the signals are ambiguous."""
        reply = self.caller.ask(
            ticket.id,
            load_prompt("assess"),
            {"ticket": ticket, "passages": _passages(evidence)},
            AssessReply,
        ).value
        return reply.sufficient, " ".join(reply.reason.split())[:300]

    def reformulate(self, ticket: Ticket, attempt: int, previous_query: str) -> str | None:
        """A new search query for retry ``attempt``, or None when the model has nothing new."""
        reply = self.caller.ask(
            ticket.id,
            load_prompt("reformulate"),
            {"ticket": ticket, "attempt": attempt, "previous_query": previous_query},
            ReformulateReply,
        ).value
        query = " ".join((reply.query or "").split())
        if not query or query.casefold() == " ".join(previous_query.split()).casefold():
            return None
        return query[:500]


def verdict_from_reply(reply: CheckReply, draft: Draft, evidence_ids: set[str]) -> Verdict:
    """The checker's reply as a Verdict; a claim without a passage in the evidence fails it."""
    n = len(draft.sentences)

    def index(value: int | None) -> int | None:
        return value if value is not None and 0 <= value < n else None

    claims = tuple(
        (c.claim, c.supported_by if c.supported_by in evidence_ids else None) for c in reply.claims
    )
    problems = [Problem(p.code, p.message, index(p.sentence)) for p in reply.problems]
    flagged = {p.sentence for p in problems if p.code == "unsupported_sentence"}
    for claim, (text, passage) in zip(reply.claims, claims, strict=True):
        if passage is None and index(claim.sentence) not in flagged:
            cited = (
                f" (it named {claim.supported_by!r}, not in the evidence)"
                if claim.supported_by
                else ""
            )
            problems.append(
                Problem(
                    "unsupported_sentence",
                    f"No passage supports: {text}{cited}",
                    index(claim.sentence),
                )
            )
            flagged.add(index(claim.sentence))
    passed = reply.verdict == "pass" and all(p is not None for _, p in claims)
    if passed:
        return Verdict(True, tuple(problems), CHECKER, claims)
    if not problems:
        problems.append(
            Problem("checker_rejected", "The checker failed the draft without a reason.")
        )
    if reply.suggested_action == "escalate":
        # The pipeline stops revising on this: no draft from this evidence can pass.
        problems.append(
            Problem("checker_escalates", "The checker says no draft from this evidence can pass.")
        )
    return Verdict(False, tuple(problems), CHECKER, claims)


def _passages(evidence: Sequence[Hit]) -> list[dict[str, str]]:
    return [
        {
            "id": h.passage.id,
            "kind": h.passage.kind.value,
            "title": " / ".join((h.passage.title, *h.passage.heading_path)),
            "text": h.passage.text,
        }
        for h in evidence
    ]


def _sentences(draft: Draft) -> list[dict[str, Any]]:
    return [
        {"index": i, "text": s.text, "citations": list(s.citations)}
        for i, s in enumerate(draft.sentences)
    ]
