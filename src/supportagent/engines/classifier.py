"""The offline classifier's rules: which bucket a ticket goes to, decided by patterns alone.

Patterns live in ``classifier_rules.toml`` next to this module. The order in which reason codes
win is fixed here, in ``classify_by_rules``, so it reads like the triage policy it implements.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from supportagent.domain import NEAR_RISK, Bucket, Classification, SafetyResult, Ticket
from supportagent.engines.issue_model import (
    IssueModel,
    default_issue_model,
    issue_features,
    issue_marks,
)
from supportagent.engines.multilingual_triage import (
    MultilingualTriage,
    default_multilingual_triage,
)
from supportagent.engines.request_model import Asked, RequestModel, shipped_request_model
from supportagent.engines.triage_model import TriageModel, default_model, ticket_features
from supportagent.language import ENGLISH, detect_language, language_of
from supportagent.regexcache import ProgramCache
from supportagent.retrieval.dense import Embedder, OnnxMiniLM
from supportagent.retrieval.exemplars import ExemplarIndex, load_exemplars
from supportagent.ruletable import (
    Together,
    parse_rule_table,
    read_rule_file,
    row_match,
    rule_entry,
    rule_examples,
    rule_patterns,
    text_since,
)
from supportagent.sentences import ticket_sentences
from supportagent.textnorm import canonical, prose

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

DEFAULT_RULES_FILE = "classifier_rules.toml"
#: Confidence when a strong pattern (or the safety gate) decided.
STRONG_CONFIDENCE = 0.9
#: Confidence of the fall-through: nothing matched, so we treat the ticket as a question.
DEFAULT_CONFIDENCE = 0.6
#: The safety category that means "the service is down", routed like a bug report.
OUTAGE_CATEGORY = "service_outage"

#: Every reason code a pattern rule may carry, and the bucket it sends a ticket to.
RULE_BUCKETS: dict[str, Bucket] = {
    "prompt_injection": Bucket.NEEDS_HUMAN,
    "money_specific": Bucket.NEEDS_HUMAN,
    "account_specific": Bucket.NEEDS_HUMAN,
    "human_requested": Bucket.NEEDS_HUMAN,
    "bug_report": Bucket.NOT_A_QUESTION,
    "feature_request": Bucket.NOT_A_QUESTION,
    "feedback": Bucket.NOT_A_QUESTION,
}

# Words that carry no request on their own: a ticket made only of these is empty.
_FILLER_TEXT = """
    a an and are as at be by can could do for from hi hello hey dear team support thanks thank
    thx ty you your please pls plz help me my i we us our it is this that the to of on in or
    ok okay yes no test testing asdf qwerty question issue problem urgent asap hola bonjour hallo
    ciao regards best cheers sir madam there all anyone somebody someone about regarding re fw
    fwd subject hello
    """
_FILLER = frozenset(_FILLER_TEXT.split())
_CONTENT_WORD = _PATTERNS.compile(r"[^\W\d_]{2,}")
#: A subject line alone needs this many content words to be a request ("SDK crashes on start"),
#: not just a topic ("Question about invoices").
MIN_SUBJECT_ONLY_WORDS = 2
# A clause that opens a hypothetical: what follows describes a case, not an incident.
_CONDITIONAL = _PATTERNS.compile(
    r"\b(?:if|in\s+case|suppose|supposing|unless|what\s+happens)\b", re.I
)
_CLAUSE_BREAK = _PATTERNS.compile(r"[.!?;\n]")
# A ticket that asks in general or about doing it oneself ("How do I delete my account
# myself?", "who may change the owner, for our volunteer handbook?"): a rule with
# `skip_general` leaves it to the sentence-level request model and the triage model.
_GENERAL = _PATTERNS.compile(
    r"\b(?:in\s+general|generally|myself|ourselves|on\s+my\s+own|just\s+wondering|"
    r"out\s+of\s+curiosity|hypothetically|reading\s+up|for\s+future\s+reference|"
    # the same in other languages: "en general", "im Allgemeinen", "en règle générale"
    r"en\s+general|por\s+lo\s+general|en\s+g[ée]n[ée]ral|en\s+r[eè]gle\s+g[ée]n[ée]rale|"
    r"im\s+allgemeinen|grunds[äa]tzlich|generell|em\s+geral|in\s+generale|"
    r"in\s+het\s+algemeen|"
    # asking what it would take before deciding (round 8): "the steps, before we commit"; and
    # before buying at all, or saying nothing has happened (round 19): "before we sign up",
    # "I haven't bought anything yet", "nothing is wrong right now", "just want to know"
    r"before\s+(?:i|we)\s+(?:decide|commit|go\s+ahead|make\s+up\s+(?:my|our)\s+minds?|buy|book"
    r"|order|purchase|sign\s+up|subscribe|join|register)|"
    r"(?:haven't|have\s+not|didn't|did\s+not)\s+(?:bought|booked|ordered|purchased|paid\s+for)"
    r"\s+anything|nothing(?:'s|\s+is)\s+wrong\s+(?:right\s+)?(?:now|yet|at\s+the\s+moment)|"
    r"(?:i|we)\s+just\s+(?:want|wanted|need)\s+to\s+know|"
    r"je\s+me\s+renseigne|(?:encore\s+)?rien\s+achet[ée]|avant\s+d'acheter|"
    r"voordat\s+(?:ik|we|wij)\s+(?:\S+\s+){0,4}?(?:koop|kopen|boek|boeken|bestel|bestellen)\b|"
    r"wil\s+het\s+(?:gewoon|alleen)\s+weten|"
    r"antes\s+de\s+(?:comprar|reservar|contratar|pedir)|solo\s+quiero\s+saber|"
    r"s[óo]\s+quero\s+saber|bevor\s+(?:ich|wir)\s+(?:\S+\s+){0,4}?(?:kaufe|kaufen|buche|buchen"
    r"|bestelle|bestellen)\b|noch\s+nichts\s+gekauft|"
    r"(?:our|the|a)\s+(?:[\w']+\s+){0,2}?(?:policy|policies|handbook|faq|guidelines))\b",
    re.IGNORECASE,
)
#: A ticket that asks in general keeps a model's money or account decision only when one of its
#: sentences reads at least this much like an ask (round 6; between the floor and the threshold).
GENERAL_FLOOR = 0.5
_QUESTION_OPENER = _PATTERNS.compile(
    r"^\s*(?:how|what|where|when|why|which|who|can|could|would|will|is|are|do|does|did|should)\b",
    re.IGNORECASE | re.MULTILINE,
)


@dataclass(frozen=True)
class ClassifierRule:
    """A named set of patterns that, when one matches, gives a ticket ``reason_code``."""

    name: str
    reason_code: str
    patterns: tuple[re.Pattern[str], ...]
    unless_question: bool = False
    skip_conditional: bool = False
    #: The rule does not apply to a ticket that asks in general or about self-service.
    skip_general: bool = False
    #: The rule applies only to a ticket of at most this many words of prose (0: any length):
    #: a ticket made of sentiment alone is short; a long issue that ends "Thanks!" is not.
    max_words: int = 0
    examples: tuple[str, ...] = ()
    not_examples: tuple[str, ...] = ()
    #: Facets one sentence must hold together (``ruletable.Together``), tried after
    #: ``patterns``.
    together: Together | None = None

    @property
    def bucket(self) -> Bucket:
        return RULE_BUCKETS[self.reason_code]

    def find(self, text: str) -> re.Match[str] | None:
        if self.unless_question and _asks_question(text):
            return None
        if self.max_words and len(text.split()) > self.max_words:
            return None
        if self.skip_general and _GENERAL.search(text):
            return None
        skip = (lambda start: _in_hypothetical(text, start)) if self.skip_conditional else None
        return row_match(self.patterns, self.together, text, skip)


def classify_by_rules(
    ticket: Ticket, safety: SafetyResult, rules: Sequence[ClassifierRule] | None = None
) -> Classification:
    """Bucket a ticket by patterns, in priority order; unmatched tickets are questions."""
    table = load_classifier_rules() if rules is None else tuple(rules)
    # Injections are read in full (an instruction inside a code block is still one); every
    # other rule reads prose, so that no identifier in code can fire it.
    if found := _first(table, "prompt_injection", canonical(ticket.text)):
        return found
    text = prose(ticket.text)
    if _is_empty(ticket):
        return Classification(
            Bucket.NEEDS_HUMAN, "empty_ticket", "the ticket asks nothing", STRONG_CONFIDENCE
        )
    if safety.auto_escalate:
        reason = f"safety gate escalates: rule {safety.matched_rule!r} ({safety.category})"
        return Classification(Bucket.NEEDS_HUMAN, safety.reason_code, reason, STRONG_CONFIDENCE)
    for code in ("money_specific", "account_specific", "human_requested"):
        if found := _first(table, code, text):
            return found
    if safety.category == OUTAGE_CATEGORY:
        reason = f"safety gate reports an outage: matched {safety.matched_text!r}"
        return Classification(Bucket.NOT_A_QUESTION, "outage", reason, STRONG_CONFIDENCE)
    for code in ROUTING_CODES:
        if found := _first(table, code, text):
            return found
    return Classification(
        Bucket.ANSWERABLE, "question", "no rule matched; treated as a question", DEFAULT_CONFIDENCE
    )


#: Rule reason codes that route a ticket away as not a question.
ROUTING_CODES = ("bug_report", "feature_request", "feedback")


def sure_by_rules(
    ticket: Ticket, safety: SafetyResult, rules: Sequence[ClassifierRule] | None = None
) -> Classification | None:
    """What the rules are sure of (an injection, an empty ticket, a risk, a money or account
    request, a request for a person, an outage, a bug report, a feature request, feedback),
    or None: then the triage model decides."""
    decision = classify_by_rules(ticket, safety, rules)
    return None if decision.reason_code == "question" else decision


def routing_matches(ticket: Ticket, rules: Sequence[ClassifierRule] | None = None) -> list[str]:
    """The routing rules' reason codes that match ``ticket`` (features for the model)."""
    table = load_classifier_rules() if rules is None else tuple(rules)
    text = prose(ticket.text)
    return [code for code in ROUTING_CODES if _first(table, code, text) is not None]


class Classifier:
    """Rules for what they are sure of, then the triage model; a ticket is answerable only when
    the model positively recognises a question, else it escalates as ``uncertain``."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        model: TriageModel | None = None,
        rules: Sequence[ClassifierRule] | None = None,
        multilingual: MultilingualTriage | None = None,
        issue_model: IssueModel | None = None,
        *,
        issue_stage: bool = True,
        request_models: dict[str, RequestModel] | None = None,
        request_stage: bool = True,
    ) -> None:
        self._embedder = embedder
        self._model = model
        self._rules = tuple(rules) if rules is not None else None
        self._multilingual = multilingual
        self._issue_model = issue_model
        self._issue_stage = issue_stage
        self._request_models = request_models
        self._request_stage = request_stage
        self._exemplars: ExemplarIndex | None = None

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = OnnxMiniLM()
        return self._embedder

    @property
    def model(self) -> TriageModel:
        return self._model or default_model()

    @property
    def issue_model(self) -> IssueModel:
        return self._issue_model or default_issue_model()

    def classify(self, ticket: Ticket, safety: SafetyResult) -> Classification:
        # Whoever decides, a ticket the gate found near a risk is not answered (round 7).
        return not_answered_near_a_risk(self._decide(ticket, safety), safety)

    def _decide(self, ticket: Ticket, safety: SafetyResult) -> Classification:
        sure = sure_by_rules(ticket, safety, self._rules)
        if sure is not None and sure.reason_code not in OVERRULABLE_CODES:
            return sure
        scored = self._request_score(ticket) if self._request_stage else None
        if scored is not None and scored[0].probability >= scored[1].threshold:
            return self._as_request(ticket, *scored)
        if sure is not None:
            return self._asks_how(ticket, sure) if self._issue_stage else sure
        language = detect_language(ticket.text)
        if language.reliable and language.code != ENGLISH:
            return self._agreed(self._not_in_english(ticket, language.name), scored, ticket)
        routing = routing_matches(ticket, self._rules)
        decided, leading = self._by_model(ticket, routing)
        if self._issue_stage:
            decided = self._second_look(ticket, decided, leading, routing)
        return self._agreed(decided, scored, ticket)

    def _request_model(self, ticket: Ticket) -> tuple[RequestModel, Embedder] | None:
        """The request model and embedder for ``ticket``'s language (the safety gate's
        choice, so the sentence vectors come from the memo), or None when there is none."""
        code = language_of(ticket.text)
        if code in (None, ENGLISH):
            embedder: Embedder = self.embedder
        else:
            from supportagent.retrieval.multilingual import multilingual_available

            if not multilingual_available():
                return None
            embedder = _multilingual_embedder()
        models = self._request_models
        model = (
            models.get(embedder.model_id)
            if models is not None
            else shipped_request_model(embedder.model_id)
        )
        return None if model is None else (model, embedder)

    def _request_score(self, ticket: Ticket) -> tuple[Asked, RequestModel] | None:
        """The sentence most likely to ask us to act on the writer's own money or account,
        with the model that scored it (``engines/request_model.py``); None without one."""
        found = self._request_model(ticket)
        units = ticket_sentences(ticket)
        if found is None or not units:
            return None
        model, embedder = found
        asked = model.strongest(embedder.embed(units))
        return None if asked is None else (asked, model)

    def _as_request(self, ticket: Ticket, asked: Asked, model: RequestModel) -> Classification:
        """A person decides: one sentence asks for an action on the writer's money or account,
        whatever else the ticket asks."""
        units = ticket_sentences(ticket)
        sentence = " ".join(units[asked.index].split())[:120]
        what = "money" if asked.code == "money_specific" else "account"
        reason = (
            f"{asked.code}: the sentence {sentence!r} asks us to act on the writer's own "
            f"{what} (request model {asked.probability:.2f}, needs {model.threshold:.2f})"
        )
        return Classification(
            Bucket.NEEDS_HUMAN, asked.code, reason, round(asked.probability, 3), "requests"
        )

    def _agreed(
        self,
        decided: Classification,
        scored: tuple[Asked, RequestModel] | None,
        ticket: Ticket | None = None,
    ) -> Classification:
        """A money or account decision of a model (the triage model, or the multilingual
        route), not a rule, stands only when the request model finds some ask in the ticket
        (at least its ``floor``); otherwise the ticket still goes to a person, as
        ``uncertain``, with both scores: "what is your refund policy?" is no request. Since
        round 6 the same holds for a ticket that says it asks in general ("in general",
        "for our handbook", the rules' ``skip_general`` pattern) when no sentence reaches
        ``GENERAL_FLOOR`` (an ask at 0.67 beside "in general I'm happy" stays money)."""
        if (
            scored is None
            or decided.decided_by != "model"
            or decided.reason_code not in ("money_specific", "account_specific")
        ):
            return decided
        asked, model = scored
        in_general = ticket is not None and _GENERAL.search(prose(ticket.text)) is not None
        floor = max(model.floor, GENERAL_FLOOR) if in_general else model.floor
        if asked.probability >= floor:
            return decided
        if asked.probability >= model.floor:  # above the model's floor: the general words
            reason = (
                f"{decided.reason}; but the ticket asks in general and no sentence reads as a "
                f"request about the writer's own money or account (request model "
                f"{asked.probability:.2f}, below {GENERAL_FLOOR:.2f} for a ticket that asks "
                f"in general)"
            )
        else:
            reason = (
                f"{decided.reason}; but no sentence reads as a request about the writer's own "
                f"money or account (request model {asked.probability:.2f}, below "
                f"{model.floor:.2f})"
            )
        return replace(decided, reason_code="uncertain", reason=reason)

    def _not_in_english(self, ticket: Ticket, language: str) -> Classification:
        """The model reads MiniLM vectors, which only mean something in English: the triage
        exemplars under the multilingual model decide instead, when installed."""
        route = (
            self._multilingual
            if self._multilingual is not None
            else (default_multilingual_triage())
        )
        decided = route.classify(ticket, language) if route is not None else None
        if decided is not None:
            return decided
        reason = (
            f"no rule matched; the triage model reads English only and the ticket is in {language}"
        )
        return Classification(Bucket.ANSWERABLE, "question", reason, DEFAULT_CONFIDENCE)

    def _by_model(self, ticket: Ticket, routing: Sequence[str]) -> tuple[Classification, Bucket]:
        """The triage model's bucket for an English ticket no rule was sure of, and its
        leading guess (the bucket itself, unless no bucket had a majority); ``routing`` are
        the routing rules that matched."""
        p = self.model.probabilities(ticket_features(ticket, routing, self.embedder))
        scores = ", ".join(f"{b.value} {v:.2f}" for b, v in p.items())
        bucket = max(p, key=lambda b: p[b])
        if p[bucket] < self.model.answerable_min:
            # No bucket has a majority: a person decides, whatever the top guess was.
            reason = (
                f"no bucket is clear: {scores}; a decision needs {self.model.answerable_min:.2f}"
            )
            unclear = Classification(
                Bucket.NEEDS_HUMAN, "uncertain", reason, round(p[bucket], 3), "model"
            )
            return unclear, bucket
        if bucket is Bucket.ANSWERABLE:
            reason = f"recognised as a question about the product ({scores})"
            return Classification(bucket, "question", reason, round(p[bucket], 3), "model"), bucket
        code = self._reason_within(ticket, bucket, routing)
        reason = f"reads as {code.replace('_', ' ')} ({scores})"
        return Classification(bucket, code, reason, round(p[bucket], 3), "model"), bucket

    def _second_look(
        self, ticket: Ticket, decided: Classification, leading: Bucket, routing: Sequence[str]
    ) -> Classification:
        """The issue-tracker stage: a ticket the triage model took for a question is routed
        when the issue model reads it as a bug report or a feature request. In issue-tracker
        register (the register model sure of it) the threshold is looser, and a ticket the
        triage model could not place (``uncertain``, its leading guess not a person) is
        decided by the issue model. Nothing else is revisited: a risk, a money or account
        decision, a leaning towards a person, and what the rules routed stand."""
        question = decided.bucket is Bucket.ANSWERABLE and decided.reason_code == "question"
        unplaced = decided.reason_code == "uncertain" and leading is not Bucket.NEEDS_HUMAN
        if not (question or unplaced):
            return decided
        issues = self.issue_model
        features = issue_features(ticket, self.embedder)
        p = issues.question_probability(features)
        if question and p < issues.route_below:
            return self._as_issue(ticket, decided, routing, p, issues.route_below)
        if issues.register is None:
            return decided
        register = issues.register_probability(features)
        if register < issues.register_min:
            return decided
        where = f"issue-tracker register {register:.2f}"
        if question:
            if p < issues.register_route_below:
                return self._as_issue(
                    ticket, decided, routing, p, issues.register_route_below, where
                )
            return decided
        if p < issues.uncertain_question_from:
            return self._as_issue(
                ticket, decided, routing, p, issues.uncertain_question_from, where
            )
        reason = (
            f"reads as a usage question ({where}; question {p:.2f}, from "
            f"{issues.uncertain_question_from:.2f}); the triage model had said: {decided.reason}"
        )
        return Classification(Bucket.ANSWERABLE, "question", reason, round(p, 3), "issues")

    def _asks_how(self, ticket: Ticket, routed: Classification) -> Classification:
        """A bug-report rule's route overturned: in issue-tracker register, an English issue
        that asks how to do something ("I get a TypeError when ..., how do I ...?", "is there
        a way to ...?") is a usage question when the issue model is sure of it. A bug told as
        "why does X fail?" asks no such thing, and stays routed."""
        issues = self.issue_model
        if routed.reason_code != "bug_report" or issues.register is None:
            return routed
        marks = issue_marks(ticket.text)
        if not (marks["how_do_i"] or marks["is_it_possible"]):
            return routed
        language = detect_language(ticket.text)
        if language.reliable and language.code != ENGLISH:
            return routed
        features = issue_features(ticket, self.embedder)
        register = issues.register_probability(features)
        p = issues.question_probability(features)
        if register < issues.register_min or p < issues.rule_question_from:
            return routed
        reason = (
            f"asks how to use it, in issue-tracker register {register:.2f} (question {p:.2f}, "
            f"from {issues.rule_question_from:.2f}); the rules had said: {routed.reason}"
        )
        return Classification(Bucket.ANSWERABLE, "question", reason, round(p, 3), "issues")

    def _as_issue(
        self,
        ticket: Ticket,
        decided: Classification,
        routing: Sequence[str],
        p: float,
        below: float,
        where: str = "",
    ) -> Classification:
        code = self._reason_within(ticket, Bucket.NOT_A_QUESTION, routing, ISSUE_CODES)
        reason = (
            f"reads as an issue report, not a usage question ({where + '; ' if where else ''}"
            f"question {p:.2f} against {below:.2f}); the triage model had said: {decided.reason}"
        )
        return Classification(Bucket.NOT_A_QUESTION, code, reason, round(1 - p, 3), "issues")

    def _reason_within(
        self,
        ticket: Ticket,
        bucket: Bucket,
        routing: Sequence[str],
        among: Sequence[str] | None = None,
    ) -> str:
        """The reason code inside ``bucket``: a routing rule that matched, else the nearest
        exemplar class of that bucket (of ``among`` when given)."""
        routed = [code for code in routing if among is None or code in among]
        if bucket is Bucket.NOT_A_QUESTION and routed:
            return routed[0]
        if self._exemplars is None:
            self._exemplars = ExemplarIndex(load_exemplars("triage"), self.embedder)
        labels = [c for c, b in EXEMPLAR_BUCKETS.items() if b is bucket and c in (among or [c])]
        sims = self._exemplars.similarities(self.embedder.embed([ticket.text]))
        scores = self._exemplars.label_scores(sims)
        return max(labels, key=lambda label: float(scores[label][0]))


def not_answered_near_a_risk(decided: Classification, safety: SafetyResult) -> Classification:
    """Fail closed near a risk: a ticket the gate let through although one of its sentences
    came near a risk (reason ``near_risk``) is not answered; it escalates as ``uncertain``,
    with the gate's words. Any other decision stands (round 7)."""
    if decided.bucket is not Bucket.ANSWERABLE or safety.reason_code != NEAR_RISK:
        return decided
    reason = f"{decided.reason}; but the safety gate found {safety.explanation}"
    return Classification(Bucket.NEEDS_HUMAN, "uncertain", reason, decided.confidence, "safety")


#: What the rules route away that a sentence asking for a money or account action still
#: sends to a person ("the export crashes; also, please refund last month").
OVERRULABLE_CODES = frozenset({"bug_report", "feature_request", "feedback", "outage"})


@functools.cache
def _multilingual_embedder() -> Embedder:
    from supportagent.retrieval.multilingual import MultilingualE5

    return MultilingualE5()


#: What an issue the stage routes is: a bug report or a feature request.
ISSUE_CODES = ("bug_report", "feature_request")

#: The triage exemplar classes and the bucket each stands for.
EXEMPLAR_BUCKETS: dict[str, Bucket] = {
    "question": Bucket.ANSWERABLE,
    "bug_report": Bucket.NOT_A_QUESTION,
    "feature_request": Bucket.NOT_A_QUESTION,
    "feedback": Bucket.NOT_A_QUESTION,
    "outage": Bucket.NOT_A_QUESTION,
    "money_specific": Bucket.NEEDS_HUMAN,
    "account_specific": Bucket.NEEDS_HUMAN,
    "human_requested": Bucket.NEEDS_HUMAN,
}


def load_classifier_rules(path: Path | None = None) -> tuple[ClassifierRule, ...]:
    """Read a classifier rule table; the packaged one when ``path`` is None."""
    if path is None:
        return _default_rules()
    return parse_classifier_rules(read_rule_file(path, "classifier rules"), source=str(path))


def parse_classifier_rules(text: str, source: str = "<string>") -> tuple[ClassifierRule, ...]:
    """Parse a classifier rule table from TOML text; ``source`` names it in error messages."""
    return parse_rule_table(text, source, _parse_rule)


@functools.cache
def _default_rules() -> tuple[ClassifierRule, ...]:
    resource = resources.files("supportagent.engines").joinpath(DEFAULT_RULES_FILE)
    return parse_classifier_rules(resource.read_text(encoding="utf-8"), DEFAULT_RULES_FILE)


def _first(rules: Sequence[ClassifierRule], code: str, text: str) -> Classification | None:
    for rule in rules:
        if rule.reason_code != code:
            continue
        match = rule.find(text)
        if match is not None:
            snippet = " ".join(match.group(0).split())[:80]
            reason = f"{code}: rule {rule.name!r} matched {snippet!r}"
            return Classification(rule.bucket, code, reason, STRONG_CONFIDENCE)
    return None


def _content_words(text: str) -> list[str]:
    return [w for w in _CONTENT_WORD.findall(text.casefold()) if w not in _FILLER]


def _is_empty(ticket: Ticket) -> bool:
    """Nothing to answer: no content words, or no body and a subject that only names a topic."""
    if _content_words(canonical(ticket.body)):
        return False
    return len(_content_words(canonical(ticket.subject))) < MIN_SUBJECT_ONLY_WORDS


def _in_hypothetical(text: str, start: int) -> bool:
    return _CONDITIONAL.search(text_since(_CLAUSE_BREAK, text, start)) is not None


def _asks_question(text: str) -> bool:
    return "?" in text or "\uff1f" in text or _QUESTION_OPENER.search(text) is not None


def _parse_rule(raw: Any, where: str) -> ClassifierRule:
    entry, name, where = rule_entry(raw, where)
    code = entry.get("reason_code")
    if code not in RULE_BUCKETS:
        known = ", ".join(RULE_BUCKETS)
        raise ValueError(f"{where}: unknown or missing reason_code {code!r}; use one of {known}")
    flags = {
        key: entry.get(key, False)
        for key in ("unless_question", "skip_conditional", "skip_general")
    }
    for key, value in flags.items():
        if not isinstance(value, bool):
            raise ValueError(f"{where}: field {key!r} must be true or false")
    max_words = entry.get("max_words", 0)
    if not isinstance(max_words, int) or isinstance(max_words, bool) or max_words < 0:
        raise ValueError(f"{where}: field 'max_words' must be a whole number, 0 or more")
    compiled, together = rule_patterns(entry, where)
    examples, not_examples = rule_examples(entry, where)
    return ClassifierRule(
        name,
        str(code),
        compiled,
        **flags,
        max_words=max_words,
        examples=examples,
        not_examples=not_examples,
        together=together,
    )


_PATTERNS.save()
