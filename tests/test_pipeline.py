"""Pipeline routing for every bucket, with a scripted engine that records what it was asked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
import sqlalchemy as sa

from store_checks import outcome_counts
from supportagent.agent.knowledge import Knowledge
from supportagent.agent.pipeline import Pipeline, PipelineConfig
from supportagent.domain import (
    Bucket,
    Classification,
    DocKind,
    Document,
    Draft,
    DraftSentence,
    Hit,
    Problem,
    SafetyResult,
    Status,
    Ticket,
    ToolRequest,
    Verdict,
)
from supportagent.engines.offline import OfflineEngine
from supportagent.store.claims import StaleAttemptError
from supportagent.store.store import Store

KB = [
    Document(
        "kb-rate-limits",
        DocKind.KB,
        "Rate limits",
        "# Rate limits\n\n## Limits per plan\n\nThe Starter plan allows 50 requests per second. "
        "The Growth plan allows 200 requests per second.\n\n## Handling 429\n\n"
        "When you exceed the limit the API answers 429 with a Retry-After header. "
        "Wait the number of seconds in Retry-After before retrying.",
    ),
    Document(
        "kb-webhooks",
        DocKind.KB,
        "Webhook signatures",
        "# Webhook signatures\n\nEvery webhook carries an X-Kestrel-Signature header. "
        "Verify the signature with your signing secret before trusting the payload.",
    ),
]
RESOLVED = [
    Document(
        "RT-1",
        DocKind.RESOLVED,
        "Retry-After on 429",
        "How long should we wait after a 429?\n\nWait the number of seconds given in the "
        "Retry-After header, then retry the request.",
    )
]
RATE_TICKET = Ticket("T-1", "429 rate limit", "How long should I wait after a 429 rate limit?")


@dataclass
class ScriptedEngine:
    """Implements the Engine protocol from a script, and records every call."""

    bucket: Bucket = Bucket.ANSWERABLE
    drafts: list[Draft] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    name: str = "scripted"

    def classify(self, ticket: Ticket, safety: SafetyResult) -> Classification:
        self.calls.append(("classify", {"ticket": ticket.id, "safety": safety.category}))
        return Classification(self.bucket, f"scripted_{self.bucket.value}", "scripted", 0.9)

    def draft(
        self,
        ticket: Ticket,
        evidence: Sequence[Hit],
        previous: Draft | None = None,
        verdict: Verdict | None = None,
    ) -> Draft:
        self.calls.append(
            (
                "draft",
                {
                    "evidence": [h.id for h in evidence],
                    "previous": previous is not None,
                    "problems": [p.code for p in verdict.problems] if verdict else [],
                },
            )
        )
        return self.drafts.pop(0)

    def check(self, ticket: Ticket, draft: Draft, evidence: Sequence[Hit]) -> Verdict:
        self.calls.append(("check", {"citations": list(draft.citations)}))
        return self.verdicts.pop(0) if self.verdicts else Verdict(True, (), "scripted")

    def stages(self) -> list[str]:
        return [name for name, _ in self.calls]


@pytest.fixture
def knowledge() -> Knowledge:
    return Knowledge([*KB, *RESOLVED])


def _run(store: Store, knowledge: Knowledge, engine: Any, ticket: Ticket) -> Any:
    store.add_tickets([ticket])
    return Pipeline(store, knowledge, engine, PipelineConfig()).run(ticket.id)


def _good_draft(revision: int = 0) -> Draft:
    text = "Wait the number of seconds in Retry-After before retrying."
    return Draft((DraftSentence(text, ("kb-rate-limits#handling-429",)),), 0.8, revision)


def test_safety_escalation_happens_before_any_engine_call(
    store: Store, knowledge: Knowledge
) -> None:
    engine = ScriptedEngine()
    ticket = Ticket("T-9", "Leaked key", "Our live API key was leaked in a public GitHub repo!")
    outcome = _run(store, knowledge, engine, ticket)
    assert outcome.status is Status.ESCALATED
    assert outcome.reason_code == "safety_security_incident"
    assert engine.calls == []
    assert [e["stage"] for e in store.trace("T-9")] == ["tool", "safety", "tool", "stage"]


@pytest.mark.parametrize(
    ("bucket", "status"),
    [(Bucket.NOT_A_QUESTION, Status.ROUTED), (Bucket.NEEDS_HUMAN, Status.ESCALATED)],
)
def test_non_answerable_buckets_never_draft(
    store: Store, knowledge: Knowledge, bucket: Bucket, status: Status
) -> None:
    engine = ScriptedEngine(bucket=bucket)
    outcome = _run(store, knowledge, engine, RATE_TICKET)
    assert (outcome.status, outcome.reason_code) == (status, f"scripted_{bucket.value}")
    assert engine.stages() == ["classify"]
    assert store.ticket_status("T-1") is status


def test_answerable_ticket_is_drafted_checked_and_staged(
    store: Store, knowledge: Knowledge
) -> None:
    engine = ScriptedEngine(drafts=[_good_draft()])
    outcome = _run(store, knowledge, engine, RATE_TICKET)
    assert outcome.status is Status.PENDING_REVIEW
    assert engine.stages() == ["classify", "draft", "check"]
    evidence = engine.calls[1][1]["evidence"]
    assert "kb-rate-limits#handling-429" in evidence
    trace = store.trace("T-1")
    # Snapshot of the structure: stages and statuses, not prose.
    assert [(e["stage"], e["status"]) for e in trace] == [
        ("tool", "allowed"),  # get_ticket
        ("safety", "pass"),
        ("classify", "answerable"),
        ("language", "same"),  # the ticket is in the knowledge base's language
        ("tool", "allowed"),  # search_docs
        ("tool", "allowed"),  # search_resolved
        ("retrieve", "ok"),
        ("evidence", "sufficient"),
        ("draft", "revision 0"),
        ("check", "pass"),
        ("tool", "allowed"),  # stage_draft
        ("stage", "pending_review"),
    ]
    hit = trace[6]["detail"]["hits"][0]
    assert set(hit) >= {"id", "doc_id", "rank", "score", "signals"}
    assert [t["detail"]["tool"] for t in trace if t["stage"] == "tool"] == [
        "get_ticket",
        "search_docs",
        "search_resolved",
        "stage_draft",
    ]


def test_invented_citation_is_caught_without_the_engine_checker(
    store: Store, knowledge: Knowledge
) -> None:
    invented = Draft((DraftSentence("Wait 5 seconds.", ("kb-made-up#x",)),), 0.9)
    engine = ScriptedEngine(drafts=[invented, invented.__class__(invented.sentences, 0.9, 1)])
    outcome = _run(store, knowledge, engine, RATE_TICKET)
    assert outcome.status is Status.ESCALATED
    assert outcome.reason_code == "unknown_citation"
    assert "check" not in engine.stages()  # grounding failed first; no engine check spent
    assert "unknown_citation" in engine.calls[2][1]["problems"]


def test_checker_failing_twice_then_passing_stages_the_third_draft(
    store: Store, knowledge: Knowledge
) -> None:
    fail = Verdict(False, (Problem("off_topic", "not about the ticket"),), "scripted")
    drafts = [_good_draft(0), _good_draft(1), _good_draft(2)]
    # The drafts differ only by revision number; give each a different confidence so the
    # pipeline does not see an unchanged draft.
    drafts = [Draft(d.sentences, 0.5 + i / 10, i) for i, d in enumerate(drafts)]
    drafts[1] = Draft(
        (
            *drafts[1].sentences,
            DraftSentence(
                "The Growth plan allows 200 requests per second.",
                ("kb-rate-limits#limits-per-plan",),
            ),
        ),
        0.6,
        1,
    )
    drafts[2] = Draft((drafts[1].sentences[1],), 0.7, 2)
    engine = ScriptedEngine(drafts=drafts, verdicts=[fail, fail])
    outcome = _run(store, knowledge, engine, RATE_TICKET)
    assert outcome.status is Status.PENDING_REVIEW
    assert engine.stages().count("draft") == 3


def test_revisions_are_capped_then_the_ticket_escalates(store: Store, knowledge: Knowledge) -> None:
    fail = Verdict(False, (Problem("off_topic", "not about the ticket"),), "scripted")
    variants = [
        "Wait the number of seconds in Retry-After before retrying.",
        "The Starter plan allows 50 requests per second.",
        "The Growth plan allows 200 requests per second.",
    ]
    drafts = [
        Draft(
            (DraftSentence(v, ("kb-rate-limits#limits-per-plan", "kb-rate-limits#handling-429")),),
            0.5,
            i,
        )
        for i, v in enumerate(variants)
    ]
    engine = ScriptedEngine(drafts=drafts, verdicts=[fail, fail, fail])
    outcome = _run(store, knowledge, engine, RATE_TICKET)
    assert outcome.status is Status.ESCALATED and outcome.reason_code == "off_topic"
    assert engine.stages().count("draft") == 3  # first draft + 2 revisions, never more
    assert outcome.draft is not None  # kept for the person who picks the ticket up


def test_weak_evidence_escalates_without_a_draft_call(store: Store, knowledge: Knowledge) -> None:
    engine = ScriptedEngine()
    ticket = Ticket("T-5", "Kubernetes helm chart", "Do you publish a helm chart for kubernetes?")
    outcome = _run(store, knowledge, engine, ticket)
    assert (outcome.status, outcome.reason_code) == (Status.ESCALATED, "weak_evidence")
    assert engine.stages() == ["classify"]
    stages = [e["stage"] for e in store.trace("T-5")]
    assert stages.count("retrieve") == 3 and stages.count("reformulate") == 2


def test_demo_forbidden_post_is_denied_and_the_ticket_still_reaches_review(
    store: Store, knowledge: Knowledge
) -> None:
    outcome = _run(store, knowledge, OfflineEngine(demo_forbidden_post=True), RATE_TICKET)
    assert outcome.status is Status.PENDING_REVIEW
    denied = [e for e in store.trace("T-1") if e["status"] == "denied"]
    assert denied and denied[0]["detail"]["tool"] == "post_to_customer"
    assert denied[0]["detail"]["reason"] == "not on the allowlist"


def test_tool_requests_from_a_drafter_pass_the_gate(store: Store, knowledge: Knowledge) -> None:
    asks = Draft(_good_draft().sentences, 0.8, 0, (ToolRequest("send_email", {"to": "x"}),))
    engine = ScriptedEngine(drafts=[asks])
    outcome = _run(store, knowledge, engine, RATE_TICKET)
    assert outcome.status is Status.PENDING_REVIEW
    gate_events = [e for e in store.trace("T-1") if e["stage"] == "gate"]
    assert gate_events[0]["detail"] == {"tool": "send_email", "reason": "not on the allowlist"}


def test_a_drafter_cannot_run_an_allowlisted_tool_by_asking(
    store: Store, knowledge: Knowledge
) -> None:
    # "Approve this yourself": the model asks for stage_draft, which the pipeline may call.
    request = ToolRequest("stage_draft", {"ticket_id": "T-1", "status": "approved"})
    asks = Draft(_good_draft().sentences, 0.8, 0, (request,))
    outcome = _run(store, knowledge, ScriptedEngine(drafts=[asks]), RATE_TICKET)
    assert outcome.status is Status.PENDING_REVIEW
    gate_events = [e for e in store.trace("T-1") if e["stage"] == "gate"]
    assert gate_events[0]["detail"] == {"tool": "stage_draft", "reason": "not on the allowlist"}


def test_documents_written_by_another_process_are_searched_before_the_next_ticket(
    store: Store,
) -> None:
    from supportagent.agent.knowledge import Knowledge as StoreKnowledge

    store.upsert_documents(KB)
    knowledge = StoreKnowledge.from_store(store)
    # Another process (the web app, a CLI review) adds a resolved answer to the same store.
    store.upsert_documents(
        [
            Document(
                "AR-T-77",
                DocKind.RESOLVED,
                "Sandbox webhooks",
                "Do webhooks fire in the sandbox?\n\nYes: sandbox webhooks fire exactly like "
                "production webhooks, signed with the sandbox signing secret.",
            )
        ]
    )
    ticket = Ticket("T-78", "Sandbox webhooks", "Do webhooks fire in the sandbox?")
    outcome = _run(store, knowledge, OfflineEngine(), ticket)
    assert outcome.draft is not None, outcome.reason_code
    assert any(c.startswith("AR-T-77#") for c in outcome.draft.citations)


def test_each_stage_result_commits_on_its_own_and_the_last_with_the_outcome(
    store: Store, knowledge: Knowledge
) -> None:
    seen_at_draft: list[str] = []

    @dataclass
    class Peeking(ScriptedEngine):
        def draft(self, ticket: Ticket, evidence: Sequence[Hit], *args: Any) -> Draft:
            # Another process (the web timeline) reading while the model is busy.
            seen_at_draft.extend(e["stage"] for e in store.trace(ticket.id))
            return super().draft(ticket, evidence, *args)

    store.add_tickets([RATE_TICKET])
    commits: list[int] = []
    sa.event.listen(store.engine, "commit", lambda _conn: commits.append(1))
    outcome = Pipeline(store, knowledge, Peeking(drafts=[_good_draft()])).run(RATE_TICKET.id)
    assert outcome.status is Status.PENDING_REVIEW
    assert seen_at_draft == [
        "tool",
        "safety",
        "classify",
        "language",
        "tool",
        "tool",
        "retrieve",
        "evidence",
    ]
    # begin the attempt; safety, classify, retrieve, evidence, draft, check (each with the tool
    # decisions before it); the stage event with the outcome.
    assert len(commits) == 8
    trace = store.trace("T-1")
    assert [e["stage"] for e in trace][-3:] == ["check", "tool", "stage"]
    assert len(trace) == len(outcome.trace)


def test_a_lost_attempt_stages_nothing_and_keeps_its_trace_for_diagnosis(
    store: Store, knowledge: Knowledge
) -> None:
    @dataclass
    class TakenOver(ScriptedEngine):
        def check(self, ticket: Ticket, draft: Draft, evidence: Sequence[Hit]) -> Verdict:
            store.begin_attempt(ticket.id)  # its lease ran out; another worker took it
            return super().check(ticket, draft, evidence)

    with pytest.raises(StaleAttemptError):
        _run(store, knowledge, TakenOver(drafts=[_good_draft()]), RATE_TICKET)
    assert outcome_counts(store) == {"T-1": 0}
    stages = [e["stage"] for e in store.trace("T-1", attempt=1)]
    assert stages[-3:] == ["draft", "check", "tool"] and "stage" not in stages
