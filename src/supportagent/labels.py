"""Expected buckets for inbox tickets, and how well the agent's buckets match them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from supportagent.domain import Bucket
from supportagent.errors import UserError
from supportagent.lines import physical_lines


@dataclass(frozen=True, slots=True)
class Label:
    ticket_id: str
    expected_bucket: Bucket
    safety_category: str | None = None
    kind: str | None = None


@dataclass(frozen=True, slots=True)
class Accuracy:
    correct: int
    total: int
    misses: tuple[tuple[str, str, str], ...]  # (ticket id, expected, got)

    @property
    def value(self) -> float:
        return self.correct / self.total if self.total else 0.0


def read_labels(path: Path) -> dict[str, Label]:
    """Labels from a JSONL file of ``{"id", "expected_bucket", ...}``; bad lines are errors."""
    try:
        lines = physical_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read labels ({exc})") from exc
    labels: dict[str, Label] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            label = Label(
                str(row["id"]),
                Bucket(row["expected_bucket"]),
                row.get("safety_category"),
                row.get("kind"),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{path}:{number}: not a label line ({exc})") from exc
        labels[label.ticket_id] = label
    return labels


def bucket_accuracy(predicted: Mapping[str, str | None], labels: Mapping[str, Label]) -> Accuracy:
    """Share of labelled tickets whose bucket matches; unlabelled tickets are ignored."""
    correct, misses = 0, []
    for ticket_id, label in sorted(labels.items()):
        if ticket_id not in predicted:
            continue
        got = predicted[ticket_id] or "-"
        if got == label.expected_bucket.value:
            correct += 1
        else:
            misses.append((ticket_id, label.expected_bucket.value, got))
    total = correct + len(misses)
    return Accuracy(correct, total, tuple(misses))


def misses_by_kind(accuracy: Accuracy, labels: Mapping[str, Label]) -> dict[str, int]:
    out: dict[str, int] = {}
    for ticket_id, _expected, _got in accuracy.misses:
        kind = labels[ticket_id].kind or "-"
        out[kind] = out.get(kind, 0) + 1
    return out
