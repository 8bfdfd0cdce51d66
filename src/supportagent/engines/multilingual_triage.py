"""The classifier's route for a ticket in another language: the triage exemplars, read by the
multilingual model.

The triage model reads MiniLM vectors, which only mean something in English. A ticket
reliably in another language is instead compared with the triage exemplars (about a fifth of
them written in Spanish, German, French, Portuguese and Italian) under multilingual-e5: the
whole ticket for what kind of message it is, and each sentence for a request about one
charge or one account, which may sit in a single sentence of a longer question. It decides one
thing only, the one that must not be missed: a request about the writer's own money or
account. When the ticket's (or one sentence's) nearest exemplars are a money or account
request and beat every harmless class by ``MONEY_MARGIN``, it goes to a person as
``money_specific`` or ``account_specific``; a closer call escalates as ``uncertain``, with
the scores. Anything else is left to the language gate (offline) or the model in the
ticket's language (llm): nearest exemplars also sent a German question about waiting after a
429 to "outage" and a Spanish self-harm ticket to "bug report", and routing either away
would fail open.

The two constants were chosen on the non-English tickets of our risk set and Brightwrench
that reach the classifier (tune; docs/triage.md).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

from supportagent.domain import Bucket, Classification, Ticket
from supportagent.retrieval.exemplars import ExemplarIndex, load_exemplars
from supportagent.sentences import ticket_sentences

#: The exemplar classes that name one charge or one account of the writer's own.
SPECIFIC = ("money_specific", "account_specific")
#: A sentence's score for a specific request counts this much less than the whole ticket's:
#: one sentence matches an exemplar more easily than a whole ticket does.
SENTENCE_DISCOUNT = 0.02
#: How far a specific request must beat the nearest harmless class to be decided as one.
MONEY_MARGIN = 0.01
CONFIDENCE = 0.6


def decide(
    scores: Mapping[str, float], buckets: Mapping[str, Bucket], language: str
) -> Classification | None:
    """A money or account decision from per-class scores (``SPECIFIC`` already the better of
    the whole ticket and its sentences), or None when the nearest class is another."""
    best = max(scores, key=lambda label: scores[label])
    if best not in SPECIFIC:
        return None
    shown = ", ".join(f"{label} {value:.2f}" for label, value in sorted(scores.items()))
    where = f"nearest exemplars under the multilingual model, ticket in {language}"
    harmless = max(v for k, v in scores.items() if buckets[k] is not Bucket.NEEDS_HUMAN)
    if scores[best] - harmless < MONEY_MARGIN:
        reason = f"a request about one charge or account, not clearly ({where}: {shown})"
        return Classification(Bucket.NEEDS_HUMAN, "uncertain", reason, CONFIDENCE, "model")
    reason = f"reads as {best.replace('_', ' ')} ({where}: {shown})"
    return Classification(Bucket.NEEDS_HUMAN, best, reason, CONFIDENCE, "model")


class MultilingualTriage:
    """Buckets a non-English ticket by its nearest triage exemplars under one embedder."""

    def __init__(self, index: ExemplarIndex, buckets: Mapping[str, Bucket]) -> None:
        self.index = index
        self.buckets = dict(buckets)

    def scores(self, ticket: Ticket) -> dict[str, float]:
        units = [ticket.text, *ticket_sentences(ticket)]
        by_label = self.index.label_scores(self.index.similarities(self.index.embed(units)))
        out = {label: float(values[0]) for label, values in by_label.items()}
        for label in SPECIFIC:
            if label in by_label and len(by_label[label]) > 1:
                sentence = float(by_label[label][1:].max()) - SENTENCE_DISCOUNT
                out[label] = max(out[label], sentence)
        return {label: v for label, v in out.items() if label in self.buckets}

    def classify(self, ticket: Ticket, language: str) -> Classification | None:
        return decide(self.scores(ticket), self.buckets, language)


@functools.cache
def default_multilingual_triage() -> MultilingualTriage | None:
    """The route over the shipped triage exemplars, or None when multilingual-e5 is not
    installed (then a non-English ticket stays with the rules and the language gate)."""
    from supportagent.engines.classifier import EXEMPLAR_BUCKETS
    from supportagent.retrieval.multilingual import MultilingualE5, multilingual_available

    if not multilingual_available():
        return None
    return MultilingualTriage(
        ExemplarIndex(load_exemplars("triage"), MultilingualE5()), EXEMPLAR_BUCKETS
    )
