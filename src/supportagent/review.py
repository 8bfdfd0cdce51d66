"""Human review: approve, amend or reject a pending draft; approved answers feed the corpus.

Approve and amend turn the final answer into a resolved record, searchable by the very next
ticket. Reject hands the ticket to a person and adds nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from supportagent.agent.knowledge import Knowledge
from supportagent.domain import DocKind, Document, Status, resolved_body
from supportagent.errors import ConflictError, UserError
from supportagent.store.store import Store

_CITATION = re.compile(r"\s*\[[^\]\s]+#[^\]\s]+\]")


@dataclass(frozen=True, slots=True)
class ReviewResult:
    ticket_id: str
    decision: str
    status: Status
    resolved_doc_id: str | None


def approve(
    store: Store, knowledge: Knowledge | None, ticket_id: str, reviewer: str
) -> ReviewResult:
    """Accept the draft as written."""
    return _accept(store, knowledge, ticket_id, reviewer, final_text=None)


def amend(
    store: Store, knowledge: Knowledge | None, ticket_id: str, text: str, reviewer: str
) -> ReviewResult:
    """Accept the draft with the reviewer's final text."""
    if not text.strip():
        raise UserError("An amendment needs the final answer text.")
    return _accept(store, knowledge, ticket_id, reviewer, final_text=text.strip())


def reject(store: Store, ticket_id: str, reason: str, reviewer: str) -> ReviewResult:
    """Refuse the draft; the ticket goes to a person (``handed_off``)."""
    if not reason.strip():
        raise UserError("A rejection needs a reason, so the next draft can be better.")
    store.record_review(
        ticket_id, "reject", Status.HANDED_OFF, reviewer, None, reason.strip(), None
    )
    return ReviewResult(ticket_id, "reject", Status.HANDED_OFF, None)


def _accept(
    store: Store,
    knowledge: Knowledge | None,
    ticket_id: str,
    reviewer: str,
    final_text: str | None,
) -> ReviewResult:
    record = store.latest_outcome(ticket_id)
    if record is None or record.status is not Status.PENDING_REVIEW or record.draft is None:
        status = store.ticket_status(ticket_id)
        raise ConflictError(
            f"Ticket {ticket_id} is {status.value}, not pending_review: "
            "only a pending draft can be reviewed, and only once."
        )
    drafted = " ".join(s["text"] for s in record.draft["sentences"])
    answer = final_text if final_text is not None else drafted
    answer = _CITATION.sub("", answer).strip()
    citations = list(record.draft.get("citations", []))
    ticket = record.ticket
    question = f"{ticket.subject}\n{ticket.body}".strip()
    doc = Document(
        id=f"AR-{ticket_id}",
        kind=DocKind.RESOLVED,
        title=ticket.subject or question[:120],
        body=resolved_body(question, answer),
        source=f"review:{ticket_id}",
        linked_docs=tuple(dict.fromkeys(c.split("#", 1)[0] for c in citations)),
        meta={
            "question": question,
            "answer": answer,
            "ticket_id": ticket_id,
            "reviewer": reviewer,
            "citations": citations,
        },
    )
    decision, status = (
        ("amend", Status.AMENDED) if final_text is not None else ("approve", Status.APPROVED)
    )
    store.record_review(ticket_id, decision, status, reviewer, answer, None, doc)
    if knowledge is not None:
        knowledge.add(doc)
    return ReviewResult(ticket_id, decision, status, doc.id)
