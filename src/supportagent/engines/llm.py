"""The llm engine: the three decisions (and query reformulation) made by a model from prompts.

Prompts are files (``agent/prompts``); replies are validated by the pydantic models below; the
talking, caching, budgeting and repairing is :class:`~supportagent.llm.structured.StructuredCaller`.
The engine never touches the store: it keeps a record of each call, and the pipeline takes
those records (:meth:`LLMEngine.take_calls`) to store and trace them.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from supportagent.agent.grounding import action_claim_problems
from supportagent.domain import (
    Bucket,
    Classification,
    DocKind,
    Draft,
    DraftSentence,
    Hit,
    Problem,
    SafetyResult,
    Ticket,
    ToolRequest,
    Verdict,
)
from supportagent.engines.base import MeteredEngine as MeteredEngine  # where it used to live
from supportagent.engines.classifier import Classifier, not_answered_near_a_risk, sure_by_rules
from supportagent.engines.llm_replies import (
    REASON_CODES,
    AssessReply,
    CheckReply,
    ClassifyReply,
    DraftReply,
    ProblemOut,
    ReformulateReply,
    check_schema,
    draft_schema,
)
from supportagent.llm.budget import CHARS_PER_TOKEN, Budget
from supportagent.llm.chat import ChatModel, ToolSpec
from supportagent.llm.prompts import Prompt, load_prompt
from supportagent.llm.structured import CallRecord, ResponseCache, StructuredCaller
from supportagent.planted import with_markers
from supportagent.redact import Redactor

__all__ = [
    "REASON_CODES",
    "AssessReply",
    "CheckReply",
    "ClassifyReply",
    "DraftReply",
    "LLMEngine",
    "MeteredEngine",
    "ProblemOut",
    "ReformulateReply",
    "verdict_from_reply",
]

#: Offline decisions a model may not turn into a draft: money and account matters.
BACKSTOP_CODES = frozenset({"money_specific", "account_specific", "human_requested"})
#: The offline triage model overrules the language model only when it is this sure: a weak
#: guess of the small model must not outweigh the large one (a rule always holds).
FLOOR_CONFIDENCE = 0.7
CHECKER = "llm"
#: Tokens kept free in the context window beyond the reply's limit (chat-template tokens).
CONTEXT_MARGIN = 128
#: Passage text is cut at a sentence end when it must be cut; never shorter than this.
MIN_PASSAGE_CHARS = 200
#: Estimated tokens (characters / 3) of passages one prompt carries at most, even where the
#: context window holds more: the best-ranked passages carry the answer, and every token of
#: the rest is paid for in the draft and again in the assessor's call.
EVIDENCE_TOKENS = 900
#: Tickets whose placeholders an engine remembers (a long-running worker forgets the oldest).
REDACTORS_KEPT = 512

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
        context_tokens: int | None = None,
        evidence_tokens: int = EVIDENCE_TOKENS,
        backstop: Classifier | None = None,
        redact_pii: bool = True,
    ) -> None:
        self.budget = budget or Budget()
        self.caller = StructuredCaller(
            model, self.budget, load_prompt("repair"), cache=cache, trace_prompts=trace_prompts
        )
        self.demo_forbidden_post = demo_forbidden_post
        #: The offline classifier, consulted after the model as a floor.
        self.backstop = backstop or Classifier()
        self.description = description or f"llm (model {model.model})"
        endpoint = getattr(model, "endpoint", None)
        #: The model's context window: the evidence in a prompt is trimmed to fit it.
        self.context_tokens = context_tokens or int(getattr(endpoint, "context_tokens", 0) or 0)
        self.evidence_tokens = evidence_tokens
        #: Personal data becomes placeholders before a prompt is rendered (``redact.py``).
        self.redact_pii = redact_pii
        self._redactors: OrderedDict[str, Redactor] = OrderedDict()
        self._redactors_lock = threading.Lock()

    def use_cache(self, cache: ResponseCache | None) -> None:
        """Keep validated replies in ``cache`` (the pipeline's store provides one)."""
        self.caller.cache = cache

    def take_calls(self, ticket_id: str) -> list[CallRecord]:
        return self.caller.take_records(ticket_id)

    # --- personal data ---------------------------------------------------------------------

    def restore_draft(self, ticket_id: str, draft: Draft) -> Draft:
        """``draft`` with the real values where the model echoed a placeholder, for the
        pipeline's checks and the reviewer (never for a trace). Tool requests stay as the
        model wrote them: they go to the gate and the trace, not to a person."""
        redactor = self._known(ticket_id)
        if redactor is None:
            return draft
        sentences = tuple(replace(s, text=redactor.restore(s.text)) for s in draft.sentences)
        return replace(draft, sentences=sentences)

    def conceal(self, ticket_id: str, text: str) -> str:
        """``text`` with this ticket's personal data as placeholders again (for traces and the
        audit log, which must not gain what :meth:`restore_draft` put back)."""
        redactor = self._known(ticket_id)
        return redactor.redact(text) if redactor is not None else text

    def redacted_counts(self, ticket_id: str) -> dict[str, int]:
        """How many distinct values of each kind this ticket's prompts carried as placeholders."""
        redactor = self._known(ticket_id)
        return redactor.counts() if redactor is not None else {}

    def _known(self, ticket_id: str) -> Redactor | None:
        with self._redactors_lock:
            return self._redactors.get(ticket_id)

    def _hider(self, ticket: Ticket) -> Callable[[str], str]:
        """What every text of ``ticket``'s prompts passes through before it is rendered."""
        if not self.redact_pii:
            return lambda text: text
        with self._redactors_lock:
            redactor = self._redactors.get(ticket.id)
            if redactor is None:
                redactor = Redactor()
                # The ticket's own values are numbered first, whichever stage asks first, so
                # that the same ticket always renders the same prompts (the cache key).
                redactor.redact(ticket.subject)
                redactor.redact(ticket.body)
                self._redactors[ticket.id] = redactor
                while len(self._redactors) > REDACTORS_KEPT:
                    self._redactors.popitem(last=False)
            else:
                self._redactors.move_to_end(ticket.id)
        return redactor.redact

    def _shown(self, ticket: Ticket, hide: Callable[[str], str]) -> Ticket:
        customer = hide(ticket.customer) if ticket.customer else ticket.customer
        return replace(
            ticket, subject=hide(ticket.subject), body=hide(ticket.body), customer=customer
        )

    # --- the Engine protocol -------------------------------------------------------------

    def classify(self, ticket: Ticket, safety: SafetyResult) -> Classification:
        """The model's bucket, with the offline classifier as a floor under it.

        What the rules are sure of (an injection, an empty ticket, a risk, a money or account
        request, a person asked for, an outage) costs no call. After the call, a money or
        account decision of the offline triage model or of its sentence-level request model
        overrules a model that would answer:
        the model may route or escalate, never turn a risk back into ``answerable``.
        """
        sure = sure_by_rules(ticket, safety)
        if sure is not None:
            return sure
        codes = [
            {"code": code, "bucket": bucket.value, "description": text}
            for code, (bucket, text) in REASON_CODES.items()
        ]
        hide = self._hider(ticket)
        reply = self.caller.ask(
            ticket.id,
            load_prompt("classify"),
            {"ticket": self._shown(ticket, hide), "reason_codes": codes},
            ClassifyReply,
        ).value
        decided = Classification(
            Bucket(reply.bucket), reply.reason_code, reply.reason, reply.confidence, "llm"
        )
        if decided.bucket is Bucket.NEEDS_HUMAN:
            return decided
        near = not_answered_near_a_risk(decided, safety)
        if near is not decided:  # the gate found a sentence near a risk: no answer
            return near
        floor = self.backstop.classify(ticket, safety)
        # A rule, the sentence-level request model (its own calibrated threshold) or a
        # confident triage model holds the floor.
        holds = floor.decided_by in ("rules", "requests") or floor.confidence >= FLOOR_CONFIDENCE
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
        prompt = load_prompt("draft")
        hide = self._hider(ticket)
        variables: dict[str, Any] = {
            "ticket": self._shown(ticket, hide),
            "previous": _sentences(previous, hide) if previous is not None else [],
            "problems": [
                {"code": p.code, "message": hide(p.message), "sentence": p.sentence}
                for p in (verdict.problems if verdict is not None else ())
            ],
        }
        variables["passages"] = self._fitting(prompt, variables, evidence, hide)
        ids = [p["id"] for p in variables["passages"]]
        tools = (DECOY_TOOL,) if self.demo_forbidden_post and previous is None else ()
        answer = self.caller.ask(
            ticket.id, prompt, variables, DraftReply, tools=tools, schema=draft_schema(ids)
        )
        sentences = tuple(
            sentence
            for s in answer.value.sentences
            if (sentence := _sentence(s.text, s.citations, ids)).text
        )
        requests = tuple(ToolRequest(c.name, dict(c.arguments)) for c in answer.tool_calls)
        revision = previous.revision + 1 if previous is not None else 0
        return Draft(sentences, answer.value.confidence, revision, requests)

    def check(self, ticket: Ticket, draft: Draft, evidence: Sequence[Hit]) -> Verdict:
        """Judge ``draft`` against the passages it cites (only those: what it does not cite
        cannot support it, and the grounding checks already held it against the rest)."""
        cited = set(draft.citations)
        shown = [h for h in evidence if h.id in cited] or list(evidence)
        prompt = load_prompt("check")
        hide = self._hider(ticket)
        variables: dict[str, Any] = {
            "ticket": self._shown(ticket, hide),
            "sentences": _sentences(draft, hide),
        }
        # Every cited passage, as far as the context window allows: the evidence budget is
        # for choosing what to draft from, not for hiding what a draft stands on.
        variables["passages"] = self._fitting(prompt, variables, shown, hide, budgeted=False)
        ids = [p["id"] for p in variables["passages"]]
        reply = self.caller.ask(
            ticket.id, prompt, variables, CheckReply, schema=check_schema(ids)
        ).value
        verdict = verdict_from_reply(reply, draft, {h.id for h in evidence})
        # A model checker may miss (or be talked out of) a claimed account action; the rule
        # does not, and it holds whatever the model said.
        claimed = [
            p
            for p in action_claim_problems(draft)
            if (p.code, p.sentence) not in {(q.code, q.sentence) for q in verdict.problems}
        ]
        if not claimed:
            return verdict
        return Verdict(False, (*claimed, *verdict.problems), CHECKER, verdict.claims)

    def _fitting(
        self,
        prompt: Prompt,
        variables: dict[str, Any],
        evidence: Sequence[Hit],
        hide: Callable[[str], str],
        *,
        budgeted: bool = True,
    ) -> list[dict[str, str]]:
        """The passages of ``evidence``, best first, as many as fit the evidence budget and the
        context window with the rest of the prompt and the reply; the last one kept may be
        cut short. Their texts and titles pass through ``hide`` (other customers' personal
        data is in resolved tickets); their ids do not (they are what a draft cites)."""
        passages = [
            {**p, "text": hide(p["text"]), "title": hide(p["title"])} for p in _passages(evidence)
        ]
        if not passages:
            return passages
        room = self.evidence_tokens * CHARS_PER_TOKEN if budgeted else 10**9
        if self.context_tokens:
            bare = prompt.render(**variables, passages=[])
            used = sum(len(m["content"]) for m in bare) // CHARS_PER_TOKEN
            free = self.context_tokens - prompt.max_tokens - CONTEXT_MARGIN - used
            room = min(room, free * CHARS_PER_TOKEN)
        kept: list[dict[str, str]] = []
        for passage in passages:
            size = len(passage["text"]) + len(passage["title"]) + len(passage["id"]) + 40
            if size <= room:
                kept.append(passage)
                room -= size
                continue
            if room >= MIN_PASSAGE_CHARS + 80 or not kept:
                kept.append({**passage, "text": _cut(passage["text"], max(room - 80, 0))})
            break
        return kept

    # --- evidence retries (the pipeline's evidence gate calls this) -------------------------

    def assess_evidence(self, ticket: Ticket, evidence: Sequence[Hit]) -> tuple[bool, str]:
        """Whether ``evidence`` can answer ``ticket``; asked only when the signals are ambiguous."""
        prompt = load_prompt("assess")
        hide = self._hider(ticket)
        variables: dict[str, Any] = {"ticket": self._shown(ticket, hide)}
        variables["passages"] = self._fitting(prompt, variables, evidence, hide)
        reply = self.caller.ask(ticket.id, prompt, variables, AssessReply).value
        return reply.sufficient, " ".join(reply.reason.split())[:300]

    def reformulate(self, ticket: Ticket, attempt: int, previous_query: str) -> str | None:
        """A new search query for retry ``attempt``, or None when the model has nothing new."""
        hide = self._hider(ticket)
        variables = {
            "ticket": self._shown(ticket, hide),
            "attempt": attempt,
            "previous_query": hide(previous_query),
        }
        reply = self.caller.ask(ticket.id, load_prompt("reformulate"), variables, ReformulateReply)
        query = " ".join((reply.value.query or "").split())
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
    """Passages as the prompts show them: the id a reviewer sees, what kind, a title, the text.

    A resolved ticket shows only its accepted answer: its first paragraph is another
    customer's question, which must not be quoted as an answer (and costs tokens). A sentence
    the ``planted`` rules flag (an instruction to the AI, a fake role fence, a claim that an
    account was changed) is never shown: a labelled marker stands in its place.
    """
    shown = []
    for h in evidence:
        p = h.passage
        if p.kind is DocKind.RESOLVED:
            text = p.text.split("\n\n", 1)[-1].strip()
            kind, title = "resolved ticket (its accepted answer)", ""
        else:
            text = p.text
            kind, title = "article", " / ".join((p.title, *p.heading_path))
        shown.append(
            {"id": p.id, "kind": kind, "title": with_markers(title), "text": with_markers(text)}
        )
    return shown


def _cut(text: str, chars: int) -> str:
    """``text`` cut to at most ``chars`` characters, at a sentence end where there is one."""
    if len(text) <= chars:
        return text
    head = text[: max(chars, 0)]
    end = max(head.rfind(". "), head.rfind(".\n"))
    return (head[: end + 1] if end >= MIN_PASSAGE_CHARS // 2 else head).rstrip() + " [...]"


#: A citation a model wrote into the sentence itself: ``[kb-x#y]``, ``(kb-x#y)``, ``(source:
#: kb-x#y)``, ``(passage kb-x#y)``.
_INLINE = re.compile(r"\s*[\[(](?:(?:source|passage|see|cites?)\s*:?\s*)?([^\[\]()\s]+)[\])]")


def _sentence(text: str, citations: Sequence[str], known: Sequence[str]) -> DraftSentence:
    """A draft sentence with the citations written inside its text moved to its citations
    (only ids of passages the model was given; anything else stays text)."""
    ids = set(known)
    found: list[str] = []

    def move(match: re.Match[str]) -> str:
        if match.group(1) in ids:
            found.append(match.group(1))
            return ""
        return match.group(0)

    clean = " ".join(_INLINE.sub(move, text).split())
    cites = tuple(dict.fromkeys(c.strip() for c in (*citations, *found) if c.strip()))
    return DraftSentence(clean, cites)


def _sentences(draft: Draft, hide: Callable[[str], str]) -> list[dict[str, Any]]:
    return [
        {"index": i, "text": hide(s.text), "citations": list(s.citations)}
        for i, s in enumerate(draft.sentences)
    ]
