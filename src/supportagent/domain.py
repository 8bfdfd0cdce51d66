"""The nouns of SupportAgent: tickets, documents, passages, hits, drafts, verdicts, outcomes.

Everything here is a plain frozen dataclass or an enum. This module imports nothing of ours,
so every layer may depend on it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

#: Ids are short, printable and safe to use in URLs, file names and log lines.
MAX_ID_CHARS = 128
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
ID_RULE = (
    "ids are 1-128 letters, digits, '_', '.', ':' or '-', start with a letter or digit, "
    "and contain no spaces, slashes or '..'"
)
#: Longest document id the store holds: an ingested id (at most MAX_ID_CHARS) or the review
#: loop's ``AR-<ticket id>``, three characters longer.
MAX_DOCUMENT_ID_CHARS = 160
#: Longest optional ticket labels, as the store's columns hold them on every database.
MAX_CUSTOMER_CHARS = 256
MAX_CREATED_AT_CHARS = 64


def is_valid_id(value: str) -> bool:
    """True when ``value`` is a usable record id (no path characters, spaces or wildcards)."""
    return bool(ID_PATTERN.fullmatch(value)) and ".." not in value


def id_problem(value: str) -> str | None:
    """What is wrong with ``value`` as an id, in words, or None when it is valid.

    The one rule for every way in (files, the command line, the API): nothing is stripped or
    repaired, so an id with a NUL in it is refused, never quietly turned into another id.
    """
    if is_valid_id(value):
        return None
    if not value:
        return "is empty"
    control = next((ch for ch in value if ord(ch) < 32 or 127 <= ord(ch) < 160), None)
    if control is not None:
        return f"is not valid: it contains a control character (U+{ord(control):04X}); {ID_RULE}"
    if len(value) > MAX_ID_CHARS:
        return f"is not valid: it is {len(value)} characters long; {ID_RULE}"
    return f"is not valid: {ID_RULE}"


class Bucket(StrEnum):
    """What the classifier decides about a ticket."""

    ANSWERABLE = "answerable"
    NOT_A_QUESTION = "not_a_question"
    NEEDS_HUMAN = "needs_human"


class Status(StrEnum):
    """Where a ticket stands. Only ``pending_review`` carries a draft for a human."""

    NEW = "new"
    IN_PROGRESS = "in_progress"
    PENDING_REVIEW = "pending_review"
    ROUTED = "routed"
    ESCALATED = "escalated"
    APPROVED = "approved"
    AMENDED = "amended"
    HANDED_OFF = "handed_off"
    #: A person handled an escalated, routed or handed-off ticket (replied, or marked it done).
    HANDLED = "handled"


#: Statuses that mean the agent has finished with a ticket.
STAGED_STATUSES = frozenset(
    {
        Status.PENDING_REVIEW,
        Status.ROUTED,
        Status.ESCALATED,
        Status.APPROVED,
        Status.AMENDED,
        Status.HANDED_OFF,
        Status.HANDLED,
    }
)


class DocKind(StrEnum):
    KB = "kb"
    RESOLVED = "resolved"


@dataclass(frozen=True, slots=True)
class Ticket:
    id: str
    subject: str
    body: str
    priority: int = 0
    customer: str | None = None
    created_at: str | None = None

    @property
    def text(self) -> str:
        """Subject and body as one block of text, for rules and search."""
        return f"{self.subject}\n{self.body}".strip()


@dataclass(frozen=True, slots=True)
class Document:
    """A knowledge-base article or a resolved ticket (question and accepted answer)."""

    id: str
    kind: DocKind
    title: str
    body: str
    source: str = ""
    linked_docs: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


def resolved_body(question: str, answer: str) -> str:
    """A resolved ticket as one searchable text: the question as one paragraph, then the answer.

    Blank lines inside the question are folded, so the first blank line always ends it.
    """
    folded = re.sub(r"\n\s*\n+", "\n", question.strip())
    return f"{folded}\n\n{answer.strip()}"


def resolved_answer(body: str) -> str:
    """The answer part of a :func:`resolved_body` text."""
    _question, sep, answer = body.partition("\n\n")
    return answer if sep else body


@dataclass(frozen=True, slots=True)
class Passage:
    """A searchable piece of a document. ``id`` is ``DOC-ID#section`` and is what drafts cite."""

    id: str
    doc_id: str
    kind: DocKind
    title: str
    heading_path: tuple[str, ...]
    text: str


@dataclass(frozen=True, slots=True)
class SignalScore:
    """One retrieval signal's view of a hit: its 1-based rank and raw score."""

    rank: int
    score: float


@dataclass(frozen=True, slots=True)
class Hit:
    """A passage found by search, with the explanation of why it ranks where it does."""

    passage: Passage
    rank: int
    score: float
    signals: dict[str, SignalScore] = field(default_factory=dict, hash=False, compare=False)

    @property
    def id(self) -> str:
        return self.passage.id


#: The safety gate's reason code for a ticket it lets through although one of its sentences came
#: near a risk: the classifier then escalates it as ``uncertain`` instead of answering it.
NEAR_RISK = "near_risk"


@dataclass(frozen=True, slots=True)
class SafetyResult:
    """The safety gate's verdict. ``detector`` says who decided: ``rules`` (a pattern of the
    rule table), ``semantic`` (a sentence close to a category's exemplars) or ``none``."""

    category: str
    severity: str
    auto_escalate: bool
    reason_code: str
    matched_rule: str | None = None
    matched_text: str | None = None
    detector: str = "rules"
    #: The semantic detector's similarity to the category's exemplars, when it decided.
    score: float | None = None
    #: Why, in words: the rule or the exemplar the ticket matched.
    explanation: str | None = None


@dataclass(frozen=True, slots=True)
class Classification:
    """The classifier's bucket. ``decided_by`` names who decided: ``rules``, ``model`` (the
    offline triage model), ``issues`` (the issue-tracker stage routed what the triage model
    took for a question), ``llm`` (a language model), ``safety`` (an answer withheld because
    the gate found a sentence near a risk), or ``rules over llm`` when the offline backstop
    overruled a language model."""

    bucket: Bucket
    reason_code: str
    reason: str
    confidence: float
    decided_by: str = "rules"


@dataclass(frozen=True, slots=True)
class EvidenceDecision:
    """The evidence gate's verdict on a set of hits."""

    sufficient: bool
    reason: str
    top_score: float
    hits: tuple[Hit, ...]
    query: str
    attempt: int


@dataclass(frozen=True, slots=True)
class DraftSentence:
    text: str
    citations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ToolRequest:
    """A tool the drafter asks the pipeline to run on its behalf; the gate decides."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True, slots=True)
class Draft:
    sentences: tuple[DraftSentence, ...]
    confidence: float
    revision: int = 0
    tool_requests: tuple[ToolRequest, ...] = ()
    #: The reply's opening and closing lines (the team's template), not checked as claims.
    greeting: str = ""
    closing: str = ""
    #: Questions of the ticket the draft says the knowledge base does not answer.
    unanswered: tuple[str, ...] = ()
    #: What a reviewer must confirm (``scoped_exception``, ``partial_answer``, ...).
    flags: tuple[str, ...] = ()
    #: How the confidence was formed, in plain words, for the reviewer.
    explanation: str = ""
    #: The answer with personal data as placeholders, as the model saw it (``redact.py``);
    #: empty when nothing was redacted. The audit log records this one.
    redacted_answer: str = ""

    @property
    def answer(self) -> str:
        """The answer as a reviewer reads it, each sentence followed by its citations."""
        parts = []
        for s in self.sentences:
            cites = "".join(f" [{c}]" for c in s.citations)
            parts.append(f"{s.text}{cites}")
        body = " ".join(parts)
        if self.unanswered:
            asked = " ".join(f"\u201c{q}\u201d" for q in self.unanswered)
            body = (
                f"{body}\n\nOur documentation does not answer this part of your question: "
                f"{asked} A colleague will follow up on it."
            ).strip()
        return "\n\n".join(part for part in (self.greeting, body, self.closing) if part)

    @property
    def citations(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for s in self.sentences:
            for c in s.citations:
                seen.setdefault(c, None)
        return tuple(seen)


@dataclass(frozen=True, slots=True)
class Problem:
    """One reason a check failed. ``sentence`` is the 0-based index of the draft sentence."""

    code: str
    message: str
    sentence: int | None = None


@dataclass(frozen=True, slots=True)
class Verdict:
    passed: bool
    problems: tuple[Problem, ...] = ()
    checker: str = "grounding"
    #: A model checker's claims, each with the passage id that supports it (None: no passage).
    claims: tuple[tuple[str, str | None], ...] = ()

    @property
    def reason_code(self) -> str | None:
        return self.problems[0].code if self.problems else None


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One step of a ticket's run, as it goes into the trace."""

    stage: str
    status: str
    detail: dict[str, Any]
    duration_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the agent staged for a ticket."""

    ticket_id: str
    status: Status
    reason_code: str
    bucket: Bucket | None
    draft: Draft | None
    safety: SafetyResult | None
    trace: tuple[TraceEvent, ...]
    engine: str
