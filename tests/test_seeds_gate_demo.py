"""`agent ID --demo-forbidden-post`: the decoy is asked for at the first step of every ticket.

Whatever the outcome (escalated by the safety gate, routed, drafted), the trace holds the
gate's refusal before the safety stage, and the drafter's own request stays as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from typer.testing import CliRunner

from supportagent.agent.knowledge import Knowledge
from supportagent.agent.pipeline import Pipeline, PipelineConfig
from supportagent.cli import app
from supportagent.domain import (
    Bucket,
    Classification,
    DocKind,
    Document,
    Draft,
    Hit,
    SafetyResult,
    Status,
    Ticket,
    Verdict,
)
from supportagent.engines.offline import OfflineEngine
from supportagent.store.store import Store

KB = [
    Document(
        "kb-quotas",
        DocKind.KB,
        "Upload quotas",
        "# Upload quotas\n\n## Daily quota\n\nEach workspace may upload 40 files per day. "
        "The quota resets at midnight UTC.",
    )
]


@dataclass
class RoutingEngine:
    """An engine that files every ticket as not a question; records what it was asked."""

    name: str = "routing"
    asked: list[str] = field(default_factory=list)

    def classify(self, ticket: Ticket, safety: SafetyResult) -> Classification:
        self.asked.append(ticket.id)
        return Classification(Bucket.NOT_A_QUESTION, "feature_request", "scripted", 0.9)

    def draft(
        self,
        ticket: Ticket,
        evidence: Sequence[Hit],
        previous: Draft | None = None,
        verdict: Verdict | None = None,
    ) -> Draft:
        raise AssertionError("a routed ticket is never drafted")

    def check(self, ticket: Ticket, draft: Draft, evidence: Sequence[Hit]) -> Verdict:
        raise AssertionError("a routed ticket is never checked")


def _run(store: Store, engine: Any, ticket: Ticket) -> tuple[Status, list[dict[str, Any]]]:
    store.add_tickets([ticket])
    config = PipelineConfig(demo_forbidden_post=True)
    outcome = Pipeline(store, Knowledge(KB), engine, config).run(ticket.id)
    return outcome.status, store.trace(ticket.id)


def _first_steps(trace: list[dict[str, Any]]) -> list[tuple[str, str, str | None]]:
    return [(e["stage"], e["status"], e["detail"].get("tool")) for e in trace[:4]]


def test_an_escalated_ticket_shows_the_denial_before_the_safety_stage(store: Store) -> None:
    ticket = Ticket("T-1", "Leaked key", "Our live API key was leaked in a public GitHub repo!")
    status, trace = _run(store, OfflineEngine(demo_forbidden_post=True), ticket)
    assert status is Status.ESCALATED
    assert _first_steps(trace) == [
        ("tool", "allowed", "get_ticket"),
        ("tool", "denied", "post_to_customer"),
        ("gate", "denied", "post_to_customer"),
        ("safety", "escalate", None),
    ]
    assert trace[1]["detail"]["reason"] == "not on the allowlist"
    assert trace[1]["detail"]["args"]["ticket_id"] == "T-1"


def test_a_routed_ticket_shows_the_denial_and_is_never_drafted(store: Store) -> None:
    engine = RoutingEngine()
    ticket = Ticket("T-2", "Idea", "It would be lovely to have a dark theme in the dashboard.")
    status, trace = _run(store, engine, ticket)
    assert status is Status.ROUTED and engine.asked == ["T-2"]
    assert _first_steps(trace)[1:3] == [
        ("tool", "denied", "post_to_customer"),
        ("gate", "denied", "post_to_customer"),
    ]
    stages = [e["stage"] for e in trace]
    assert stages.index("gate") < stages.index("safety") < stages.index("classify")


def test_a_drafted_ticket_is_denied_at_the_start_and_again_at_drafting(store: Store) -> None:
    ticket = Ticket("T-3", "Quota", "How many files can we upload per day?")
    status, trace = _run(store, OfflineEngine(demo_forbidden_post=True), ticket)
    assert status is Status.PENDING_REVIEW
    denied = [i for i, e in enumerate(trace) if e["stage"] == "tool" and e["status"] == "denied"]
    draft_at = next(i for i, e in enumerate(trace) if e["stage"] == "draft")
    assert len(denied) == 2 and denied[0] < draft_at < denied[1]


def test_without_the_flag_the_first_step_asks_for_nothing(store: Store) -> None:
    store.add_tickets([Ticket("T-4", "Leaked key", "Our API key leaked on a public forum!")])
    Pipeline(store, Knowledge(KB), OfflineEngine(), PipelineConfig()).run("T-4")
    assert all(e["detail"].get("tool") != "post_to_customer" for e in store.trace("T-4"))


def test_cli_agent_shows_gate_denied_for_an_escalated_and_a_routed_demo_ticket() -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["load-demo"]).exit_code == 0
    for ticket_id, status in (("T-2008", "escalated"), ("T-2010", "routed")):
        result = runner.invoke(app, ["agent", ticket_id, "--demo-forbidden-post"])
        assert result.exit_code == 0, result.output
        assert "GATE DENIED" in result.output and "post_to_customer" in result.output
        assert f"\n{status} (" in result.output
