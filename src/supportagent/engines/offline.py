"""The built-in engine: rule classifier, extractive drafter, relevance checker. No model, no key.

It is instant and deterministic, and honest about what it is: the drafter only ever copies
whole sentences out of the evidence and cites each one, so a draft can be no better than the
evidence it was given.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from supportagent.domain import (
    Classification,
    DocKind,
    Draft,
    DraftSentence,
    Hit,
    Passage,
    Problem,
    SafetyResult,
    Ticket,
    ToolRequest,
    Verdict,
    resolved_answer,
)
from supportagent.engines.classifier import classify_by_rules
from supportagent.retrieval.text import tokenize

#: How many evidence sentences a draft may quote.
MAX_SENTENCES = 3
#: A sentence must share at least this share of the ticket's (idf-weighted) terms to be quoted.
MIN_SENTENCE_SCORE = 0.12
#: The checker's floor: share of the ticket's terms the whole draft must touch.
MIN_DRAFT_RELEVANCE = 0.15

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_FENCE = re.compile(r"^\s*```")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# Sentences about the document itself answer nothing ("This article lists ...").
_SIGNPOST = re.compile(r"^(this|the following) (article|page|guide|section|document)\b", re.I)


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage, skipping headings and code blocks; list items count as one each."""
    sentences: list[str] = []
    in_code = False
    for paragraph in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        for line in paragraph.splitlines():
            if _FENCE.match(line):
                in_code = not in_code
                continue
            if in_code or _HEADING.match(line) or line.lstrip().startswith("|"):
                continue
            if _LIST_MARK.match(line):
                if lines:
                    sentences.extend(_SENTENCE_END.split(" ".join(lines)))
                    lines = []
                sentences.append(_LIST_MARK.sub("", line).strip())
                continue
            lines.append(line.strip())
        if lines:
            sentences.extend(_SENTENCE_END.split(" ".join(lines)))
    return [s.strip() for s in sentences if len(s.strip()) > 1]


@dataclass(frozen=True, slots=True)
class _Candidate:
    text: str
    passage_id: str
    hit_rank: int
    position: int
    score: float


class OfflineEngine:
    """Rules to classify, sentence extraction to draft, term coverage to check relevance."""

    name = "offline"

    def __init__(self, *, demo_forbidden_post: bool = False) -> None:
        # The demo makes the drafter ask for a tool it must never get, to show the gate.
        self.demo_forbidden_post = demo_forbidden_post

    def classify(self, ticket: Ticket, safety: SafetyResult) -> Classification:
        return classify_by_rules(ticket, safety)

    def draft(
        self,
        ticket: Ticket,
        evidence: Sequence[Hit],
        previous: Draft | None = None,
        verdict: Verdict | None = None,
    ) -> Draft:
        excluded = _sentences_to_drop(previous, verdict)
        kept_conflicts = _conflicted_sentences(previous, verdict)
        candidates = [
            c
            for c in _candidates(ticket, evidence)
            if c.text not in excluded or c.text in kept_conflicts
        ]
        chosen = _choose(candidates)
        # Show reviewers the passages in the order the evidence ranks them, as written.
        chosen.sort(key=lambda c: (c.hit_rank, c.position))
        sentences = tuple(DraftSentence(c.text, (c.passage_id,)) for c in chosen)
        requests: tuple[ToolRequest, ...] = ()
        if self.demo_forbidden_post and previous is None:
            requests = (
                ToolRequest("post_to_customer", {"ticket_id": ticket.id, "text": "(draft)"}),
            )
        confidence = _confidence(chosen)
        revision = previous.revision + 1 if previous is not None else 0
        return Draft(sentences, confidence, revision, requests)

    def check(self, ticket: Ticket, draft: Draft, evidence: Sequence[Hit]) -> Verdict:
        """The draft must touch enough of what the ticket asks to be worth a reviewer's time."""
        weights = _term_weights(ticket, evidence)
        drafted = {tok for s in draft.sentences for tok in tokenize(s.text)}
        relevance = _coverage(weights, drafted)
        if relevance < MIN_DRAFT_RELEVANCE:
            problem = Problem(
                "off_topic",
                f"The draft covers {relevance:.0%} of the ticket's key terms "
                f"(needs {MIN_DRAFT_RELEVANCE:.0%}).",
            )
            return Verdict(False, (problem,), checker="offline-relevance")
        return Verdict(True, (), checker="offline-relevance")


def _term_weights(ticket: Ticket, evidence: Sequence[Hit]) -> dict[str, float]:
    """Ticket terms found in the evidence, weighted by rarity across its passages."""
    terms = set(tokenize(ticket.text))
    passages = [set(tokenize(h.passage.text)) for h in evidence]
    n = max(len(passages), 1)
    weights = {}
    for term in terms:
        df = sum(1 for p in passages if term in p)
        if df:  # a term no passage uses cannot be quoted, so it must not dilute the score
            weights[term] = math.log(1 + (n + 1) / (df + 0.5))
    return weights


def _coverage(weights: dict[str, float], tokens: set[str]) -> float:
    total = sum(weights.values())
    if total == 0:
        return 0.0
    return sum(w for term, w in weights.items() if term in tokens) / total


def _candidates(ticket: Ticket, evidence: Sequence[Hit]) -> list[_Candidate]:
    weights = _term_weights(ticket, evidence)
    out = []
    for hit in evidence:
        prior = 1.0 / (1.0 + 0.15 * (hit.rank - 1))
        for position, sentence in enumerate(split_sentences(_answer_part(hit.passage))):
            if sentence.endswith("?") or len(sentence) < 20 or _SIGNPOST.match(sentence):
                continue
            score = _coverage(weights, set(tokenize(sentence))) * prior
            if score >= MIN_SENTENCE_SCORE:
                out.append(_Candidate(sentence, hit.passage.id, hit.rank, position, score))
    return out


def _answer_part(passage: Passage) -> str:
    """The text a drafter may quote: for a resolved ticket, the answer and not the question."""
    return resolved_answer(passage.text) if passage.kind is DocKind.RESOLVED else passage.text


def _choose(candidates: list[_Candidate]) -> list[_Candidate]:
    """Best sentences first, skipping near-repeats of one already chosen."""
    chosen: list[_Candidate] = []
    seen_tokens: list[set[str]] = []
    for cand in sorted(candidates, key=lambda c: (-c.score, c.hit_rank, c.position)):
        tokens = set(tokenize(cand.text))
        if any(len(tokens & s) / max(len(tokens | s), 1) > 0.7 for s in seen_tokens):
            continue
        chosen.append(cand)
        seen_tokens.append(tokens)
        if len(chosen) == MAX_SENTENCES:
            break
    return chosen


def _confidence(chosen: Sequence[_Candidate]) -> float:
    if not chosen:
        return 0.0
    return round(min(1.0, max(c.score for c in chosen) * 1.5), 3)


def _sentences_to_drop(previous: Draft | None, verdict: Verdict | None) -> set[str]:
    """Sentences the checker objected to, which a revision must not quote again."""
    if previous is None or verdict is None:
        return set()
    drop: set[str] = set()
    for problem in verdict.problems:
        if problem.sentence is None:
            # A whole-draft problem (off topic): none of these sentences did the job.
            drop.update(s.text for s in previous.sentences)
        elif 0 <= problem.sentence < len(previous.sentences):
            drop.add(previous.sentences[problem.sentence].text)
    return drop


def _conflicted_sentences(previous: Draft | None, verdict: Verdict | None) -> set[str]:
    """Sentences flagged only because the evidence contradicts itself.

    Dropping them would hide the contradiction from the reviewer, so the drafter keeps them;
    the pipeline then sees an unchanged draft and escalates with the checker's reason.
    """
    if previous is None or verdict is None:
        return set()
    return {
        previous.sentences[p.sentence].text
        for p in verdict.problems
        if p.code == "conflicting_evidence"
        and p.sentence is not None
        and 0 <= p.sentence < len(previous.sentences)
    }
