"""What the extractive drafter may quote: evidence cut into answer units.

A unit is one sentence, or a whole procedure (its steps in order, with the sentence that
introduces them), so that a procedure is never quoted from its second step on. From a resolved
ticket only the answer is quoted, and never what belonged to that customer's case: their names,
ids, amounts and dates, or "your VAT ID passed the check". Where such a sentence has a general
part ("..., so from the next invoice the reverse charge applies") that part alone may be quoted;
otherwise the sentence is left out. Nor is a sentence the ``planted`` rules flag ever quoted:
an instruction to the AI or a claim that an account was changed, from any document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from supportagent.domain import DocKind, Hit, Passage, resolved_answer
from supportagent.planted import without_flagged
from supportagent.regexcache import ProgramCache

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

_SENTENCE_END = _PATTERNS.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])")
_HEADING = _PATTERNS.compile(r"^\s*#{1,6}\s")
_FENCE = _PATTERNS.compile(r"^\s*```")
_LIST_MARK = _PATTERNS.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_NUMBERED = _PATTERNS.compile(r"^\s*\d+[.)]\s+")
#: Sentences about the document itself answer nothing ("This article lists ...").
_SIGNPOST = _PATTERNS.compile(
    r"^(this|the following) (article|page|guide|section|document)\b|^(see|read) (also|more)\b",
    re.I,
)
#: A sentence that begins a step of a procedure written as prose.
_STEP = _PATTERNS.compile(
    r"^(?:first|second|third|fourth|fifth|then|next|finally|lastly|after that|afterwards|"
    r"step \d+)\b",
    re.IGNORECASE,
)
_AFTER_STEPS = _PATTERNS.compile(r"^(?:when|once|after|if|now)\b", re.IGNORECASE)
#: A list longer than this is quoted in parts.
MAX_LIST_ITEMS = 8
#: A sentence that points back at the one before it: "change this with ...", "do that.".
#: "Staff then cannot sign in with a password", "if it is not paid by then": "then" is when
#: what the sentence before describes has happened.
_POINTS_BACK = _PATTERNS.compile(
    r"\b(?:this|that|these|those)(?=\s+(?:with|by|in|on|under|from|at|for|to|when|if|so|and|"
    r"or|but)\b|\s*[.,;])|^(?:[\w']+\s+){1,3}then\s|\b(?:by|until|since|from) then\b"
    # "Receiving more than that needs approval": than what the sentence before allows.
    r"|\b(?:more|less|fewer|longer|shorter|larger|bigger|smaller|higher|lower|other) than "
    r"(?:that|this)\b"
    # "The setting is **X**, from 2 to 200": the setting for what the sentence before described.
    r"|^(?:the|this) (?:setting|option|switch|toggle|control) (?:is|for (?:this|that|it))\b",
    re.IGNORECASE,
)
#: A bullet that gives a value for a label: "Branch: 25 GB", "Books: 21 days".
_LABELLED = _PATTERNS.compile(r"^[\w][\w ./&-]{0,30}:\s+\S")
_GREETING = _PATTERNS.compile(
    r"^(?:hi|hello|hey|dear|thanks|thank you)\b[^.!?]{0,40}[,.!]\s*", re.I
)


@dataclass(frozen=True, slots=True)
class Unit:
    """A quotable piece of one passage: one sentence or the steps of one procedure."""

    sentences: tuple[str, ...]
    passage: Passage
    rank: int  # the passage's rank in the evidence
    position: int  # the first sentence's position in the passage
    #: "sentence", "item" (a bullet with no lead sentence), "steps" (a procedure), "list" (a
    #: lead sentence and its items) or "bullets" (a run of items with no lead).
    shape: str = "sentence"

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    @property
    def question(self) -> str:
        """A resolved ticket's question (empty for an article)."""
        if self.passage.kind is not DocKind.RESOLVED:
            return ""
        return self.passage.text.partition("\n\n")[0]

    @property
    def procedure(self) -> bool:
        return self.shape == "steps"

    def narrowed(self, text: str) -> Unit:
        """A list unit cut to its lead and the items whose label ``text`` names ("Team: 200
        GB" for a question about the Team plan); the unit itself when none or all match."""
        if self.shape != "list":
            return self
        lowered = text.casefold()
        keep = [
            item
            for item in self.sentences[1:]
            if ":" in item
            and re.search(rf"\b{re.escape(item.split(':', 1)[0].strip().casefold())}\b", lowered)
        ]
        if not keep or len(keep) == len(self.sentences) - 1:
            return self
        return Unit((self.sentences[0], *keep), self.passage, self.rank, self.position, "list")

    @property
    def passage_id(self) -> str:
        return self.passage.id

    @property
    def from_article(self) -> bool:
        return self.passage.kind is DocKind.KB


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage, skipping headings and code blocks; list items count as one each."""
    return [s for s, _ in _sentences_with_marks(text)]


def _sentences_with_marks(text: str) -> list[tuple[str, str]]:
    """Each sentence, and what it is: ``step`` (a numbered item), ``item`` (a bullet) or ``""``."""
    out: list[tuple[str, str]] = []
    in_code = False
    for paragraph in re.split(r"\n\s*\n", text):
        lines: list[str] = []
        header: list[str] | None = None
        for line in paragraph.splitlines():
            if _FENCE.match(line):
                in_code = not in_code
                continue
            if not in_code and line.lstrip().startswith("|"):
                # A table's row is a labelled item: "Comb: price $29 a month; hives included
                # 25" says what "| Comb | $29 a month | 25 |" says under its header.
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if header is None:
                    header = cells
                elif not _TABLE_RULE.match(line) and (row := table_row(header, cells)):
                    out.append((row, "item"))
                continue
            if in_code or _HEADING.match(line):
                continue
            if _LIST_MARK.match(line):
                if lines:
                    out.extend((s, "") for s in _SENTENCE_END.split(" ".join(lines)))
                    lines = []
                mark = "step" if _NUMBERED.match(line) else "item"
                out.append((_LIST_MARK.sub("", line).strip(), mark))
                continue
            lines.append(line.strip())
        if lines:
            out.extend((s, "") for s in _SENTENCE_END.split(" ".join(lines)))
    return [(s.strip(), mark) for s, mark in out if len(s.strip()) > 1]


#: The line under a table's header: "| --- | :---: |".
_TABLE_RULE = _PATTERNS.compile(r"^\s*\|?[\s:|-]+\|?\s*$")


def table_row(header: Sequence[str], cells: Sequence[str]) -> str:
    """A table row as one labelled item: its first cell, then each other cell after its
    column's heading ("Comb: price $29 a month; hives included 25"); empty for a row that
    does not fit its header."""
    if len(cells) != len(header) or len(cells) < 2 or not cells[0]:
        return ""
    rest = [f"{h} {c}".strip() for h, c in zip(header[1:], cells[1:], strict=True) if c]
    return f"{cells[0]}: {'; '.join(rest)}" if rest else ""


def answer_text(passage: Passage) -> str:
    """The text a drafter may quote: for a resolved ticket, the answer and not the question;
    never a sentence planted for the AI or claiming an action was taken (``planted``)."""
    text = resolved_answer(passage.text) if passage.kind is DocKind.RESOLVED else passage.text
    return without_flagged(text)


def evidence_units(evidence: Sequence[Hit]) -> list[Unit]:
    """Every quotable unit of the evidence, in evidence order."""
    units: list[Unit] = []
    for hit in evidence:
        passage = hit.passage
        marked = _sentences_with_marks(answer_text(passage))
        question = passage.text.partition("\n\n")[0] if passage.kind is DocKind.RESOLVED else ""
        i = 0
        while i < len(marked):
            sentence, mark = marked[i]
            lead = units[-1] if units and units[-1].passage is passage else None
            if lead is not None and (not lead.text.endswith(":") or lead.position != i - 1):
                lead = None
            if mark == "step" or _STEP.match(sentence):
                j = i
                steps: list[str] = []
                while j < len(marked) and (
                    marked[j][1] == "step"
                    or _STEP.match(marked[j][0])
                    or (steps and _continues(marked, j))
                ):
                    steps.append(marked[j][0])
                    j += 1
                if j < len(marked) and _AFTER_STEPS.match(marked[j][0]) and not marked[j][1]:
                    steps.append(marked[j][0])  # "When the old key is unused, revoke it."
                    j += 1
                start = i
                if lead is not None and not lead.procedure:
                    units.pop()
                    steps, start = [*lead.sentences, *steps], lead.position
                units.append(Unit(tuple(steps), passage, hit.rank, start, "steps"))
                i = j
                continue
            if mark == "item" and lead is not None and not lead.procedure:
                # "Storage per plan:" and its items: one list, quoted with its lead.
                j = i
                while j < len(marked) and marked[j][1] == "item" and j - i < MAX_LIST_ITEMS:
                    j += 1
                units.pop()
                items = tuple(m[0] for m in marked[i:j])
                units.append(
                    Unit((*lead.sentences, *items), passage, hit.rank, lead.position, "list")
                )
                i = j
                continue
            text = sentence if not question else general_part(sentence, question)
            if text and _quotable(text, labelled=mark == "item"):
                shape = "item" if mark == "item" else "sentence"
                before = units[-1] if units and units[-1].passage is passage else None
                if (
                    shape == "sentence"
                    and before is not None
                    and before.shape == "sentence"
                    and before.position == i - 1
                    and len(before.sentences) == 1
                    and _POINTS_BACK.search(text)
                ):
                    # "An Administrator can change this with the setting X": what "this" is
                    # was said just before, and is quoted with it.
                    units.append(Unit((*before.sentences, text), passage, hit.rank, i - 1))
                else:
                    units.append(Unit((text,), passage, hit.rank, i, shape))
            i += 1
    return units


def bullet_run(unit: Unit, units: Sequence[Unit]) -> Unit:
    """The run of bullets without a lead that ``unit`` belongs to, as one list unit in order
    (at most ``MAX_LIST_ITEMS``); ``unit`` itself when it is no such bullet."""
    if unit.shape != "item":
        return unit
    by_position = {u.position: u for u in units if u.passage is unit.passage and u.shape == "item"}
    start = unit.position
    while start - 1 in by_position and unit.position - (start - 1) < MAX_LIST_ITEMS:
        start -= 1
    run: list[Unit] = []
    position = start
    while position in by_position and len(run) < MAX_LIST_ITEMS:
        run.append(by_position[position])
        position += 1
    if len(run) < 2:
        return unit
    sentences = tuple(s for u in run for s in u.sentences)
    return Unit(sentences, unit.passage, unit.rank, start, "bullets")


def _continues(marked: list[tuple[str, str]], j: int) -> bool:
    """A sentence inside a prose procedure that is not a step of its own ("When ..., you can")."""
    return j + 1 < len(marked) and bool(_STEP.match(marked[j + 1][0]))


def _quotable(sentence: str, *, labelled: bool = False) -> bool:
    """Not a question, a signpost or a fragment; a bullet with a label ("Branch: 25 GB" in a
    list of plans) says a whole fact in few characters."""
    short = len(sentence) < 20 and not (labelled and _LABELLED.match(sentence))
    return not (sentence.endswith("?") or short or _SIGNPOST.match(sentence))


# ---------------------------------------------------------------------------- customer specifics

#: What only one customer's case has: their account, their invoice, what was done for them.
_SPECIFIC = _PATTERNS.compile(
    r"\byour (?:account|invoice|card|payment|order|ticket|plan is|"
    r"(?:[\w-]+ ){1,3}(?:passed|failed|was|were|is now|are now|has been|have been|shows?|"
    r"expired|looks?))\b"
    r"|\b(?:i|we)(?:'ve| have| had)? (?:just |now |already )?(?:checked|reset|refunded|updated|"
    r"changed|applied|added|removed|enabled|disabled|extended|raised|increased|looked|"
    r"confirmed|credited|issued|moved|fixed|reissued|restored|unblocked|lifted|sent you)\b"
    r"|\byours (?:is|are|was|were|runs?|has|have|shows?)\b"
    r"|\b(?:yesterday|today|tomorrow|last (?:week|month|night)|this (?:week|month|morning))\b"
    r"|\b\d{4}-\d{2}-\d{2}\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]* \d{1,2}\b"
    r"|\b\d{1,2}(?:st|nd|rd|th)? (?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
    r"|\b(?:on|last|this|next) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\b[A-Z]{2,}-\d{3,}(?:-\d+)*\b|\bacct_\w+|[\w.+-]+@[\w-]+\.[\w.]+",
    re.IGNORECASE,
)
_CASE_BOUND = _PATTERNS.compile(r"(?:from|starting) (?:the next|now|today|your)\b", re.IGNORECASE)
_CLAUSE_SPLIT = _PATTERNS.compile(r",\s+(?:so|and so|which means|that means)\s+|;\s+")
_WORD = _PATTERNS.compile(r"[A-Za-z0-9][\w.-]*")


def customer_specific(sentence: str, question: str) -> bool:
    """True when ``sentence`` carries details of one customer's case.

    Those are what the shape of the sentence gives away ("your invoice", "we have refunded",
    a date, an invoice or account id, an address) and the numbers, ids and names the sentence
    shares with that customer's own question.
    """
    if _SPECIFIC.search(sentence):
        return True
    asked = {w.lower() for w in _WORD.findall(question) if any(ch.isdigit() for ch in w)}
    asked |= {w.lower() for w in _WORD.findall(question) if w[0].isupper() and len(w) > 2}
    mine = _WORD.findall(sentence)
    # The first word of a sentence is capitalised anyway; product names are shared by design.
    specific = [
        w
        for i, w in enumerate(mine)
        if w.lower() in asked
        and (any(ch.isdigit() for ch in w) or (i > 0 and w[0].isupper()))
        and not _model_name(mine, i, question)
    ]
    return any(any(ch.isdigit() for ch in w) for w in specific)


def _model_name(words: Sequence[str], i: int, question: str) -> bool:
    """True when ``words[i]`` ("K2") is the model part of a name that the customer's question
    writes the same way ("the Vela X3 pads"): letters and digits after a capitalised word.
    Such a name says which kind of thing the answer is about, as a product's name does, not
    which case it was: an amount, a count or an id has no letters beside its digits, or a
    dash ("INV-2041")."""
    word = words[i]
    if i == 0 or not any(ch.isalpha() for ch in word) or not any(ch.isdigit() for ch in word):
        return False
    before = words[i - 1]
    if not before[0].isupper() or any(ch.isdigit() for ch in before):
        return False
    return re.search(rf"\b{re.escape(before)}\s+{re.escape(word)}\b", question) is not None


def general_part(sentence: str, question: str) -> str | None:
    """``sentence`` if it holds nothing of the customer's case, else its general clause, if any."""
    sentence = _GREETING.sub("", sentence).strip()
    if not sentence:
        return None
    if not customer_specific(sentence, question):
        return sentence
    for clause in reversed(_CLAUSE_SPLIT.split(sentence)[1:]):
        clause = clause.strip()
        if _CASE_BOUND.match(clause):
            continue  # "from the next invoice ...": what happens in that customer's case
        if len(clause.split()) >= 6 and not customer_specific(clause, question):
            return clause[0].upper() + clause[1:]
    return None


_PATTERNS.save()
