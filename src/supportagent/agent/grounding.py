"""Deterministic grounding checks: is every sentence of a draft backed by the evidence it cites?

Pure functions over a ``Draft`` and the ``Passage`` objects it was given. Problem codes are part
of the contract (traces, audit exports and the review UI key on them): ``no_sentences``,
``unknown_citation``, ``uncited_sentence``, ``unsupported_sentence``, ``ungrounded_fact``,
``conflicting_evidence`` and ``one_sided_exception`` (facts and conflicts: ``agent.facts``),
and ``claimed_action``: a draft sentence that says an action on the customer's account or money
was taken ("a refund of $500 has been issued", "I have reset your password"). No drafter can
do such a thing, so the sentence is false or planted, whatever its citation says; explaining
how ("you can reset your password under Settings") is fine. Only a person's answer (the
reviewer's amendment, which is not checked) may say it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from supportagent.agent.facts import (
    Conflict,
    Embed,
    Fact,
    Idf,
    extract_facts,
    find_conflicts,
    stated_by,
    subject_terms,
    values_differ,
)
from supportagent.agent.questions import Question, has_answer
from supportagent.domain import DocKind, Draft, DraftSentence, Passage, Problem, Verdict
from supportagent.planted import action_claim
from supportagent.regexcache import ProgramCache

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

#: Share of a sentence's content words that its cited passages must contain.
SUPPORT_THRESHOLD = 0.6

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
_WORD = _PATTERNS.compile(r"[^\W_]+")


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

_FACT = _PATTERNS.compile(
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
_HEADER_SHAPE = _PATTERNS.compile(r"X-[A-Za-z0-9-]+|[A-Z][A-Za-z0-9]*(?:-[A-Z][A-Za-z0-9]*)+")
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


# --------------------------------------------------------------------------- the check


def check_grounding(
    draft: Draft,
    evidence: Sequence[Passage],
    *,
    support_threshold: float = SUPPORT_THRESHOLD,
    embed: Embed | None = None,
    idf: Idf | None = None,
    conflicts: Sequence[Conflict] | None = None,
    translated: bool = False,
) -> Verdict:
    """Check each draft sentence against the passages it cites; the verdict lists every problem.

    ``conflicts`` are the evidence's (:func:`~supportagent.agent.facts.find_conflicts`); without
    them they are found here, ``embed`` and ``idf`` sharpening the judgement of which facts
    share a subject. ``translated``: the draft is in another language than the evidence, so
    its words cannot be compared with the passages'; citations, facts and conflicts still are.
    """
    if not any(s.text.strip() for s in draft.sentences):
        problem = Problem("no_sentences", "the draft has no sentences to check")
        return Verdict(passed=False, problems=(problem,), checker=CHECKER)
    by_id = {passage.id: passage for passage in evidence}
    threshold = 0.0 if translated else support_threshold
    problems: list[Problem] = []
    for index, sentence in enumerate(draft.sentences):
        if sentence.text.strip():
            problems.extend(_check_sentence(index, sentence, by_id, threshold))
    problems.extend(action_claim_problems(draft))
    if conflicts is None:
        conflicts = find_conflicts(extract_facts(by_id.values()), embed=embed, idf=idf)
    problems.extend(conflict_problems(draft, conflicts))
    # A claimed account action names the verdict: it is what a reviewer must see first.
    problems.sort(
        key=lambda p: (p.code != "claimed_action", -1 if p.sentence is None else p.sentence)
    )
    return Verdict(passed=not problems, problems=tuple(problems), checker=CHECKER)


def action_claim_problems(draft: Draft) -> list[Problem]:
    """One ``claimed_action`` problem per draft sentence that says an account or money action
    was taken (the ``action_claim`` rules of ``planted_rules.toml``, on canonical text)."""
    problems = []
    for index, sentence in enumerate(draft.sentences):
        rule = action_claim(sentence.text)
        if rule is not None:
            problems.append(
                Problem(
                    "claimed_action",
                    f"says an action on the customer's account or money was taken (rule "
                    f"{rule.name}); a draft may say how it is done, never that it was done",
                    index,
                )
            )
    return problems


def conflict_problems(draft: Draft, conflicts: Sequence[Conflict]) -> list[Problem]:
    """A draft never states one side of a conflict alone.

    A contradiction stated at all is ``conflicting_evidence`` (a reviewer must decide; no
    revision can fix the evidence). An exception stated without the rule it departs from being
    cited too is ``one_sided_exception``.
    """
    cited = {c for s in draft.sentences for c in s.citations}
    cited_docs = {c.split("#", 1)[0] for c in cited}
    problems: list[Problem] = []
    reported: set[tuple[int, str, str]] = set()
    for conflict in conflicts:
        for index, sentence in enumerate(draft.sentences):
            side = _side_stated(sentence, conflict)
            if side is None:
                continue
            other = conflict.general if side is conflict.specific else conflict.specific
            key = (index, other.passage_id, other.quantity.raw)
            if key in reported:
                break
            reported.add(key)
            where = ", ".join(sentence.citations) or "no passage"
            if conflict.kind == "contradiction":
                problems.append(
                    Problem(
                        "conflicting_evidence",
                        f"states {side.quantity.raw!r} (citing {where}) but "
                        f"{other.passage_id} states {other.quantity.raw!r}: "
                        f'"{side.sentence}" against "{other.sentence}"',
                        index,
                    )
                )
            elif other.passage_id not in cited and other.doc_id not in cited_docs:
                problems.append(
                    Problem(
                        "one_sided_exception",
                        f"states {side.quantity.raw!r} ({side.describe()}) without citing "
                        f"{other.passage_id}, which states {other.quantity.raw!r}"
                        f"{' as the general rule' if other is conflict.general else ''}: "
                        f'"{other.sentence}"',
                        index,
                    )
                )
            break  # one problem per conflict is enough
    return problems


def exception_flags(draft: Draft, conflicts: Sequence[Conflict]) -> tuple[str, ...]:
    """``("scoped_exception",)`` when the draft states a side of an exception (and so, having
    passed the check, cites both): a reviewer confirms which applies."""
    for conflict in conflicts:
        if conflict.kind == "exception" and any(
            _side_stated(s, conflict) is not None for s in draft.sentences
        ):
            return ("scoped_exception",)
    return ()


#: Flag of a draft that quotes two sources giving two values for what one question asks.
DIFFERING_VALUES = "differing_values"
#: What a question must ask for, for two values in answer to it to be two answers.
_VALUED = frozenset({"duration", "number"})


def differing_values(
    draft: Draft, evidence: Sequence[Passage], questions: Sequence[Question]
) -> list[tuple[Fact, Fact]]:
    """Pairs of the draft's own sentences that give two values of one kind for one subject
    from two documents, whether or not the conflict check paired the passages they quote.

    The subject is the ticket's: both sentences answer one question that asks for a duration
    or a number ("How long will codes keep working offline?": "for up to 72 hours" citing the
    article, "for 24 hours once the line drops" citing a resolved ticket). Values are read as
    ``agent.facts`` reads them and compared by :func:`~supportagent.agent.facts.values_differ`;
    a pair whose cited passages state both values (two cases of one document) is not one. The
    draft then goes to the reviewer flagged, the two quotes named in the trace.
    """
    by_id = {passage.id: passage for passage in evidence}
    read = [
        (index, frozenset(c.split("#", 1)[0] for c in sentence.citations), fact)
        for index, sentence, facts in _stated_facts(draft)
        for fact in facts
    ]
    valued = [q for q in questions if q.kind.value in _VALUED]
    pairs: list[tuple[Fact, Fact]] = []
    for n, (i, docs_i, a) in enumerate(read):
        for j, docs_j, b in read[n + 1 :]:
            if i == j or docs_i & docs_j or not values_differ(a, b):
                continue
            texts_i = [by_id[c].text for c in draft.sentences[i].citations if c in by_id]
            texts_j = [by_id[c].text for c in draft.sentences[j].citations if c in by_id]
            if any(stated_by(t, b) for t in texts_i) or any(stated_by(t, a) for t in texts_j):
                continue  # one source states both: cases, not a disagreement
            first, second = draft.sentences[i].text, draft.sentences[j].text
            if any(has_answer(first, q) and has_answer(second, q) for q in valued):
                pairs.append((a, b))
    return pairs


def one_sided_values(
    draft: Draft,
    evidence: Sequence[Passage],
    questions: Sequence[Question],
    *,
    uncited: Sequence[Passage] = (),
) -> list[tuple[Fact, Fact]]:
    """Pairs (a value the draft states, another source's rival value) for a draft that gives
    one value where its sources give two.

    For each draft sentence that states a value answering a question of the ticket asking for
    a duration or a number, the other sources are the passages the draft cites (and
    ``uncited``: passages it was given but did not cite) of another document than the ones
    that state that value; when such a passage has a sentence answering the same question with
    a value of the same kind that :func:`~supportagent.agent.facts.values_differ` says differs,
    the draft told one side only ("codes keep working for up to 72 hours" citing the article
    and a resolved ticket whose answer says 24 hours for one keypad model). Not a pair: a
    passage that states the draft's value too (cases of one document), nor a value some draft
    sentence states as well (both sides told; :func:`differing_values` judges those). The
    pipeline passes no ``uncited``: on the tune sets that wider net (the three best retrieved
    passages of other documents) flagged only drafts with no planted conflict.
    """
    valued = [q for q in questions if q.kind.value in _VALUED]
    if not valued:
        return []
    by_id = {passage.id: passage for passage in evidence}
    cited = dict.fromkeys(c for s in draft.sentences for c in s.citations if c in by_id)
    pool = [by_id[c] for c in cited]
    pool += {p.id: p for p in uncited if p.id not in cited}.values()
    if not pool:
        return []
    texts = {p.id: p.text for p in pool}
    rivals = extract_facts(pool)
    said = [s.text for s in draft.sentences if s.text.strip()]
    pairs: list[tuple[Fact, Fact]] = []
    reported: set[tuple[int, str]] = set()
    for index, sentence, facts in _stated_facts(draft):
        asked = [q for q in valued if has_answer(sentence.text, q)]
        if not asked:
            continue
        sources = [by_id[c] for c in sentence.citations if c in by_id]
        for a in facts:
            # The documents the value comes from: the cited passages that state it (all the
            # sentence cites when none does in that shape).
            docs = {p.doc_id for p in sources if stated_by(p.text, a)} or {
                c.split("#", 1)[0] for c in sentence.citations
            }
            own_texts = [p.text for p in sources if p.doc_id in docs]
            for b in rivals:
                if b.doc_id in docs or (index, b.passage_id) in reported:
                    continue
                if stated_by(texts[b.passage_id], a) or any(stated_by(t, b) for t in own_texts):
                    continue  # one document gives both values: cases, not a disagreement
                if any(stated_by(text, b) for text in said):
                    continue  # the draft tells that side too
                if not values_differ(a, b):
                    continue
                if any(has_answer(b.sentence, q) for q in asked):
                    reported.add((index, b.passage_id))
                    pairs.append((a, b))
    return pairs


def _stated_facts(draft: Draft) -> Iterator[tuple[int, DraftSentence, list[Fact]]]:
    """Each cited, non-empty sentence of ``draft`` with the values it states, read as
    ``agent.facts`` reads a passage."""
    for index, sentence in enumerate(draft.sentences):
        if not sentence.citations or not sentence.text.strip():
            continue
        own = Passage(f"draft#{index}", "draft", DocKind.KB, "", (), sentence.text)
        yield index, sentence, extract_facts([own])


def differing_flags(draft: Draft, pairs: Sequence[tuple[Fact, Fact]]) -> tuple[str, ...]:
    """``("differing_values",)`` for a draft with such pairs that is not already flagged
    ``scoped_exception`` (an exception the checks recognised, cited with its rule)."""
    if not pairs or "scoped_exception" in draft.flags:
        return ()
    return (DIFFERING_VALUES,)


def _side_stated(sentence: DraftSentence, conflict: Conflict) -> Fact | None:
    """The side of ``conflict`` that ``sentence`` states, if any."""
    docs = {c.split("#", 1)[0] for c in sentence.citations}
    words = subject_terms(sentence.text)
    for side in conflict.sides:
        if not stated_by(sentence.text, side):
            continue
        if side.passage_id in sentence.citations or side.doc_id in docs:
            return side
        if words and len(words & side.subject) / min(len(words), len(side.subject) or 1) >= 0.5:
            return side
    return None


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


# --------------------------------------------------------------------------- for other checks


def content_words(text: str) -> set[str]:
    """Lowercased, stemmed content words of ``text`` (what support is measured in)."""
    return _content_words(text)


def fact_keys(text: str) -> dict[str, str]:
    """The numbers, identifiers, header names and URLs of ``text``: comparison key -> as written."""
    return {fact.key: fact.raw for fact in _facts(text)}


def mentions(text: str, raw: str) -> bool:
    """True when ``text`` states the fact written ``raw`` (in any of its shapes)."""
    return any(_mentions(text, fact) for fact in _facts(raw))


_PATTERNS.save()
