"""What the offline drafter's tests share: evidence ranked as given, and the sentences a draft
quotes from it (with the shipped MiniLM model, as the pipeline gives the drafter)."""

from __future__ import annotations

from functools import cache

from supportagent.domain import Hit, Passage, Ticket
from supportagent.engines.offline import OfflineEngine
from supportagent.retrieval.dense import OnnxMiniLM


@cache
def minilm() -> OnnxMiniLM:
    return OnnxMiniLM()


def hits(*passages: Passage) -> list[Hit]:
    """The passages as retrieval hits, ranked in the order given."""
    return [Hit(p, rank, 1.0 / rank) for rank, p in enumerate(passages, start=1)]


def quoted(subject: str, body: str, *passages: Passage) -> list[str]:
    """The sentences the offline drafter quotes for this ticket from these passages."""
    engine = OfflineEngine(embed=minilm().embed)
    draft = engine.draft(Ticket("T-1", subject, body), hits(*passages))
    return [s.text for s in draft.sentences]
