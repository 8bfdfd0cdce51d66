"""The one result shape every eval produces, and where the latest result of each is kept.

An :class:`EvalResult` carries flat headline ``metrics`` (a name, a number, and whether higher
is better) for `eval compare`, and the eval's whole JSON report in ``details`` for `eval report`.
Each eval command saves its result under the data home (``evals/<kind>--<dataset>.json``),
replacing the previous result for the same eval and dataset.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from supportagent import __version__
from supportagent.errors import UserError

#: The evals the project has, in the order reports show them. A new eval needs no entry here:
#: any kind that is a plain name (letters, digits, ``_``, ``-``) is read and shown after these.
KINDS = ("retrieval", "triage", "checker", "run", "injection")
RESULTS_DIR = "evals"
_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")
_KIND = re.compile(r"[a-z][a-z0-9_-]{0,39}")


@dataclass(frozen=True, slots=True)
class Metric:
    """One headline number; ``higher_is_better`` tells `eval compare` which way is better."""

    value: float
    higher_is_better: bool = True


@dataclass(frozen=True, slots=True)
class EvalResult:
    kind: str
    dataset: str
    metrics: Mapping[str, Metric]
    details: Mapping[str, Any] = field(default_factory=dict)
    created_at: str = ""
    version: str = __version__

    def __post_init__(self) -> None:
        if not _KIND.fullmatch(self.kind):
            raise ValueError(f"bad eval kind {self.kind!r}: a lower-case name such as 'triage'")
        if not self.created_at:
            stamp = datetime.now(UTC).isoformat(timespec="seconds")
            object.__setattr__(self, "created_at", stamp)

    @property
    def key(self) -> str:
        """What identifies "the same eval" across runs: its kind and dataset."""
        return f"{self.kind}--{dataset_slug(self.dataset)}"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "dataset": self.dataset,
            "created_at": self.created_at,
            "version": self.version,
            "metrics": {
                name: {"value": m.value, "higher_is_better": m.higher_is_better}
                for name, m in self.metrics.items()
            },
            "details": dict(self.details),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], source: str = "<json>") -> EvalResult:
        """Read a result back; UserError naming ``source`` when it is not one."""
        try:
            metrics = {
                str(name): Metric(float(m["value"]), bool(m.get("higher_is_better", True)))
                for name, m in dict(data["metrics"]).items()
            }
            return cls(
                kind=str(data["kind"]),
                dataset=str(data["dataset"]),
                metrics=metrics,
                details=dict(data.get("details", {})),
                created_at=str(data.get("created_at", "")),
                version=str(data.get("version", "")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{source}: not an eval result ({exc})") from None


def dataset_slug(dataset: str) -> str:
    """A file-name-safe form of a dataset's name (a path keeps its last two parts)."""
    parts = [p for p in re.split(r"[\\/]+", dataset) if p]
    return _SLUG.sub("_", "-".join(parts[-2:]) or "dataset")


def results_dir(home: Path) -> Path:
    return home / RESULTS_DIR


def save_result(result: EvalResult, home: Path) -> Path:
    """Write ``result`` as the latest of its eval and dataset; returns the file written."""
    folder = results_dir(home)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{result.key}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n", "utf-8")
    tmp.replace(path)
    return path


def load_results(home: Path) -> list[EvalResult]:
    """The latest result of every eval saved under ``home``, by kind then dataset."""
    folder = results_dir(home)
    if not folder.is_dir():
        return []
    results = [read_result(path) for path in sorted(folder.glob("*.json"))]
    return sorted(results, key=kind_order)


def kind_order(result: EvalResult) -> tuple[int, str, str]:
    """Known kinds in :data:`KINDS` order, then any other kind by name; datasets by name."""
    known = KINDS.index(result.kind) if result.kind in KINDS else len(KINDS)
    return (known, result.kind, result.dataset)


def read_result(path: Path) -> EvalResult:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: cannot read an eval result ({exc})") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: not an eval result (expected a JSON object)")
    return EvalResult.from_json(data, str(path))


def flat_metrics(results: Iterable[EvalResult]) -> dict[tuple[str, str, str], Metric]:
    """Every metric of ``results`` keyed by (kind, dataset, metric name), for comparisons."""
    return {(r.kind, r.dataset, name): m for r in results for name, m in r.metrics.items()}
