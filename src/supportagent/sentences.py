"""A ticket cut into the sentences a detector reads, and its greeting and sign-off set apart.

A risk can sit in one sentence of a long how-to ticket, so the semantic detectors score each
sentence rather than the ticket as a whole, where one sentence would be diluted. Sign-offs
and code are left out: they carry no risk and no request. A greeting is cut off its line, never
the line itself ("Hi team, I don't want to be here anymore" keeps its second half).
"""

from __future__ import annotations

import re

from supportagent.domain import Ticket
from supportagent.regexcache import ProgramCache
from supportagent.textnorm import prose

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

_GREETING = _PATTERNS.compile(
    r"^\s*(hi|hello|hey|dear|good (morning|afternoon|evening))\b[^\n]*$",
    re.IGNORECASE | re.MULTILINE,
)
_GREETING_PREFIX = _PATTERNS.compile(
    r"^\s*(?:hi|hello|hey|dear|hola|hallo|bonjour|ciao|ol[aá]|good (?:morning|afternoon|evening))"
    r"\b[^,.!:\n]{0,30}[,.!:]?",
    re.IGNORECASE | re.MULTILINE,
)
_CLOSING = _PATTERNS.compile(
    r"^\s*(thanks|thank you|many thanks|cheers|regards|best|kind regards|best regards|"
    r"sincerely|sent from|groeten|saludos|gr(u|ü)(ß|ss)e|gruß|cordialement|mfg)\b|^\s*--\s*$",
    re.IGNORECASE,
)
#: A sign-off is looked for only this close to the end of a ticket.
_SIGNATURE_LINES = 6
#: A sign-off line is short ("Thanks,", "Kind regards, Ana"); a longer line is content.
_SIGN_OFF_WORDS = 4

#: Sentences read per ticket: a wall of text must not make screening slow.
MAX_SENTENCES = 40
#: Longer sentences are cut here (MiniLM reads 256 tokens; a risk sits in a clause).
MAX_SENTENCE_CHARS = 400
MIN_WORDS = 3

_BREAK = _PATTERNS.compile(r"(?<=[.!?…])[\"')\]]*\s+|\n(?=\s*(?:[-*•]|\d+[.)])\s)|\s*\n\s*")
_WORDS = _PATTERNS.compile(r"[^\W\d_]+")


def _without_sign_off(body: str) -> list[str]:
    lines = body.split("\n")
    for i in range(len(lines) - 1, max(len(lines) - _SIGNATURE_LINES, 0) - 1, -1):
        if _CLOSING.match(lines[i]) and len(lines[i].split()) <= _SIGN_OFF_WORDS:
            return lines[:i]
    return lines


def strip_signature(body: str) -> str:
    """The body without greeting lines and without the sign-off block (names, titles)."""
    return _GREETING.sub("", "\n".join(_without_sign_off(body))).strip()


def split_text(text: str) -> list[str]:
    """Sentences of a free text, cleaned of code; fragments under three words join the next."""
    pieces = [" ".join(p.split()) for p in _BREAK.split(prose(text, identifiers=False))]
    out: list[str] = []
    carry = ""
    for piece in pieces:
        if not piece:
            continue
        piece = f"{carry} {piece}" if carry else piece
        if len(_WORDS.findall(piece)) < MIN_WORDS:
            carry = piece
            continue
        carry = ""
        out.append(piece[:MAX_SENTENCE_CHARS])
    if carry and len(_WORDS.findall(carry)) >= 2:
        out.append(carry[:MAX_SENTENCE_CHARS])
    return out


def ticket_sentences(ticket: Ticket, limit: int = MAX_SENTENCES) -> list[str]:
    """The subject, then the body's sentences without greeting and sign-off; no repeats."""
    body = _GREETING_PREFIX.sub("", "\n".join(_without_sign_off(ticket.body)))
    seen: dict[str, None] = {}
    for part in (ticket.subject, body):
        for sentence in split_text(part):
            seen.setdefault(sentence, None)
    sentences = list(seen)
    if len(sentences) <= limit:
        return sentences
    # Keep the start and the end of a very long ticket: requests open it and close it.
    head = limit * 3 // 4
    return sentences[:head] + sentences[-(limit - head) :]


_PATTERNS.save()
