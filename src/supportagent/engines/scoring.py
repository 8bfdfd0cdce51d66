"""How well an evidence unit answers one question: meaning, terms, and the asked-for thing.

Meaning is the cosine of MiniLM embeddings of the question and the unit (all of a ticket's
questions and candidate units are embedded in one batch; the embedder's memo makes a sentence
seen before free). Terms are the question's words found in the unit, rare words weighing more.
A unit that carries what the question asks for (a duration for "how long") gains, one that does
not loses; an article gains a little over a resolved ticket.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
import numpy.typing as npt

from supportagent.agent.facts import MONEY, plan_names, quantities, role_of, scope_of
from supportagent.agent.questions import (
    AnswerKind,
    Question,
    event_side,
    has_answer,
    ticket_prose,
)
from supportagent.domain import Hit, Ticket
from supportagent.engines.extract import Unit
from supportagent.regexcache import ProgramCache
from supportagent.retrieval.text import tokenize

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]

#: Weights of meaning and terms when both are known.
DENSE_WEIGHT = 0.6
#: Meaning alone counts for this much less than meaning and terms together.
DENSE_ALONE = 0.1
#: What carrying (or lacking) the asked-for thing adds to a typed question's score.
TYPE_BONUS = 0.12
#: An article over a resolved ticket that says the same.
ARTICLE_BONUS = 0.03
#: A unit must score this much to answer a question (with embeddings; without, the lexical).
MIN_SCORE = 0.35
MIN_LEXICAL_SCORE = 0.3
TYPED = frozenset(
    {
        AnswerKind.DURATION,
        AnswerKind.NUMBER,
        AnswerKind.VERSION,
        AnswerKind.NAME,
        AnswerKind.PROCEDURE,
        AnswerKind.LOCATION,
    }
)
#: How much a word of the unit's section heading counts against one of the unit itself.
HEADING_TERMS = 0.5
#: How much a word of the subject or the sentence before weighs against the question's own.
LEAD_TERMS = 0.5
#: What a unit limited to the customer's plan gains, and one limited to another plan, or to
#: a plan when the ticket names none (a general rule fits better), loses. A list whose item
#: labels the question names ("Books: 21 days" for "how long do books go out for") gains it.
SCOPE_BONUS = 0.1
#: An article unit with the resolved ticket's asked-for value replaces it when it scores
#: within this of it.
TWIN_MARGIN = 0.1
_VERSION_VALUE = _PATTERNS.compile(
    r"\b[A-Z][A-Za-z]{1,15} \d+(?:\.\d+)*\b|\bv?\d+\.\d+(?:\.\d+)*\b"
)
#: Cosine of two units' embeddings (or word overlap + 0.3) above which they say the same.
TWIN_SIMILARITY = 0.8
_MINIMUM_Q = _PATTERNS.compile(r"\b(?:minimum|min|oldest|lowest|at least|earliest)\b", re.I)
#: "Versions older than 5.0 can no longer sign in" gives the minimum too.
_MINIMUM_A = _PATTERNS.compile(
    r"\b(?:or newer|or later|or higher|at least|minimum|requires?|(?:older|earlier|lower) than)\b",
    re.I,
)
_MAXIMUM_Q = _PATTERNS.compile(r"\b(?:maximum|max|most|largest|biggest|limit|up to)\b", re.I)
_MAXIMUM_A = _PATTERNS.compile(
    # "The highest level, $10,000, is the most one unit can be covered for": a superlative
    # that says what the top is gives the maximum too.
    r"\b(?:up to|at most|maximum|no more than|limit|or less|or fewer|the most|the highest|"
    r"the largest|the biggest)\b",
    re.I,
)
#: "What commission do agents get if I don't set one?" asks for the default.
_DEFAULT_Q = _PATTERNS.compile(
    r"\b(?:if|when|unless) (?:i|we|you) (?:don't|do not|didn't|never|haven't) (?:set|choose|"
    r"pick|change|specify|configure|enter)\b|\bby default\b|\bdefault\b|\bout of the box\b",
    re.I,
)
_DEFAULT_A = _PATTERNS.compile(r"\b(?:default|by default|starts? with|out of the box)\b", re.I)
#: Pairs of what a question asks for and how a unit says it: a minimum, a maximum, a default.
_QUALIFIED = ((_MINIMUM_Q, _MINIMUM_A), (_MAXIMUM_Q, _MAXIMUM_A), (_DEFAULT_Q, _DEFAULT_A))
#: NAME questions whose focus any name answers.
_ANY_NAME = frozenset({"", "name", "command", "code"})
#: What customers call a setting, and how a text shows one: a bold label, a path, "turn on".
_SETTING = frozenset({"setting", "option", "switch", "toggle", "checkbox"})
_SETTING_NAMED = _PATTERNS.compile(
    r"\*\*[^*]{2,40}\*\*|\b(?:turn|switch|toggle) (?:on|off)\b|\b(?:enable|disable|tick)\b",
    re.I,
)
#: What follows a plan's name when the plan gives a value: "Harbour allows up to 10",
#: "Fleet up to 50", "Skiff accounts cannot".
_PLAN_GIVES = (
    r"(?:allows?|has|have|gets?|includes?|offers?|supports?|comes with|up to|accounts? "
    r"(?:can|cannot|can't|get|have)|\d)"
)
#: "We're on Harbour at the moment", "our account is on Fleet": the customer names a plan.
_ON_A_PLAN = _PATTERNS.compile(
    r"\b(?i:we(?:'re| are)|i(?:'m| am)|(?:our|my) (?:account|company|library|business|shop) is)"
    r"\s+(?i:currently\s+|still\s+|now\s+)?on\s+(?:the\s+)?([A-Z][a-z]+)\b"
)
_DEFINITE = _PATTERNS.compile(r"\bthe ([a-z]{5,})\b(?! of\b)")
_DIGIT = _PATTERNS.compile(r"\d")
_NAME = _PATTERNS.compile(r"(?<=[a-z,;:*] )[A-Z][\w-]*|\b[a-z]+[A-Z][\w-]*|`[^`]+`")
_QUESTION_SUBJECT = _PATTERNS.compile(
    r"\?\s*$|^(?:how|what|what's|which|where|when|why|who|is|are|can|could|do|does|will|should)\b",
    re.I,
)
#: A question that leans on what was said before it: "Is that possible?", "Which role should
#: I give her?" (the sentence before says what she needs to do).
_VAGUE = _PATTERNS.compile(
    r"\b(?:this|that|it|these|those|one|her|him|she|he|them)\b"
    # "Can each take payments in its own currency?": each of what the sentence before named.
    r"|\beach(?= (?:of (?:them|these|those|us)|can|could|will|would|has|have|take|get|use|keep|"
    r"need|needs|pay)\b)",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Scored:
    unit: Unit
    question: int  # index into the ticket's questions
    score: float
    typed: bool  # carries the kind of thing the question asks for
    answers: bool  # scores enough to answer it


class UnitScorer:
    """Scores every unit against every question of one ticket (one embedding batch)."""

    def __init__(
        self,
        ticket: Ticket,
        questions: Sequence[Question],
        units: Sequence[Unit],
        evidence: Sequence[Hit],
        embed: Embed | None,
    ) -> None:
        self.questions = list(questions)
        self.units = list(units)
        self.subject = ticket.subject.strip()
        self._framed = _framed_by_subject(self.subject, self.questions)
        prose = ticket_prose(ticket)
        self._ticket_text = prose.casefold()
        self._plans = _with_listed_plans(
            plan_names([prose, *(h.passage.text for h in evidence)]), self.units
        ) | _said_plans(prose, evidence)
        # A list of plans with their prices ("**Padlock**, $59 a month: ...") names them.
        priced = _priced_plans(self.units)
        self._plans |= frozenset(priced)
        # The plans the customer says they are on, in any sentence ("We're on Network."), and
        # the cheapest or dearest of the listed ones when they say so ("the cheapest plan").
        self._ticket_plans = frozenset(
            scope
            for sentence in re.split(r"(?<=[.!?])\s+|\n+", prose)
            for scope in scope_of(sentence, self._plans)[0]
            if scope.startswith("plan:")
        ) | _extreme_plan(prose, priced)
        # "OIDC" in the ticket, "OpenID Connect" in the evidence: the question is read with
        # the spelled-out name beside the short one.
        self._spelled = spelled_out(prose, [h.passage.text for h in evidence])
        weights = _rarity([h.passage.text for h in evidence])
        self._passage_texts = [h.passage.text.casefold() for h in evidence]
        # "If I don't set one" asks for the default, and its words ("set") are not the topic.
        self._terms = [
            _weights(
                _DEFAULT_Q.sub(" default ", self._expand(q.text)),
                weights,
                self._expand(self._lead(q)),
            )
            for q in self.questions
        ]
        self._unit_terms = [set(tokenize(u.text)) for u in self.units]
        self._unit_families = [{_family(t) for t in terms} - {""} for terms in self._unit_terms]
        # A sentence is read under its section's heading, which often names what the sentence
        # leaves unsaid ("Security keys ... protect you" under "How we protect you from
        # phishing"), and so does its article's title ("Texts are never sent at night" in
        # "Passenger notifications"); those words count HEADING_TERMS as much as its own.
        self._heading_terms = [
            set(tokenize(" ".join((_article_title(u), *u.passage.heading_path)))) - own
            for u, own in zip(self.units, self._unit_terms, strict=True)
        ]
        self._kinds: dict[str, frozenset[str]] = {}
        self._dense: npt.NDArray[np.float32] | None = None
        self._unit_vectors: npt.NDArray[np.float32] | None = None
        if embed is not None and self.units:
            # Each question twice: alone, and with what it leans on (the same text when it
            # leans on nothing); the better of the two counts, except for a vague question.
            texts = [self._expand(self._query(q)) for q in self.questions]
            texts += [self._expand(q.text) for q in self.questions]
            texts += [in_context(u) for u in self.units]
            texts += [u.sentences[0] for u in self.units if u.procedure]
            texts += [purpose(u) for u in self.units if u.procedure]
            # A resolved ticket's own question, for how alike the two customers' questions are.
            asked = sorted({u.passage.id: u.question for u in self.units if u.question}.items())
            texts += [question for _, question in asked]
            vectors = np.asarray(embed(texts), dtype=np.float32)
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = vectors / np.maximum(norms, 1e-12)
            n_q, n_u = len(self.questions), len(self.units)
            n_p = sum(1 for u in self.units if u.procedure)
            q_vecs, alone = vectors[:n_q], vectors[n_q : 2 * n_q]
            vectors = np.concatenate([vectors[:n_q], vectors[2 * n_q :]])
            u_vecs = vectors[n_q : n_q + n_u]
            clear = [k for k, q in enumerate(self.questions) if not _VAGUE.search(q.text)]

            def similarity(other: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
                """Each question against ``other``: the better of alone and after its lead."""
                out: npt.NDArray[np.float32] = q_vecs @ other.T
                if clear:
                    out[clear] = np.maximum(out[clear], alone[clear] @ other.T)
                return out

            dense = similarity(u_vecs)
            # A procedure is judged by its whole and by the sentence that introduces it.
            leads = vectors[n_q + n_u : n_q + n_u + n_p]
            purposes = vectors[n_q + n_u + n_p : n_q + n_u + 2 * n_p]
            columns = [k for k, u in enumerate(self.units) if u.procedure]
            if columns:
                dense[:, columns] = np.maximum(dense[:, columns], similarity(leads))
                # Steps say how, the section they sit under says what for: "Publishing a new
                # season", not "Changing a fare", is how to put a timetable on sale. What a
                # procedure is for counts only for a question that asks how to do something.
                how = [k for k, q in enumerate(self.questions) if q.kind is AnswerKind.PROCEDURE]
                if how:
                    purpose_sim = similarity(purposes)[how]
                    dense[np.ix_(how, columns)] = np.maximum(
                        dense[np.ix_(how, columns)], purpose_sim
                    )
            # A sentence from the answer to a question much like this one answers it too
            # ("why did one emoji double the bill?" for "why does a smiley cost more?").
            row = {pid: n_q + n_u + 2 * n_p + i for i, (pid, _) in enumerate(asked)}
            for k, unit in enumerate(self.units):
                if unit.passage.id in row:
                    alike = similarity(vectors[row[unit.passage.id]][None, :])[:, 0]
                    dense[:, k] = np.maximum(dense[:, k], (dense[:, k] + alike) / 2)
            # A sentence quoted with the one it points back at ("If a month falls below
            # that, ...") says what its first sentence says and more: it matches a question
            # at least as well as that sentence alone.
            alone_at = {
                (u.passage.id, u.sentences[0]): k
                for k, u in enumerate(self.units)
                if len(u.sentences) == 1 and u.shape == "sentence"
            }
            for k, unit in enumerate(self.units):
                if unit.shape == "sentence" and len(unit.sentences) > 1:
                    first = alone_at.get((unit.passage.id, unit.sentences[0]))
                    if first is not None:
                        dense[:, k] = np.maximum(dense[:, k], dense[:, first])
            self._dense = dense
            self._unit_vectors = u_vecs

    def _lead(self, question: Question) -> str:
        """What a question leans on: the subject ("Trial before we buy" for "do I need a card
        up front?"), and for a vague one the sentence before it too ("Is that possible?"). A
        clear question does without the sentence before it, which is often about something
        else ("Thinking of trying Brightwrench for my crew. How long is the trial?")."""
        text = question.text
        subject = self.subject if self._framed[self.questions.index(question)] else ""
        parts = (subject, question.context) if _VAGUE.search(text) else (subject,)
        return " ".join(p for p in parts if p and p.lower() not in text.lower())

    def _expand(self, text: str) -> str:
        """``text`` with each short name the evidence spells out followed by its long form."""
        for short, long in self._spelled.items():
            text = re.sub(rf"\b{re.escape(short)}\b", f"{short} ({long})", text)
        return text

    def _query(self, question: Question) -> str:
        """The question, after what it leans on."""
        return " ".join(p for p in (self._lead(question), question.text) if p)

    def lexical(self, q: int, u: int) -> float:
        weights = self._terms[q]
        total = sum(weights.values())
        if total <= 0:
            return 0.0
        own, heading = self._unit_terms[u], self._heading_terms[u]
        families = self._unit_families[u]
        # A word of one family counts as the word ("connect" for "connections").
        found = 0.0
        for term, weight in weights.items():
            if term in own or _family(term) in families:
                found += weight
            elif term in heading:
                found += HEADING_TERMS * weight
        return found / total

    def names(self, unit: Unit) -> tuple[frozenset[str], frozenset[str]]:
        """The names ``unit`` gives (capitalised inside a sentence, "iOS", or code): those the
        ticket also uses, and those it does not."""
        found = {name.strip("`").casefold() for name in _NAME.findall(unit.text)}
        used = frozenset(n for n in found if n in self._ticket_text)
        return used, frozenset(found - used)

    def qualifies(self, q: int, unit: Unit) -> bool:
        """False when question ``q`` asks for a minimum or a maximum and ``unit`` gives none."""
        text = self.questions[q].text
        return all(
            says.search(unit.text) or not asks.search(text)
            for asks, says in ((_MINIMUM_Q, _MINIMUM_A), (_MAXIMUM_Q, _MAXIMUM_A))
        )

    def plans_of(self, unit: Unit) -> frozenset[str]:
        """The plans ``unit`` limits itself to: "on the Network plan", "On Team, ...", or a
        bullet's label ("Branch: 25 GB"); not a plan it only mentions ("a trial with the
        features of the Network plan"). A bullet labelled with a plan is about that plan
        alone: "**Hospital**, $329: ... everything in Clinic plus ..." only mentions Clinic
        (round 12 of the drafter)."""
        labelled = {
            f"plan:{label}" for label in (_label(unit), _item_name(unit)) if label in self._plans
        }
        if labelled:
            return frozenset(labelled)
        found = {
            f"plan:{name}"
            for name in self._plans
            if re.search(rf"\b(?i:on|for|in)\s+(?:the\s+)?{re.escape(name.title())}\b", unit.text)
            # "Harbour allows up to 10 agents, Fleet up to 50": the plan gives the value.
            or re.search(rf"\b{re.escape(name.title())}\s+{_PLAN_GIVES}", unit.text)
        }
        return frozenset(found)

    def scope_fit(self, unit: Unit) -> float:
        """How the plans ``unit`` is limited to fit the customer's (0 for a general unit)."""
        plans = self.plans_of(unit)
        if not plans:
            return 0.0
        if plans & self._ticket_plans:
            return SCOPE_BONUS
        return -SCOPE_BONUS

    def alike(self, a: Unit, b: Unit) -> float | None:
        """Cosine of the embeddings of units ``a`` and ``b``; None without embeddings."""
        if self._unit_vectors is None:
            return None
        return float(
            self._unit_vectors[self.units.index(a)] @ self._unit_vectors[self.units.index(b)]
        )

    def case_words(self, unit: Unit, besides: Unit) -> frozenset[str]:
        """Words of the ticket that ``unit`` shares and ``besides``'s whole passage does not
        have ("association", "account" in "As a registered association member account, ..."
        for "Our association's account came through the members' scheme"): the customer's
        case, which a resolved answer can speak of where the article does not."""
        ticket = set(tokenize(self._ticket_text))
        other = set(tokenize(besides.passage.text.casefold()))
        return frozenset(
            w
            for w in ticket & set(tokenize(unit.text.casefold())) - other
            if len(w) >= 5 and not w[0].isdigit()
        )

    def dense(self, q: int, u: int) -> float | None:
        return None if self._dense is None else float(self._dense[q, u])

    def score(self, q: int, u: int) -> Scored:
        question, unit = self.questions[q], self.units[u]
        lexical = self.lexical(q, u)
        dense = self.dense(q, u)
        if dense is None:
            base = lexical
        else:
            # Shared terms help, but a question in other words than the answer ("smiley" for
            # "emoji") has only its meaning to go by.
            base = max(DENSE_WEIGHT * dense + (1 - DENSE_WEIGHT) * lexical, dense - DENSE_ALONE)
        # A procedure is what a "how do I" question asks for, however its first step reads.
        typed = has_answer(unit.text, question) or (
            question.kind is AnswerKind.PROCEDURE and unit.procedure
        )
        if typed and question.kind is AnswerKind.NAME and question.focus in _SETTING:
            # A setting is named as the label on the screen ("turn on **Require SSO**"),
            # whatever the ticket calls it (an option, a switch, a toggle); a procedure's
            # labels are the buttons on the way, not the setting asked for.
            where = " ".join((unit.text, unit.passage.title, *unit.passage.heading_path))
            if unit.procedure:
                typed = question.focus in where.lower()
            else:
                typed = bool(_SETTING_NAMED.search(unit.text)) or any(
                    word in where.lower() for word in _SETTING
                )
        elif typed and question.kind is AnswerKind.NAME and question.focus not in _ANY_NAME:
            # "Which event ...?" wants an event's name: where the unit or its section says so;
            # a procedure's steps only pass things on the way ("Pick the printer").
            text = "" if unit.procedure else unit.text
            where = " ".join((text, unit.passage.title, *unit.passage.heading_path))
            typed = (
                question.focus.rstrip("s")[:FAMILY_PREFIX] in where.lower()
                or (not unit.procedure and self._names_a(question.focus, unit))
                # ... unless a step calls a thing by name as one ("Sign in with the Owner
                # role" for "which role may change the plan?").
                or (unit.procedure and _called_a(question.focus, unit.text))
            )
        if question.kind in TYPED:
            base += TYPE_BONUS if typed else -TYPE_BONUS
        # "The minimum version" is not "the current version"; nor "up to" a typical value; nor
        # "you can set any rate" the default one.
        for asks, says in _QUALIFIED:
            if asks.search(question.text):
                base += TYPE_BONUS / 2 if says.search(unit.text) else -TYPE_BONUS / 2
        if question.kind is AnswerKind.PROCEDURE and unit.procedure:
            base += TYPE_BONUS / 2
        if question.kind is AnswerKind.DURATION:
            base += _side_fit(question.text, unit.text)
        if question.kind is AnswerKind.YES_NO and self._says_whether(q, unit):
            base += TYPE_BONUS
        if unit.from_article:
            base += ARTICLE_BONUS
        base += self.scope_fit(unit)
        if unit.shape == "list" and unit.narrowed(question.text) != unit:
            base += SCOPE_BONUS
        base -= 0.01 * min(unit.rank - 1, 3)  # passages added per question come last
        floor = MIN_LEXICAL_SCORE if dense is None else MIN_SCORE
        return Scored(unit, q, round(base, 4), typed, base >= floor)

    def _names_a(self, focus: str, unit: Unit) -> bool:
        """True when ``unit`` names something the evidence says is a ``focus`` ("Exports can
        be run by the Owner or a Regional Manager" for "which roles ...?", when a section on
        roles labels "**Regional Manager**: ..."; "Phone, on Warehouse" for "which plans
        ...?", Warehouse being a plan), though the unit never says the word itself."""
        known = self._kinds.get(focus)
        if known is None:
            known = self._kinds[focus] = self._kind_names(focus)
        text = unit.text.casefold()
        return any(re.search(rf"\b{re.escape(name)}\b", text) for name in known)

    def _kind_names(self, focus: str) -> frozenset[str]:
        """The names the evidence gives as ``focus`` things: the labels of the items of a
        section or article whose heading or title says the word ("The six roles" and its
        "**Owner**: ..."), and for a plan the plans the evidence names."""
        family = focus.rstrip("s")[:FAMILY_PREFIX]
        names = set(self._plans) if family == "plan" else set()
        for unit in self.units:
            where = " ".join((unit.passage.title, *unit.passage.heading_path)).casefold()
            if unit.shape == "item" and family in where and (name := _item_name(unit)):
                names.add(name)
        return frozenset(n for n in names if len(n) > 2 and n not in self._ticket_text)

    def _says_whether(self, q: int, unit: Unit) -> bool:
        """True when ``unit`` says whether something the question names (or its spelled-out
        form: "OIDC", "OpenID Connect") is supported or offered: "OpenID Connect is not
        supported" answers "Can we connect with OIDC instead?"."""
        if not _WHETHER.search(unit.text):
            return False
        question = self.questions[q]
        asked = self._expand(f"{question.text} {question.context}").casefold()
        return any(
            len(name) > 2 and name in asked for name in (n.casefold() for n in _names_of(unit.text))
        )

    def article_twin(self, scored: Scored) -> Scored | None:
        """An article unit that says what ``scored`` (from a resolved ticket) says."""
        if scored.unit.from_article:
            return None
        k = self.units.index(scored.unit)
        words = set(tokenize(scored.unit.text))
        # Not one that drops a name the ticket uses ("Android 10 or later, and the oldest app
        # version is 7.0" is not said by "The oldest app version is 7.0"): a name that gives a
        # value ("Android 10") must be in the article's unit, another one ("the plugin in
        # WordPress") in its unit or its passage, which the citation points to.
        named = self.names(scored.unit)[0]
        valued = {v.split(" ")[0].casefold() for v in _VERSION_VALUE.findall(scored.unit.text)}
        given = (
            _values(scored.unit.text) if self.questions[scored.question].kind in TYPED else set()
        )
        floor = scored.score - TWIN_MARGIN
        # A name the ticket uses that the unit gives a value for ("WooCommerce 7.0") must come
        # with a value in the article's unit too ("The WooCommerce connector is a plugin" does
        # not say which WooCommerce it needs).
        needed = {v.split("=", 1)[1].split(" ")[0] for v in given} & named
        best: tuple[float, int] | None = None
        for j, unit in enumerate(self.units):
            if (
                not unit.from_article
                # A resolved ticket's sentence is said by an article's steps only when one of
                # them gives its asked-for value ("The unit is held for them for 48 hours.").
                or (
                    unit.procedure != scored.unit.procedure
                    and not (unit.procedure and given and given <= _values(unit.text))
                )
                or not needed <= {v.split("=", 1)[1].split(" ")[0] for v in _values(unit.text)}
            ):
                continue
            own = self.names(unit)[0]
            passage = unit.passage.text.casefold()
            if not all(
                n in own or (n not in valued and (n in passage or self._common(n))) for n in named
            ):
                continue
            other = set(tokenize(unit.text))
            alike = len(words & other) / max(len(words | other), 1)
            if self._unit_vectors is not None:
                alike = max(alike, float(self._unit_vectors[k] @ self._unit_vectors[j]) - 0.3)
            if given & _values(unit.text) and self.score(scored.question, j).score >= floor:
                # The same asked-for value ("Android 10 or later"), answering nearly as well.
                alike = max(alike, TWIN_SIMILARITY - 0.3)
            if alike >= TWIN_SIMILARITY - 0.3 and (best is None or alike > best[0]):
                best = (alike, j)
        return None if best is None else self.score(scored.question, best[1])

    def _common(self, name: str) -> bool:
        """True for a name at least half the evidence passages use (the product's own name),
        which tells nothing about what one sentence says."""
        texts = self._passage_texts
        return bool(texts) and 2 * sum(name in t for t in texts) >= len(texts)

    def antecedent(self, scored: Scored) -> Scored | None:
        """The sentence of the same article that says what ``scored`` refers to as "the X"
        ("below the commitment") for this customer: it has the word X, a number, and a name
        the ticket uses that ``scored`` does not ("On the Business plan, we commit to 99.9%"
        for "We're on Business"); None when there is no such reference or sentence."""
        unit = scored.unit
        # Words of one family share their first letters ("commitment", "commit").
        wanted = {
            word[:FAMILY_PREFIX]
            for word in _DEFINITE.findall(unit.text)
            if word[:FAMILY_PREFIX] not in self._ticket_text
        }
        if not wanted:
            return None
        known = self.names(unit)[0]
        for k, other in enumerate(self.units):
            if (
                other is unit
                or other.passage.doc_id != unit.passage.doc_id
                or not wanted & {t[:FAMILY_PREFIX] for t in self._unit_terms[k] if len(t) >= 5}
                or not _DIGIT.search(other.text)
                or not self.names(other)[0] - known
            ):
                continue
            return self.score(scored.question, k)
        return None

    def ranked(self, q: int) -> list[Scored]:
        scored = [self.score(q, u) for u in range(len(self.units))]
        # Of a sentence alone and with the one that points back at it, equal: the two.
        return sorted(
            scored,
            key=lambda s: (-s.score, s.unit.rank, s.unit.position, -len(s.unit.sentences)),
        )


#: A question for the time allowed to do something, which a deadline ("within 10 seconds")
#: answers.
_ASKS_DEADLINE = re.compile(
    r"\b(?:deadline|time limit|timeout|time-out|how long do (?:i|we|you|they) have)\b", re.I
)
#: The roles (``facts.role_of``) of a duration before an event and after one.
_SIDES = frozenset({"lead", "delay"})


def _side_fit(question: str, text: str) -> float:
    """ "How long before the trip ...?" is answered by "21 days before departure", not by "2
    days after the departure has sailed" (and the other way round): half the type bonus for a
    duration on the asked side of its event, minus as much for one only on the other side."""
    roles = {role_of(text, q) for q in quantities(text) if q.dimension == "duration"}
    if _ASKS_DEADLINE.search(question) and "deadline" in roles:
        # "What's the deadline for the endpoint to respond?": "within 10 seconds", not "retried
        # over 12 hours".
        return TYPE_BONUS / 2
    wanted = event_side(question)
    if not wanted:
        return 0.0
    sides = roles & _SIDES
    if wanted in sides:
        return TYPE_BONUS / 2
    return -TYPE_BONUS / 2 if sides else 0.0


def _said_plans(prose: str, evidence: Sequence[Hit]) -> frozenset[str]:
    """Plans the customer says they are on ("We're on Harbour") that the evidence also names
    as a plan would be named ("on Harbour", "Harbour allows ..."), lowercased."""
    said = {m.group(1) for m in _ON_A_PLAN.finditer(prose)}
    texts = [h.passage.text for h in evidence]
    return frozenset(
        name.lower()
        for name in said
        if any(
            re.search(rf"\b(?i:on|for|in)\s+{name}\b|\b{name}\s+{_PLAN_GIVES}", text)
            for text in texts
        )
    )


#: A sentence that says whether a thing is there: "X is not supported", "Y is available".
_WHETHER = _PATTERNS.compile(
    r"\b(?:is|are)(?: not| no longer)? (?:supported|available|offered|included|possible)\b"
    r"|\b(?:isn't|aren't) (?:supported|available|offered|included|possible)\b",
    re.I,
)
#: Names in a sentence: capitalised words and runs of them ("OpenID Connect"), code.
_NAME_RUN = _PATTERNS.compile(r"`[^`]+`|\b[A-Z][\w-]*(?: [A-Z][\w-]*)*")


def _names_of(text: str) -> list[str]:
    return [m.strip("`") for m in _NAME_RUN.findall(text)]


_ACRONYM = _PATTERNS.compile(r"\b[A-Z][A-Z0-9]{1,5}\b")
_WORDS = _PATTERNS.compile(r"[A-Za-z0-9][\w']*")


def spelled_out(ticket: str, texts: Sequence[str]) -> dict[str, str]:
    """Short names of the ticket ("OIDC", "SSO") that the evidence spells out but does not
    use itself, with the long form: a run of capitalised words whose capitals spell the
    short name ("OpenID Connect"), or words before it in brackets ("single sign-on (SSO)")
    when the evidence does use both. A short name the evidence uses as it is needs nothing."""
    wanted = {a for a in _ACRONYM.findall(ticket) if sum(c.isalpha() for c in a) >= 2}
    found: dict[str, str] = {}
    for short in sorted(wanted):
        used = any(re.search(rf"(?<!\()\b{re.escape(short)}\b(?!\))", t) for t in texts)
        defined = re.compile(
            rf"((?:[A-Za-z][\w'-]*\s+){{1,{len(short) + 1}}})\({re.escape(short)}\)"
        )
        for text in texts:
            match = defined.search(text)
            if match is not None:
                words = re.split(r"[\s-]+", match.group(1).strip())
                tail = _initials_tail(words, short)
                if tail:
                    found[short] = tail
                    break
            if used:
                continue
            words = _WORDS.findall(text)
            for i in range(len(words)):
                caps = ""
                for j in range(i, min(i + len(short), len(words))):
                    if not words[j][0].isupper():
                        break
                    caps += "".join(c for c in words[j] if c.isupper() or c.isdigit())
                    if not short.startswith(caps):
                        break
                    if caps == short and j > i:
                        found[short] = " ".join(words[i : j + 1])
                        break
                if short in found:
                    break
            if short in found:
                break
    return found


def _initials_tail(words: Sequence[str], short: str) -> str:
    """The last words of ``words`` whose first letters spell ``short`` ("single sign on" for
    "SSO"); empty when none do."""
    n = len(short)
    tail = [w for w in words if w][-n:]
    if len(tail) == n and "".join(w[0] for w in tail).upper() == short.upper():
        return " ".join(tail)
    return ""


#: Words of one family share their first letters: "connect", "connection", "connector".
FAMILY_PREFIX = 6


def _family(term: str) -> str:
    """The family of a stemmed term (its first ``FAMILY_PREFIX`` letters), or empty for a
    term too short to tell ("order" and "ordinal" are not one family)."""
    return term[:FAMILY_PREFIX] if len(term) > FAMILY_PREFIX else ""


def _article_title(unit: Unit) -> str:
    """The title of the article ``unit`` comes from; empty for a resolved ticket, whose
    "title" is its customer's question."""
    return unit.passage.title if unit.from_article else ""


def _values(text: str) -> set[str]:
    """The values ``text`` states: quantities in their base unit, and versions."""
    found = {f"{q.dimension}={q.base_value}" for q in quantities(text)}
    return found | {f"version={v.casefold()}" for v in _VERSION_VALUE.findall(text)}


_BOLD_LEAD = _PATTERNS.compile(r"^\*\*([^*]{2,40})\*\*")


def _item_name(unit: Unit) -> str:
    """What a bullet names, lowercased: its bold lead ("**Regional Manager**: ...",
    "**Padlock**, $59 a month: ...") or else its label before the colon."""
    bold = _BOLD_LEAD.match(unit.text)
    if bold:
        return bold.group(1).strip().casefold()
    label = _label(unit)
    return label if len(label.split()) <= 3 else ""


def _priced_plans(units: Sequence[Unit]) -> dict[str, Decimal]:
    """The plans a list of plans names with a price ("**Padlock**, $59 a month: ..." under
    "The four plans"), lowercased, with the first price each item gives."""
    found: dict[str, Decimal] = {}
    for unit in units:
        where = " ".join((unit.passage.title, *unit.passage.heading_path)).casefold()
        bold = _BOLD_LEAD.match(unit.text)
        if unit.shape != "item" or "plan" not in where or bold is None:
            continue
        prices = [q for q in quantities(unit.text) if q.dimension.split("/")[0] in MONEY]
        if prices:
            found.setdefault(bold.group(1).strip().casefold(), prices[0].base_value)
    return found


#: "We'd like to start on the cheapest plan", "our top plan".
_CHEAPEST = _PATTERNS.compile(
    r"\b(?:the|your)\s+(?:cheapest|lowest|smallest|least expensive|entry(?:-level)?)\s+"
    r"(?:plan|tier)\b",
    re.I,
)
_DEAREST = _PATTERNS.compile(
    r"\b(?:the|your)\s+(?:dearest|priciest|most expensive|highest|biggest|largest|top)\s+"
    r"(?:plan|tier)\b",
    re.I,
)


def _extreme_plan(prose: str, priced: dict[str, Decimal]) -> frozenset[str]:
    """The listed plan the customer means by "the cheapest plan" or "the top plan"."""
    if len(priced) < 2:
        return frozenset()
    out: set[str] = set()
    if _CHEAPEST.search(prose):
        out.add(f"plan:{min(priced, key=lambda name: priced[name])}")
    if _DEAREST.search(prose):
        out.add(f"plan:{max(priced, key=lambda name: priced[name])}")
    return frozenset(out)


def _label(unit: Unit) -> str:
    """A bullet's label, lowercased ("branch" for "Branch: 25 GB"); empty for other units."""
    return unit.text.split(":", 1)[0].strip().casefold() if unit.shape == "item" else ""


def _with_listed_plans(plans: frozenset[str], units: Sequence[Unit]) -> frozenset[str]:
    """``plans`` and the labels of bullets listed beside a plan's ("Solo: 5 GB", "Branch:
    25 GB", "Network: 100 GB"): a list with one plan as a label is a list of plans."""
    labels: dict[str, set[str]] = {}
    for unit in units:
        if label := _label(unit):
            labels.setdefault(unit.passage.id, set()).add(label)
    found = set(plans)
    for siblings in labels.values():
        if siblings & plans:
            found |= {label for label in siblings if len(label.split()) == 1}
    return frozenset(found)


def in_context(unit: Unit) -> str:
    """The text of ``unit`` to embed: a bullet with no lead sentence under its section's
    heading, which says what the bullet's fragment is about ("Branch: 25 GB" under "Storage
    per plan"); any other unit as it is."""
    heading = unit.passage.heading_path[-1] if unit.passage.heading_path else ""
    if unit.shape != "item" or not heading:
        return unit.text
    return f"{heading}: {unit.text}"


def purpose(unit: Unit) -> str:
    """What a procedure is for, as its article's title and section heading say ("Routes and
    timetables. Publishing a new season"); its first step when there is neither."""
    named = [unit.passage.title, *unit.passage.heading_path]
    text = ". ".join(dict.fromkeys(n.strip() for n in named if n.strip()))
    return text or unit.sentences[0]


def _framed_by_subject(subject: str, questions: Sequence[Question]) -> list[bool]:
    """Which questions the subject speaks for. A topic ("Trial before we buy") frames every
    question; a subject that is itself a question ("How long are keys stored?") restates one
    of them, the one it shares most words with, and says nothing about the others."""
    if len(questions) < 2 or not _QUESTION_SUBJECT.search(subject):
        return [True] * len(questions)
    words = set(tokenize(subject))
    shared = [len(words & set(tokenize(q.text))) for q in questions]
    best = shared.index(max(shared))
    return [k == best for k in range(len(questions))]


def _called_a(focus: str, text: str) -> bool:
    """True when ``text`` names something as a ``focus`` in so many words: "the Owner role",
    "the **Billing** tab" for ``role`` and ``tab``."""
    noun = re.escape(focus.rstrip("s"))
    return re.search(rf"(?:\b[A-Z][\w-]*|\*\*[^*]{{1,40}}\*\*)\s+{noun}s?\b", text) is not None


def _rarity(texts: Sequence[str]) -> dict[str, float]:
    """Each term's rarity across the evidence passages (a smoothed idf)."""
    docs = [set(tokenize(t)) for t in texts]
    n = max(len(docs), 1)
    counts: dict[str, int] = {}
    for doc in docs:
        for term in doc:
            counts[term] = counts.get(term, 0) + 1
    return {t: math.log(1 + (n + 1) / (c + 0.5)) for t, c in counts.items()}


def _weights(text: str, rarity: dict[str, float], lead: str = "") -> dict[str, float]:
    """The question's terms weighted by rarity; a term no passage uses weighs most, so that
    a question about something the evidence never mentions matches it poorly. Terms only
    the ``lead`` (the subject, the sentence before) has weigh ``LEAD_TERMS`` as much: the
    question's own words say what is asked ("expire" in "do the ones we buy expire?")."""
    top = max(rarity.values(), default=1.0)
    own = set(tokenize(text))
    weights = {t: rarity.get(t, top) for t in own}
    for term in set(tokenize(lead)) - own:
        weights[term] = LEAD_TERMS * rarity.get(term, top)
    return weights


_PATTERNS.save()
