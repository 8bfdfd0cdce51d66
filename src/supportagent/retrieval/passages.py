"""Split documents into passages: the units that search returns and drafts cite.

A knowledge-base article is cut along its markdown headings (``#`` to ``###``), and a section
longer than ``max_chars`` is packed into pieces along paragraph boundaries, falling back to
sentences, then words, only for a paragraph that alone is too long. A resolved ticket is one
passage. Every passage's text is a slice of the document body, so nothing is reworded.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from supportagent.domain import DocKind, Document, Passage
from supportagent.regexcache import ProgramCache
from supportagent.textnorm import stripped_span

_PATTERNS = ProgramCache.for_module(__name__, __file__)  # see regexcache

DEFAULT_MAX_CHARS = 1200
INTRO_SLUG = "intro"
ANSWER_SLUG = "answer"
_MAX_SLUG = 60

_HEADING = _PATTERNS.compile(r"^ {0,3}(#{1,3})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = _PATTERNS.compile(r"^ {0,3}(`{3,}|~{3,})")
_SENTENCE_END = _PATTERNS.compile(r"(?<=[.!?])\s+|\n")
_WHITESPACE = _PATTERNS.compile(r"\s+")
_MARKUP = _PATTERNS.compile(r"[`*_#>|]+")

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class _Section:
    heading_path: tuple[str, ...]
    start: int
    end: int


def slugify(text: str) -> str:
    """Lowercase ``[a-z0-9-]`` form of a heading, at most 60 characters; never empty."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")
    if len(slug) > _MAX_SLUG:
        slug = slug[:_MAX_SLUG].rsplit("-", 1)[0] if "-" in slug[:_MAX_SLUG] else slug[:_MAX_SLUG]
    return slug or "section"


def _clean_heading(text: str) -> str:
    return _WHITESPACE.sub(" ", text.replace("`", "").replace("**", "")).strip()


def _same_words(a: str, b: str) -> bool:
    return _WHITESPACE.sub(" ", a).strip().casefold() == _WHITESPACE.sub(" ", b).strip().casefold()


def _line_spans(text: str) -> list[Span]:
    """Start and end offsets of each line, end excluding the newline.

    Lines end at "\n" only: ``str.splitlines`` also ends one at U+2028 or a form feed inside
    a paragraph, and the text after it could pass for a heading."""
    spans: list[Span] = []
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        line_end = end - 1 if end > start and text[end - 1] == "\r" else end
        spans.append((start, line_end))
        start = end + 1
    return spans


def _next_fence(line: str, fence: str | None) -> str | None:
    """Fence state after ``line``: the open fence's character (` or ~), or None outside code."""
    match = _FENCE.match(line)
    if match is None:
        return fence
    marker = match.group(1)[0]
    if fence is None:
        return marker
    return None if marker == fence else fence


def _sections(doc: Document) -> list[_Section]:
    """Cut the body at headings outside fenced code; each section excludes its heading line."""
    body = doc.body
    stack: list[tuple[int, str]] = []
    sections: list[_Section] = []
    path: tuple[str, ...] = ()
    start = 0
    fence: str | None = None
    for line_start, line_end in _line_spans(body):
        line = body[line_start:line_end]
        if _FENCE.match(line):
            fence = _next_fence(line, fence)
            continue
        heading = None if fence else _HEADING.match(line)
        if heading is None:
            continue
        sections.append(_Section(path, start, line_start))
        level = len(heading.group(1))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, _clean_heading(heading.group(2))))
        # An H1 that repeats the document title says nothing the title does not.
        path = tuple(text for lvl, text in stack if not (lvl == 1 and _same_words(text, doc.title)))
        start = line_end
    sections.append(_Section(path, start, len(body)))
    return sections


def _paragraph_spans(text: str, start: int, end: int) -> list[Span]:
    """Paragraphs (runs of non-blank lines) in ``text[start:end]``; blank lines in code stay."""
    spans: list[Span] = []
    para_start: int | None = None
    para_end = start
    fence: str | None = None
    for line_start, line_end in _line_spans(text[start:end]):
        a, b = start + line_start, start + line_end
        line = text[a:b]
        fence = _next_fence(line, fence)
        if not line.strip() and fence is None:
            if para_start is not None:
                spans.append((para_start, para_end))
                para_start = None
            continue
        if para_start is None:
            para_start = a
        para_end = b
    if para_start is not None:
        spans.append((para_start, para_end))
    return spans


def _split_by(pattern: re.Pattern[str]) -> Callable[[str, int, int], list[Span]]:
    def split(text: str, start: int, end: int) -> list[Span]:
        spans: list[Span] = []
        cursor = start
        for match in pattern.finditer(text, start, end):
            if match.start() > cursor:
                spans.append((cursor, match.start()))
            cursor = match.end()
        if cursor < end:
            spans.append((cursor, end))
        return spans

    return split


def _hard_split(text: str, start: int, end: int, max_chars: int) -> list[Span]:
    return [(i, min(i + max_chars, end)) for i in range(start, end, max_chars)]


# Coarsest first: a finer cut is used only inside a piece that is still too long.
_SPLITTERS: tuple[Callable[[str, int, int], list[Span]], ...] = (
    _paragraph_spans,
    _split_by(_SENTENCE_END),
    _split_by(_WHITESPACE),
)


def _pack(text: str, span: Span, max_chars: int, level: int = 0) -> list[Span]:
    """Cover ``span`` with as few pieces of at most ``max_chars`` as greedy packing gives."""
    a, b = stripped_span(text, span)
    if a == b:
        return []
    if b - a <= max_chars:
        return [(a, b)]
    if level < len(_SPLITTERS):
        units = _SPLITTERS[level](text, a, b)
    else:
        units = _hard_split(text, a, b, max_chars)
    if len(units) <= 1 and level < len(_SPLITTERS):
        return _pack(text, (a, b), max_chars, level + 1)
    pieces: list[Span] = []
    current: Span | None = None
    for unit in units:
        unit = stripped_span(text, unit)
        if unit[0] == unit[1]:
            continue
        if current is not None and unit[1] - current[0] <= max_chars:
            current = (current[0], unit[1])
            continue
        if current is not None:
            pieces.append(current)
            current = None
        if unit[1] - unit[0] <= max_chars:
            current = unit
        else:
            pieces.extend(_pack(text, unit, max_chars, level + 1))
    if current is not None:
        pieces.append(current)
    return pieces


def _unique(base: str, used: set[str]) -> str:
    candidate, n = base, 1
    while candidate in used:
        n += 1
        candidate = f"{base}-{n}"
    used.add(candidate)
    return candidate


def split_passages(doc: Document, max_chars: int = DEFAULT_MAX_CHARS) -> list[Passage]:
    """Split one document into passages with ids ``DOC-ID#slug``, unique within the document."""
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    if doc.kind is DocKind.RESOLVED:
        if not doc.body.strip():
            return []
        passage_id = f"{doc.id}#{ANSWER_SLUG}"
        return [Passage(passage_id, doc.id, doc.kind, doc.title, (), doc.body.strip())]

    passages: list[Passage] = []
    used: set[str] = set()
    for section in _sections(doc):
        base = slugify(section.heading_path[-1]) if section.heading_path else INTRO_SLUG
        for a, b in _pack(doc.body, (section.start, section.end), max_chars):
            passage_id = f"{doc.id}#{_unique(base, used)}"
            passages.append(
                Passage(
                    passage_id, doc.id, doc.kind, doc.title, section.heading_path, doc.body[a:b]
                )
            )
    return passages


def title_text(passage: Passage, document: Document) -> str:
    """What the ``title`` signal indexes for a passage."""
    parts = [passage.title, *passage.heading_path]
    question = document.meta.get("question")
    if passage.kind is DocKind.RESOLVED and isinstance(question, str):
        parts.append(question)
    return "\n".join(part for part in parts if part)


def dense_text(passage: Passage) -> str:
    """What the ``dense`` signal embeds: title, heading path and text, without markdown marks."""
    heading = " > ".join(passage.heading_path)
    parts = [passage.title, heading, _MARKUP.sub(" ", passage.text)]
    return "\n".join(part.strip() for part in parts if part.strip())


_PATTERNS.save()
