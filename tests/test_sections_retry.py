"""Round 11 of issue 12: when the passages found hold no sentence that answers, the offline
drafter looks once more in the best article's other sections, and only when both searches put
that article first. Articles written for these tests (an invented choir-scheduling app)."""

from __future__ import annotations

import pytest

from supportagent.agent.evidence import signals_agree
from supportagent.agent.knowledge import Knowledge
from supportagent.agent.pipeline import Pipeline, PipelineConfig
from supportagent.domain import (
    DocKind,
    Document,
    Hit,
    Outcome,
    Passage,
    SignalScore,
    Status,
    Ticket,
)
from supportagent.engines.offline import OfflineEngine
from supportagent.store.store import Store

ROLES = Document(
    "kb-choir-roles",
    DocKind.KB,
    "Choir roles",
    "# Choir roles\n\nEvery member of a choir has one role, and the role decides what "
    "the member may change in the choir's plan and settings.\n\n## The role list\n\n"
    "Only the Conductor can move the choir to another subscription tier. Section leads edit "
    "rehearsal times for their own voice part. Singers see the schedule and reply to "
    "invitations.",
)
OTHERS = [
    Document(
        "kb-rehearsals",
        DocKind.KB,
        "Rehearsal invitations",
        "# Rehearsal invitations\n\nCantora sends each invitation by email two days before the "
        "rehearsal. A singer replies yes, no or maybe from the email or the app.",
    ),
    Document(
        "kb-billing",
        DocKind.KB,
        "Subscription tiers",
        "# Subscription tiers\n\nThe Ensemble tier holds up to 40 singers and the Festival "
        "tier up to 200. Prices are shown in the choir's billing page.",
    ),
]
TICKET = Ticket(
    "T-ROLE",
    "Changing our plan",
    "Which choir role may change the choir's plan and settings?",
)


def _run(store: Store, config: PipelineConfig) -> Outcome:
    store.add_tickets([TICKET])
    knowledge = Knowledge([ROLES, *OTHERS])
    outcome = Pipeline(store, knowledge, OfflineEngine(), config).run(TICKET.id)
    return outcome


def test_the_answer_in_another_section_of_the_best_article_is_found(store: Store) -> None:
    # One passage per search: the article's introduction, which names no role.
    outcome = _run(store, PipelineConfig(evidence_k=1))
    assert outcome.status is Status.PENDING_REVIEW, outcome.reason_code
    assert outcome.draft is not None and "Conductor" in outcome.draft.answer
    sections = [e for e in outcome.trace if e.stage == "retrieve" and e.status == "sections"]
    assert len(sections) == 1
    assert {h["id"].split("#")[0] for h in sections[0].detail["hits"]} == {"kb-choir-roles"}


def test_without_the_second_look_the_same_ticket_gets_no_draft(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Pipeline, "_sections", lambda self, ticket, hits, trace: [])
    outcome = _run(store, PipelineConfig(evidence_k=1))
    assert outcome.status is not Status.PENDING_REVIEW


@pytest.mark.parametrize(
    ("body", "dense", "agree"),
    [(1, 1, True), (3, 2, True), (1, 4, False), (5, 1, False), (None, 1, False)],
)
def test_the_second_look_needs_both_searches_to_rank_the_article_high(
    body: int | None, dense: int, agree: bool
) -> None:
    signals = {"dense": SignalScore(dense, 0.5)}
    if body is not None:
        signals["body"] = SignalScore(body, 3.0)
    passage = Passage("kb-choir-roles#intro", "kb-choir-roles", DocKind.KB, "Choir roles", (), "x")
    assert signals_agree(Hit(passage, 1, 0.1, signals)) is agree
