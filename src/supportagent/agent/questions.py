"""What a ticket asks: its questions, and for each the kind of answer it needs.

A "how long" question needs a duration, "which version" a version, "which role" a role name,
"how do I" a procedure. The offline drafter picks evidence sentences by these, and the offline
checker refuses a draft that lacks what was asked (:func:`has_answer`). Pure functions; the
rules are English, which is the language the offline engine drafts in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import StrEnum

from supportagent.agent.facts import MONEY, MONTH, quantities, role_of
from supportagent.domain import Ticket
from supportagent.regexcache import ProgramCache

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache


class AnswerKind(StrEnum):
    DURATION = "duration"
    NUMBER = "number"  # a limit, size, price, count
    VERSION = "version"
    NAME = "name"  # a role, scope, setting, header, field, command, endpoint
    PROCEDURE = "procedure"
    LOCATION = "location"  # where in the dashboard, which endpoint
    YES_NO = "yes_no"
    REASON = "reason"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    kind: AnswerKind
    #: For NAME questions: the kind of name asked for ("role", "scope", "command").
    focus: str = ""
    #: The sentence before the question, which a short one leans on ("Is that possible?").
    context: str = ""


_GREETING_WORDS = r"(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|hallo|hola|bonjour)"
_GREETING = _PATTERNS.compile(rf"^\s*{_GREETING_WORDS}\b[^,.!\n]{{0,40}}[,.!]?\s*", re.IGNORECASE)
_SIGN_OFF = _PATTERNS.compile(
    r"^\s*(?:thanks|thank you|many thanks|thx|cheers|regards|best|kind regards|best regards|"
    r"warm regards|sincerely|sent from|groeten|saludos|gracias|danke|gr(?:u|ü)(?:ß|ss)e|"
    r"cordialement|merci|mfg|--)\b",
    re.IGNORECASE,
)
_ENUMERATED = _PATTERNS.compile(r"^\(?\d+[).]\s*")
#: A question that points back to something said before it.
_VAGUE_PART = _PATTERNS.compile(r"\b(?:this|that|it|these|those)\b", re.IGNORECASE)
_SENTENCE = _PATTERNS.compile(r"(?<=[.!?])\s+|\n+")


def ticket_prose(ticket: Ticket) -> str:
    """Subject and body without the greeting and the sign-off block (names, companies)."""
    lines = ticket.body.splitlines()
    for i in range(len(lines) - 1, max(len(lines) - 6, 0) - 1, -1):
        if _SIGN_OFF.match(lines[i]) and len(lines[i].split()) <= 4:
            lines = lines[:i]
            break
    body = "\n".join(lines).strip()
    body = _GREETING.sub("", body, count=1).strip()
    if not body or body == ticket.subject.strip():
        return ticket.subject.strip()
    return f"{ticket.subject.strip()}\n{body}".strip()


# ---------------------------------------------------------------------------- questions

_ASKS = _PATTERNS.compile(
    r"^(?:how|what|what's|whats|which|where|when|why|who|whom|whose|is|are|can|could|do|does|"
    r"did|will|would|should|shall|may|might|must|has|have|am)\b",
    re.IGNORECASE,
)
_INDIRECT = _PATTERNS.compile(
    r"\b(?:i(?:'d| would) like to know|i want to know|i need to know|i wonder|wondering|"
    r"tell me|let me know|explain|please advise|can you (?:tell|explain|confirm)|"
    r"could you (?:tell|explain|confirm)|need help|looking for|unsure|not sure)\b",
    re.IGNORECASE,
)
# "..., and what's the pip install command?" asks a second question.
#: "A few questions: how long ...": the lead-in before the questions asks nothing.
_LEAD_IN = _PATTERNS.compile(
    r"^[^:?]{0,60}:\s+(?=(?:how|what|what's|which|where|when|why|who|is|are|can|could|do|does|"
    r"will|should)\b)",
    re.IGNORECASE,
)
#: "What should I write?", "What do we tell them?": a question about the reply, whose subject
#: is what the ticket has already said (round 26 of the drafter).
_META = _PATTERNS.compile(
    r"^(?:so,?\s+)?what (?:should|do|can|would|shall) (?:i|we) (?:write|tell|say|put|answer"
    r"|reply|post)(?: (?:them|him|her|people|members|customers|staff))?"
    r"(?: (?:on|in|to) (?:the|our|my) [\w -]{1,30})?\W*$",
    re.IGNORECASE,
)
#: "..., and how?" asks for the steps of what the question before it asked about.
_BARE_HOW = _PATTERNS.compile(r"^(?:and |but )?how\W*$", re.IGNORECASE)
_SECOND = _PATTERNS.compile(
    r"(?:,\s*(?:and|also|plus)?|\s+(?:and|also|plus))\s+(?=(?:how|what|what's|which|where|when|why|who|"
    r"is|are|can|could|do|does|will|should)\b)",
    re.IGNORECASE,
)


#: "What's it called?", "What is its name?": the name of what was just asked about.
_CALLED = re.compile(
    r"^(?:and\s+)?(?:what(?:'s| is| are)\s+(?:it|that|this|they|those|the (?:setting|option|"
    r"switch|feature))\s+called|what(?:'s| is)\s+(?:its|the) name)\W*$",
    re.IGNORECASE,
)


def ticket_questions(ticket: Ticket) -> list[Question]:
    """The questions of ``ticket``, each with the kind of answer it needs; never empty.

    The sentences that ask something (a question mark, or "I'd like to know ..."), split where
    one sentence asks two things; a ticket that asks nothing outright is one question, its
    subject and body.
    """
    text = ticket_prose(ticket)
    subject = ticket.subject.strip()
    body = text[len(subject) :].strip() if text.startswith(subject) else text
    asks: dict[str, str] = {}  # question -> the statement before it
    named: set[str] = set()  # questions a "What's it called?" after them asks the name for
    before = ""
    for sentence in _SENTENCE.split(body):
        sentence = sentence.strip()
        if not sentence:
            continue
        if sentence.endswith("?") or _INDIRECT.search(sentence):
            if _CALLED.match(sentence) and asks:
                # "Is there a switch for that? What's it called?": the name of what the
                # question before asked about, which that question now asks for.
                named.add(next(reversed(asks)))
                continue
            sentence = _ENUMERATED.sub("", sentence)
            if _META.match(sentence):
                # "What should I write?": the ticket has said what it needs answered; the
                # subject asks it when it is a question, else the statement before does.
                sentence = subject if subject.endswith("?") else before or sentence
            lead = _LEAD_IN.match(sentence)
            if lead is not None:
                # "The code you get when pairing a tablet: how long does it last?": what the
                # lead-in names is what "it" is.
                before = lead.group(0).strip().rstrip(":").strip() or before
            parts = _questions_in(_LEAD_IN.sub("", sentence))
            if len(parts) > 1:
                # "Is that possible, and what is the event called?": the answer to the second
                # answers the first, which on its own would match anything.
                parts = [p for p in parts if not _only_whether(p)] or parts
            for k, part in enumerate(parts):
                # "How long is the trial, and does it include ...?": "it" is what the first
                # question of the sentence named, unless that one leans on something too.
                first = parts[0] if k and not _VAGUE_PART.search(parts[0]) else ""
                asks.setdefault(part, first or before)
        else:
            before = sentence
    if not asks:
        asks = {f"{subject}. {body}".strip(". ") if body else subject: ""}
    questions = [replace(classify_question(q), context=c) for q, c in asks.items()]
    questions = [
        replace(q, kind=AnswerKind.NAME) if text in named and q.kind is not AnswerKind.NAME else q
        for q, text in zip(questions, asks, strict=True)
    ]
    # "..., and is it different for bank debits?": the same thing asked of another case. It
    # wants the kind of answer the question before wanted, and leans on it no further: what
    # it asks about is the case it names, not the one before.
    asked = {q.text: q for q in questions}
    questions = [
        replace(q, kind=asked[q.context].kind, focus=asked[q.context].focus, context="")
        if q.kind in (AnswerKind.YES_NO, AnswerKind.OTHER)
        and q.context in asked
        and asked[q.context].kind in _FOLLOWED
        and _SAME_ASKED.search(q.text)
        else q
        for q in questions
    ]
    # The subject often says what a vague question is about ("Is there a way ...?").
    if subject and all(q.kind in (AnswerKind.OTHER, AnswerKind.YES_NO) for q in questions):
        kind = classify_question(subject)
        if kind.kind not in (AnswerKind.OTHER, AnswerKind.YES_NO) and len(questions) == 1:
            questions = [replace(questions[0], kind=kind.kind, focus=kind.focus)]
    return questions


#: "Is it different for ...?", "is that the same when ...?", "and what about ...?": the
#: question before asked of another case, wanting the same kind of answer.
_SAME_ASKED = _PATTERNS.compile(
    r"^(?:and\s+)?(?:is|are|does|do|would|will)\s+(?:it|that|this|they|those|these)\s+"
    r"(?:any\s+)?(?:different|the same|more|less|cheaper|higher|lower|longer|shorter|change)\b"
    r"|^(?:and\s+)?(?:what|how)\s+about\b",
    re.IGNORECASE,
)
#: The kinds whose answer a follow-up of that shape asks for again.
_FOLLOWED = frozenset({AnswerKind.NUMBER, AnswerKind.DURATION, AnswerKind.VERSION})

_NAME_NOUNS = (
    "role|scope|permission|setting|option|header|field|parameter|param|endpoint|command|"
    "event|status|code|plan|format|url|method|flag|variable|name|key type|prefix"
)
_KINDS: tuple[tuple[AnswerKind, re.Pattern[str]], ...] = (
    (AnswerKind.REASON, _PATTERNS.compile(r"\bwhy\b|\bhow come\b|\bwhat causes\b", re.IGNORECASE)),
    (
        AnswerKind.DURATION,
        _PATTERNS.compile(
            r"\bhow long\b|\bfor how long\b|\bhow soon\b|\bhow quickly\b|\bhow often\b|"
            r"\bhow many (?:days|hours|minutes|seconds|weeks|months|years)\b|"
            r"\bwhen (?:does|do|will) .{0,40}\b(?:expire|stop|end|run out|time out)\b|"
            r"\b(?:retention|grace) period\b|\bhow far back\b|"
            # "Does it stay locked forever, or does it end after a while?": how long it lasts.
            r"\b(?:stays?|remains?|kept|keep|last|lasts)\b.{0,30}\b(?:forever|indefinitely)\b|"
            r"\bafter a while\b|"
            # "How close to the start can someone still cancel?", "how late can we tell you?",
            # "how much notice do you need?": a lead time before something.
            r"\bhow (?:close|near) to (?:the )?"
            r"(?:start|beginning|time|date|day|deadline|kick-off)\b|"
            r"\bhow late (?:can|could|may)\b|\bhow (?:far )?in advance\b|"
            r"\bhow much notice\b|"
            # "What's the deadline for the endpoint to respond?", "the default sitting length":
            # a time allowed (not the length of a text, a name or a field).
            r"\b(?:deadline|time limit|timeout|time-out|duration)\b|"
            r"\blength\b(?!.{0,30}\b(?:message|text|sms|name|password|field|characters?|"
            r"string|subject|title|description|note|file|url|key|code|list)s?\b)",
            re.IGNORECASE,
        ),
    ),
    (
        AnswerKind.VERSION,
        # "The oldest release of the app", "which build": a version by another name.
        _PATTERNS.compile(
            r"\b(?:which|what|minimum|min|oldest|latest|newest)\b.{0,40}\b(?:versions?|"
            r"releases?|builds?)\b|"
            # "What system software does an iPhone need?" (round 11 of the drafter): the
            # operating system's version by another name.
            r"\b(?:which|what|minimum|min|oldest)\b.{0,30}\b(?:system software|operating "
            r"system|os|firmware)\b.{0,30}\b(?:need|needs|needed|require|required|requires|"
            r"run|runs|support|supported)\b",
            re.IGNORECASE,  # "What version ...?" starts a sentence
        ),
    ),
    (
        AnswerKind.NAME,
        _PATTERNS.compile(
            rf"\b(?:which|what|what's|whats)\s+(?:is\s+the\s+|are\s+the\s+|the\s+)?"
            rf"(?:[\w-]+\s+){{0,3}}?(?P<focus>{_NAME_NOUNS})s?\b",
            re.IGNORECASE,
        ),
    ),
    (
        # "Is there a switch that lets them see it?" asks for the setting's name.
        AnswerKind.NAME,
        _PATTERNS.compile(
            r"\b(?:is there|are there|do you have|have you got)\s+(?:an?|any|some)\s+"
            r"(?:\w+\s+)?(?P<switch>setting|option|switch|toggle|checkbox)s?\b",
            re.IGNORECASE,
        ),
    ),
    (
        # "Which label printers work with it?": the names of the things that do.
        AnswerKind.NAME,
        re.compile(
            r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?P<focus>[a-z]{4,}s)\s+(?:work|works|are "
            r"supported|are compatible|do you support|does it support)\b",
            re.IGNORECASE,
        ),
    ),
    (
        AnswerKind.NUMBER,
        _PATTERNS.compile(
            r"\bhow (?:many|much|big|large|long is|high|fast)\b|"
            r"\b(?:biggest|largest|smallest|highest|lowest|most|fewest)\b|"
            r"\b(?:(?:what|which) is|what['\u2019]s) the "
            r"(?:limit|maximum|max|minimum|min|size|rate|price|cost|fee|number)\b|"
            r"\b(?:limit|maximum|max|minimum|quota|cap)s?\b.{0,30}\?|\bup to how\b|"
            r"\b(?:what|how much) does .{0,40} cost\b|\bprice\b|\bcost\b|"
            # "What do you charge for each card payment?", "What will it add to our bill?"
            r"\b(?:what|how much) (?:do|does|did|will|would) [\w ]{1,30}?\bcharge\b|"
            r"\badd to (?:our|my|the) (?:monthly |yearly |annual )?(?:bill|invoice)\b|"
            # "What commission do agents get?": a rate or an amount.
            r"\b(?:what|which)\s+(?:[\w-]+\s+)?(?:commission|fee|rate|discount|deposit|surcharge|"
            r"percentage)s?\s+(?:do|does|did|is|are|was|will|would|should|can|applies|apply)\b|"
            # "What figure does it assume for each adult?", "what weight is used?", "what
            # clean-water capacity does it assume?", "what number of seats ...?": a measure
            # asked for by its name (not "what phone number", a name; nor "what value", "what
            # amount" or "what size", which a name, "the full amount" or "medium" can answer).
            r"\b(?:what|which)\s+(?:[\w-]+\s+)?(?P<measure>figure|weight|mass|distance|"
            r"capacity|volume|temperature)s?\s+(?:do|does|did|is|are|was|will|would|should|gets?)\b|"
            r"\bwhat number of\b|"
            # "On what date is the yearly rent due?": a date, which a day and a month give.
            r"\b(?:what|which)\s+(?P<date>date|day of the (?:month|year))\b",
            re.IGNORECASE,
        ),
    ),
    (
        AnswerKind.PROCEDURE,
        _PATTERNS.compile(
            r"\bhow (?:do|can|should|would|could) (?:i|we|you|one)\b|\bhow to\b|"
            r"\bwhat (?:are )?the steps\b|\bis there a way\b|\bwhat should (?:i|we) do\b|"
            r"\bwhat do (?:i|we) (?:need to )?do\b|\bsteps? to\b|\bset up\b|\bsetup\b|"
            r"\band how\?$",
            re.IGNORECASE,
        ),
    ),
    (AnswerKind.LOCATION, _PATTERNS.compile(r"\bwhere\b", re.IGNORECASE)),
    (AnswerKind.YES_NO, _ASKS),
)
_YES_NO_START = _PATTERNS.compile(
    r"^(?:is|are|can|could|do|does|did|will|would|should|shall|may|has|have)\b", re.IGNORECASE
)


_EXPLAIN = _PATTERNS.compile(
    r"^how (?:does|do|is|are) .{2,60}\bwork(?:s|ing)?\b|\bexplain\b|\btell me (?:about|how)\b|"
    r"^what (?:does|do) .{2,60}\bdo\b",
    re.IGNORECASE,
)


def asks_explanation(question: Question) -> bool:
    """True for a question that wants a topic explained ("How does your phishing protection
    work?"), which a whole section answers better than its best sentence."""
    return question.kind is AnswerKind.OTHER and bool(_EXPLAIN.search(question.text))


def _only_whether(question: str) -> bool:
    """A short yes/no question about something said elsewhere ("Is that possible?")."""
    return (
        len(question.split()) <= 5
        and bool(_YES_NO_START.match(question))
        and bool(_VAGUE_PART.search(question))
    )


#: "When goods arrive, does it ...?", "Where a user has no role, can ...?": a clause that says
#: when or where, before the question it belongs to (a question would go on with a verb:
#: "When does it ...", "Where is ...").
_CLAUSE = _PATTERNS.compile(
    r"^(?:when|where|once|if)\s+(?!(?:does|do|did|is|are|was|were|will|would|can|could|should|"
    r"shall|may|might|must|has|have|had|am)\b)\S",
    re.IGNORECASE,
)


_LEADING_CLAUSE = _PATTERNS.compile(r"^(?:when|where|once|if|after|before)\b[^,?]{2,80},\s+", re.I)


def _questions_in(sentence: str) -> list[str]:
    """The questions one sentence asks; a clause that asks nothing ("If uptime is bad, what
    do we get?") stays with the question after it."""
    out: list[str] = []
    carry = ""
    parts = [p.strip() for p in _SECOND.split(sentence) if p.strip()]
    for k, part in enumerate(parts):
        if k + 1 < len(parts) and (not _ASKS.match(part) or _CLAUSE.match(part)):
            carry = f"{carry}{part}, "
            continue
        text = f"{carry}{part}"
        carry = ""
        if out and _BARE_HOW.match(text):
            out[-1] = f"{out[-1]}, and how?"  # "Can it email her, and how?": the steps
        elif len(text.split()) >= 2:
            out.append(text)
    return out


def classify_question(text: str) -> Question:
    """``text`` with the kind of answer it asks for."""
    clean = " ".join(text.split())
    for kind, pattern in _KINDS:
        match = pattern.search(clean)
        if match is None:
            continue
        # "When the courier scans it, does the app ...?": the question after the clause.
        if kind is AnswerKind.YES_NO and not _YES_NO_START.match(_LEADING_CLAUSE.sub("", clean)):
            continue
        groups = match.groupdict()
        # A switch, toggle or option is a setting, which the answer names as one.
        focus = groups.get("focus") or ("setting" if groups.get("switch") else "")
        if kind is AnswerKind.NUMBER:
            # "At what weight does it start adding the extra charge?" names its measure: a
            # price elsewhere in the question does not make it ask for one.
            if groups.get("date"):
                focus = "date"
            elif groups.get("measure"):
                focus = ""
            else:
                focus = _number_focus(clean)
        return Question(clean, kind, focus.lower())
    return Question(clean, AnswerKind.OTHER)


#: What a number question measures, when its words say: room is a size, a price is money.
_MEASURES = (
    (
        "size",
        _PATTERNS.compile(
            r"\b(?:space|storage|room|disk|capacity|how big|file size|gb|mb)\b", re.I
        ),
    ),
    (
        "money",
        _PATTERNS.compile(
            r"\b(?:cost|costs|price|prices|pay|fee|fees|charge|charged|bill)\b", re.I
        ),
    ),
    # A commission or a discount is a share (or an amount): "8%", "$2 off".
    ("share", re.compile(r"\b(?:commission|discount|percentage|surcharge)s?\b", re.I)),
    # "How much above what we ordered can we book?": a margin over something ("5% more"),
    # not a price.
    ("margin", re.compile(r"\bhow (?:much|many|far) (?:more|above|over|extra|beyond)\b", re.I)),
)
#: The quantity dimensions (``facts.Quantity.dimension``) that answer each measure.
_MEASURED = {
    "size": frozenset({"size"}),
    "money": frozenset({"usd", "eur", "gbp"}),
    "share": frozenset({"percent", "usd", "eur", "gbp"}),
    "margin": frozenset({"percent"}),
}
#: "3 more", "2 extra", "10 over": a count given as a margin.
_MARGIN = re.compile(r"\b\d[\d,.]*\s+(?:[a-z]+\s+)?(?:more|extra|over)\b", re.I)


#: "How long before the trip does ...": the time between a deadline and the event it precedes
#: (or follows): the phrase between the two words names the event, then the question's verb.
_SIDE_OF_EVENT = _PATTERNS.compile(
    r"\bhow (?:long|soon|many (?:days|hours|minutes|weeks)|much notice|far)\s+(before|after)\s+"
    r"(?:[\w'-]+\s+){1,6}?(?:do|does|did|must|should|has|have|had|is|are|can|will|would)\b",
    re.IGNORECASE,
)
_IN_ADVANCE = _PATTERNS.compile(
    r"\b(?:in advance|ahead of time|how far ahead|how much notice|how late (?:can|could|may)|"
    r"how (?:close|near) to (?:the )?(?:start|beginning))\b",
    re.I,
)


def event_side(text: str) -> str:
    """Which side of an event a duration question asks about: ``lead`` ("how long before the
    trip does the balance have to be paid?", "how far in advance"), ``delay`` ("how soon after
    a trip has run does the money arrive?"), or empty. "How long before it ends the session?"
    asks how long until, which is neither: no verb follows the event."""
    match = _SIDE_OF_EVENT.search(text)
    if match is not None:
        return "lead" if match.group(1).lower() == "before" else "delay"
    return "lead" if _IN_ADVANCE.search(text) else ""


#: "How many hives ...?" asks for a count of things; "how many more ...?" for a margin, and
#: "how many business days ...?" for a length of time.
_HOW_MANY = _PATTERNS.compile(
    r"\bhow many (?!(?:more|above|over|extra|beyond|dollars|euros|pounds|cents|percent)\b"
    # "How many business days until ...?" asks how long.
    r"|(?:business |working |calendar )?(?:seconds|minutes|hours|days|weeks|months|years)\b)[a-z]",
    re.I,
)
#: What a count is not: a price, a share, a length of time, a time of day.
_NOT_COUNTED = MONEY | {"percent", "duration", "clock", "window"}


def _number_focus(text: str) -> str:
    """``size`` or ``money`` for a number question that asks for one ("how much space"),
    ``count`` for one that asks how many things ("How many hives does Comb cover before I pay
    extra?" asks for hives, whatever it says of paying), else empty (any number answers it)."""
    found = next((name for name, words in _MEASURES if words.search(text)), "")
    if found in ("", "money", "share") and _HOW_MANY.search(text):
        return "count"
    # "How many kinds of space can one site have?" counts kinds; a size word inside what is
    # counted does not make it a size, unless the count is of a size's own units ("how many
    # GB").
    if found == "size" and _HOW_MANY.search(text) and not _HOW_MANY_SIZE_UNITS.search(text):
        return "count"
    return found


#: A date given: a day of the month, a month, or a day named by its place ("on 1 October",
#: "the 28th", "the last day of each month").
_DATE_GIVEN = _PATTERNS.compile(
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH}\b|\b{MONTH}\.?\s+\d{{1,2}}\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)\b|\b(?:first|last|final)\s+(?:working\s+|business\s+)?day\b"
    r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b",
    re.IGNORECASE,
)


#: "How many GB ...?" asks for a size in its units, not a count of things.
_HOW_MANY_SIZE_UNITS = _PATTERNS.compile(
    r"\bhow many (?:[kmgt]b|[kmgt]i?bs|(?:kilo|mega|giga|tera)bytes?|bytes)\b", re.I
)


# ---------------------------------------------------------------------------- answers

#: "4.2.0", "v3", "version 7", "iOS 16"; not a share or a price ("99.9%", "$1.50").
_VERSION = _PATTERNS.compile(
    r"(?<![$€£\d.])\b(?:v?\d+(?:\.\d+){1,3}(?![\d.]*%)|version \d+)\b|\bv\d+\b"
    r"|\b[A-Z][A-Za-z.+#]{1,15} \d+(?:\.\d+)*\b(?!\s*%)"
)
_NUMBER = _PATTERNS.compile(r"(?<![\w.])[$€£]?\d+(?:[.,]\d+)*%?")
_CODE = _PATTERNS.compile(
    r"`[^`]+`|\"[^\"]{2,40}\"|'[^']{2,40}'|\b[a-z]+[_:.][a-z_:.]+\b|\b[A-Z][a-z]+(?:-[A-Z][a-z]+)+\b"
    r"|\b[A-Z]{2,}[-_]?\d*\b|\b[A-Z][a-z]+ > [A-Z]"
)
_CAPITALISED_INSIDE = _PATTERNS.compile(r"(?<=[a-z,;] )[A-Z][a-zA-Z]+")
_PATH = _PATTERNS.compile(
    r"\w+ > \w+|(?:GET|POST|PUT|PATCH|DELETE) /|/v\d/|\bunder [A-Z`]"
    r"|\bon the [A-Z][\w ]{0,30} page\b"
)
_STEP_VERB = _PATTERNS.compile(
    r"^(?:first|second|third|then|next|finally|after that|to \w+|go to|open|click|select|"
    r"choose|set|send|call|use|add|create|roll|deploy|check|enter|pass|run|install|enable|"
    r"disable|include|generate|make|sign|verify|compute|compare|reuse|wait|retry|contact|"
    r"write|copy|remove|delete|revoke|update|change|upload|download|store|keep)\b",
    re.IGNORECASE | re.MULTILINE,
)
_HOW_VERB = _PATTERNS.compile(
    r"\byou (?:can |must |should |need to )?(?:\w+ )?(?:add|set|roll|send|use|create|"
    r"change|enable|find|call|pass|choose|configure|install|update|remove|get|request|"
    r"verify|rotate|revoke|list|download|export|upload)\b|\bwith a (?:GET|POST|PUT|PATCH|"
    r"DELETE) request\b|\bunder [A-Z]",
    re.IGNORECASE,
)
#: A duration given without a number: "immediately", "the number of seconds in Retry-After".
_DURATION_WORDS = _PATTERNS.compile(
    r"\b(?:immediately|instantly|never expires?|no expiry|indefinitely|forever|permanently|"
    r"(?:number of|how many) (?:milliseconds|seconds|minutes|hours|days|weeks|months))\b",
    re.IGNORECASE,
)
_HOW_OFTEN = _PATTERNS.compile(r"\bhow (?:often|frequently|soon|quickly)\b", re.IGNORECASE)
#: "How long does that usually take?", "how long will the transfer take": the time a process
#: takes, which a lead ("24 hours before the appointment") does not give.
_HOW_LONG_IT_TAKES = _PATTERNS.compile(
    r"\bhow long (?:does|do|did|will|would|should|can|might)\s+(?:[\w'-]+\s+){0,5}?take\b",
    re.IGNORECASE,
)
#: "How many times and for how long do you retry?" asks for a count of times besides a
#: duration (round 12 of the drafter); "tries again up to 6 times over 12 hours" gives both.
_HOW_MANY_TIMES = _PATTERNS.compile(
    r"\bhow many (?:more )?(?:times|attempts|retries|tries)\b", re.I
)
_TIMES_GIVEN = _PATTERNS.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty)"
    r"\s+(?:more\s+)?(?:times|attempts|retries|tries)\b|\b(?:once|twice)\b",
    re.IGNORECASE,
)
_FREQUENCY_WORDS = _PATTERNS.compile(
    r"\b(?:hourly|daily|weekly|fortnightly|monthly|yearly|annually)\b"
    r"|\b(?:once|twice) (?:a|an|per|every) (?:hour|day|week|month|year)\b"
    r"|\bevery (?:hour|day|week|month|year|(?:mon|tues|wednes|thurs|fri|satur|sun)day)\b",
    re.IGNORECASE,
)
_NUMBER_WORDS = _PATTERNS.compile(
    r"\b(?:free|no limit|unlimited|one|two|three|four|five|ten)\b", re.I
)
#: "Scan every unit one by one", "one of the", "at once": no count is given.
_NOT_A_COUNT = _PATTERNS.compile(
    r"\bone (?:by|after) (?:one|another)\b|\b(?:one|two) of (?:the|your|our|its|their|them)\b"
    r"|\bno one\b|\bone another\b|\bone or (?:more|several)\b",
    re.I,
)
#: A bullet that opens with a bold name: "**Supervisor**: approves ...", "**Draft**: ...".
_BOLD_LABEL = _PATTERNS.compile(r"^\*\*[A-Z][^*]{1,40}\*\*\s*[:(-]")
_BOLD_NAME = _PATTERNS.compile(r"\*\*[A-Z][^*]{1,40}\*\*")
_TIME_UNITS = frozenset({"millisecond", "second", "minute", "hour", "day", "week", "month", "year"})


def _new_name(text: str, asked: str) -> bool:
    """A capitalised word inside ``text`` that the question does not already say: "each
    with one role" names nothing for "Which role can cancel Echofold?" because of its
    "Echofold" (round 11 of the drafter: the product's own name is no answer)."""
    said = {w.lower() for w in re.findall(r"[A-Za-z]+", asked)}
    return any(m.group(0).lower() not in said for m in _CAPITALISED_INSIDE.finditer(text))


def has_answer(text: str, question: Question) -> bool:
    """True when ``text`` contains the kind of thing ``question`` asks for.

    Only the kinds with a visible shape are tested (a duration, a number, a version, a name, a
    step or a place); for the others any text will do.
    """
    kind = question.kind
    if kind is AnswerKind.DURATION:
        # "Paid once a week" says how often or how soon, not how long anything lasts.
        often = _HOW_OFTEN.search(question.text) and _FREQUENCY_WORDS.search(text)
        if _HOW_MANY_TIMES.search(question.text) and not _TIMES_GIVEN.search(text):
            return False
        durations = [q for q in quantities(text) if q.unit.split("/")[0] in _TIME_UNITS]
        if (
            durations
            and _HOW_LONG_IT_TAKES.search(question.text)
            and all(role_of(text, q) == "lead" for q in durations)
        ):
            # "How long does the refund take?" is not answered by "cancel 24 hours or more
            # before the appointment": a time ahead of an event is no time anything takes.
            durations = []
        return bool(durations) or bool(_DURATION_WORDS.search(text)) or bool(often)
    if kind is AnswerKind.NUMBER:
        if question.focus in _MEASURED:
            # "How much space?" is not answered by "1200 pixels", nor "what does it cost?" by
            # "within 5 minutes".
            wanted = _MEASURED[question.focus]
            return (
                any(q.dimension.split("/")[0] in wanted for q in quantities(text))
                or (question.focus == "money" and bool(re.search(r"\bfree\b", text, re.I)))
                or (question.focus == "margin" and bool(_MARGIN.search(text)))
            )
        if question.focus == "date":
            return _DATE_GIVEN.search(text) is not None
        if question.focus == "count":
            # "$2 a month" or "within 5 minutes" says how much or how long, not how many.
            for found in reversed(quantities(text)):
                if found.dimension.split("/")[0] in _NOT_COUNTED:
                    text = f"{text[: found.start]} {text[found.end :]}"
        return _NUMBER.search(text) is not None or bool(
            _NUMBER_WORDS.search(_NOT_A_COUNT.sub(" ", text))
        )
    if kind is AnswerKind.VERSION:
        return _VERSION.search(text) is not None
    if kind is AnswerKind.NAME:
        named = (
            _CODE.search(text) is not None
            or _new_name(text, question.text)
            or _BOLD_LABEL.match(text) is not None
            # "With **Remote join** switched on, ...": a label shown in bold is a name.
            or _BOLD_NAME.search(text) is not None
        )
        if question.focus in ("command",):
            return "`" in text or bool(re.search(r"\b(?:pip|npm|go get|curl)\b", text))
        return named
    if kind is AnswerKind.PROCEDURE:
        return bool(_STEP_VERB.search(text) or _HOW_VERB.search(text) or _PATH.search(text))
    if kind is AnswerKind.LOCATION:
        return _PATH.search(text) is not None
    return bool(text.strip())


_PATTERNS.save()
