"""When a model checker's ``conflicting_evidence`` stands, and when it is only a request to revise.

A conflict in the evidence stops the revisions (a reviewer must see it; a drafter could write
it away). A model checker that merely *says* so is not enough: small models answer
"the draft says 50 requests per second, but the evidence states 50 requests per second". So a
model's conflict stands only when

* the deterministic checks saw it: the grounding check found a ``conflicting_evidence`` for
  the same draft, or the fact check (``agent/facts.py``) found a contradiction in the evidence
  that involves a passage the model names; or
* the model's problem names two passages of the evidence whose texts, read by the fact check
  on their own, contradict each other (one subject, two values, different documents).

Otherwise it becomes ``unconfirmed_conflict``: a problem the drafter is asked to fix, which
does not stop the revisions. Pure functions over verdicts and passages.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from supportagent.agent.facts import Conflict, extract_facts, find_conflicts
from supportagent.domain import Passage, Problem, Verdict

CONFLICT = "conflicting_evidence"
UNCONFIRMED = "unconfirmed_conflict"
#: Added by the llm engine when the model says no draft from this evidence can pass.
CHECKER_ESCALATES = "checker_escalates"


def confirm_model_conflicts(
    verdict: Verdict,
    grounding: Verdict,
    evidence: Sequence[Passage],
    conflicts: Sequence[Conflict] = (),
) -> Verdict:
    """``verdict`` (a model checker's) with each unconfirmed conflict turned into a request to
    revise; if nothing but such conflicts failed the draft, the model's advice to escalate
    goes with them."""
    problems = list(verdict.problems)
    if not any(p.code == CONFLICT for p in problems):
        return verdict
    settled = [
        p
        if p.code != CONFLICT or conflict_confirmed(p, grounding, evidence, conflicts)
        else Problem(
            "unconfirmed_conflict",
            f"The checker reported a conflict that the evidence does not show: {p.message} "
            "If a sentence misstates a passage, state it as the passage does.",
            p.sentence,
        )
        for p in problems
    ]
    own = [p for p in settled if p.code != CHECKER_ESCALATES]
    if own and all(p.code == UNCONFIRMED for p in own):
        settled = own
    return replace(verdict, problems=tuple(settled))


def conflict_confirmed(
    problem: Problem,
    grounding: Verdict,
    evidence: Sequence[Passage],
    conflicts: Sequence[Conflict] = (),
) -> bool:
    """True when the deterministic checks saw this conflict, or ``problem`` names two passages
    that contradict each other."""
    if any(p.code == CONFLICT for p in grounding.problems):
        return True
    named = named_passages(problem.message, evidence)
    ids = {p.id for p in named}
    if any(
        c.kind == "contradiction" and ids & {c.general.passage_id, c.specific.passage_id}
        for c in conflicts
    ):
        return True
    return any(values_differ(a, b) for a, b in itertools.combinations(named, 2))


def named_passages(message: str, evidence: Iterable[Passage]) -> list[Passage]:
    """The passages of ``evidence`` that ``message`` names, by passage id or by document id."""
    found: dict[str, Passage] = {}
    for passage in evidence:
        if passage.id in message or re.search(
            rf"(?<![\w#-]){re.escape(passage.doc_id)}(?![\w-])", message
        ):
            found.setdefault(passage.id, passage)
    return list(found.values())


def values_differ(a: Passage, b: Passage) -> bool:
    """True when the fact check, reading only ``a`` and ``b``, finds them contradicting each
    other: one subject, two values, two documents (a document agrees with itself)."""
    return any(c.kind == "contradiction" for c in find_conflicts(extract_facts([a, b])))
