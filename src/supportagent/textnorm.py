"""Untrusted text as the rules and detectors read it: one canonical form, code set apart.

Tickets arrive with tricks, deliberate or not: full-width or Cyrillic look-alike letters,
zero-width characters inside words, curly apostrophes, instructions tucked into HTML comments,
and code whose identifiers (``py_function``, ``in_tensor``) look like the ids the rules look
for. Every rule table and detector reads :func:`canonical` text; the classifier's and safety
gate's rules read :func:`prose`, which also blanks out code, so no rule fires on an identifier.
Pure functions; nothing here decides anything.
"""

from __future__ import annotations

import re
import unicodedata

from supportagent.regexcache import ProgramCache

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

#: Characters that render as nothing (or as a space) and only serve to split a word.
_INVISIBLE = _PATTERNS.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]"
)

#: Letters of other scripts that look like Latin ones, as they appear in spoofed words (NFKC
#: leaves them alone: they are real letters of their own alphabets), in pairs of look-alike
#: and Latin letter, written as escapes so that the source shows what it maps.
_CONFUSABLE_PAIRS = (
    # Cyrillic
    "\u0430a\u0432b\u0435e\u043ak\u043cm\u043dh\u043eo\u0440p\u0441c\u0442t\u0443y\u0445x"
    "\u0455s\u0456i\u0457i\u0458j\u0501d\u051bq\u051dw\u04bbh\u04cfl\u0410A\u0412B\u0415E"
    "\u041aK\u041cM\u041dH\u041eO\u0420P\u0421C\u0422T\u0423Y\u0425X\u0405S\u0406I\u0408J"
    # Greek
    "\u03b1a\u03b5e\u03b9i\u03bak\u03bdv\u03bfo\u03c1p\u03c4t\u03c5u\u03c7x\u0391A\u0392B"
    "\u0395E\u0397H\u0399I\u039aK\u039cM\u039dN\u039fO\u03a1P\u03a4T\u03a5Y\u03a7X\u0396Z"
    # quotes and dashes that defeat "can't" and "e-mail" patterns
    "\u2018'\u2019'\u201b'\u2032'\u02bc'\u201c\"\u201d\"\u201e\"\u2033\""
    "\u2010-\u2011-\u2012-\u2013-\u2014-"
)
_CONFUSABLES = str.maketrans(
    dict(zip(_CONFUSABLE_PAIRS[::2], _CONFUSABLE_PAIRS[1::2], strict=True))
)

_HTML_COMMENT = _PATTERNS.compile(r"<!--(.*?)(?:-->|$)", re.DOTALL)
_FENCED = _PATTERNS.compile(
    r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.DOTALL | re.MULTILINE
)
_INLINE_CODE = _PATTERNS.compile(r"`[^`\n]+`")
# An indented block: four spaces or a tab, after a blank line, for as long as it stays so.
_INDENTED = _PATTERNS.compile(r"(?:(?<=\n\n)|\A)(?:(?: {4}|\t)[^\n]*(?:\n|\Z))+")
# Words a person does not write: snake_case, dotted.paths, camelCase, CONSTANT_CASE, a::b.
# Ones with a digit are left alone: they are record ids (``ch_3Nk29xQ``, ``acct_93k2``) that
# the rules exist to see, and an e-mail address is not a dotted path.
_IDENTIFIER = _PATTERNS.compile(
    r"(?<![\w.@/:])(?:[A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)+"
    r"|[a-z]+[A-Z][A-Za-z0-9]*)(?:\(\))?(?!\w|\.\w)"
)
_DIGIT = _PATTERNS.compile(r"\d")
_TRACE_LINE = _PATTERNS.compile(
    r"^[ \t]*(?:at [\w.$<>]+\(|File \"|Traceback \(most recent"
    r"|\w+(?:\.\w+)+(?:Error|Exception)\b).*$",
    re.MULTILINE,
)


def canonical(text: str) -> str:
    """NFKC, look-alike letters mapped to Latin, invisible characters dropped, HTML comments
    opened up (their text stays: an instruction hidden in one must still be read)."""
    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text).translate(_CONFUSABLES)
    return _HTML_COMMENT.sub(lambda m: f" {m.group(1)} ", text)


def mask_code(text: str, *, identifiers: bool = True) -> str:
    """``text`` with code blocks, inline code, stack-trace lines and (unless ``identifiers``
    is false) identifiers blanked.

    Blanked spans keep their newlines, so line structure (and a rule's clause breaks) stays.
    """

    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    for pattern in (_FENCED, _INDENTED, _INLINE_CODE, _TRACE_LINE):
        text = pattern.sub(blank, text)
    if identifiers:
        text = _IDENTIFIER.sub(
            lambda m: m.group(0) if _DIGIT.search(m.group(0)) else blank(m), text
        )
    return text


def prose(text: str, *, identifiers: bool = True) -> str:
    """What the rules read: :func:`canonical` text without its code (and identifiers)."""
    return mask_code(canonical(text), identifiers=identifiers)


def has_code(text: str) -> bool:
    """True when ``text`` carries a code block, inline code or a stack-trace line."""
    text = canonical(text)
    return any(p.search(text) for p in (_FENCED, _INLINE_CODE, _TRACE_LINE))


def stripped_span(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """``span`` of ``text`` narrowed to leave out whitespace at either end."""
    a, b = span
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


_PATTERNS.save()
