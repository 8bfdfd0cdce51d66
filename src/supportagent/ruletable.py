"""Rule tables kept as TOML data files: reading them and parsing ``[[rule]]`` entries.

Shared by the safety gate and the rule classifier, so both report a bad table the same way.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar

from supportagent import tomlcache
from supportagent.regexcache import ProgramCache


class NamedRule(Protocol):
    @property
    def name(self) -> str: ...


R = TypeVar("R", bound=NamedRule)

#: The compiled programs of the table ``parse_rule_table`` is parsing, for ``compile_patterns``.
_PROGRAMS: ContextVar[ProgramCache | None] = ContextVar("rule_table_programs", default=None)


def read_rule_file(path: Path, what: str) -> str:
    """The text of a rule file; ValueError naming the file when it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read {what}: {exc}") from exc


def parse_rule_table(text: str, source: str, parse_entry: Callable[[Any, str], R]) -> tuple[R, ...]:
    """Every ``[[rule]]`` entry of a TOML table, in order; names must be unique.

    ``parse_entry`` turns one entry into a rule and raises ValueError with the ``where`` text
    it is given ("<source>: rule #3") when the entry is malformed.
    """
    try:
        data = tomlcache.loads(text, source)  # tomllib.loads, kept between processes
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{source}: not valid TOML: {exc}") from exc
    entries = data.get("rule")
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{source}: no [[rule]] tables found")
    rules: list[R] = []
    seen: set[str] = set()
    # The table's patterns come from the programs an earlier process compiled (regexcache).
    programs = ProgramCache(text, source)
    token = _PROGRAMS.set(programs)
    try:
        for index, entry in enumerate(entries, start=1):
            rule = parse_entry(entry, f"{source}: rule #{index}")
            if rule.name in seen:
                raise ValueError(f"{source}: rule {rule.name!r} is defined twice")
            seen.add(rule.name)
            rules.append(rule)
    finally:
        _PROGRAMS.reset(token)
    programs.save()
    return tuple(rules)


def rule_entry(entry: Any, where: str) -> tuple[Mapping[str, Any], str, str]:
    """A ``[[rule]]`` entry checked to be a table with a name: (entry, name, where with name)."""
    if not isinstance(entry, Mapping):
        raise ValueError(f"{where}: expected a table")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{where}: missing field 'name'")
    return entry, name, f"{where} ({name!r})"


def rule_examples(entry: Mapping[str, Any], where: str) -> tuple[tuple[str, ...], ...]:
    """An entry's ``examples`` (texts it must match) and ``not_examples`` (texts it must not):
    every rule carries its own tests, which the test suite runs."""
    out = []
    for key in ("examples", "not_examples"):
        values = entry.get(key, [])
        if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
            raise ValueError(f"{where}: {key!r} must be a list of non-empty strings")
        out.append(tuple(values))
    return tuple(out)


def first_match(
    patterns: tuple[re.Pattern[str], ...], text: str, skip: Callable[[int], bool] | None = None
) -> re.Match[str] | None:
    """The first match of any of ``patterns`` in ``text``, in pattern order, passing over the
    matches whose start ``skip`` rejects (a negation, a condition, a hypothetical before it)."""
    for pattern in patterns:
        for match in pattern.finditer(text):
            if skip is None or not skip(match.start()):
                return match
    return None


def text_since(boundary: re.Pattern[str], text: str, start: int) -> str:
    """What of ``text`` before ``start`` follows the last ``boundary`` (a clause or sentence
    break): the words a match's own clause has before it, where a negation, a condition or a
    hypothetical that should void the match would stand."""
    ends = [m.end() for m in boundary.finditer(text, 0, start)]
    return text[ends[-1] if ends else 0 : start]


def compile_patterns(entry: Mapping[str, Any], where: str) -> tuple[re.Pattern[str], ...]:
    """An entry's ``patterns`` (regexes) and ``phrases`` (words), compiled; at least one."""
    sources: list[str] = []
    for key in ("patterns", "phrases"):
        values = entry.get(key, [])
        if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
            raise ValueError(f"{where}: {key!r} must be a list of non-empty strings")
        if key == "phrases":
            values = [r"\s+".join(re.escape(word) for word in v.split()) for v in values]
        sources.extend(values)
    if not sources:
        raise ValueError(f"{where}: missing field 'patterns' (give at least one pattern)")
    programs = _PROGRAMS.get()
    compile_one = programs.compile if programs is not None else re.compile
    compiled = []
    for source in sources:
        try:
            # Anchored on word characters, not on \b, so that patterns that start or end with
            # punctuation ("down?") behave the same as those that start with a letter.
            compiled.append(compile_one(rf"(?<!\w)(?:{source})(?!\w)", re.IGNORECASE))
        except re.error as exc:
            raise ValueError(f"{where}: bad regex {source!r}: {exc}") from exc
    return tuple(compiled)


#: Where one sentence ends: closing punctuation before a space, or a line break. A full stop
#: inside a number ("£26.60") or an address ("example.com") ends nothing, and nor does one
#: after an initial or a title before a name ("d'un certain M. Roux, avec son adresse",
#: "Dr. Okafor's notes"; round 26).
SENTENCE_END = re.compile(
    r"(?<!\b[A-Z])(?<!\bMr)(?<!\bMrs)(?<!\bMs)(?<!\bDr)(?<!\bMme)(?<!\bMlle)(?<!\bSr)"
    r"(?<!\bSra)(?<!\bHr)(?<!\bFr)(?<!\bSig)(?<!\bDhr)(?<!\bMevr)[.!?]+(?=\s)|[!?][.!?]*(?=\s)|\n"
)


def asks(sentence: str) -> bool:
    """Whether ``sentence`` is a question: it ends with a question mark (Latin or full-width),
    before any closing quote or bracket ("Is it public?”"). The rule rows and the semantic
    detector read a question the same way."""
    return sentence.rstrip().rstrip("\"'\u201d\u00bb)").endswith(("?", "\uff1f"))


@dataclass(frozen=True, slots=True)
class Facet:
    """One thing a sentence must say for a ``Together`` row: any of ``patterns``, matched at
    least ``least`` times with different words ("home address" and "phone number" are two;
    "address" twice is one)."""

    patterns: tuple[re.Pattern[str], ...]
    least: int = 1

    def first(self, text: str, start: int, end: int) -> re.Match[str] | None:
        """The first match in ``text[start:end]`` when the span holds enough distinct ones.
        Where two patterns match the same words ("home address" and "address"), the longer
        match counts and the one inside it does not."""
        found = sorted(
            (m for p in self.patterns for m in p.finditer(text, start, end)),
            key=lambda m: (m.start(), -m.end()),
        )
        kept: list[re.Match[str]] = []
        for match in found:
            if not kept or match.start() >= kept[-1].end():
                kept.append(match)
        distinct = {" ".join(m.group(0).lower().split()) for m in kept}
        if len(distinct) < self.least:
            return None
        return kept[0]


@dataclass(frozen=True, slots=True)
class Together:
    """Facets that must all be found in one sentence, and a sentence that does not ask: a
    rule that reads what a sentence says by its parts (two kinds of personal data, and that
    they were posted or shown to others) instead of by one phrasing of it. A question about
    the same things ("is my address and phone number public?") is not a report of them."""

    facets: tuple[Facet, ...]

    def find(self, text: str, skip: Callable[[int], bool] | None = None) -> re.Match[str] | None:
        """The first facet's first match in the first sentence that holds every facet (and
        whose match ``skip`` does not reject), or None."""
        for start, end in _sentence_spans(text):
            if asks(text[start:end]):
                continue
            first, *rest = (facet.first(text, start, end) for facet in self.facets)
            if first is None or None in rest:
                continue
            if skip is None or not skip(first.start()):
                return first
        return None


def _sentence_spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, in order, covering all of it."""
    start = 0
    for end in [*(m.end() for m in SENTENCE_END.finditer(text)), len(text)]:
        yield start, end
        start = end


def compile_together(entry: Mapping[str, Any], where: str) -> Together | None:
    """An entry's ``together`` list (facets, each a table with ``patterns`` and an optional
    ``least``), compiled; None when the entry has none."""
    if "together" not in entry:
        return None
    raw = entry["together"]
    if not isinstance(raw, list) or len(raw) < 2:
        raise ValueError(f"{where}: 'together' must be a list of at least two facet tables")
    facets = []
    for number, item in enumerate(raw, start=1):
        here = f"{where}: together #{number}"
        if not isinstance(item, Mapping) or set(item) - {"patterns", "phrases", "least"}:
            raise ValueError(f"{here}: a facet is a table of 'patterns' and 'least'")
        least = item.get("least", 1)
        if not isinstance(least, int) or isinstance(least, bool) or least < 1:
            raise ValueError(f"{here}: 'least' must be a whole number, 1 or more")
        facets.append(Facet(compile_patterns(item, here), least))
    return Together(tuple(facets))


def row_match(
    patterns: tuple[re.Pattern[str], ...],
    together: Together | None,
    text: str,
    skip: Callable[[int], bool] | None = None,
) -> re.Match[str] | None:
    """A row's match in ``text``: the first of its ``patterns`` (``first_match``), else its
    ``together`` facets read sentence by sentence; ``skip`` rejects a match either way."""
    found = first_match(patterns, text, skip)
    if found is None and together is not None:
        found = together.find(text, skip)
    return found


def rule_patterns(
    entry: Mapping[str, Any], where: str
) -> tuple[tuple[re.Pattern[str], ...], Together | None]:
    """An entry's ``patterns``/``phrases`` and its ``together`` facets, compiled: a row needs
    one or the other, and may have both."""
    together = compile_together(entry, where)
    if together is not None and not entry.get("patterns") and not entry.get("phrases"):
        return (), together
    return compile_patterns(entry, where), together
