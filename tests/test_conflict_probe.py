"""Round 22 of the drafter (twenty-second session, from Windlog's WL-005 in `eval/conflicts`,
released as tune data): the other side of a value a draft states may sit in a passage the
question did not retrieve. The pipeline searches the articles (not the resolved tickets, full
of one customer's amounts and dates) with each of the draft's sentences that carries a value,
and holds that sentence against what its search finds.

An invented corpus (a rowing club's booking service), in no data file; the search takes one
passage per query (``evidence_k=1``), so that the question alone never retrieves the plan
article."""

from __future__ import annotations

from typing import Any

from supportagent.agent.knowledge import Knowledge
from supportagent.agent.pipeline import Pipeline, PipelineConfig
from supportagent.domain import DocKind, Document, Draft, DraftSentence, Status, Ticket
from supportagent.store.store import Store
from test_pipeline import ScriptedEngine

STATEMENTS = Document(
    "kb-statements",
    DocKind.KB,
    "Statements",
    "# Statements\n\n## When statements are made\n\nMembers' boat-hire statements are produced "
    "on the last day of each month, on every plan. Each statement lists the outings and the "
    "member's balance.",
)
PLANS = Document(
    "kb-plans",
    DocKind.KB,
    "Plans",
    "# Plans\n\n## What Regatta adds\n\nRegatta suits larger clubs:\n\n- several boathouses in "
    "one account;\n- an export for the club's accounts;\n- mid-month billing: on Regatta, "
    "members' boat-hire statements are produced on the 15th of each month;\n- a named contact.",
)
SAFETY = Document(
    "kb-safety",
    DocKind.KB,
    "Safety",
    "# Safety\n\n## Life jackets\n\nEvery rower under 16 wears a life jacket on the water.",
)
TICKET = Ticket(
    "T-P1", "Statements", "When in the month are members' boat-hire statements produced?"
)
SAID = "Members' boat-hire statements are produced on the last day of each month, on every plan."


CITED = "kb-statements#when-statements-are-made"


def quoting(sentence: str) -> ScriptedEngine:
    """An engine that answers the ticket and drafts ``sentence`` citing the statements
    section (one draft: a conflict stops the revisions, and a passing draft needs none)."""
    return ScriptedEngine(drafts=[Draft((DraftSentence(sentence, (CITED,)),), 0.9)])


def evidence_of(engine: ScriptedEngine) -> list[str]:
    """The passage ids the engine was given to draft from."""
    return next(detail["evidence"] for name, detail in engine.calls if name == "draft")


def _run(store: Store, docs: list[Document], engine: Any) -> Any:
    store.add_tickets([TICKET])
    pipeline = Pipeline(store, Knowledge(docs), engine, PipelineConfig(evidence_k=1))
    return pipeline.run(TICKET.id)


def test_a_value_whose_other_side_the_question_did_not_find_escalates(store: Store) -> None:
    engine = quoting(SAID)
    outcome = _run(store, [STATEMENTS, PLANS, SAFETY], engine)
    # The question retrieved the statements article, not the plan that says otherwise.
    assert not any(i.startswith("kb-plans") for i in evidence_of(engine))
    assert (outcome.status, outcome.reason_code) == (Status.ESCALATED, "conflicting_evidence")
    trace = store.trace(TICKET.id)
    probes = [e for e in trace if (e["stage"], e["status"]) == ("probe", "found")]
    assert probes and probes[0]["detail"]["query"] == SAID
    assert any(h["doc_id"] == "kb-plans" for h in probes[0]["detail"]["hits"])
    probed = [e for e in trace if (e["stage"], e["status"]) == ("conflicts", "probed")]
    assert len(probed) == 1
    # The pipeline says it is probing before its searches, so that no reader (nor the
    # injection eval) takes them for tools the drafter asked for; and the probe's passages
    # are no `retrieve` event, so that nothing takes them for the drafter's evidence.
    assert all(e["stage"] != "retrieve" or "hits" in e["detail"] for e in trace)
    steps = [(e["stage"], e["status"], e["detail"].get("tool")) for e in trace]
    first = steps.index(("probe", "searching", None))
    assert steps[first - 1][0] == "draft"
    assert steps[first + 1] == ("tool", "allowed", "search_docs")


def test_without_another_value_the_draft_is_staged(store: Store) -> None:
    engine = quoting(SAID)
    outcome = _run(store, [STATEMENTS, SAFETY], engine)
    assert outcome.status is Status.PENDING_REVIEW
    assert not [e for e in store.trace(TICKET.id) if e["stage"] == "conflicts"]


def test_a_sentence_without_a_value_is_not_searched_again(store: Store) -> None:
    plain = "Each statement lists the outings and the member's balance."
    engine = quoting(plain)
    outcome = _run(store, [STATEMENTS, PLANS, SAFETY], engine)
    assert outcome.status is Status.PENDING_REVIEW
    trace = store.trace(TICKET.id)
    assert not [e for e in trace if e["stage"] == "probe"]
    tools = [e["detail"]["tool"] for e in trace if e["stage"] == "tool"]
    assert tools == ["get_ticket", "search_docs", "search_resolved", "stage_draft"]
