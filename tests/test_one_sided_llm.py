"""Issue 12 through the llm engine: a model's draft that states one value where the sources it
cites give two is staged flagged ``differing_values``, the trace naming both quotes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from llm_stub import EvidenceModel, Received, StubLLM, passages, stub_engine, stub_settings
from supportagent.agent.knowledge import Knowledge
from supportagent.domain import DocKind, Document, Status, Ticket
from supportagent.runtime import build_pipeline, open_store
from supportagent.web.app import create_app
from supportagent.web.review_view import review_item

RULE = (
    "If the dock loses its network link, it keeps unlocking bikes for members from its own "
    "list for up to 48 hours. After that only staff cards open it."
)
CASE = (
    "The Mk1 docks at that station are wired the older way, so they only carry the members' "
    "list for 12 hours once the link to our servers drops. Staff cards keep working."
)
DOCS = [
    Document(
        "kb-docks",
        DocKind.KB,
        "Docks",
        f"# Docks\n\n## When the network is down\n\n{RULE}\n\n## Staff cards\n\n"
        "Staff cards open every dock at any time.",
    ),
    Document(
        "RT-31",
        DocKind.RESOLVED,
        "Bikes stuck at Quayside",
        f"The network at the Quayside station dropped overnight and by morning members could "
        f"not take bikes. Why?\n\n{CASE}",
    ),
]
TICKET = Ticket(
    "T-900",
    "Network work at Quayside",
    "The network at our Quayside station will be down next week for cabling work. The docks "
    "there are Mk1 docks. How long will members still be able to unlock bikes while offline?",
)
STATED = "If the dock loses its network link, it keeps unlocking bikes for up to 48 hours."


class OneSidedModel(EvidenceModel):
    """Drafts the article's 48 hours and cites the resolved ticket for something else."""

    def _draft(self, request: Received) -> dict[str, Any]:
        ids = [p["id"] for p in passages(request.prompt)]
        article = next(i for i in ids if i.startswith("kb-docks#when"))
        ticket = next(i for i in ids if i.startswith("RT-31"))
        sentences = [
            {"text": STATED, "citations": [article]},
            {"text": "Staff cards keep working.", "citations": [ticket]},
        ]
        return {"sentences": sentences, "confidence": 0.8}


def test_a_one_sided_draft_is_staged_flagged_and_the_trace_names_both_quotes(
    tmp_path: Path,
) -> None:
    with StubLLM(OneSidedModel()) as stub:
        settings = stub_settings(stub, tmp_path / "home")
        store = open_store(settings)
        try:
            store.upsert_documents(DOCS)
            store.add_tickets([TICKET])
            pipeline = build_pipeline(settings, store, stub_engine(settings), Knowledge(DOCS))
            outcome = pipeline.run(TICKET.id)
            trace = store.trace(TICKET.id)
            record = store.latest_outcome(TICKET.id)
            with TestClient(create_app(settings, store), base_url="http://127.0.0.1") as client:
                pages = [client.get(f"/review?ticket={TICKET.id}").text]
                pages.append(client.get(f"/tickets/{TICKET.id}").text)
        finally:
            store.close()
    assert outcome.status is Status.PENDING_REVIEW, outcome.reason_code
    assert outcome.draft is not None
    assert [s.text for s in outcome.draft.sentences] == [STATED, "Staff cards keep working."]
    assert "differing_values" in outcome.draft.flags
    [values] = [e for e in trace if e["stage"] == "values"]
    assert values["status"] == "differ"
    [pair] = values["detail"]["pairs"]
    assert pair["first"] == STATED
    assert "12 hours" in pair["second"] and pair["second"] in CASE
    assert pair["values"] == ["48 hours", "12 hours"]
    assert pair["one_sided"] is True and pair["source"].startswith("RT-31")
    # The review page shows the flag and both quotes.
    assert record is not None
    item = review_item(record, trace, lambda _id: None)
    assert "differing_values" in item.flags
    [shown] = item.value_pairs
    assert (shown.first, shown.second) == (pair["first"], pair["second"])
    assert shown.source == pair["source"] and shown.values == ("48 hours", "12 hours")
    for page in pages:  # the review page and the ticket's trace both quote the two sides
        assert "differing_values" in page or 'data-stage="values"' in page
        assert "the draft says only" in page.lower() and STATED in page
        assert "12 hours once the link to our servers drops" in page
