"""Rule tables kept as TOML data files: reading them and parsing ``[[rule]]`` entries.

Shared by the safety gate and the rule classifier, so both report a bad table the same way.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, TypeVar


class NamedRule(Protocol):
    @property
    def name(self) -> str: ...


R = TypeVar("R", bound=NamedRule)


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
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{source}: not valid TOML: {exc}") from exc
    entries = data.get("rule")
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"{source}: no [[rule]] tables found")
    rules: list[R] = []
    seen: set[str] = set()
    for index, entry in enumerate(entries, start=1):
        rule = parse_entry(entry, f"{source}: rule #{index}")
        if rule.name in seen:
            raise ValueError(f"{source}: rule {rule.name!r} is defined twice")
        seen.add(rule.name)
        rules.append(rule)
    return tuple(rules)
