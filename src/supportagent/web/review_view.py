"""A pending draft as the review page shows it: claims and verdicts, evidence, confidences.

Pure functions over a staged record and its trace. Passage texts come through a lookup
function, so nothing here touches the store or the index.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from supportagent.domain import Passage
from supportagent.review import effect_sentence, plain_draft
from supportagent.store import tables as t
from supportagent.store.audit import review_extras
from supportagent.store.store import StagedRecord, Store
from supportagent.web.meters import Meter, review_meters

_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
#: Share of a claim's words a passage sentence must hold to count as its source.
MIN_OVERLAP = 0.5


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of passage text; ``claim`` is the 0-based draft sentence it supports, if any."""

    text: str
    claim: int | None = None


@dataclass(frozen=True, slots=True)
class EvidencePassage:
    id: str
    title: str
    kind: str
    rank: int | None
    score: float | None
    signals: Mapping[str, Any]
    segments: tuple[Segment, ...]
    cited_by: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Claim:
    index: int
    text: str
    citations: tuple[str, ...]
    problems: tuple[str, ...]

    @property
    def supported(self) -> bool:
        return not self.problems


@dataclass(frozen=True, slots=True)
class ValuePair:
    first: str
    second: str
    values: tuple[str, ...]
    #: The other source's passage, when the draft stated one value alone.
    source: str | None = None


def _value_pairs(detail: Mapping[str, Any] | None) -> tuple[ValuePair, ...]:
    pairs = []
    for pair in (detail or {}).get("pairs", []):
        if isinstance(pair, Mapping):
            source = pair.get("source")
            pairs.append(
                ValuePair(
                    str(pair.get("first", "")),
                    str(pair.get("second", "")),
                    tuple(str(v) for v in pair.get("values", [])),
                    str(source) if source else None,
                )
            )
    return tuple(pairs)


@dataclass(frozen=True, slots=True)
class ReviewItem:
    record: StagedRecord
    claims: tuple[Claim, ...]
    general_problems: tuple[str, ...]
    checker: str | None
    #: A model checker's own claims, each with the passage that supports it (None: nothing).
    checker_claims: tuple[tuple[str, str | None], ...]
    evidence: tuple[EvidencePassage, ...]
    meters: tuple[Meter, ...]
    plain_answer: str
    #: What the reviewer must confirm (``scoped_exception``, ``differing_values``, ...).
    flags: tuple[str, ...] = ()
    #: Two sources' differing values (the trace's ``values`` step): the draft's or a quoted
    #: sentence, the other source's sentence, and the two values.
    value_pairs: tuple[ValuePair, ...] = ()


def _spans_of(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` sits in ``text``: verbatim, then up to spacing, then the best sentence."""
    quote = quote.strip()
    if not quote:
        return None
    at = text.find(quote)
    if at >= 0:
        return at, at + len(quote)
    words = _WORD.findall(quote)
    if words:
        loose = re.compile(r"\W+".join(re.escape(w) for w in words), re.IGNORECASE)
        found = loose.search(text)
        if found:
            return found.start(), found.end()
    wanted = {w.lower() for w in words}
    best: tuple[float, int, int] | None = None
    start = 0
    for piece in _SENTENCE_END.split(text):
        begin = text.find(piece, start)
        start = begin + len(piece)
        have = {w.lower() for w in _WORD.findall(piece)}
        if not have or not wanted:
            continue
        overlap = len(wanted & have) / len(wanted)
        if overlap >= MIN_OVERLAP and (best is None or overlap > best[0]):
            best = (overlap, begin, begin + len(piece))
    return (best[1], best[2]) if best else None


def highlight(text: str, quotes: Sequence[tuple[int, str]]) -> tuple[Segment, ...]:
    """Split ``text`` into plain and highlighted runs, one highlight per claim it supports."""
    spans: list[tuple[int, int, int]] = []
    for claim, quote in quotes:
        found = _spans_of(text, quote)
        if found and not any(s < found[1] and found[0] < e for s, e, _ in spans):
            spans.append((found[0], found[1], claim))
    segments: list[Segment] = []
    cursor = 0
    for start, end, claim in sorted(spans):
        if start > cursor:
            segments.append(Segment(text[cursor:start]))
        segments.append(Segment(text[start:end], claim))
        cursor = end
    if cursor < len(text):
        segments.append(Segment(text[cursor:]))
    return tuple(segments)


def _last(events: Sequence[Mapping[str, Any]], stage: str) -> Mapping[str, Any] | None:
    for event in reversed(events):
        if event.get("stage") == stage:
            detail = event.get("detail")
            return detail if isinstance(detail, Mapping) else {}
    return None


def review_item(
    record: StagedRecord,
    events: Sequence[Mapping[str, Any]],
    lookup: Callable[[str], Passage | None],
) -> ReviewItem:
    """Everything a reviewer needs to judge ``record``'s draft, from its latest trace."""
    draft = record.draft or {}
    sentences = [s for s in draft.get("sentences", []) if isinstance(s, Mapping)]
    check = _last(events, "check") or {}
    by_sentence: dict[int | None, list[str]] = {}
    for problem in check.get("problems", []):
        by_sentence.setdefault(problem.get("sentence"), []).append(str(problem.get("message")))
    claims = tuple(
        Claim(
            i, str(s.get("text", "")), tuple(s.get("citations", [])), tuple(by_sentence.get(i, []))
        )
        for i, s in enumerate(sentences)
    )
    cited: dict[str, list[int]] = {}
    for claim in claims:
        for citation in claim.citations:
            cited.setdefault(citation, []).append(claim.index)
    retrieve = _last(events, "retrieve") or {}
    hits = {str(h.get("id")): h for h in retrieve.get("hits", []) if isinstance(h, Mapping)}
    order = list(hits) + [c for c in cited if c not in hits]
    evidence = []
    for passage_id in order:
        hit = hits.get(passage_id, {})
        passage = lookup(passage_id)
        quotes = [(i, claims[i].text) for i in cited.get(passage_id, [])]
        evidence.append(
            EvidencePassage(
                id=passage_id,
                title=passage.title if passage else str(hit.get("title", "")),
                kind=str(passage.kind) if passage else str(hit.get("kind", "")),
                rank=hit.get("rank"),
                score=hit.get("score"),
                signals=hit.get("signals", {}),
                segments=highlight(passage.text, quotes) if passage else (),
                cited_by=tuple(cited.get(passage_id, [])),
            )
        )
    classify = _last(events, "classify") or {}
    gate = _last(events, "evidence") or {}
    return ReviewItem(
        record=record,
        claims=claims,
        general_problems=tuple(by_sentence.get(None, [])),
        checker=check.get("checker"),
        checker_claims=tuple(
            (str(c[0]), str(c[1]) if c[1] else None)
            for c in check.get("claims", [])
            if isinstance(c, list | tuple) and len(c) == 2
        ),
        evidence=tuple(evidence),
        meters=review_meters(classify, gate, draft, record.engine),
        plain_answer=plain_draft(record),
        flags=tuple(str(f) for f in draft.get("flags", [])),
        value_pairs=_value_pairs(_last(events, "values")),
    )


def queue_order(records: Sequence[StagedRecord]) -> list[StagedRecord]:
    """Most urgent first, then first come first served (the store lists newest first)."""
    return sorted(reversed(records), key=lambda r: -r.ticket.priority)


def next_after(ids: Sequence[str], current: str) -> str | None:
    """The draft to show once ``current`` is decided: the one after it, else the one before."""
    if current not in ids:
        return ids[0] if ids else None
    at = ids.index(current)
    rest = [*ids[at + 1 :], *reversed(ids[:at])]
    return rest[0] if rest else None


def decision_effect(store: Store, ticket_id: str) -> str | None:
    """What the latest decision on ``ticket_id`` did, read from the store (not the URL)."""
    extras = review_extras.alias("extras")
    query = (
        sa.select(t.reviews.c.decision, t.reviews.c.resolved_doc_id, extras.c.resolved_added)
        .join(extras, extras.c.id == t.reviews.c.id)
        .where(t.reviews.c.ticket_id == ticket_id)
        .order_by(t.reviews.c.id.desc())
        .limit(1)
    )
    with store.engine.connect() as conn:
        row = conn.execute(query).first()
    if row is None:
        return None
    return effect_sentence(ticket_id, row.decision, row.resolved_doc_id, row.resolved_added)
