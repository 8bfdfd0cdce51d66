"""The replies the llm engine asks a model for, as pydantic models, and their narrowed schemas.

Field order is the order a constrained decoder writes them in: the reasoning a field depends
on comes first (a classifier's reason before its code, a checker's claims before its verdict).
A model's confidence may come as a probability or as a percentage; both are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, field_validator

from supportagent.domain import Bucket
from supportagent.llm.structured import reply_schema

#: Reason codes the model may give, the bucket each one means, and how the prompt explains it.
REASON_CODES: dict[str, tuple[Bucket, str]] = {
    "question": (
        Bucket.ANSWERABLE,
        "asks how something works or how to do something, or what a limit, price or policy "
        "is (most tickets)",
    ),
    "bug_report": (
        Bucket.NOT_A_QUESTION,
        "reports that something is broken: an error, a crash, a wrong result",
    ),
    "feature_request": (
        Bucket.NOT_A_QUESTION,
        "asks the team to add or build something new, that the product does not do",
    ),
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
#: The problems a model checker may report; any other code makes the reply invalid.
ModelProblemCode = Literal[
    "unsupported_sentence",
    "conflicting_evidence",
    "off_topic",
    "incomplete_answer",
    "unsafe_content",
    "claimed_action",
]
MODEL_PROBLEM_CODES: frozenset[str] = frozenset(get_args(ModelProblemCode))


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _probability(value: float) -> float:
    """A probability; a percentage (``85``) is read as 0.85."""
    if 1.0 < value <= 100.0:
        value = value / 100.0
    if not 0.0 <= value <= 1.0:
        raise ValueError("must be between 0 and 1")
    return value


class ClassifyReply(_Reply):
    """The bucket follows from the reason code, so the two can never disagree."""

    reason_code: ReasonCode
    reason: str
    confidence: float

    _confidence = field_validator("confidence")(_probability)

    @property
    def bucket(self) -> str:
        return REASON_CODES[self.reason_code][0].value


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
    code: ModelProblemCode
    message: str
    sentence: int | None


class CheckReply(_Reply):
    claims: list[ClaimOut]
    problems: list[ProblemOut]
    verdict: Literal["pass", "fail"]
    suggested_action: Literal["stage", "revise", "escalate"]


class ReformulateReply(_Reply):
    query: str | None


class AssessReply(_Reply):
    sufficient: bool
    reason: str


def draft_schema(passage_ids: Sequence[str]) -> dict[str, Any]:
    """DraftReply's schema with citations limited to ``passage_ids``: a constrained decoder
    can then only cite a passage it was given."""
    schema = reply_schema(DraftReply)
    if passage_ids:
        citations = schema["$defs"]["SentenceOut"]["properties"]["citations"]
        citations["items"] = {"type": "string", "enum": list(dict.fromkeys(passage_ids))}
    return schema


def check_schema(passage_ids: Sequence[str]) -> dict[str, Any]:
    """CheckReply's schema with ``supported_by`` limited to ``passage_ids`` (or null)."""
    schema = reply_schema(CheckReply)
    if passage_ids:
        supported = schema["$defs"]["ClaimOut"]["properties"]["supported_by"]
        supported["anyOf"] = [
            {"type": "string", "enum": list(dict.fromkeys(passage_ids))},
            {"type": "null"},
        ]
    return schema
