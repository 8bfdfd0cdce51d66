"""When a model checker's ``conflicting_evidence`` stands, and when it is only a request to revise.

A conflict in the evidence stops the revisions (a reviewer must see it; a drafter could write
it away). A model checker that merely *says* so is not enough: small models answer
"the draft says 50 requests per second, but the evidence states 50 requests per second". So a
model's conflict stands only when

* the deterministic grounding check found a ``conflicting_evidence`` for the same draft, or
* the model's problem names two passages of the evidence whose texts state different values
  for one quantity (as the deterministic check reads quantities: same unit, different value,
  sentences about the same thing, different documents).

Otherwise it becomes ``unconfirmed_conflict``: a problem the drafter is asked to fix, which
does not stop the revisions. Pure functions over verdicts and passages.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from supportagent.agent.grounding import check_grounding
from supportagent.domain import Draft, DraftSentence, Passage, Problem, Verdict

CONFLICT = "conflicting_evidence"
UNCONFIRMED = "unconfirmed_conflict"
#: Added by the llm engine when the model says no draft from this evidence can pass.
CHECKER_ESCALATES = "checker_escalates"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def confirm_model_conflicts(
    verdict: Verdict, grounding: Verdict, evidence: Sequence[Passage]
) -> Verdict:
    """``verdict`` (a model checker's) with each unconfirmed conflict turned into a request to
    revise; if nothing but such conflicts failed the draft, the model's advice to escalate
    goes with them."""
    problems = list(verdict.problems)
    if not any(p.code == CONFLICT for p in problems):
        return verdict
    settled = [
        p
        if p.code != CONFLICT or conflict_confirmed(p, grounding, evidence)
        else Problem(
            UNCONFIRMED,
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


def conflict_confirmed(problem: Problem, grounding: Verdict, evidence: Sequence[Passage]) -> bool:
    """True when the deterministic check saw a conflict in this draft, or ``problem`` names two
    passages whose values for one quantity differ."""
    if any(p.code == CONFLICT for p in grounding.problems):
        return True
    named = named_passages(problem.message, evidence)
    return any(
        values_differ(a, b) or values_differ(b, a) for a, b in itertools.combinations(named, 2)
    )


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
    """True when a sentence of ``a``, held against ``a`` and ``b`` by the grounding check,
    conflicts with ``b``: the two state different values for the same quantity."""
    if a.doc_id == b.doc_id:
        return False  # a document is taken to agree with itself, as the grounding check does
    for sentence in _SENTENCE_END.split(a.text):
        if not any(ch.isdigit() for ch in sentence):
            continue
        probe = Draft((DraftSentence(sentence.strip(), (a.id,)),), 0.0)
        verdict = check_grounding(probe, [a, b])
        if any(p.code == CONFLICT and b.id in p.message for p in verdict.problems):
            return True
    return False
