"""The evidence gate: is what retrieval found enough to draft from? If not, how to search again.

Drafting from weak evidence wastes a model call and a reviewer's time, so the gate decides from
retrieval signals alone, always judged against the *ticket* (its subject and questions), never
against a reformulated query, so a retry can find better passages but cannot talk the gate
into them.

With dense embeddings the deciding number is the **similarity** of the ticket to the closest
passage found (cosine, MiniLM). The gate also reports the fused score of the best hit, its
margin over the next document, whether BM25 and dense agree on it, and rarity-weighted
coverage of the ticket's key terms; ``bench/evidence_calibration.py`` measured all of them on
the demo eval set against out-of-scope questions, and similarity alone separated the two best
(docs/retrieval.md). Without embeddings the gate falls back to coverage.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from supportagent.domain import DocKind, EvidenceDecision, Hit, Passage, Ticket
from supportagent.retrieval.text import tokenize
from supportagent.sentences import strip_signature

#: Calibrated on the demo eval set (bench/evidence_calibration.py): cosine similarity of the
#: ticket to its closest passage.
DEFAULT_SIMILARITY_THRESHOLD = 0.38
#: Without embeddings: share of the ticket's idf-weighted key terms in the top passages.
DEFAULT_COVERAGE_THRESHOLD = 0.4
#: How many top passages count towards coverage.
TOP_PASSAGES = 3
#: Terms a reformulation may add from the resolved tickets it was shown.
EXPANSION_TERMS = 6

_WORD = re.compile(r"[^\W_]+(?:[-_.'\u2019][^\W_]+)*")


class EvidenceSource(Protocol):
    """What the gate asks of the knowledge base (``agent.knowledge.Knowledge`` has it)."""

    def idf(self, term: str) -> float: ...

    def similarity(self, text: str, passage_ids: Sequence[str]) -> list[float] | None:
        """Cosine of ``text`` to each passage; None when search has no dense signal."""
        ...


#: Within this distance of the threshold the signals cannot call it, and an engine that has
#: an evidence assessor (a model) is asked; elsewhere no call is spent.
AMBIGUITY_MARGIN = 0.04


def is_ambiguous(value: float, threshold: float, margin: float = AMBIGUITY_MARGIN) -> bool:
    """True when ``value`` is too close to ``threshold`` for the signals to decide (pure)."""
    return abs(value - threshold) < margin


@dataclass(frozen=True, slots=True)
class EvidenceGate:
    """Judges hits by the ticket's similarity to them (or, without embeddings, coverage).

    ``threshold`` overrides the calibrated default of whichever measure is in use.
    """

    threshold: float | None = None

    def assess(
        self,
        ticket: Ticket,
        hits: Sequence[Hit],
        query: str,
        attempt: int,
        source: EvidenceSource,
    ) -> EvidenceDecision:
        """Enough evidence to draft from, or not, and why."""
        return self.judge(ticket, hits, query, attempt, source)[0]

    def judge(
        self,
        ticket: Ticket,
        hits: Sequence[Hit],
        query: str,
        attempt: int,
        source: EvidenceSource,
    ) -> tuple[EvidenceDecision, dict[str, Any]]:
        """The decision and every signal behind it (for the trace)."""
        terms = key_terms(ticket)
        if not hits or not terms:
            reason = "no passages found" if not hits else "the ticket has no searchable terms"
            empty = {
                **dict.fromkeys(("similarity", "closest"), None),
                **dict.fromkeys(("fused", "margin", "coverage"), 0.0),
                "agree": False,
                "measure": "none",
                "threshold": self.threshold,
            }
            return EvidenceDecision(False, reason, 0.0, tuple(hits), query, attempt), empty
        signals = evidence_signals(ticket, hits, terms, source)
        dense = signals["similarity"] is not None
        measure = "similarity" if dense else "coverage"
        threshold = self.threshold
        if threshold is None:
            threshold = DEFAULT_SIMILARITY_THRESHOLD if dense else DEFAULT_COVERAGE_THRESHOLD
        value = float(signals[measure])
        sufficient = value >= threshold
        reason = f"{measure} {value:.2f} {'>=' if sufficient else '<'} threshold {threshold:.2f}"
        if dense:
            reason += f" (closest passage {signals['closest']})"
        missing = signals.pop("missing")
        if missing:
            reason += f"; terms found nowhere near the top: {', '.join(missing)}"
        detail = {**signals, "measure": measure, "threshold": threshold}
        decision = EvidenceDecision(
            sufficient, reason, round(value, 4), tuple(hits), query, attempt
        )
        return decision, detail


def signals_agree(hit: Hit) -> bool:
    """Both BM25 on bodies and dense search rank ``hit`` among their first three."""
    ranks = {name: signal.rank for name, signal in hit.signals.items()}
    return ranks.get("body", 99) <= 3 and ranks.get("dense", 99) <= 3


def evidence_signals(
    ticket: Ticket, hits: Sequence[Hit], terms: set[str], source: EvidenceSource
) -> dict[str, Any]:
    """Similarity, fused score, margin, agreement and coverage for a non-empty list of hits."""
    found: set[str] = set()
    for hit in hits[:TOP_PASSAGES]:
        found.update(_passage_terms(hit.passage.title, hit.passage.text))
    top = hits[0]
    runner_up = next((h.score for h in hits[1:] if h.passage.doc_id != top.passage.doc_id), 0.0)
    similarities = source.similarity(ticket_content(ticket), [h.id for h in hits])
    closest = None
    if similarities:
        best = max(range(len(hits)), key=lambda i: similarities[i])
        closest = hits[best].id
    return {
        "similarity": round(max(similarities), 4) if similarities else None,
        "closest": closest,
        "fused": round(top.score, 4),
        "margin": round(top.score - runner_up, 4),
        "agree": signals_agree(top),
        "coverage": round(weighted_coverage(terms, found, source.idf), 4),
        "missing": sorted(t for t in terms if t not in found)[:8],
    }


@functools.lru_cache(maxsize=4096)
def _passage_terms(title: str, text: str) -> frozenset[str]:
    """A passage's terms; the same passages come back ticket after ticket."""
    return frozenset(tokenize(title + " " + text))


def weighted_coverage(terms: set[str], found: set[str], idf: Callable[[str], float]) -> float:
    """Share of ``terms`` in ``found``, each weighted by ``idf`` (pure)."""
    weights = {t: max(idf(t), 0.0) for t in terms}
    total = sum(weights.values())
    if total <= 0:
        return 0.0
    return sum(w for t, w in weights.items() if t in found) / total


def key_terms(ticket: Ticket) -> set[str]:
    """The terms that say what a ticket is about: subject plus its questions, else the body."""
    return set(tokenize(focused_query(ticket)))


def ticket_content(ticket: Ticket) -> str:
    """Subject and body without greetings and sign-off: what the ticket is about, in full."""
    body = strip_signature(ticket.body)
    return ticket.subject if body == ticket.subject else f"{ticket.subject}\n{body}".strip()


def focused_query(ticket: Ticket) -> str:
    """The subject and the sentences that ask something, without greetings and sign-offs."""
    body = strip_signature(ticket.body)
    sentences = re.split(r"(?<=[.!?])\s+|\n+", body)
    asks = [s for s in sentences if s.strip().endswith("?")]
    return " ".join([ticket.subject, *(asks or [body])]).strip()


def drop_noise(text: str, known: Callable[[str], bool]) -> str:
    """``text`` with only the words whose every search token the corpus uses somewhere.

    Stopwords, greetings, names and words of another language that no article or resolved
    ticket contains cannot match anything; they only dilute the query.
    """
    kept = []
    for word in _WORD.findall(text):
        tokens = tokenize(word)
        if tokens and all(known(token) for token in tokens):
            kept.append(word)
    return " ".join(kept)


def expansion_terms(
    query: str,
    feedback: Sequence[Passage],
    known: Callable[[str], bool],
    idf: Callable[[str], float],
    limit: int = EXPANSION_TERMS,
) -> list[str]:
    """Words from resolved tickets that answered similar questions, rarest-and-most-used first.

    Resolved tickets put a customer's words next to the support team's, so the words their
    answers share are the vocabulary the articles use for the same thing.
    """
    have = set(tokenize(query))
    weight: dict[str, float] = {}
    surface: dict[str, str] = {}
    for passage in feedback:
        if passage.kind is not DocKind.RESOLVED:
            continue
        for word in _WORD.findall(passage.text):
            tokens = tokenize(word)
            # A compound ("UCS-2", "starting_after") counts as its whole, its last token.
            token = tokens[-1] if tokens else ""
            if not token or token in have or not known(token):
                continue
            weight[token] = weight.get(token, 0.0) + idf(token)
            surface.setdefault(token, word.lower())
    ranked = sorted(weight, key=lambda token: (-weight[token], token))
    return [surface[token] for token in ranked[:limit]]


def reformulate(
    ticket: Ticket,
    attempt: int,
    known: Callable[[str], bool] | None = None,
    idf: Callable[[str], float] | None = None,
    feedback: Sequence[Passage] = (),
) -> str | None:
    """The offline query for retry ``attempt`` (1-based), or None when there is nothing new.

    1: the focused query (subject and questions, no chatter); 2: the subject alone, which is
    often the customer's own summary. With ``known``, words the corpus never uses are dropped;
    with ``feedback`` (resolved tickets found for it), the query is expanded with up to
    ``EXPANSION_TERMS`` of their words.
    """
    if attempt == 1:
        base = focused_query(ticket)
    elif attempt == 2 and ticket.subject.strip():
        base = ticket.subject.strip()
    else:
        return None
    query = drop_noise(base, known) if known else base
    if known and idf and feedback:
        query = " ".join([query, *expansion_terms(query or base, feedback, known, idf)])
    query = " ".join(query.split())
    return query or None
