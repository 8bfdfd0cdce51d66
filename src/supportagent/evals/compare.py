"""`eval compare`: what got better or worse between two sets of eval results, metric by metric.

Which way is better is data (``directions.toml``), matched on the metric's name; a metric no
rule covers is only "changed". Either side may be an `eval report` JSON file (its ``results``),
a single saved result, or a JSON list of results.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from supportagent.errors import UserError
from supportagent.evals.results import EvalResult

#: Differences smaller than this are rounding, not a change.
TOLERANCE = 1e-9


class Verdict(StrEnum):
    better = "better"
    worse = "worse"
    same = "same"
    changed = "changed"  # no rule says which way is better
    added = "new"  # only in B
    removed = "gone"  # only in A


@dataclass(frozen=True, slots=True)
class Change:
    kind: str
    dataset: str
    metric: str
    before: float | None
    after: float | None
    verdict: Verdict

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


@cache
def direction_rules() -> tuple[tuple[str, bool], ...]:
    """(pattern, higher_is_better) in order, from ``directions.toml``."""
    text = (resources.files("supportagent.evals") / "directions.toml").read_text("utf-8")
    return parse_rules(text)


def parse_rules(text: str) -> tuple[tuple[str, bool], ...]:
    rules = []
    for rule in tomllib.loads(text).get("rule", []):
        better = rule["better"]
        if better not in ("higher", "lower"):
            raise ValueError(f"directions: 'better' is higher or lower, got {better!r}")
        rules.append((str(rule["pattern"]).lower(), better == "higher"))
    return tuple(rules)


def higher_is_better(metric: str, rules: Sequence[tuple[str, bool]] | None = None) -> bool | None:
    """True or False by the first rule matching ``metric``; None when no rule matches."""
    name = metric.lower()
    for pattern, higher in direction_rules() if rules is None else rules:
        if fnmatchcase(name, pattern):
            return higher
    return None


def verdict(
    metric: str,
    before: float,
    after: float,
    rules: Sequence[tuple[str, bool]] | None = None,
) -> Verdict:
    """Better, worse, same, or only "changed" when the metric's direction is unknown."""
    if abs(after - before) <= TOLERANCE:
        return Verdict.same
    higher = higher_is_better(metric, rules)
    if higher is None:
        return Verdict.changed
    return Verdict.better if (after > before) == higher else Verdict.worse


def compare(
    before: Iterable[EvalResult],
    after: Iterable[EvalResult],
    rules: Sequence[tuple[str, bool]] | None = None,
) -> list[Change]:
    """Every metric of either side, matched by (kind, dataset, metric), in a stable order."""
    a = _flat(before)
    b = _flat(after)
    changes = []
    for key in [*a, *(k for k in b if k not in a)]:
        kind, dataset, metric = key
        old, new = a.get(key), b.get(key)
        if old is None:
            mark = Verdict.added
        elif new is None:
            mark = Verdict.removed
        else:
            mark = verdict(metric, old, new, rules)
        changes.append(Change(kind, dataset, metric, old, new, mark))
    return changes


def _flat(results: Iterable[EvalResult]) -> dict[tuple[str, str, str], float]:
    return {(r.kind, r.dataset, n): m.value for r in results for n, m in r.metrics.items()}


def read_results_file(path: Path) -> list[EvalResult]:
    """The results in ``path``: a report, one result or a list; UserError when unreadable."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: cannot read eval results ({_reason(exc)})") from None
    if isinstance(data, Mapping) and "results" in data:
        data = data["results"]
    items = data if isinstance(data, list) else [data]
    results = []
    for number, item in enumerate(items, start=1):
        if not isinstance(item, Mapping):
            raise UserError(f"{path}: result {number} is not a JSON object")
        results.append(EvalResult.from_json(item, f"{path} (result {number})"))
    return results


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def counts(changes: Iterable[Change]) -> dict[str, int]:
    """How many metrics got each verdict, in the order the verdicts are declared."""
    tally = {v.value: 0 for v in Verdict}
    for change in changes:
        tally[change.verdict.value] += 1
    return {k: n for k, n in tally.items() if n}
