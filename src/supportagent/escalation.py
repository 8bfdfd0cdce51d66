"""Escalations are work: a person assigns a ticket, adds notes, replies, or marks it handled.

The agent drafts nothing for an escalated or routed ticket, and a rejected draft hands its
ticket to a person; these are the actions that person takes. Each one is audited and shows on
the ticket's timeline. A reply is the person's own answer: like an amendment it becomes a
resolved record (``AR-<ticket id>``) that the next ticket's search finds, unless it nearly
repeats an existing record, which it then links to.
"""

from __future__ import annotations

from dataclasses import dataclass

from supportagent.agent.knowledge import Knowledge
from supportagent.domain import DocKind, Document, resolved_body
from supportagent.errors import UserError
from supportagent.review import (
    MAX_TEXT_CHARS,
    candidates,
    check_reviewer,
    near_duplicate,
    normalise_text,
    strip_citations,
)
from supportagent.store.escalations import TicketAction, record_action
from supportagent.store.store import Store

MAX_NAME_CHARS = 128


@dataclass(frozen=True, slots=True)
class ActionResult:
    action: TicketAction
    status: str
    #: The resolved record a reply added, or the existing one it links to.
    resolved_doc_id: str | None = None
    linked_existing: bool = False

    @property
    def effect(self) -> str:
        """What the action did, in one sentence."""
        a = self.action
        if a.action == "assign":
            return f"{a.ticket_id} assigned to {a.text}."
        if a.action == "note":
            return f"Note added to {a.ticket_id}."
        if a.action == "handled":
            return f"{a.ticket_id} marked handled."
        if self.linked_existing:
            return (
                f"Reply saved; {a.ticket_id} handled. Already covered by {self.resolved_doc_id}: "
                "linked, nothing added."
            )
        return (
            f"Reply saved; {a.ticket_id} handled. Added to the knowledge base as "
            f"{self.resolved_doc_id}, searchable now."
        )


def _text(text: str, what: str) -> str:
    clean = normalise_text(text)
    if not clean:
        raise UserError(f"{what} is empty.")
    if len(clean) > MAX_TEXT_CHARS:
        raise UserError(f"{what} is {len(clean)} characters; at most {MAX_TEXT_CHARS} are kept.")
    return clean


def assign(store: Store, ticket_id: str, assignee: str, actor: str) -> ActionResult:
    """Give the ticket to ``assignee`` (a name); it then no longer stands out as untaken."""
    name = " ".join(assignee.split())
    if not name:
        raise UserError("Assign it to someone: the assignee's name is empty.")
    if len(name) > MAX_NAME_CHARS:
        raise UserError(f"An assignee's name is at most {MAX_NAME_CHARS} characters.")
    done = record_action(store, ticket_id, "assign", check_reviewer(actor), name)
    return ActionResult(done, store.ticket_status(ticket_id).value)


def note(store: Store, ticket_id: str, text: str, actor: str) -> ActionResult:
    done = record_action(store, ticket_id, "note", check_reviewer(actor), _text(text, "The note"))
    return ActionResult(done, store.ticket_status(ticket_id).value)


def handled(store: Store, ticket_id: str, actor: str, text: str = "") -> ActionResult:
    """Mark the ticket handled, with an optional note on what was done."""
    why = normalise_text(text) or None
    done = record_action(store, ticket_id, "handled", check_reviewer(actor), why)
    return ActionResult(done, "handled")


def reply(
    store: Store, knowledge: Knowledge | None, ticket_id: str, text: str, actor: str
) -> ActionResult:
    """The person's own answer: the ticket is handled and the answer joins the corpus."""
    who = check_reviewer(actor)
    answer = strip_citations(_text(text, "The reply"))
    if not answer:
        raise UserError("The reply is empty once its citation markers are removed.")
    ticket = store.get_ticket(ticket_id)
    existing = near_duplicate(answer, candidates(store, knowledge, answer))
    doc = None
    if existing is None:
        doc = Document(
            id=f"AR-{ticket.id}",
            kind=DocKind.RESOLVED,
            title=ticket.subject or ticket.text[:120],
            body=resolved_body(ticket.text, answer),
            source=f"reply:{ticket.id}",
            meta={"question": ticket.text, "answer": answer, "ticket_id": ticket.id, "by": who},
        )
    linked = existing.id if existing is not None else None
    done = record_action(
        store, ticket_id, "reply", who, answer, resolved_doc=doc, linked_doc_id=linked
    )
    if doc is not None and knowledge is not None:
        knowledge.add(doc)
    return ActionResult(
        done,
        "handled",
        doc.id if doc is not None else linked,
        linked_existing=existing is not None,
    )


def action_effect(action: TicketAction) -> str:
    """What a stored action did, in one sentence (a reply's record tells added from linked)."""
    linked = (
        action.resolved_doc_id is not None and action.resolved_doc_id != f"AR-{action.ticket_id}"
    )
    return ActionResult(action, "", action.resolved_doc_id, linked_existing=linked).effect
