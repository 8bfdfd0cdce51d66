"""The offline checker, which can say no, and the offline drafter's confidence.

Quoted sentences always "support" themselves, so grounding alone passes any extract. This
checker asks what a reviewer asks: (a) does the draft give the kind of thing each question asks
for (a duration for "how long", a version for "which version", a role for "which role")? (b) is
every question answered, or said to be unanswerable from the knowledge base? (c) does every
cited passage contain the sentence it backs? (d) does no sentence claim an action on the
account was taken? Problem codes: ``citation_mismatch``, ``missing_answer``,
``unanswered_question``, ``off_topic``, ``claimed_action``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from supportagent.agent.grounding import action_claim_problems
from supportagent.agent.questions import Question, has_answer, ticket_questions
from supportagent.domain import Draft, Hit, Passage, Problem, Ticket, Verdict
from supportagent.engines.extract import Unit, answer_text, split_sentences
from supportagent.engines.scoring import TYPED, Scored, UnitScorer

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]
CHECKER = "offline-answer"
#: A draft sentence addresses a question when it scores this much against it.
ADDRESS_SCORE = 0.3
ADDRESS_LEXICAL_SCORE = 0.2

_SPACE = re.compile(r"\s+")
_KIND_WORDS = {
    "duration": "a duration",
    "number": "a number or limit",
    "version": "a version",
    "name": "a name",
    "procedure": "the steps",
    "location": "where to find it",
}


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _contains(passage: Passage, sentence: str) -> bool:
    """True when ``passage`` says ``sentence`` word for word, or has it as one of its quotable
    units (a table row is quoted as its labelled cells, ``extract.table_row``)."""
    text, wanted = answer_text(passage), _norm(sentence)
    return wanted in _norm(text) or any(wanted == _norm(s) for s in split_sentences(text))


def check_draft(
    ticket: Ticket, draft: Draft, evidence: Sequence[Hit], embed: Embed | None = None
) -> Verdict:
    """Every citation contains its sentence; every question is answered with what it asks for,
    or declared unanswered."""
    # A claim that an account or money action was taken fails here too, not only in grounding:
    # ``eval checker`` and other callers ask this checker alone.
    problems: list[Problem] = action_claim_problems(draft)
    by_id = {h.passage.id: h for h in evidence}
    for index, sentence in enumerate(draft.sentences):
        for cid in sentence.citations:
            hit = by_id.get(cid)
            if hit is not None and not _contains(hit.passage, sentence.text):
                problems.append(
                    Problem(
                        "citation_mismatch",
                        f"{cid} does not contain this sentence; cite the passage it comes from",
                        index,
                    )
                )
    questions = ticket_questions(ticket)
    declared = {_norm(q) for q in draft.unanswered}
    units = [
        Unit((s.text,), by_id[s.citations[0]].passage, 1, i)
        for i, s in enumerate(draft.sentences)
        if s.citations and s.citations[0] in by_id and s.text.strip()
    ]
    scorer = UnitScorer(ticket, questions, units, evidence, embed)
    floor = ADDRESS_LEXICAL_SCORE if embed is None else ADDRESS_SCORE
    answered = 0
    for q, question in enumerate(questions):
        if _norm(question.text) in declared:
            continue
        addressing = [s for s in scorer.ranked(q) if s.score >= floor]
        if not addressing:
            problems.append(
                Problem(
                    "unanswered_question",
                    f"No sentence answers {question.text!r}, and the draft does not say that "
                    "the knowledge base cannot answer it.",
                )
            )
            continue
        if question.kind in TYPED and not any(
            has_answer(s.unit.text, question) for s in addressing
        ):
            wanted = _KIND_WORDS.get(question.kind.value, question.kind.value)
            focus = f" ({question.focus})" if question.focus else ""
            problems.append(
                Problem(
                    "missing_answer",
                    f"{question.text!r} asks for {wanted}{focus}; no sentence of the draft "
                    "gives one.",
                )
            )
            continue
        answered += 1
    if draft.sentences and not answered and not problems:
        problems.append(Problem("off_topic", "The draft answers none of the ticket's questions."))
    return Verdict(not problems, tuple(problems), CHECKER)


def explain_confidence(
    questions: Sequence[Question], answers: Sequence[Scored | None], quoted: Sequence[Scored]
) -> tuple[float, str]:
    """The draft's confidence and, in plain words, how it was formed.

    Per question: how well the unit that answers it does (meaning and shared terms, the
    drafter's score, mapped from 0.3..0.8 onto 0..1), halved when the unit lacks the asked-for
    thing; an unanswered question counts 0. The confidence is the mean over the questions,
    times 0.8 when every quoted source is a resolved ticket (one customer's case, not
    documentation).
    """
    if not questions or not quoted:
        return 0.0, "No evidence sentence answers the ticket's questions."
    parts: list[str] = []
    values: list[float] = []
    for q, (question, best) in enumerate(zip(questions, answers, strict=True)):
        if best is None:
            values.append(0.0)
            parts.append(f"question {q + 1} is not answered by the knowledge base (0)")
            continue
        value = min(max((best.score - 0.3) / 0.5, 0.0), 1.0)
        note = ""
        if question.kind in TYPED:
            what = _KIND_WORDS.get(question.kind.value, "what was asked")
            if best.typed:
                note = f", with {what}"
            else:
                value /= 2
                note = f", but without {what}"
        values.append(value)
        parts.append(f"question {q + 1}: match {best.score:.2f}{note} ({value:.2f})")
    confidence = sum(values) / len(values)
    sources = {s.unit.passage.doc_id: s.unit.from_article for s in quoted}
    articles = sum(sources.values())
    source_note = f"{articles} article(s), {len(sources) - articles} resolved ticket(s)"
    if not any(sources.values()):
        confidence *= 0.8
        source_note += "; only resolved tickets, so x0.8"
    text = (
        f"Confidence {confidence:.2f}: the mean over {len(questions)} question(s) of how well "
        f"the quoted evidence answers each ({'; '.join(parts)}). Sources: {source_note}."
    )
    return round(confidence, 3), text
