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

from supportagent.agent.evidence import EvidenceGate
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
#: Passages searched when asking whether an article covers a rejected ticket (the pipeline's k).
EVIDENCE_HITS = 6
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
    #: What the gap is about: the nearest article's title when it is close, else a key phrase.
    topic: str = ""
    #: ``article`` or ``phrase``: where ``topic`` came from.
    topic_from: str = "phrase"

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


@dataclass(frozen=True, slots=True)
class MissedTicket:
    """A rejected draft for which an article exists: the drafter missed it, no gap."""

    ticket_id: str
    subject: str
    detail: str
    article: NearestArticle
    #: The evidence gate's measure today (similarity, or coverage without embeddings).
    measure: str
    value: float


@dataclass(frozen=True, slots=True)
class GapReport:
    gaps: list[Gap]
    missed: list[MissedTicket]

    def to_json(self) -> dict[str, Any]:
        return {
            "gaps": [g.to_json() for g in self.gaps],
            "missed": [asdict(m) for m in self.missed],
        }


def find_gaps(store: Store, knowledge: Knowledge, threshold: float | None = None) -> list[Gap]:
    """Weak-evidence escalations and rejected drafts no article covers, grouped by topic."""
    return knowledge_gaps(store, knowledge, threshold).gaps


def knowledge_gaps(store: Store, knowledge: Knowledge, threshold: float | None = None) -> GapReport:
    """Gaps (largest first) and the rejected drafts whose article exists (the drafter missed).

    ``threshold``: the evidence gate's, as the agent runs with it (None: the calibrated one).
    A rejected draft counts as missed when the gate, asked today about its ticket, finds
    enough evidence: an article covers the question, so the failure was the drafter's.
    """
    members, missed = [], []
    gate = EvidenceGate(threshold)
    for ticket, gap_ticket in _gap_tickets(store)[-MAX_GAP_TICKETS:]:
        found = _covered(gate, knowledge, ticket) if gap_ticket.why == "rejected" else None
        if found is None:
            members.append((ticket, gap_ticket))
        else:
            article, measure, value = found
            missed.append(
                MissedTicket(ticket.id, ticket.subject, gap_ticket.detail, article, measure, value)
            )
    if not members:
        return GapReport([], missed)
    # Without greetings, sign-offs and the customer's own name: none of them says anything
    # about the missing article.
    texts = [_topic_text(t) for t, _ in members]
    groups = cluster(texts, knowledge.idf)
    gaps = []
    for group in groups:
        group_texts = [texts[i] for i in group]
        nearest = _nearest(knowledge, group_texts)
        topic, source = _topic(knowledge, [members[i][0] for i in group], group_texts, nearest)
        gaps.append(
            Gap(
                terms=key_terms(group_texts, knowledge.idf),
                tickets=tuple(members[i][1] for i in group),
                nearest=nearest,
                topic=topic,
                topic_from=source,
            )
        )
    return GapReport(sorted(gaps, key=lambda g: (-g.size, g.tickets[0].ticket_id)), missed)


#: Cosine similarity of a gap's tickets to an article at or above which the gap is named after
#: that article ("near: Rate limits and the 429 response").
NAMING_SIMILARITY = 0.3
#: Words of a key phrase, at most.
PHRASE_WORDS = 4


def _topic_text(ticket: Ticket) -> str:
    body = strip_signature(ticket.body)
    lines = body.splitlines()
    # A last line of one to three capitalised words, or "- Name", is a signature, not content.
    while lines and _is_signature_line(lines[-1]):
        lines.pop()
    return f"{ticket.subject}\n" + "\n".join(lines)


def _is_signature_line(line: str) -> bool:
    words = line.strip().lstrip("-\u2013\u2014~ ").split()
    return 0 < len(words) <= 3 and all(w[:1].isupper() for w in words)


def _topic(
    knowledge: Knowledge,
    tickets: Sequence[Ticket],
    texts: Sequence[str],
    nearest: Sequence[NearestArticle],
) -> tuple[str, str]:
    """The gap's name: its nearest article's title when close enough, else a key phrase."""
    if nearest:
        similarity = knowledge.similarity("\n".join(texts)[:4000], [nearest[0].passage_id])
        if similarity and similarity[0] >= NAMING_SIMILARITY:
            return nearest[0].title, "article"
    return key_phrase(tickets, knowledge.idf), "phrase"


def key_phrase(
    tickets: Sequence[Ticket], idf: Callable[[str], float], n: int = PHRASE_WORDS
) -> str:
    """The rarest content words of the subjects, in the order a subject uses them.

    Never a stop word, and never a word of the customer's name or company.
    """
    own = {w for t in tickets for w in _WORD.findall((t.customer or "").lower())}
    weights: dict[str, float] = {}
    order: dict[str, int] = {}
    for ticket in tickets:
        for position, word in enumerate(_WORD.findall(ticket.subject.lower())):
            if word in own or not tokenize(word) or word.isdigit():
                continue
            weights[word] = weights.get(word, 0.0) + idf(tokenize(word)[0])
            order.setdefault(word, position)
    chosen = sorted(weights, key=lambda w: (-weights[w], w))[:n]
    return " ".join(sorted(chosen, key=lambda w: order[w])) or "(no subject)"


def _covered(
    gate: EvidenceGate, knowledge: Knowledge, ticket: Ticket
) -> tuple[NearestArticle, str, float] | None:
    """The article the evidence gate would draft from today, or None when there is none."""
    hits = knowledge.search(ticket.text, k=EVIDENCE_HITS)
    decision, detail = gate.judge(ticket, hits, ticket.text, 0, knowledge)
    if not decision.sufficient or not hits:
        return None
    closest = str(detail.get("closest") or hits[0].id)
    hit = next((h for h in hits if h.id == closest), hits[0])
    article = NearestArticle(hit.passage.doc_id, hit.passage.title, hit.id, round(hit.score, 6))
    return article, str(detail.get("measure")), round(decision.top_score, 4)


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
