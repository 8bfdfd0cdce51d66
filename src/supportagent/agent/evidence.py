"""The evidence gate: is what retrieval found enough to draft from? If not, how to search again.

Drafting from weak evidence wastes a model call and a reviewer's time, so the gate decides from
retrieval signals alone. The signal is *coverage*: the share of the ticket's key terms that
appear in the top passages, each term weighted by how rare it is in the corpus. Retrieval always
returns something; coverage says whether that something is about the ticket.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from supportagent.domain import EvidenceDecision, Hit, Ticket
from supportagent.retrieval.text import tokenize

#: Default coverage threshold, calibrated on the demo inbox (see README, "Evidence gate").
DEFAULT_THRESHOLD = 0.4
#: How many top passages count towards coverage.
TOP_PASSAGES = 3

_GREETING = re.compile(
    r"^\s*(hi|hello|hey|dear|good (morning|afternoon|evening))\b[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)
_CLOSING = re.compile(
    r"^\s*(thanks|thank you|many thanks|cheers|regards|best|kind regards|best regards|"
    r"sincerely|sent from|groeten|saludos|gr(u|ü)(ß|ss)e|gruß|cordialement|mfg)\b|^\s*--\s*$",
    re.IGNORECASE,
)
#: A sign-off is looked for only this close to the end of a ticket.
_SIGNATURE_LINES = 6
#: A sign-off line is short ("Thanks,", "Kind regards, Ana"); a longer line is content.
_SIGN_OFF_WORDS = 4


@dataclass(frozen=True, slots=True)
class EvidenceGate:
    """Judges hits by rarity-weighted coverage of the ticket's key terms."""

    threshold: float = DEFAULT_THRESHOLD

    def assess(
        self,
        ticket: Ticket,
        hits: Sequence[Hit],
        query: str,
        attempt: int,
        idf: Callable[[str], float],
    ) -> EvidenceDecision:
        terms = key_terms(ticket)
        if not hits or not terms:
            reason = "no passages found" if not hits else "the ticket has no searchable terms"
            return EvidenceDecision(False, reason, 0.0, tuple(hits), query, attempt)
        found: set[str] = set()
        for hit in hits[:TOP_PASSAGES]:
            found.update(tokenize(hit.passage.title + " " + hit.passage.text))
        coverage = weighted_coverage(terms, found, idf)
        sufficient = coverage >= self.threshold
        missing = sorted(t for t in terms if t not in found)[:8]
        reason = (
            f"coverage {coverage:.2f} {'>=' if sufficient else '<'} threshold {self.threshold:.2f}"
            + (f"; missing terms: {', '.join(missing)}" if missing else "")
        )
        return EvidenceDecision(sufficient, reason, round(coverage, 4), tuple(hits), query, attempt)


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


def strip_signature(body: str) -> str:
    """The body without greetings and without the sign-off block (names, companies, titles)."""
    lines = body.splitlines()
    for i in range(len(lines) - 1, max(len(lines) - _SIGNATURE_LINES, 0) - 1, -1):
        if _CLOSING.match(lines[i]) and len(lines[i].split()) <= _SIGN_OFF_WORDS:
            lines = lines[:i]
            break
    return _GREETING.sub("", "\n".join(lines)).strip()


def focused_query(ticket: Ticket) -> str:
    """The subject and the sentences that ask something, without greetings and sign-offs."""
    body = strip_signature(ticket.body)
    sentences = re.split(r"(?<=[.!?])\s+|\n+", body)
    asks = [s for s in sentences if s.strip().endswith("?")]
    return " ".join([ticket.subject, *(asks or [body])]).strip()


def reformulate(ticket: Ticket, attempt: int) -> str | None:
    """The query for retry ``attempt`` (1-based), or None when there is nothing new to try.

    1: the focused query (subject and questions, no chatter). 2: the subject alone, which is
    often the customer's own summary.
    """
    if attempt == 1:
        return focused_query(ticket)
    if attempt == 2 and ticket.subject.strip():
        return ticket.subject.strip()
    return None
