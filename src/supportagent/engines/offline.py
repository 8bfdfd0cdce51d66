"""The built-in engine: rules and a triage model, an extractive drafter, an answer checker.

It is instant and deterministic, and honest about what it is: the drafter copies evidence
sentences, whole procedures, and cites each, so a draft is an extract and can be no better
than the evidence it was given. What it adds is judgement about *which* sentences: it works out
what each question of the ticket asks (a duration, a version, a name, a procedure, ...), ranks
the evidence by meaning (MiniLM, when the pipeline gives it an embedder) and by terms, prefers
the sentence that carries the asked-for thing, prefers an article to a resolved ticket that says
the same, and never quotes another customer's case. The checker refuses a draft that lacks what
was asked (``engines.offline_check``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from supportagent.agent.facts import (
    MEASURES,
    Conflict,
    Fact,
    Links,
    compatible_roles,
    extract_facts,
    find_conflicts,
    quantities,
    role_of,
    stated_by,
    values_in,
)
from supportagent.agent.questions import AnswerKind, Question, asks_explanation, ticket_questions
from supportagent.domain import (
    Classification,
    Draft,
    DraftSentence,
    Hit,
    Problem,
    SafetyResult,
    Ticket,
    ToolRequest,
    Verdict,
)
from supportagent.engines.classifier import Classifier
from supportagent.engines.extract import Unit, bullet_run, evidence_units, split_sentences
from supportagent.engines.offline_check import check_draft, explain_confidence
from supportagent.engines.scoring import SCOPE_BONUS, TYPED, Scored, UnitScorer
from supportagent.retrieval.own_name import masked

__all__ = ["OfflineEngine", "split_sentences"]

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]

#: Most answer units a draft quotes, over all the ticket's questions.
MAX_UNITS = 5
#: A second unit of the best unit's article is quoted too when it scores within this of it.
CLOSE_MARGIN = 0.1
#: A procedure's lead sentence is quoted when it scores within this of the procedure.
LEAD_MARGIN = 0.1
#: Two units of different documents whose embeddings are this alike speak of one thing.
RIVAL_SIMILARITY = 0.55
#: The same for a value of a kind a knowledge base gives seldom (a day of the week, a
#: release, an age): two documents that each answer "which day?" with a different weekday
#: are about one thing with less wording in common than two durations, of which every
#: article gives several (round 26 of the drafter; 0.45 then, 0.40 since round 27, when a
#: resolution joined the kinds: "delivered in 4K, whatever the package" and "tour videos for
#: estate agents are exported at 1080p" are 0.44 alike, and no product's draft moved).
RARE_RIVAL_SIMILARITY = 0.40
RARE_KINDS = frozenset({"weekday", "monthday", "yeardate", "version", "age", "resolution"})
#: A resolved answer about the customer's case (``UnitScorer.case_words``) may be this far
#: below the best unit and still be quoted beside it as the other value.
CASE_MARGIN = 0.2
#: A draft below this confidence is not staged: the checker fails it as ``low_confidence``.
#: Chosen in round 14 of the drafter (twelfth session) on the tune products and their
#: out-of-scope questions (``eval/out_of_scope``): the highest of 0.15, 0.2, 0.22, 0.25 that
#: fails no draft of an answerable tune ticket (it stops 7 of the 21 out-of-scope drafts left;
#: 0.22 would fail two good drafts). About a best unit scoring 0.40 for a one-question ticket.
MIN_CONFIDENCE = 0.2
#: Questions whose answer is one value, which two documents may give differently.
_VALUED = frozenset({AnswerKind.NUMBER, AnswerKind.DURATION})
#: A question that asks for a measured value without asking how long or how many: "What time
#: do the lamps dim?", "At what temperature ...?", "How heavy can a parcel be?".
_ASKS_MEASURE = re.compile(
    r"\b(?:what time|which hours|what hours|between what|at what|how (?:heavy|cold|hot|warm|far|"
    r"deep|tall|high|wide|big|much rain)|what (?:temperature|weight|distance|threshold|level|"
    r"window|hours|day|age|version|resolution)|which (?:day|weekday|version|release|resolution)|"
    r"how old|how sharp)\b",
    re.IGNORECASE,
)


class OfflineEngine:
    """Rules to classify, sentence extraction to draft, answer checks to check."""

    name = "offline"
    #: The drafter quotes the evidence, so it can only answer in the evidence's language.
    quotes_evidence = True

    def __init__(
        self,
        *,
        demo_forbidden_post: bool = False,
        embed: Embed | None = None,
        classifier: Classifier | None = None,
    ) -> None:
        # The demo makes the drafter ask for a tool it must never get, to show the gate.
        self.demo_forbidden_post = demo_forbidden_post
        self.embed = embed
        self.links: Links | None = None
        self.classifier = classifier or Classifier()
        #: Where the product's own name comes from (``use_own_names``); read on first use.
        self._names: Sequence[str] | Callable[[], Sequence[str]] = ()
        self._own_names: tuple[str, ...] | None = None

    def use_links(self, links: Links | None) -> None:
        """Hold a resolved ticket against the articles it links to (the pipeline passes the
        knowledge's links), as the checks do, so the drafter quotes both sides they see."""
        self.links = links

    def use_embedder(self, embed: Embed | None) -> None:
        """Rank sentences by meaning with ``embed`` (the pipeline passes the knowledge's)."""
        if self.embed is None:
            self.embed = embed

    def use_own_names(self, names: Sequence[str] | Callable[[], Sequence[str]]) -> None:
        """Compare meanings without the product's own name (the pipeline passes the
        knowledge's, ``retrieval.own_name``): every article says it, so an unrelated sentence
        that names it ("Hivecast watches your beehives for you") would read like any question
        that names it too ("Can Hivecast treat varroa mites?"). ``names`` may be a function,
        called when a draft first needs them: finding the name reads every article, which a
        pipeline built only to triage or to show a page never needs."""
        self._names, self._own_names = names, None

    @property
    def own_names(self) -> tuple[str, ...]:
        """The product's own names, left out of what the drafter and checker embed."""
        if self._own_names is None:
            names = self._names() if callable(self._names) else self._names
            self._own_names = tuple(names)
        return self._own_names

    def _meaning(self) -> Embed | None:
        return masked(self.embed, self.own_names)

    def classify(self, ticket: Ticket, safety: SafetyResult) -> Classification:
        return self.classifier.classify(ticket, safety)

    def draft(
        self,
        ticket: Ticket,
        evidence: Sequence[Hit],
        previous: Draft | None = None,
        verdict: Verdict | None = None,
    ) -> Draft:
        questions = ticket_questions(ticket)
        dropped = _dropped(previous, verdict)
        units = [u for u in evidence_units(evidence) if not dropped.intersection(u.sentences)]
        embed = self._meaning()
        scorer = UnitScorer(ticket, questions, units, evidence, embed)
        chosen, answers, unanswered = _choose(questions, scorer, self.links)
        chosen = _with_other_sides(chosen, units, evidence, ticket, embed, self.links)
        # Reviewers read the units in the order of the questions they answer.
        sentences = tuple(
            DraftSentence(text, (s.unit.passage_id,)) for s in chosen for text in s.unit.sentences
        )
        requests: tuple[ToolRequest, ...] = ()
        if self.demo_forbidden_post and previous is None:
            requests = (
                ToolRequest("post_to_customer", {"ticket_id": ticket.id, "text": "(draft)"}),
            )
        confidence, explanation = explain_confidence(questions, answers, chosen)
        revision = previous.revision + 1 if previous is not None else 0
        return Draft(
            sentences,
            confidence,
            revision,
            requests,
            unanswered=tuple(q.text for q in unanswered) if sentences else (),
            flags=("partial_answer",) if unanswered and sentences else (),
            explanation=explanation,
        )

    def check(self, ticket: Ticket, draft: Draft, evidence: Sequence[Hit]) -> Verdict:
        """The draft must give what each question asks, or say it cannot (offline_check)."""
        verdict = check_draft(ticket, draft, evidence, self._meaning())
        if verdict.passed and draft.sentences and draft.confidence < MIN_CONFIDENCE:
            weakly = Problem(
                "low_confidence",
                f"The quoted evidence answers the ticket too weakly to send (confidence "
                f"{draft.confidence:.2f}, below {MIN_CONFIDENCE:.2f}): it most likely asks about "
                f"something the knowledge base does not cover. {draft.explanation}",
            )
            return Verdict(False, (weakly,), verdict.checker)
        return verdict


def _choose(
    questions: Sequence[Question], scorer: UnitScorer, links: Links | None = None
) -> tuple[list[Scored], list[Scored | None], list[Question]]:
    """The units to quote: the best for each question (and a second one when the best lacks
    the asked-for thing and the second has it, or when the second is a near-equal of the same
    article), a procedure's lead, an explanation's bullets whole, what a quoted "the X" is;
    each question's answer (None: unanswered); the questions nothing answers."""
    chosen: list[Scored] = []
    answers: list[Scored | None] = []
    unanswered: list[Question] = []
    for index, question in enumerate(questions):
        ranked = scorer.ranked(index)
        if not ranked or not ranked[0].answers:
            unanswered.append(question)
            answers.append(None)
            continue
        answers.append(max(ranked[:4], key=lambda s: (s.answers and s.typed, s.score)))
        best = ranked[0]
        picks = [best]
        if not best.typed:
            typed = next(
                (s for s in ranked[1:4] if s.typed and s.answers and _about(s, best, scorer)),
                None,
            )
            if typed is not None:
                picks.append(typed)
            elif question.kind in TYPED:
                # Nothing carries what was asked ("how long" and no duration): say so.
                unanswered.append(question)
                answers[-1] = None
                continue
        if best.unit.shape == "item" and (
            asks_explanation(question) or _names_among_items(question, best, ranked)
        ):
            # "How does X work?" and a section of bullets about X: the bullets, whole.
            picks = [replace(best, unit=bullet_run(best.unit, scorer.units))]
        elif best.unit.procedure:
            lead = _procedure_lead(best, ranked)
            if lead is not None:
                picks.insert(0, lead)
            caution = _caution(best, ranked)
            if caution is not None:
                picks.append(caution)
        else:
            close = _close_second(index, best, ranked, picks, scorer)
            if close is not None:
                picks.append(close)
            rival = _rival(best, ranked, picks, scorer, links)
            if rival is not None:
                picks.append(rival)
            instead = _what_instead(question, best, ranked)
            if instead is not None and instead not in picks:
                picks.insert(picks.index(best) + 1, instead)
        # "If uptime falls below the commitment, ...": and what the commitment is on their plan.
        before = [a for p in picks if (a := scorer.antecedent(p)) is not None]
        for pick in [*before, *picks]:
            twin = scorer.article_twin(pick)  # an article over a resolved ticket saying the same
            if twin is not None and twin.typed >= pick.typed:
                pick = twin
            pick = replace(pick, unit=pick.unit.narrowed(question.text))
            if all(_distinct(pick.unit, c.unit) for c in chosen) and len(chosen) < MAX_UNITS:
                chosen.append(pick)
    return chosen, answers, unanswered


#: A unit of another document quoted for carrying the asked-for thing must match the question
#: by meaning within this of the best unit, which lacks it.
HELPER_MARGIN = 0.1


def _about(helper: Scored, best: Scored, scorer: UnitScorer) -> bool:
    """True when ``helper``, quoted beside ``best`` because it has the asked-for kind of thing
    (a name, a duration) that ``best`` lacks, is about what was asked: from the same document,
    or nearly as close to the question by meaning. "Enquiries arrive under **Events >
    Enquiries**" has a label, but says nothing about capping arrivals per slot."""
    if helper.unit.passage.doc_id == best.unit.passage.doc_id:
        return True
    mine = scorer.dense(best.question, scorer.units.index(best.unit))
    theirs = scorer.dense(helper.question, scorer.units.index(helper.unit))
    return mine is None or theirs is None or theirs >= mine - HELPER_MARGIN


def _names_among_items(question: Question, best: Scored, ranked: Sequence[Scored]) -> bool:
    """True when ``question`` asks for a name ("which role should she have?") and its best
    answer is one bullet of a list that two more bullets answer nearly as well, within half
    the near-equal margin ("**Admin**: ...", "**Owner**: ...", "**Supervisor**: ..."): the
    drafter cannot tell which one fits, the reviewer can, so the list goes whole. One close
    second alone is quoted beside the best as any near-equal second is."""
    if question.kind is not AnswerKind.NAME or not best.typed:
        return False
    near = [
        s
        for s in ranked[1:6]
        if s.unit.shape == "item"
        and s.unit.passage is best.unit.passage
        and s.typed
        and s.score >= best.score - CLOSE_MARGIN / 2
    ]
    return len(near) >= 2


#: A sentence that warns what a step cannot take back: "A merge cannot be undone."
_CAUTION = re.compile(
    r"\b(?:cannot|can't|can not|is not|isn't) be (?:undone|reversed|recovered|restored|"
    r"reverted)\b|\b(?:irreversible|permanently|no undo|no way (?:back|to undo))\b",
    re.IGNORECASE,
)


def _caution(best: Scored, ranked: Sequence[Scored]) -> Scored | None:
    """The sentence right after the procedure ``best`` that warns it cannot be taken back
    ("A merge cannot be undone."): a customer about to follow the steps needs it."""
    after = best.unit.position + len(best.unit.sentences)
    return next(
        (
            s
            for s in ranked
            if s.unit.passage is best.unit.passage
            and s.unit.shape == "sentence"
            and s.unit.position == after
            and _CAUTION.search(s.unit.text)
        ),
        None,
    )


#: A short "no": "We do not run auctions ourselves.", "Refunds are not possible."
_SHORT_NO = re.compile(
    r"\b(?:does not|doesn't|do not|don't|cannot|can't|is not|isn't|are not|aren't|never|"
    r"no longer)\b",
    re.IGNORECASE,
)
#: Most words of a "no" that needs the sentence after it to be of use.
SHORT_NO_WORDS = 10


def _what_instead(question: Question, best: Scored, ranked: Sequence[Scored]) -> Scored | None:
    """For a yes/no question answered by a short "no" ("We do not run auctions
    ourselves."), the sentence right after it in its passage, which says what happens instead
    ("Facilities list units with our auction partner ..."): a bare "no" leaves the customer
    with nowhere to go."""
    unit = best.unit
    if (
        question.kind is not AnswerKind.YES_NO
        or unit.shape != "sentence"
        or len(unit.sentences) != 1
        or len(unit.text.split()) > SHORT_NO_WORDS
        or not _SHORT_NO.search(unit.text)
    ):
        return None
    after = unit.position + 1
    return next(
        (
            s
            for s in ranked
            if s.unit.passage is unit.passage
            and s.unit.shape == "sentence"
            and s.unit.position == after
        ),
        None,
    )


def _procedure_lead(best: Scored, ranked: Sequence[Scored]) -> Scored | None:
    """The sentence that says what the procedure ``best`` is for, from the same article."""
    return next(
        (
            s
            for s in ranked[1:6]
            if not s.unit.procedure
            and s.unit.passage.doc_id == best.unit.passage.doc_id
            and s.score >= best.score - LEAD_MARGIN
        ),
        None,
    )


def _close_second(
    index: int, best: Scored, ranked: Sequence[Scored], picks: Sequence[Scored], scorer: UnitScorer
) -> Scored | None:
    """A unit of the best one's article that answers question ``index`` nearly as well.

    The drafter cannot tell which of the two the customer needs ("up to 100 MB in the web
    app", "up to 25 MB from the mobile app"), the reviewer can, so both are quoted. Not one
    that brings in a name the ticket does not use when the best gives one it does ("iOS 16"
    for "which Android version?", "the Developer plan" for "we're on Growth"), nor one without
    the minimum or maximum asked for.
    """
    typed_question = scorer.questions[index].kind in TYPED
    # A question that asks for a name ("which header?") is answered by names the ticket does
    # not use: two candidates of one article both go to the reviewer.
    anchored = bool(scorer.names(best.unit)[0]) and scorer.questions[index].kind is not (
        AnswerKind.NAME
    )
    qualified = scorer.qualifies(index, best.unit)
    return next(
        (
            s
            for s in ranked[1:4]
            if s.answers
            and s.unit.passage.doc_id == best.unit.passage.doc_id
            and s.score >= best.score - CLOSE_MARGIN
            and (s.typed or not typed_question)
            and s not in picks
            and not (anchored and scorer.names(s.unit)[1])
            and (scorer.qualifies(index, s.unit) or not qualified)
        ),
        None,
    )


def _rival(
    best: Scored,
    ranked: Sequence[Scored],
    picks: Sequence[Scored],
    scorer: UnitScorer,
    links: Links | None = None,
) -> Scored | None:
    """A unit of another document that gives another value for what ``best`` gives.

    "Each loan can be renewed up to 3 times" and "Readers can extend each loan two times at
    most": when two sources answer one "how many" or "how long" nearly as well with different
    values of one kind, quoting only the first would state one side of a disagreement. Both
    go to the reviewer, who can tell which holds (and the checks escalate a contradiction
    they recognise). Not a unit limited to another plan than the customer's. A resolved
    ticket and the article it links to need not be worded alike: the link says they are
    about one topic ("works offline for up to 24 hours", "an iPad ... for 8 hours at most").
    """
    question = scorer.questions[best.question]
    measured = question.kind not in _VALUED and _ASKS_MEASURE.search(question.text) is not None
    if question.kind not in _VALUED and not measured:
        return None
    # Only values of the kind asked for: "retried 6 times over 12 hours" answers "how many
    # times?" with a count; "an hour of downtime" elsewhere is no other count. "What time
    # ...?" and "at what temperature ...?" ask for a measure: a time of day, a window, mm.
    asked = question.kind
    mine = {
        (q.dimension, q.base_value)
        for q in values_in(best.unit.text)
        if (
            q.dimension.split("/")[0] in MEASURES
            if measured
            else (q.dimension == "duration") == (asked is AnswerKind.DURATION)
        )
    }
    kinds = {dimension for dimension, _ in mine}
    # A rare kind of value (a resolution, a version, an age) that another document gives for
    # the question is seldom about something else: it may rank further down (round 27) and be
    # worded less alike (round 26).
    rare = bool(kinds) and kinds <= RARE_KINDS
    # What each duration does ("within 10 seconds" is a deadline, "an hour of downtime" is
    # none): two values disagree only when they can be about the same thing.
    roles = {role_of(best.unit.text, q) for q in quantities(best.unit.text)}
    for other in ranked[1:4]:
        if (
            other in picks
            or not (other.answers and other.typed)
            or other.unit.passage.doc_id == best.unit.passage.doc_id
            or scorer.scope_fit(other.unit) <= -SCOPE_BONUS
        ):
            continue
        # A resolved answer that speaks of the customer's case in the ticket's own words,
        # which the best unit's passage never uses, is the case's side of a possible
        # exception: quoted from further down, and however it is worded.
        case = not other.unit.from_article and len(scorer.case_words(other.unit, best.unit)) >= 2
        if other.score < best.score - (CASE_MARGIN if case or rare else CLOSE_MARGIN):
            continue
        # A resolved ticket linked to the best unit's article is about its topic whatever role
        # its duration plays ("a 5-day grace period" against "penalised once 10 days have gone
        # by"): its other value is the other side of a possible conflict, always quoted.
        linked = _linked(best.unit, other.unit, links)
        theirs = {
            (q.dimension, q.base_value)
            for q in values_in(other.unit.text)
            if linked
            or q.dimension != "duration"
            or any(compatible_roles(role_of(other.unit.text, q), r) for r in roles)
        }
        same_kind = {value for value in theirs if value[0] in kinds}
        if not same_kind or same_kind & mine:
            continue  # nothing to compare, or the same value: no disagreement
        if linked or case:
            return other
        # Alike by meaning, and sharing a word with the question: "failed deliveries are
        # retried over 24 hours" is alike "parcels that arrive later" by meaning only.
        floor = RARE_RIVAL_SIMILARITY if rare else RIVAL_SIMILARITY
        if (scorer.alike(best.unit, other.unit) or 0.0) >= floor and scorer.lexical(
            best.question, scorer.units.index(other.unit)
        ) > 0:
            return other
    return None


def _linked(a: Unit, b: Unit, links: Links | None) -> bool:
    """True when one of the two units is a resolved ticket that links to the other's article."""
    if links is None or a.from_article == b.from_article:
        return False
    ticket, article = (b, a) if a.from_article else (a, b)
    return article.passage.doc_id in links(ticket.passage.doc_id)


def _distinct(a: Unit, b: Unit) -> bool:
    """False for the same unit, one inside the other, or two units of different passages
    saying the same (an article and a resolved ticket). Two sentences of one passage worded
    alike say different things ("up to 100 MB in the web app", "up to 25 MB from the phone")."""
    if (
        a.text == b.text
        or set(a.sentences) <= set(b.sentences)
        or set(b.sentences) <= set(a.sentences)
    ):
        return False
    if a.passage_id == b.passage_id:
        return True
    wa, wb = set(a.text.lower().split()), set(b.text.lower().split())
    return len(wa & wb) / max(len(wa | wb), 1) <= 0.6


def _with_other_sides(
    chosen: list[Scored],
    units: Sequence[Unit],
    evidence: Sequence[Hit],
    ticket: Ticket,
    embed: Embed | None,
    links: Links | None = None,
) -> list[Scored]:
    """Where a chosen unit states one side of a conflict, quote the other side next to it.

    A contradiction then reaches the reviewer whole (the checks escalate it); for a scoped
    exception the draft cites both the rule and the exception, the one that fits the ticket
    first.
    """
    conflicts = find_conflicts(extract_facts(h.passage for h in evidence), embed=embed, links=links)
    if not conflicts:
        return chosen
    out = list(chosen)
    for scored in chosen:
        for conflict in conflicts:
            other = _other_side(scored.unit, conflict, ticket)
            if other is None:
                continue
            unit = next(
                (u for u in units if u.passage_id == other.passage_id and stated_by(u.text, other)),
                None,
            )
            if unit is not None and all(_distinct(unit, c.unit) for c in out):
                place = out.index(scored) + 1
                out.insert(place, Scored(unit, scored.question, scored.score, True, True))
    return out


def _other_side(unit: Unit, conflict: Conflict, ticket: Ticket) -> Fact | None:
    for side in conflict.sides:
        if side.passage_id == unit.passage_id and _states_side(unit, side):
            other = conflict.general if side is conflict.specific else conflict.specific
            return other
    return None


def _states_side(unit: Unit, side: Fact) -> bool:
    """True when ``unit`` quotes the sentence of ``side``, or part of it with its value ("Its
    heat alarm waits until 40 degrees." out of "The X model has a deeper probe, so its heat
    alarm waits until 40 degrees.")."""
    if side.sentence in unit.text:
        return True
    whole = side.sentence.casefold()
    return stated_by(unit.text, side) and any(
        len(part) > 12 and part.casefold().rstrip(" .!?") in whole for part in unit.sentences
    )


def _dropped(previous: Draft | None, verdict: Verdict | None) -> set[str]:
    """Sentences the checker objected to, which a revision must not quote again.

    Sentences flagged because the evidence contradicts itself, or because they state an
    exception whose rule the drafter cannot quote, stay: dropping them would hide the
    disagreement; the pipeline then sees an unchanged draft and escalates.
    """
    if previous is None or verdict is None:
        return set()
    drop: set[str] = set()
    for problem in verdict.problems:
        if problem.code in ("conflicting_evidence", "one_sided_exception"):
            continue
        if problem.sentence is None:
            if problem.code in ("off_topic", "missing_answer"):
                drop.update(s.text for s in previous.sentences)
        elif 0 <= problem.sentence < len(previous.sentences):
            drop.add(previous.sentences[problem.sentence].text)
    return drop
