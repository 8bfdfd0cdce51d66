"""Deterministic grounding checks: is every sentence of a draft backed by the evidence it cites?

Pure functions over a ``Draft`` and the ``Passage`` objects it was given. Problem codes are part
of the contract (traces, audit exports and the review UI key on them): ``no_sentences``,
``unknown_citation``, ``uncited_sentence``, ``unsupported_sentence``, ``ungrounded_fact`` and
``conflicting_evidence``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from supportagent.domain import Draft, DraftSentence, Passage, Problem, Verdict

#: Share of a sentence's content words that its cited passages must contain.
SUPPORT_THRESHOLD = 0.6
#: Content-word Jaccard overlap above which two sentences are "about the same thing".
CONFLICT_OVERLAP = 0.3

CHECKER = "grounding"

# --------------------------------------------------------------------------- words

_STOPWORDS_TEXT = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing done down during each either
    else etc ever every few for from further had has have having he her here hers herself him
    himself his how i if in into is it its itself just let may me might more most must my
    myself no nor not now of off on once only or other our ours ourselves out over own per
    please same shall she should so some such than that the their theirs them themselves then
    there these they this those through thus to too under until up upon us very via was we
    were what when where whether which while who whom whose why will with within without would
    yes yet you your yours yourself yourselves
    """
_STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
_WORD = re.compile(r"[^\W_]+")


def _stem(word: str) -> str:
    # Light and consistent rather than correct: both sides go through the same function.
    for suffix, replacement in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break
            word = word[: -len(suffix)] + replacement
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def _content_words(text: str) -> set[str]:
    """Lowercased, stemmed words of ``text`` without stopwords, bare numbers or single letters."""
    words = set()
    for word in _WORD.findall(text.casefold()):
        if len(word) < 2 or word in _STOPWORDS or word.isdigit():
            continue
        words.add(_stem(word))
    return words


def _split_sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [part.strip() for part in parts if part.strip()]


# --------------------------------------------------------------------------- facts

_FACT = re.compile(
    r"""
      (?P<url>(?<![\w@])(?:https?://|www\.)[^\s<>"'`\])}]+)
    | (?P<email>(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
    | (?P<date>(?<![\w.:-])\d{4}-\d{2}-\d{2}(?![\w-]))
    | (?P<time>(?<![\w.:])\d{1,2}:\d{2}(?::\d{2})?(?![\w:]))
    | (?P<version>(?<![\w.])v?\d+(?:\.\d+){2,}(?![\w]))
    | (?P<dotted>(?<![\w.:-])[A-Za-z_]\w+(?:[.:][A-Za-z_]\w+)+(?![\w-]))
    | (?P<joined>(?<![\w-])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)+(?![\w-]))
    | (?P<camel>(?<![\w-])[a-z]+[A-Z][A-Za-z0-9]*(?![\w-]))
    | (?P<mixed>(?<![\w-])(?:[A-Za-z]+\d|\d+[A-Za-z])[A-Za-z0-9]*(?![\w-]))
    | (?P<number>(?<![\w.])[$€£]?\d+(?:,\d{3})*(?:\.\d+)?%?(?![\w]))
    | (?P<header>(?<![\w-])Authorization(?![\w-]))
    """,
    re.VERBOSE,
)
_HEADER_SHAPE = re.compile(r"X-[A-Za-z0-9-]+|[A-Z][A-Za-z0-9]*(?:-[A-Z][A-Za-z0-9]*)+")
_URL_TAIL = ".,;:!?)'\"/"


@dataclass(frozen=True)
class _Fact:
    kind: str  # number, url, identifier, header, ...
    raw: str
    key: str


def _number_key(raw: str) -> str:
    digits = raw.strip("$€£%").replace(",", "")
    try:
        return "number:" + format(Decimal(digits).normalize(), "f")
    except InvalidOperation:
        return "number:" + digits


def _facts(text: str) -> list[_Fact]:
    """Numbers, identifiers, header names and URLs in ``text``, each with a comparison key."""
    facts = []
    for match in _FACT.finditer(text):
        kind = match.lastgroup or ""
        raw = match.group(0)
        if kind == "number":
            facts.append(_Fact("number", raw, _number_key(raw)))
        elif kind == "url":
            url = raw.rstrip(_URL_TAIL)
            facts.append(_Fact("URL", url, "url:" + url.casefold()))
        elif kind in ("date", "time", "version"):
            facts.append(_Fact(kind, raw, f"{kind}:{raw}"))
        elif kind == "joined" and not re.search(r"[\d_]", raw):
            # Hyphenated words ("follow-up") are prose unless shaped like a header name.
            if _HEADER_SHAPE.fullmatch(raw):
                facts.append(_Fact("header", raw, "name:" + raw.casefold()))
        elif kind == "header":
            facts.append(_Fact("header", raw, "name:" + raw.casefold()))
        else:
            facts.append(_Fact("identifier", raw, "name:" + raw.casefold()))
    return facts


def _mentions(text: str, fact: _Fact) -> bool:
    """Looser test for a fact the passage states in another shape (e.g. lowercase header)."""
    if fact.kind == "number":
        digits = fact.raw.strip("$€£%").replace(",", "")
        return digits.isdigit() and re.search(rf"(?<!\d){digits}(?!\d)", text) is not None
    pattern = rf"(?<![\w-]){re.escape(fact.raw)}(?![\w-])"
    return re.search(pattern, text, re.IGNORECASE) is not None


# --------------------------------------------------------------------------- quantities

_UNIT_ALIASES = {
    "millisecond": "ms millisecond milliseconds",
    "second": "s sec secs second seconds",
    "minute": "min mins minute minutes",
    "hour": "h hr hrs hour hours",
    "day": "day days",
    "week": "week weeks",
    "month": "month months",
    "year": "year years yr yrs",
    "byte": "byte bytes",
    "kb": "kb kib kilobyte kilobytes",
    "mb": "mb mib megabyte megabytes",
    "gb": "gb gib gigabyte gigabytes",
    "tb": "tb tib terabyte terabytes",
    "percent": "% percent",
    "usd": "$ usd dollar dollars",
    "eur": "€ eur euro euros",
    "gbp": "£ gbp pound pounds",
    "request": "request requests req reqs",
    "call": "call calls",
    "message": "message messages msg msgs",
    "email": "email emails e-mail e-mails",
    "sms": "sms",
    "character": "character characters char chars",
    "attempt": "attempt attempts",
    "retry": "retry retries",
    "time": "time times",
    "user": "user users",
    "seat": "seat seats",
    "member": "member members",
    "key": "key keys",
    "webhook": "webhook webhooks",
    "project": "project projects",
    "item": "item items",
    "record": "record records",
    "row": "row rows",
    "result": "result results",
    "page": "page pages",
    "file": "file files",
    "connection": "connection connections",
    "event": "event events",
    "credit": "credit credits",
    "token": "token tokens",
    "recipient": "recipient recipients",
    "contact": "contact contacts",
    "segment": "segment segments",
}
#: Every spelling of a unit mapped to its canonical name ("mins" -> "minute").
_UNITS = {alias: unit for unit, aliases in _UNIT_ALIASES.items() for alias in aliases.split()}
_QUALIFIERS = frozenset({"business", "working", "calendar", "consecutive", "more", "additional"})
_QUANTITY = re.compile(r"(?<![\w.])([$€£])?(\d+(?:,\d{3})*(?:\.\d+)?)(?![\d])")
_TAIL = re.compile(r"\s*(%|[A-Za-z][A-Za-z-]*)(?:\s+([A-Za-z][A-Za-z-]*))?")
_PER = re.compile(r"\s*(?:/|\bper\b|\ba\b|\ban\b|\beach\b)\s*([A-Za-z][A-Za-z-]*)", re.IGNORECASE)


@dataclass(frozen=True)
class _Quantity:
    value: Decimal
    unit: str
    raw: str


def _quantities(text: str) -> list[_Quantity]:
    """Numbers with a recognised unit: ``30 days``, ``5 MB``, ``100 requests per second``."""
    found = []
    for match in _QUANTITY.finditer(text):
        currency, digits = match.group(1), match.group(2)
        unit, end = _unit_after(text, match.end())
        if unit is None and currency:
            unit, end = _UNITS[currency], match.end()
        if unit is None:
            continue
        per = _PER.match(text, end)
        if per is not None and per.group(1).lower() in _UNITS:
            unit = f"{unit}/{_UNITS[per.group(1).lower()]}"
            end = per.end()
        value = Decimal(digits.replace(",", ""))
        found.append(_Quantity(value, unit, text[match.start() : end].strip()))
    return found


def _unit_after(text: str, start: int) -> tuple[str | None, int]:
    tail = _TAIL.match(text, start)
    if tail is None:
        return None, start
    first = tail.group(1).lower()
    if first in _QUALIFIERS and tail.group(2):
        second = tail.group(2).lower()
        return (_UNITS[second], tail.end()) if second in _UNITS else (None, start)
    if first in _UNITS:
        return _UNITS[first], tail.end(1)
    return None, start


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


# --------------------------------------------------------------------------- the check


def check_grounding(
    draft: Draft,
    evidence: Sequence[Passage],
    *,
    support_threshold: float = SUPPORT_THRESHOLD,
    conflict_overlap: float = CONFLICT_OVERLAP,
) -> Verdict:
    """Check each draft sentence against the passages it cites; the verdict lists every problem."""
    if not any(s.text.strip() for s in draft.sentences):
        problem = Problem("no_sentences", "the draft has no sentences to check")
        return Verdict(passed=False, problems=(problem,), checker=CHECKER)
    by_id = {passage.id: passage for passage in evidence}
    statements = [_Statements.of(passage) for passage in by_id.values()]
    problems: list[Problem] = []
    for index, sentence in enumerate(draft.sentences):
        if sentence.text.strip():
            problems.extend(_check_sentence(index, sentence, by_id, support_threshold))
            problems.extend(_conflicts(index, sentence, statements, conflict_overlap))
    return Verdict(passed=not problems, problems=tuple(problems), checker=CHECKER)


def _check_sentence(
    index: int, sentence: DraftSentence, by_id: dict[str, Passage], threshold: float
) -> Iterable[Problem]:
    for cid in dict.fromkeys(sentence.citations):
        if cid not in by_id:
            yield Problem("unknown_citation", f"cites {cid!r}, which is not in the evidence", index)
    if not sentence.citations:
        yield Problem("uncited_sentence", "the sentence cites no evidence", index)
        return
    cited = [by_id[cid] for cid in dict.fromkeys(sentence.citations) if cid in by_id]
    if not cited:
        return  # every citation is unknown, already reported
    support_text = "\n".join(" ".join((p.title, *p.heading_path, p.text)) for p in cited)
    words = _content_words(sentence.text)
    if words:
        supported = words & _content_words(support_text)
        score = len(supported) / len(words)
        if score < threshold:
            missing = ", ".join(sorted(words - supported)[:8])
            yield Problem(
                "unsupported_sentence",
                f"only {score:.0%} of its content words are in the cited passages "
                f"(needs {threshold:.0%}); not found: {missing}",
                index,
            )
    known = {fact.key for fact in _facts(support_text)}
    reported: set[str] = set()
    for fact in _facts(sentence.text):
        if fact.key in known or fact.key in reported or _mentions(support_text, fact):
            continue
        reported.add(fact.key)
        yield Problem(
            "ungrounded_fact",
            f"{fact.kind} {fact.raw!r} does not appear in the cited passages",
            index,
        )


@dataclass(frozen=True)
class _Statements:
    """A passage split into sentences, each with its content words and quantities."""

    passage_id: str
    doc_id: str
    sentences: tuple[tuple[frozenset[str], tuple[_Quantity, ...]], ...]
    stated: frozenset[tuple[Decimal, str]]

    @classmethod
    def of(cls, passage: Passage) -> _Statements:
        sentences = tuple(
            (frozenset(_content_words(text)), tuple(_quantities(text)))
            for text in _split_sentences(passage.text)
        )
        stated = frozenset((q.value, q.unit) for _, qs in sentences for q in qs)
        return cls(passage.id, passage.doc_id, sentences, stated)


def _conflicts(
    index: int, sentence: DraftSentence, evidence: Sequence[_Statements], overlap: float
) -> Iterable[Problem]:
    stated = _quantities(sentence.text)
    if not stated:
        return
    words = _content_words(sentence.text)
    cited = ", ".join(sentence.citations) or "no passage"
    reported: set[tuple[str, str, str]] = set()
    for mine in stated:
        for passage in evidence:
            for other_words, quantities in passage.sentences:
                for theirs in quantities:
                    if theirs.unit != mine.unit or theirs.value == mine.value:
                        continue
                    if _stated_together(evidence, mine, theirs):
                        continue
                    if _jaccard(words, set(other_words)) < overlap:
                        continue
                    key = (mine.raw, theirs.raw, passage.passage_id)
                    if key not in reported:
                        reported.add(key)
                        yield Problem(
                            "conflicting_evidence",
                            f"states {mine.raw!r} (citing {cited}) but {passage.passage_id} "
                            f"states {theirs.raw!r}",
                            index,
                        )


def _stated_together(evidence: Sequence[_Statements], a: _Quantity, b: _Quantity) -> bool:
    """True when one document states both values: two cases ("50 on Growth, 500 on
    Enterprise", "$0.0095 an SMS, $0.0012 an email"), not a contradiction.

    A document is taken to agree with itself, so only values from different documents (an
    article and a resolved ticket, say) can contradict each other.
    """
    by_doc: dict[str, set[tuple[Decimal, str]]] = {}
    for passage in evidence:
        by_doc.setdefault(passage.doc_id, set()).update(passage.stated)
    return any(
        (a.value, a.unit) in stated and (b.value, b.unit) in stated for stated in by_doc.values()
    )
