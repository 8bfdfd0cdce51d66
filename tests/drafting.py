"""What the offline drafter's and the fact checks' tests share: hand-made article sections and
resolved tickets, evidence ranked as given, and the sentences a draft quotes from it (with the
shipped MiniLM model, as the pipeline gives the drafter)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from supportagent.agent.facts import Conflict, Fact, extract_facts, find_conflicts
from supportagent.agent.grounding import check_grounding
from supportagent.domain import DocKind, Draft, DraftSentence, Hit, Passage, Ticket, resolved_body
from supportagent.engines.offline import OfflineEngine
from supportagent.retrieval.dense import OnnxMiniLM


def kb(doc: str, text: str, heading: str = "Section", title: str = "Article") -> Passage:
    """A section of article ``doc`` under ``heading``, cited as ``doc#heading-slug``."""
    return Passage(
        f"{doc}#{heading.lower().replace(' ', '-')}", doc, DocKind.KB, title, (heading,), text
    )


def section(doc: str, heading: str, text: str, title: str = "Guide") -> Passage:
    """``kb`` with the heading first, as the fact checks' tests write them."""
    return kb(doc, text, heading, title)


def resolved(rid: str, question: str, answer: str) -> Passage:
    """Resolved ticket ``rid``: its question and answer, as the store keeps them."""
    return Passage(
        f"{rid}#answer", rid, DocKind.RESOLVED, question, (), resolved_body(question, answer)
    )


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


def conflicts_of(
    *passages: Passage, links: dict[str, tuple[str, ...]] | None = None
) -> list[Conflict]:
    """The conflicts the fact checks find among ``passages`` (``links``: a resolved ticket's
    id to the articles it links to), with the shipped MiniLM model."""
    known = links or {}
    return find_conflicts(
        extract_facts(passages), embed=minilm().embed, links=lambda d: known.get(d, ())
    )


def raw_sides(conflicts: Sequence[Conflict]) -> list[tuple[str, str]]:
    """Each conflict's two values as written, the general side first."""
    return [(c.general.quantity.raw, c.specific.quantity.raw) for c in conflicts]


def problems_stated_alone(side: Fact, conflict: Conflict, passages: Sequence[Passage]) -> list[str]:
    """The problem codes the checker gives a draft that states only ``side`` of ``conflict``,
    quoting its sentence and citing its passage."""
    draft = Draft((DraftSentence(side.sentence, (side.passage_id,)),), 0.9)
    verdict = check_grounding(draft, list(passages), conflicts=[conflict])
    return [p.code for p in verdict.problems]
