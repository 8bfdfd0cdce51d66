"""Human review: approve, amend or reject a pending draft; approved answers feed the corpus.

Approve and amend turn the final answer into a resolved record, searchable by the very next
ticket; an answer that nearly repeats an existing resolved record links to it instead of adding
a copy. Reject hands the ticket to a person and adds nothing. Every decision keeps the draft as
the agent staged it beside the final answer, the edit between the two, the reviewer and the time,
and goes into the audit log in the same transaction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from difflib import SequenceMatcher, unified_diff
from typing import Any

from supportagent.agent.knowledge import Knowledge
from supportagent.domain import DocKind, Document, Status, resolved_answer, resolved_body
from supportagent.errors import ConflictError, UserError
from supportagent.store.audit import ReviewDetails
from supportagent.store.store import StagedRecord, Store

#: Word similarity at or above which a final answer counts as a copy of an existing record.
NEAR_DUPLICATE = 0.9
#: Longest final answer or reason a reviewer may submit, in characters.
MAX_TEXT_CHARS = 20_000
MAX_REVIEWER_CHARS = 128
#: Resolved records compared with a new answer, when a search index is at hand.
_DUPLICATE_CANDIDATES = 10

_CITATION = re.compile(r"\s*\[([^\]\s]+#[^\]\s]+)\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class ReviewResult:
    ticket_id: str
    decision: str
    status: Status
    resolved_doc_id: str | None
    #: True when the answer nearly repeats ``resolved_doc_id``, an existing record, now linked.
    linked_existing: bool = False
    #: The draft as the agent staged it (with its citation markers).
    original_draft: str = ""
    final_text: str | None = None
    #: Unified diff from the draft to the final answer, one sentence per line.
    diff: str = ""
    #: Characters deleted plus characters inserted, counted over changed words.
    edit_chars: int = 0
    #: Share of the draft's words changed (1 - word similarity), 0.0 to 1.0.
    edit_ratio: float = 0.0
    reviewer: str = ""

    @property
    def effect(self) -> str:
        """What the decision did, in one sentence (the UI and the CLI both show it)."""
        return effect_sentence(
            self.ticket_id, self.decision, self.resolved_doc_id, not self.linked_existing
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["status"] = self.status.value
        data["effect"] = self.effect
        return data


def effect_sentence(
    ticket_id: str, decision: str, resolved_doc_id: str | None, added: bool | None
) -> str:
    """ "T-1 approved: added to the knowledge base as AR-T-1, searchable now", and the like."""
    verb = {"approve": "approved", "amend": "amended", "reject": "rejected"}.get(decision, decision)
    if decision == "reject" or resolved_doc_id is None:
        return f"{ticket_id} {verb}: the ticket goes to a person; nothing was added."
    if not added:
        return f"{ticket_id} {verb}: already covered by {resolved_doc_id}: linked, nothing added."
    return f"{ticket_id} {verb}: added to the knowledge base as {resolved_doc_id}, searchable now."


@dataclass(frozen=True, slots=True)
class Edit:
    diff: str
    chars: int
    ratio: float


def approve(
    store: Store,
    knowledge: Knowledge | None,
    ticket_id: str,
    reviewer: str,
    text: str | None = None,
) -> ReviewResult:
    """Accept the draft as written.

    ``text``: the final answer as the reviewer sees it, when one was sent along (the review
    page's answer box). Text that differs from the draft is refused, never dropped: an edit is
    saved only by ``amend``.
    """
    if text is not None and normalise_words(strip_citations(text)) != normalise_words(
        plain_draft(_pending(store, ticket_id))
    ):
        raise UserError(
            "The final answer differs from the draft, so approving would drop your edit: "
            "amend instead to save it (or undo the edit to approve the draft as written)."
        )
    return _accept(store, knowledge, ticket_id, check_reviewer(reviewer), final_text=None)


def amend(
    store: Store, knowledge: Knowledge | None, ticket_id: str, text: str, reviewer: str
) -> ReviewResult:
    """Accept the draft with the reviewer's final text."""
    text = normalise_text(text)
    if not text:
        raise UserError("An amendment needs the final answer text.")
    _check_length(text, "The final answer")
    return _accept(store, knowledge, ticket_id, check_reviewer(reviewer), final_text=text)


def reject(store: Store, ticket_id: str, reason: str, reviewer: str) -> ReviewResult:
    """Refuse the draft; the ticket goes to a person (``handed_off``)."""
    reason = normalise_text(reason)
    if not reason:
        raise UserError("A rejection needs a reason, so the next draft can be better.")
    _check_length(reason, "The reason")
    who = check_reviewer(reviewer)
    record = _pending(store, ticket_id)
    original = _draft_text(record)
    details = ReviewDetails(original_draft=original)
    store.record_review(
        ticket_id, "reject", Status.HANDED_OFF, who, None, reason, None, details=details
    )
    return ReviewResult(
        ticket_id, "reject", Status.HANDED_OFF, None, original_draft=original, reviewer=who
    )


def measure_edit(before: str, after: str) -> Edit:
    """How much a reviewer changed: a sentence-per-line diff, changed characters, changed share.

    Words are the unit, so moving a comma changes one word, not the whole sentence.
    """
    old, new = before.split(), after.split()
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    chars = sum(
        len(" ".join(old[i1:i2])) + len(" ".join(new[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    )
    if not chars:  # only the spacing differs
        return Edit("", 0, 0.0)
    diff = unified_diff(_sentences(old), _sentences(new), "draft", "final", lineterm="")
    return Edit("\n".join(diff), chars, round(1.0 - matcher.ratio(), 4))


def _sentences(words: list[str]) -> list[str]:
    return _SENTENCE_END.split(" ".join(words))


def normalise_text(text: str) -> str:
    """``text`` with every line ending as ``\\n`` and no surrounding blank space."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def normalise_words(text: str) -> str:
    """``text`` as its words, single-spaced: what "the same text" means for an edit."""
    return " ".join(text.split())


def plain_draft(record: StagedRecord) -> str:
    """The draft as the reviewer's answer box shows it: its sentences, without citations."""
    draft = record.draft or {}
    return " ".join(str(s["text"]) for s in draft.get("sentences", []))


def strip_citations(text: str) -> str:
    """``text`` without its ``[DOC#section]`` markers."""
    return _CITATION.sub("", text).strip()


def near_duplicate(answer: str, candidates: Iterable[Document]) -> Document | None:
    """The resolved record whose answer ``answer`` nearly repeats (word similarity >= 0.9).

    Case and punctuation are ignored; of several, the most similar wins, then the smaller id.
    """
    words = _WORD.findall(answer.casefold())
    best: tuple[float, str] | None = None
    found: Document | None = None
    for doc in candidates:
        if doc.kind is not DocKind.RESOLVED:
            continue
        stored = doc.meta.get("answer")
        text = stored if isinstance(stored, str) else resolved_answer(doc.body)
        matcher = SequenceMatcher(
            None, words, _WORD.findall(strip_citations(text).casefold()), autojunk=False
        )
        # The cheap upper bounds first: most candidates are nowhere near.
        if matcher.real_quick_ratio() < NEAR_DUPLICATE or matcher.quick_ratio() < NEAR_DUPLICATE:
            continue
        score = matcher.ratio()
        if score >= NEAR_DUPLICATE and (best is None or (-score, doc.id) < best):
            best, found = (-score, doc.id), doc
    return found


def _accept(
    store: Store,
    knowledge: Knowledge | None,
    ticket_id: str,
    reviewer: str,
    final_text: str | None,
) -> ReviewResult:
    record = _pending(store, ticket_id)
    assert record.draft is not None
    drafted = plain_draft(record)
    original = _draft_text(record)
    answer = strip_citations(final_text) if final_text is not None else drafted
    if not answer:
        raise UserError(
            "The final answer is empty once its citation markers are removed."
            if final_text is not None
            else "The draft has no text to approve; amend it with the final answer."
        )
    edit = measure_edit(drafted, answer)
    marked = _CITATION.findall(final_text or "")
    citations = list(dict.fromkeys(marked)) or [str(c) for c in record.draft.get("citations", [])]
    existing = near_duplicate(answer, candidates(store, knowledge, answer))
    doc = None if existing is not None else _resolved_record(record, answer, citations, reviewer)
    decision, status = (
        ("amend", Status.AMENDED) if final_text is not None else ("approve", Status.APPROVED)
    )
    details = ReviewDetails(
        original_draft=original,
        diff=edit.diff,
        edit_chars=edit.chars,
        edit_ratio=edit.ratio,
        linked_doc_id=existing.id if existing is not None else None,
    )
    store.record_review(ticket_id, decision, status, reviewer, answer, None, doc, details=details)
    if doc is not None and knowledge is not None:
        knowledge.add(doc)
    return ReviewResult(
        ticket_id,
        decision,
        status,
        doc.id if doc is not None else existing.id if existing is not None else None,
        linked_existing=existing is not None,
        original_draft=original,
        final_text=answer,
        diff=edit.diff,
        edit_chars=edit.chars,
        edit_ratio=edit.ratio,
        reviewer=reviewer,
    )


def _resolved_record(
    record: StagedRecord, answer: str, citations: list[str], reviewer: str
) -> Document:
    ticket = record.ticket
    question = ticket.text
    return Document(
        id=f"AR-{ticket.id}",
        kind=DocKind.RESOLVED,
        title=ticket.subject or question[:120],
        body=resolved_body(question, answer),
        source=f"review:{ticket.id}",
        linked_docs=tuple(dict.fromkeys(c.split("#", 1)[0] for c in citations)),
        meta={
            "question": question,
            "answer": answer,
            "ticket_id": ticket.id,
            "reviewer": reviewer,
            "citations": citations,
        },
    )


def candidates(store: Store, knowledge: Knowledge | None, answer: str) -> Iterable[Document]:
    """Resolved records that could repeat ``answer``: the nearest by search, else all of them."""
    if knowledge is None:
        return store.documents(DocKind.RESOLVED)
    hits = knowledge.search(answer, k=_DUPLICATE_CANDIDATES, kinds={DocKind.RESOLVED})
    docs = (knowledge.retriever.document(doc_id) for doc_id in {h.passage.doc_id for h in hits})
    return [d for d in docs if d is not None]


def _pending(store: Store, ticket_id: str) -> StagedRecord:
    """The ticket's pending draft, or a ConflictError that says why there is none."""
    record = store.latest_outcome(ticket_id)
    if record is not None and record.status is Status.PENDING_REVIEW and record.draft:
        return record
    status = store.ticket_status(ticket_id)  # NotFoundError for an unknown id
    reviews = store.reviews(ticket_id)
    by = ""
    if reviews:
        last = reviews[-1]
        by = f" (decided by {last['reviewer']} at {last['decided_at']:%Y-%m-%d %H:%M:%S} UTC)"
    raise ConflictError(
        f"Ticket {ticket_id} is {status.value}, not pending_review{by}: "
        "only a pending draft can be reviewed, and only once."
    )


def _draft_text(record: StagedRecord) -> str:
    draft = record.draft or {}
    return str(draft.get("answer") or " ".join(str(s["text"]) for s in draft["sentences"]))


def check_reviewer(name: str) -> str:
    who = name.strip()
    if not who:
        raise UserError("A decision needs the reviewer's name.")
    if len(who) > MAX_REVIEWER_CHARS:
        raise UserError(f"A reviewer's name is at most {MAX_REVIEWER_CHARS} characters.")
    return who


def _check_length(text: str, what: str) -> None:
    if len(text) > MAX_TEXT_CHARS:
        raise UserError(f"{what} is {len(text)} characters; at most {MAX_TEXT_CHARS} are kept.")
