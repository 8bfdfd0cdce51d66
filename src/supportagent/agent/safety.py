"""The safety gate: rules and a semantic detector that screen every ticket before anything runs.

The rule table lives in ``safety_rules.toml`` next to this module, so a rule change is a
reviewable data diff; rules are tried in order and the first match wins. The semantic detector
(``safety_semantic``) reads each sentence's meaning against exemplars. No language model is
involved: the gate runs before any model call, on both engines.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

from supportagent.agent.safety_semantic import (
    SUPPOSABLE,
    SUPPOSITION,
    Finding,
    SemanticSafety,
    default_semantic_safety,
    fired_or_near,
)
from supportagent.domain import NEAR_RISK, SafetyResult, Ticket
from supportagent.regexcache import ProgramCache
from supportagent.ruletable import (
    SENTENCE_END,
    Together,
    compile_patterns,
    first_match,
    parse_rule_table,
    read_rule_file,
    row_match,
    rule_entry,
    rule_examples,
    rule_patterns,
    text_since,
)
from supportagent.sentences import ticket_sentences
from supportagent.textnorm import prose

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

SEVERITIES = ("low", "medium", "high", "critical")
DEFAULT_RULES_FILE = "safety_rules.toml"
#: The longest ``matched_text`` a result carries (it goes into traces and audit exports).
MAX_MATCHED_TEXT = 80

#: What a ticket is when no rule matches.
GENERAL_INQUIRY = SafetyResult(
    category="general_inquiry",
    severity="low",
    auto_escalate=False,
    reason_code="general_inquiry",
)

_NEGATORS = frozenset({"no", "not", "never", "without", "none", "nothing", "zero"})
# A negation only counts inside the clause that holds the match.
_CLAUSE_BREAK = _PATTERNS.compile(r"[.!?;:\n]|\bbut\b|\bhowever\b", re.IGNORECASE)
_WORD = _PATTERNS.compile(r"[\w']+")
_NEGATION_WINDOW = 2
# A sentence that supposes the event instead of reporting it (the semantic detector reads
# the same pattern): "Hypothetically, if my phone got stolen, ...", "What happens if ...".
_HYPOTHETICAL = SUPPOSITION
# A sentence in which the writer takes someone else to law, not us: "I'm taking a former
# tenant to small claims court", "we are suing our old builder", "my divorce lawyer needs
# the statements", "we received a court order to deduct an employee's child maintenance",
# "a court order for my name change", "a client is threatening to take me to court". A
# sentence that also names us ("you", "your company") is not skipped.
_THIRD_PARTY = _PATTERNS.compile(
    r"\b(?:(?:tak\w*|bring\w*|br(?:ought)|su(?:e|es|ing|ed)|against|claim\w*\s+against)\s+"
    r"(?:a|an|my|our|the|his|her|their|this|one\s+of\s+(?:my|our))\s+(?:\w+\s+){0,2}?"
    r"(?:tenants?|employees?|staff|customers?|clients?|landlords?|contractors?|suppliers?|"
    r"neighbou?rs?|husband|wife|ex|partner|spouse|buyers?|sellers?|builders?|members?|"
    r"subcontractors?|freelancers?|guests?|lodgers?|flatmates?|roommates?)"
    r"|divorce|custody"
    # someone else threatening the writer with law (round 23): "one of my clients is
    # threatening to take me to court over a late logo"
    r"|threaten\w*\s+(?:to\s+)?(?:take|drag|bring)\s+(?:me|us)\s+to\s+(?:[\w-]+\s+){0,2}?court"
    r"|threaten\w*\s+(?:to\s+)?su(?:e|ing)\s+(?:me|us)"
    # a court's order about the writer's own life or an employee's pay, shown to us or acted on
    r"|child\s+(?:maintenance|support)|garnish\w*|deed\s+poll|name\s+change"
    r"|change\s+of\s+(?:sur)?name|new\s+surname|probate|guardianship|adoption)\b",
    re.IGNORECASE,
)
_NAMES_US = _PATTERNS.compile(r"\b(?:you|your|yours)\b", re.IGNORECASE)


@dataclass(frozen=True)
class SafetyRule:
    """One row of the rule table: what a match means and the patterns that detect it."""

    name: str
    category: str
    severity: str
    auto_escalate: bool
    reason_code: str
    patterns: tuple[re.Pattern[str], ...]
    skip_negated: bool = False
    skip_hypothetical: bool = False
    skip_third_party: bool = False
    examples: tuple[str, ...] = ()
    not_examples: tuple[str, ...] = ()
    #: Patterns read anywhere in the ticket; when one matches, the rule does not apply
    #: ("I didn't click anything" beside a phishing email passed on to us).
    unless: tuple[re.Pattern[str], ...] = ()
    #: Facets one sentence must hold together (``ruletable.Together``), tried after
    #: ``patterns``.
    together: Together | None = None

    def find(self, text: str) -> re.Match[str] | None:
        """The first match of any pattern in ``text`` that is neither negated nor supposed
        (as the rule asks), or None; None too when an ``unless`` pattern matches."""
        if self.unless and first_match(self.unless, text) is not None:
            return None
        skip: Callable[[int], bool] | None = None
        if self.skip_negated or self.skip_hypothetical or self.skip_third_party:

            def skip(start: int) -> bool:
                return (
                    (self.skip_negated and _is_negated(text, start))
                    or (self.skip_hypothetical and _is_hypothetical(text, start))
                    or (self.skip_third_party and _against_someone_else(text, start))
                )

        return row_match(self.patterns, self.together, text, skip)

    def voided(self, text: str) -> bool:
        """True when a pattern matches ``text`` but an ``unless`` pattern voids the row: the
        writer reports a message nobody acted on (round 8)."""
        return (
            bool(self.unless)
            and row_match(self.patterns, self.together, text) is not None
            and first_match(self.unless, text) is not None
        )


def load_rules(path: Path | None = None) -> tuple[SafetyRule, ...]:
    """Read a rule table; the packaged ``safety_rules.toml`` when ``path`` is None.

    Raises ValueError naming the file (and the rule) when the table is malformed.
    """
    if path is None:
        return _default_rules()
    return parse_rules(read_rule_file(path, "safety rules"), source=str(path))


def parse_rules(text: str, source: str = "<string>") -> tuple[SafetyRule, ...]:
    """Parse a rule table from TOML text; ``source`` names it in error messages."""
    return parse_rule_table(text, source, _parse_rule)


#: A negation typed without its apostrophe ("i dont want to be alive anymore", "it wasnt
#: me"), which the rules read with it. "wont" and "cant" are words of their own, and so are
#: "im" (German) and "ill", so only these are mended (French "dont" becomes "don't", which no
#: rule reads in French).
_BARE_NEGATION = _PATTERNS.compile(
    r"\b(do|does|did|could|would|should|was|were|is|are|have|has|had)nt\b", re.IGNORECASE
)


def rule_view(text: str) -> str:
    """The text the safety rules read: canonical, code blocks and inline code blanked, and a
    negation without its apostrophe given one (``_BARE_NEGATION``)."""
    return _BARE_NEGATION.sub(r"\1n't", prose(text, identifiers=False))


def screen(text: str, rules: Sequence[SafetyRule] | None = None) -> SafetyResult:
    """Screen ticket text; the first matching rule decides, else ``general_inquiry``."""
    normalised = rule_view(text)
    for rule in _default_rules() if rules is None else rules:
        match = rule.find(normalised)
        if match is not None:
            return SafetyResult(
                category=rule.category,
                severity=rule.severity,
                auto_escalate=rule.auto_escalate,
                reason_code=rule.reason_code,
                matched_rule=rule.name,
                matched_text=_clip(match.group(0)),
            )
    return GENERAL_INQUIRY


@functools.cache
def _default_rules() -> tuple[SafetyRule, ...]:
    resource = resources.files("supportagent.agent").joinpath(DEFAULT_RULES_FILE)
    return parse_rules(resource.read_text(encoding="utf-8"), source=DEFAULT_RULES_FILE)


def _parse_rule(raw: Any, where: str) -> SafetyRule:
    entry, name, where = rule_entry(raw, where)

    def field(key: str, kind: type) -> Any:
        if key not in entry:
            raise ValueError(f"{where}: missing field {key!r}")
        value = entry[key]
        if not isinstance(value, kind):
            raise ValueError(f"{where}: field {key!r} must be a {kind.__name__}")
        return value

    category = field("category", str)
    severity = field("severity", str)
    if severity not in SEVERITIES:
        raise ValueError(
            f"{where}: unknown severity {severity!r}; use one of {', '.join(SEVERITIES)}"
        )
    auto_escalate = field("auto_escalate", bool)
    reason_code = field("reason_code", str)
    skips = {
        key: entry.get(key, False)
        for key in ("skip_negated", "skip_hypothetical", "skip_third_party")
    }
    for key, value in skips.items():
        if not isinstance(value, bool):
            raise ValueError(f"{where}: field {key!r} must be true or false")
    patterns, together = rule_patterns(entry, where)
    unless = compile_patterns({"patterns": entry["unless"]}, where) if "unless" in entry else ()
    examples, not_examples = rule_examples(entry, where)
    return SafetyRule(
        name=name,
        category=category,
        severity=severity,
        auto_escalate=auto_escalate,
        reason_code=reason_code,
        patterns=patterns,
        **skips,
        examples=examples,
        not_examples=not_examples,
        unless=unless,
        together=together,
    )


def _is_negated(text: str, start: int) -> bool:
    clause = text_since(_CLAUSE_BREAK, text, start)
    words = _WORD.findall(clause.lower())[-_NEGATION_WINDOW:]
    return any(word in _NEGATORS for word in words)


def _is_hypothetical(text: str, start: int) -> bool:
    """True when the sentence up to ``start`` supposes rather than reports (see above). The
    sentence is cut as the rule rows cut it (``SENTENCE_END``): not at the full stop of
    "Mrs. Lee" or "£26.60", so a supposition said before a title is still seen."""
    return _HYPOTHETICAL.search(text_since(SENTENCE_END, text, start)) is not None


def _against_someone_else(text: str, start: int) -> bool:
    """True when the sentence holding ``start`` has the writer going to law against a third
    party (a tenant, a former employee, a spouse) and does not name us."""
    head = text_since(SENTENCE_END, text, start)
    tail = SENTENCE_END.split(text[start:], maxsplit=1)[0]
    sentence = head + tail
    return _THIRD_PARTY.search(sentence) is not None and _NAMES_US.search(sentence) is None


def _clip(matched: str) -> str:
    collapsed = " ".join(matched.split())
    return (
        collapsed if len(collapsed) <= MAX_MATCHED_TEXT else collapsed[: MAX_MATCHED_TEXT - 1] + "…"
    )


#: When the rules and the semantic detector both escalate, the more urgent category wins.
URGENCY = ("self_harm_risk", "security_incident", "payment_fraud", "legal_threat")


class SafetyScreen:
    """The gate in front of every ticket: the rule table, then the semantic detector.

    Both run: a rule may have caught a legal threat in a ticket whose other sentence says the
    writer may harm themselves, and that must decide. A rule's category stands against any
    other category the detector finds (a "legal proceedings" rule is not outranked by a
    sentence that merely reads like a security exemplar); only self-harm outranks a rule, and
    a self-harm rule leaves the semantic detector out, as nothing can outrank it.
    The result says which detector decided and why, in words.
    """

    def __init__(
        self,
        rules: Sequence[SafetyRule] | None = None,
        semantic: SemanticSafety | None = None,
    ) -> None:
        self.rules = rules
        self.semantic = semantic

    def __call__(self, ticket: Ticket) -> SafetyResult:
        ruled = screen(ticket.text, self.rules)
        if ruled.auto_escalate and _urgency(ruled.category) == 0:
            # Nothing the semantic detector could find outranks this rule: no need to ask it.
            return _explained(ruled)
        finding = self.semantic.detect_or_near(ticket) if self.semantic is not None else None
        if finding is not None and finding.fired and finding.category in SUPPOSABLE:
            finding = self._without_passed_on(ticket, finding)
        if finding is None:
            return _explained(ruled)
        if not finding.fired:
            if ruled.auto_escalate:
                # A rule that escalates decides, with its own reason code; the sentence near
                # another risk is added to its explanation (round 13: the reason code was
                # ``near_risk`` before, which hid the rule's category from the queue).
                decided = _explained(ruled)
                near = _near_explanation(finding)
                return replace(decided, explanation=f"{decided.explanation}; {near}")
            # Near a risk, firing nothing: the gate lets the ticket through with the finding,
            # so that the classifier escalates it rather than answer (round 7). A rule that
            # matched without escalating (an outage, a billing question) keeps its category.
            return near_result(finding, ruled)
        if ruled.auto_escalate and finding.category != URGENCY[0]:
            # A rule's category is precise where the detector's is a nearest exemplar: the
            # detector overrules a rule only to say the writer may be at risk of self-harm,
            # the one mislabel that could cost a life.
            return _explained(ruled)
        return semantic_result(finding, self.rules)

    def _without_passed_on(self, ticket: Ticket, finding: Finding) -> Finding | None:
        """A security or fraud finding on a sentence that only passes on a message nobody
        acted on (the sentence a rule with ``unless`` matches, voided in this ticket: "a scam
        text pretending to be you is going round; I haven't clicked it") is no incident: the
        detector reads the ticket again without such sentences (round 8). Self-harm and legal
        findings are never dropped this way."""
        assert self.semantic is not None
        table = _default_rules() if self.rules is None else self.rules
        view = rule_view(ticket.text)
        voided = [r for r in table if r.voided(view)]
        if not voided:
            return finding
        units = ticket_sentences(ticket)
        kept = [
            u
            for u in units
            if not any(first_match(r.patterns, rule_view(u)) is not None for r in voided)
        ]
        if len(kept) == len(units):
            return finding
        return fired_or_near(self.semantic.findings(ticket, kept)) if kept else None


def semantic_result(finding: Finding, rules: Sequence[SafetyRule] | None = None) -> SafetyResult:
    """A semantic finding as the gate's verdict, with the severity and reason code that the
    rule table gives its category."""
    table = _default_rules() if rules is None else rules
    rule = next((r for r in table if r.category == finding.category and r.auto_escalate), None)
    severity = rule.severity if rule else "high"
    reason_code = rule.reason_code if rule else f"safety_{finding.category}"
    learned = (
        ""
        if finding.probability is None
        else f"; the learned model gives it {finding.probability:.2f}"
    )
    fired_by = f", fired by the {finding.fired_by}" if finding.fired_by else ""
    explanation = (
        f"the sentence {_clip(finding.sentence)!r} reads like {finding.exemplar!r} "
        f"(similarity {finding.similarity:.2f}, {finding.margin:+.2f} against the nearest "
        f"harmless example{learned}; model {finding.model}{fired_by})"
    )
    return SafetyResult(
        category=finding.category,
        severity=severity,
        auto_escalate=True,
        reason_code=reason_code,
        matched_rule=f"semantic:{finding.category}",
        matched_text=_clip(finding.sentence),
        detector="semantic",
        score=finding.similarity,
        explanation=explanation,
    )


def near_result(finding: Finding, ruled: SafetyResult = GENERAL_INQUIRY) -> SafetyResult:
    """A finding near a risk, firing nothing, as a verdict that does not escalate by itself;
    the category of a rule that matched without escalating (``ruled``) stays."""
    explanation = _near_explanation(finding)
    if ruled.matched_rule is not None:
        explanation = f"rule {ruled.matched_rule!r} matched {ruled.matched_text!r}; {explanation}"
        return replace(ruled, reason_code=NEAR_RISK, detector="semantic", explanation=explanation)
    return replace(
        ruled,
        reason_code=NEAR_RISK,
        matched_rule=f"semantic-near:{finding.category}",
        matched_text=_clip(finding.sentence),
        detector="semantic",
        score=finding.similarity,
        explanation=explanation,
    )


def _near_explanation(finding: Finding) -> str:
    return (
        f"the sentence {_clip(finding.sentence)!r} comes near {finding.category} without "
        f"firing it: the learned model gives it {finding.probability or 0.0:.2f} (it reads "
        f"most like {finding.exemplar!r}, similarity {finding.similarity:.2f}, "
        f"{finding.margin:+.2f}; model {finding.model})"
    )


def _explained(result: SafetyResult) -> SafetyResult:
    if result.matched_rule is None:
        return replace(result, detector="none")
    return replace(
        result, explanation=f"rule {result.matched_rule!r} matched {result.matched_text!r}"
    )


def _urgency(category: str) -> int:
    return URGENCY.index(category) if category in URGENCY else len(URGENCY)


@functools.cache
def default_screen() -> SafetyScreen:
    """The rule table and the semantic detector (MiniLM; multilingual-e5 when installed)."""
    return SafetyScreen(semantic=default_semantic_safety())


_PATTERNS.save()
