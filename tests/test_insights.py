"""Stats and knowledge gaps on a small scripted history, over real SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from supportagent.agent.knowledge import Knowledge
from supportagent.cli import app
from supportagent.domain import (
    Bucket,
    DocKind,
    Document,
    Draft,
    DraftSentence,
    Outcome,
    Status,
    Ticket,
)
from supportagent.insights import cluster, compute_stats, find_gaps
from supportagent.review import amend, approve, reject
from supportagent.store.store import Store

KB = [
    Document(
        "kb-deploy",
        DocKind.KB,
        "Deploying the relay",
        "# Deploying the relay\n\n## Docker\n\nRun the relay as a Docker container on any server. "
        "Set the API key in the RELAY_KEY environment variable.\n\n## Virtual machines\n\n"
        "Install the relay package on a virtual machine and start it as a service.",
    ),
    Document(
        "kb-dashboard-login",
        DocKind.KB,
        "Dashboard login",
        "# Dashboard login\n\nSign in to the dashboard with your email and password. "
        "Turn on two-factor authentication under Security.",
    ),
    Document(
        "kb-rate-limits",
        DocKind.KB,
        "Rate limits",
        "# Rate limits\n\nThe Starter plan allows 50 requests per second.",
    ),
]


def _stage(
    store: Store, ticket: Ticket, status: Status, reason: str, sentences: tuple[str, ...] = ()
) -> None:
    store.add_tickets([ticket])
    attempt = store.begin_attempt(ticket.id)
    draft = (
        Draft(tuple(DraftSentence(s, ("kb-deploy#docker",)) for s in sentences), 0.6)
        if sentences
        else None
    )
    bucket = Bucket.NOT_A_QUESTION if status is Status.ROUTED else Bucket.ANSWERABLE
    store.stage_outcome(
        Outcome(ticket.id, status, reason, bucket, draft, None, (), "offline"), attempt
    )


def _pending(store: Store, ticket_id: str, *sentences: str) -> None:
    _stage(
        store,
        Ticket(ticket_id, f"Question {ticket_id}", "How?"),
        Status.PENDING_REVIEW,
        "drafted",
        sentences,
    )


@pytest.fixture
def history(any_store: Store) -> Store:
    """Thirteen tickets: every kind of outcome and of reviewer decision, some still pending."""
    s = any_store
    _pending(s, "A1", "Run the relay as a Docker container on any server.")
    _pending(s, "A2", "Install the relay package on a virtual machine.")
    _pending(s, "A3", "Wait 30 seconds.", "Then retry.")
    _pending(s, "A4", "Open the billing page.")
    _pending(s, "A5", "The Starter plan allows 50 requests per second.")
    _pending(s, "A6", "Set the API key in the RELAY_KEY environment variable.")
    _pending(s, "A7", "Start it as a service.")
    approve(s, None, "A1", "ana")
    amend(s, None, "A2", "Install the relay package on a virtual machine.", "ana")  # no change
    amend(s, None, "A3", "Wait 60 seconds. Then retry.", "bo")  # "30" -> "60": 4 chars, 1/5
    amend(s, None, "A4", "Open the account page.", "bo")  # "billing" -> "account": 14, 1/4
    reject(s, "A5", "Wrong plan.", "cy")
    _stage(s, Ticket("R1", "Crash", "It crashes."), Status.ROUTED, "bug_report")
    _stage(s, Ticket("R2", "Idea", "Add dark mode."), Status.ROUTED, "feature_request")
    _stage(s, Ticket("E1", "Helm", "Helm chart?"), Status.ESCALATED, "weak_evidence")
    _stage(s, Ticket("E2", "SAML", "SAML login?"), Status.ESCALATED, "weak_evidence")
    _stage(s, Ticket("E3", "Lawyer", "We will sue."), Status.ESCALATED, "safety_legal_threat")
    s.add_tickets([Ticket("N1", "New", "Not handled yet.")])
    return s


def test_stats_count_what_was_recorded_and_assume_nothing(history: Store) -> None:
    stats = compute_stats(history)
    assert (stats.tickets, stats.unhandled) == (13, 1)
    assert (stats.drafted, stats.pending_review, stats.reviewed) == (7, 2, 5)
    # A1 approved, A2 "amended" without changing a word: both approved unedited.
    assert (stats.approved_unedited, stats.approved_with_edits, stats.rejected) == (2, 2, 1)
    assert stats.mean_edit_chars == pytest.approx((4 + 14) / 2)
    assert stats.mean_edit_ratio == pytest.approx((1 / 5 + 1 / 4) / 2)
    assert stats.escalated_by_reason == {"weak_evidence": 2, "safety_legal_threat": 1}
    assert stats.escalated == 3
    assert stats.routed_by_reason == {"bug_report": 1, "feature_request": 1}
    assert stats.routed == 2 and stats.handed_off == 1
    # The headline: of five decided drafts, two went out unedited; the two pending drafts are
    # neither counted as approved nor as failures.
    assert stats.unedited_share == pytest.approx(2 / 5)
    assert json.loads(json.dumps(stats.to_json()))["unedited_share"] == pytest.approx(0.4)


def test_stats_before_any_review_have_no_headline(any_store: Store) -> None:
    _pending(any_store, "A1", "Run the relay as a Docker container on any server.")
    stats = compute_stats(any_store)
    assert (stats.drafted, stats.pending_review, stats.reviewed) == (1, 1, 0)
    assert stats.unedited_share is None and stats.mean_edit_chars is None


GAP_TICKETS = [
    ("W1", "Helm chart for Kubernetes", "Do you publish a helm chart for kubernetes deployments?"),
    ("W2", "Kubernetes install", "Is there an official helm chart to run the relay on kubernetes?"),
    ("W3", "SAML login", "Can our staff sign in to the dashboard with SAML from Okta?"),
    ("W4", "Okta single sign-on", "Does the dashboard support Okta SAML single sign-on?"),
    ("W5", "Pricing in yen", "Can we be invoiced in Japanese yen?"),
]


@pytest.fixture
def gap_history(any_store: Store) -> Store:
    s = any_store
    s.upsert_documents(KB)
    for ticket_id, subject, body in GAP_TICKETS:
        _stage(
            s,
            Ticket(ticket_id, subject, f"Hi,\n\n{body}\n\nThanks,\nMarta"),
            Status.ESCALATED,
            "weak_evidence",
        )
    _stage(
        s,
        Ticket("X1", "Helm values", "Which helm chart values set the replicas on kubernetes?"),
        Status.PENDING_REVIEW,
        "drafted",
        ("Run the relay as a Docker container on any server.",),
    )
    reject(s, "X1", "We have no helm article.", "ana")
    # Escalated for another reason, and approved: neither is a gap.
    _stage(
        s,
        Ticket("E9", "Lawyer", "We will sue about kubernetes."),
        Status.ESCALATED,
        "safety_legal_threat",
    )
    _pending(s, "A9", "Run the relay as a Docker container on any server.")
    approve(s, None, "A9", "ana")
    return s


def test_gaps_group_weak_and_rejected_tickets_with_their_nearest_articles(
    gap_history: Store,
) -> None:
    gaps = find_gaps(gap_history, Knowledge.from_store(gap_history))
    assert [[t.ticket_id for t in g.tickets] for g in gaps] == [
        ["W1", "W2", "X1"],
        ["W3", "W4"],
        ["W5"],
    ]
    helm, saml, _yen = gaps
    assert {"helm", "kubernetes", "chart"} <= set(helm.terms)
    assert "marta" not in helm.terms  # sign-offs say nothing about the missing article
    assert helm.nearest[0].doc_id == "kb-deploy"
    assert saml.nearest[0].doc_id == "kb-dashboard-login"
    assert [t.why for t in helm.tickets] == ["weak_evidence", "weak_evidence", "rejected"]
    assert helm.tickets[2].detail == "We have no helm article."
    payload = json.loads(json.dumps([g.to_json() for g in gaps]))
    assert payload[0]["size"] == 3 and payload[0]["nearest"][0]["doc_id"] == "kb-deploy"


def test_no_gaps_without_weak_or_rejected_tickets(any_store: Store) -> None:
    any_store.upsert_documents(KB)
    _pending(any_store, "A1", "Run the relay as a Docker container on any server.")
    assert find_gaps(any_store, Knowledge.from_store(any_store)) == []


def test_cluster_is_single_link_over_idf_weighted_terms() -> None:
    def idf(term: str) -> float:
        return 1.0

    groups = cluster(["helm chart", "helm chart kubernetes", "kubernetes pods", "yen invoice"], idf)
    assert groups == [[0, 1, 2], [3]]
    assert cluster([], idf) == []


runner = CliRunner()


def test_cli_stats_and_gaps(store: Store) -> None:
    store.upsert_documents(KB)
    for ticket_id, subject, body in GAP_TICKETS[:2]:
        _stage(store, Ticket(ticket_id, subject, body), Status.ESCALATED, "weak_evidence")
    _pending(store, "A1", "Run the relay as a Docker container on any server.")
    _pending(store, "A2", "Start it as a service.")
    approve(store, None, "A1", "ana")

    result = runner.invoke(app, ["stats", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["reviewed"], data["approved_unedited"], data["pending_review"]) == (1, 1, 1)
    result = runner.invoke(app, ["stats"])
    assert result.exit_code == 0
    assert "100% of reviewed drafts approved without edits" in result.output
    assert "1 still pending" in result.output

    result = runner.invoke(app, ["gaps", "--json"])
    assert result.exit_code == 0, result.output
    [gap] = json.loads(result.output)
    assert [t["ticket_id"] for t in gap["tickets"]] == ["W1", "W2"]
    result = runner.invoke(app, ["gaps"])
    assert result.exit_code == 0 and "Gap 1" in result.output and "kb-deploy" in result.output
