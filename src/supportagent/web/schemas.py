"""The JSON API's request and response models (they are the OpenAPI schema at /docs)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from supportagent.domain import is_valid_id


def _plain_text(value: str) -> str:
    """Text a database can hold: no NUL characters and no unpaired surrogates."""
    if "\x00" in value:
        raise ValueError("text may not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("text must be valid Unicode (no unpaired surrogates)") from None
    return value


def _ticket_id(value: str) -> str:
    if not is_valid_id(value):
        raise ValueError(
            "an id is 1-128 letters, digits and _ . : - (starting with a letter or digit)"
        )
    return value


Text = Annotated[str, AfterValidator(_plain_text)]
TicketId = Annotated[str, Field(min_length=1, max_length=128), AfterValidator(_ticket_id)]
Reviewer = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[\w .@-]+$")]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TriageRequest(_Request):
    ticket_text: Annotated[Text, Field(min_length=1, max_length=20_000)]


class NewTicket(_Request):
    id: TicketId
    subject: Annotated[Text, Field(max_length=500)] = ""
    body: Annotated[Text, Field(min_length=1, max_length=50_000)]
    priority: Annotated[int, Field(ge=0, le=9)] = 0
    customer: Annotated[Text, Field(max_length=256)] | None = None
    created_at: Annotated[Text, Field(max_length=64)] | None = None


class ApproveRequest(_Request):
    reviewer: Reviewer = "api"
    #: The final answer as the reviewer sees it; if it differs from the draft, 400 (amend).
    text: Annotated[Text, Field(max_length=20_000)] | None = None


class AmendRequest(_Request):
    text: Annotated[Text, Field(min_length=1, max_length=20_000)]
    reviewer: Reviewer = "api"


class RejectRequest(_Request):
    reason: Annotated[Text, Field(min_length=1, max_length=2_000)]
    reviewer: Reviewer = "api"


class SafetyModel(BaseModel):
    category: str
    severity: str
    auto_escalate: bool
    reason_code: str
    matched_rule: str | None = None
    matched_text: str | None = None


class SignalModel(BaseModel):
    rank: int
    score: float


class HitModel(BaseModel):
    """A retrieved passage and why it ranks where it does (each signal's rank and score)."""

    model_config = ConfigDict(extra="allow")
    id: str
    doc_id: str
    kind: str
    title: str
    heading_path: list[str] = []
    rank: int
    score: float
    signals: dict[str, SignalModel] = {}


class RetrievalStep(BaseModel):
    query: str
    hits: list[HitModel]


class SentenceModel(BaseModel):
    text: str
    citations: list[str]


class DraftModel(BaseModel):
    answer: str
    confidence: float
    revision: int = 0
    citations: list[str] = []
    sentences: list[SentenceModel] = []


class TraceEventModel(BaseModel):
    stage: str
    status: str
    detail: dict[str, Any]
    duration_ms: float


class Tokens(BaseModel):
    calls: int
    prompt: int
    response: int
    total: int


class Latencies(BaseModel):
    retrieval_ms: float
    generation_ms: float
    total_ms: float


class TriageResult(BaseModel):
    """The whole one-shot run: safety, retrieval trace, outcome, answer, usage."""

    ticket_id: str
    engine: str
    status: str
    reason_code: str
    bucket: str | None
    safety: SafetyModel | None
    retrieval: list[RetrievalStep]
    answer: str | None
    citations: list[str]
    #: The document the answer cites first (``citations`` holds every passage it cites).
    cited_doc_id: str | None = None
    confidence: float | None
    tokens: Tokens
    latencies: Latencies
    trace: list[TraceEventModel]


class TicketCreated(BaseModel):
    id: str
    status: str


class Caps(BaseModel):
    max_tickets: int | None
    tickets_used: int
    max_api_calls: int | None
    api_calls_used: int
    max_tokens: int | None
    tokens_used: int
    capped: bool


class AgentStatus(BaseModel):
    working: bool
    current_ticket: str | None
    phase: str | None
    processed: int
    error: str | None
    counts: dict[str, int]
    caps: Caps


class QueueItem(BaseModel):
    ticket_id: str
    subject: str
    status: str
    reason_code: str
    bucket: str | None
    priority: int
    draft: DraftModel | None
    staged_at: datetime


class ReviewDecision(BaseModel):
    ticket_id: str
    decision: str
    status: str
    resolved_doc_id: str | None
    #: True when the answer nearly repeats ``resolved_doc_id``, which it links to (nothing added).
    linked_existing: bool = False
    #: What the decision did, in one sentence.
    effect: str = ""


class ReasonModel(BaseModel):
    code: str
    label: str
    sentence: str
    next_step: str
    pinned: bool
    destination: str | None


class TicketListItemModel(BaseModel):
    id: str
    subject: str
    status: str
    reason_code: str | None
    #: The reason in one plain sentence (empty before the agent staged the ticket).
    reason: str
    next_step: str
    #: Where a routed ticket goes (the routing table), else null.
    destination: str | None
    priority: int
    received_at: datetime
    staged_at: datetime | None
    assignee: str | None
    #: Self-harm or security, and nobody has taken it yet: it stays at the top.
    pinned: bool


class TicketList(BaseModel):
    total: int
    limit: int
    offset: int
    items: list[TicketListItemModel]


class AssignRequest(_Request):
    assignee: Annotated[Text, Field(min_length=1, max_length=128)]
    actor: Reviewer = "api"


class NoteRequest(_Request):
    text: Annotated[Text, Field(min_length=1, max_length=20_000)]
    actor: Reviewer = "api"


class ReplyRequest(_Request):
    text: Annotated[Text, Field(min_length=1, max_length=20_000)]
    actor: Reviewer = "api"


class HandledRequest(_Request):
    note: Annotated[Text, Field(max_length=20_000)] = ""
    actor: Reviewer = "api"


class ActionDone(BaseModel):
    ticket_id: str
    action: str
    status: str
    actor: str
    at: datetime
    resolved_doc_id: str | None
    linked_existing: bool
    effect: str


class ModelCallModel(BaseModel):
    stage: str
    purpose: str
    model: str | None
    prompt_tokens: int
    response_tokens: int
    latency_ms: float
    cache_hit: bool | None


class TraceResponse(BaseModel):
    ticket_id: str
    status: str
    attempt: int | None
    events: list[TraceEventModel]
    model_calls: list[ModelCallModel]
    latencies: Latencies


class StatsResponse(BaseModel):
    """The outcome numbers (``insights.Stats``) and the knowledge gaps (``insights.Gap``)."""

    stats: dict[str, Any]
    gaps: list[dict[str, Any]]
    #: Rejected drafts whose article exists: the drafter missed it; not a knowledge gap.
    missed: list[dict[str, Any]] = []
