"""Honest numbers about the agent's work, and the knowledge gaps its failures point to.

Stats count only what was recorded: a draft nobody has decided on yet is "pending", never an
approval, and the headline share is taken over decided drafts only. Gaps group the tickets that
the agent could not answer (escalated for weak evidence) or whose drafts reviewers rejected, and
show the articles nearest to each group, so a writer can see which article is missing.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from statistics import fmean
from typing import Any

import numpy as np

from supportagent.agent.knowledge import Knowledge
from supportagent.domain import DocKind, Status, Ticket
from supportagent.retrieval.text import tokenize
from supportagent.sentences import strip_signature
from supportagent.store.audit import read_reviews
from supportagent.store.store import Store

#: Cosine similarity (idf-weighted terms) at or above which two gap tickets share a gap.
GAP_SIMILARITY = 0.3
#: The most recent gap tickets considered (clustering is quadratic in their number).
MAX_GAP_TICKETS = 1000
NEAREST_ARTICLES = 3
GAP_TERMS = 6
_WEAK = "weak_evidence"
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class Stats:
    """What happened to every ticket, from the store's records."""

    tickets: int
    unhandled: int
    #: Drafts staged for review: decided plus still pending.
    drafted: int
    pending_review: int
    reviewed: int
    #: Approved as drafted (including amendments that changed nothing).
    approved_unedited: int
    approved_with_edits: int
    #: Mean over amendments with a measured edit; None when there are none.
    mean_edit_chars: float | None
    mean_edit_ratio: float | None
    rejected: int
    escalated: int
    escalated_by_reason: dict[str, int]
    routed: int
    routed_by_reason: dict[str, int]
    handed_off: int
    #: The headline: approved_unedited / reviewed; None until a draft has been decided.
    unedited_share: float | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class GapTicket:
    ticket_id: str
    subject: str
    #: ``weak_evidence`` (escalated before drafting) or ``rejected`` (by a reviewer).
    why: str
    #: The rejection reason, or empty.
    detail: str = ""


@dataclass(frozen=True, slots=True)
class NearestArticle:
    doc_id: str
    title: str
    passage_id: str
    score: float


@dataclass(frozen=True, slots=True)
class Gap:
    """Tickets about one missing or weak article."""

    terms: tuple[str, ...]
    tickets: tuple[GapTicket, ...]
    nearest: tuple[NearestArticle, ...] = field(default=())

    @property
    def size(self) -> int:
        return len(self.tickets)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["size"] = self.size
        return data


def compute_stats(store: Store) -> Stats:
    """Counts by outcome and by reviewer decision; see :class:`Stats`."""
    counts = store.status_counts()
    reviews = read_reviews(store.engine)
    decisions = Counter(str(r["decision"]) for r in reviews)
    amended = [r for r in reviews if r["decision"] == "amend"]
    # An amendment that changed nothing is an unedited approval; one from before edits were
    # measured (edit_chars unknown) counts as edited, outside the mean.
    unedited = [r for r in amended if r["edit_chars"] == 0]
    edited = [r for r in amended if r["edit_chars"] != 0]
    measured = [r for r in edited if r["edit_chars"] is not None]
    escalated: Counter[str] = Counter()
    routed: Counter[str] = Counter()
    for record in store.staged():
        if record.status is Status.ESCALATED:
            escalated[record.reason_code] += 1
        elif record.status is Status.ROUTED:
            routed[record.reason_code] += 1
    approved_unedited = decisions["approve"] + len(unedited)
    pending = counts.get(Status.PENDING_REVIEW.value, 0)
    return Stats(
        tickets=sum(counts.values()),
        unhandled=counts.get(Status.NEW.value, 0) + counts.get(Status.IN_PROGRESS.value, 0),
        drafted=len(reviews) + pending,
        pending_review=pending,
        reviewed=len(reviews),
        approved_unedited=approved_unedited,
        approved_with_edits=len(edited),
        mean_edit_chars=round(fmean(r["edit_chars"] for r in measured), 1) if measured else None,
        mean_edit_ratio=(
            round(fmean(r["edit_ratio"] or 0.0 for r in measured), 4) if measured else None
        ),
        rejected=decisions["reject"],
        escalated=sum(escalated.values()),
        escalated_by_reason=dict(sorted(escalated.items(), key=lambda kv: (-kv[1], kv[0]))),
        routed=sum(routed.values()),
        routed_by_reason=dict(sorted(routed.items(), key=lambda kv: (-kv[1], kv[0]))),
        handed_off=counts.get(Status.HANDED_OFF.value, 0),
        unedited_share=round(approved_unedited / len(reviews), 4) if reviews else None,
    )


def find_gaps(store: Store, knowledge: Knowledge) -> list[Gap]:
    """Weak-evidence escalations and rejected drafts, grouped by topic, largest group first."""
    members = _gap_tickets(store)[-MAX_GAP_TICKETS:]
    if not members:
        return []
    # Without greetings and sign-offs: a customer's name says nothing about the missing article.
    texts = [f"{t.subject}\n{strip_signature(t.body)}".strip() for t, _ in members]
    groups = cluster(texts, knowledge.idf)
    gaps = []
    for group in groups:
        group_texts = [texts[i] for i in group]
        gaps.append(
            Gap(
                terms=key_terms(group_texts, knowledge.idf),
                tickets=tuple(members[i][1] for i in group),
                nearest=_nearest(knowledge, group_texts),
            )
        )
    return sorted(gaps, key=lambda g: (-g.size, g.tickets[0].ticket_id))


def cluster(texts: Sequence[str], idf: Callable[[str], float]) -> list[list[int]]:
    """Group texts whose idf-weighted term vectors have cosine >= GAP_SIMILARITY (single link).

    Returns groups of indices, each in input order, groups ordered by their first member.
    """
    vectors = [_weights(text, idf) for text in texts]
    vocabulary = {term: i for i, term in enumerate(sorted({t for v in vectors for t in v}))}
    matrix = np.zeros((len(texts), max(len(vocabulary), 1)))
    for row, vector in enumerate(vectors):
        for term, weight in vector.items():
            matrix[row, vocabulary[term]] = weight
    norms = np.linalg.norm(matrix, axis=1)
    norms[norms == 0] = 1.0
    unit = matrix / norms[:, None]
    similar = unit @ unit.T >= GAP_SIMILARITY
    parent = list(range(len(texts)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(*np.nonzero(np.triu(similar, k=1)), strict=True):
        a, b = root(int(i)), root(int(j))
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(len(texts)):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def key_terms(
    texts: Sequence[str], idf: Callable[[str], float], n: int = GAP_TERMS
) -> tuple[str, ...]:
    """The ``n`` terms that weigh most across ``texts``, spelled as the tickets spell them."""
    total: dict[str, float] = {}
    spelling: dict[str, Counter[str]] = {}
    for text in texts:
        for term, weight in _weights(text, idf).items():
            total[term] = total.get(term, 0.0) + weight
        for word in _WORD.findall(text.lower()):
            for term in tokenize(word):
                spelling.setdefault(term, Counter())[word] += 1
    ranked = sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    return tuple(
        spelling[term].most_common(1)[0][0] if term in spelling else term for term, _ in ranked
    )


def _weights(text: str, idf: Callable[[str], float]) -> dict[str, float]:
    counts = Counter(tokenize(text))
    return {term: (1.0 + math.log(c)) * idf(term) for term, c in counts.items()}


def _gap_tickets(store: Store) -> list[tuple[Ticket, GapTicket]]:
    """Tickets escalated for weak evidence or whose draft was rejected, oldest event first."""
    found: dict[str, tuple[Any, Ticket, GapTicket]] = {}
    records = {r.ticket.id: r for r in store.staged()}
    for record in records.values():
        if record.status is Status.ESCALATED and record.reason_code == _WEAK:
            ticket = record.ticket
            found[ticket.id] = (
                record.staged_at,
                ticket,
                GapTicket(ticket.id, ticket.subject, _WEAK),
            )
    for review in read_reviews(store.engine):
        found_record = records.get(str(review["ticket_id"]))
        if review["decision"] == "reject" and found_record is not None:
            ticket = found_record.ticket
            gap = GapTicket(ticket.id, ticket.subject, "rejected", str(review["reason"] or ""))
            found[ticket.id] = (review["decided_at"], ticket, gap)
    ordered = sorted(found.values(), key=lambda item: (item[0], item[1].id))
    return [(ticket, gap) for _, ticket, gap in ordered]


def _nearest(knowledge: Knowledge, texts: Sequence[str]) -> tuple[NearestArticle, ...]:
    query = "\n".join(texts)[:4000]
    hits = knowledge.search(query, k=NEAREST_ARTICLES * 4, kinds={DocKind.KB})
    nearest: dict[str, NearestArticle] = {}
    for hit in hits:
        doc_id = hit.passage.doc_id
        if doc_id not in nearest and len(nearest) < NEAREST_ARTICLES:
            nearest[doc_id] = NearestArticle(doc_id, hit.passage.title, hit.id, round(hit.score, 6))
    return tuple(nearest.values())
