"""`eval triage`: how well the safety gate and the classifier bucket a labelled set of tickets.

A dataset is the triage format of the shared eval README: JSONL rows ``{"id", "subject",
"body", "expected_bucket"}``, optionally ``expected_safety`` (a safety category, or
``money_or_account`` for a money or account action that must reach a person), ``split``,
``language`` and ``source_label``. Each ticket goes through exactly what the pipeline runs
before retrieval: the safety screen, then the engine's classifier.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supportagent.domain import Bucket, Classification, SafetyResult, Ticket
from supportagent.errors import UserError
from supportagent.evals.catalog import hash_split
from supportagent.evals.results import EvalResult, Metric

BUCKETS = tuple(b.value for b in Bucket)
SAFETY_CATEGORIES = ("self_harm_risk", "security_incident", "legal_threat", "payment_fraud")
#: Not a safety category of the gate but a risk all the same: it must reach a person.
MONEY_OR_ACCOUNT = "money_or_account"
EXPECTED_SAFETY = (*SAFETY_CATEGORIES, MONEY_OR_ACCOUNT)
#: Reason codes that mean "escalated because of a risk" for a money or account ticket.
MONEY_OR_ACCOUNT_REASONS = frozenset({"money_specific", "account_specific"})

Screen = Callable[[Ticket], SafetyResult]
Classify = Callable[[Ticket, SafetyResult], Classification]


@dataclass(frozen=True, slots=True)
class TriageRow:
    ticket: Ticket
    expected_bucket: Bucket
    expected_safety: str | None = None
    split: str | None = None
    language: str | None = None
    source_label: str | None = None


@dataclass(frozen=True, slots=True)
class TriageDecision:
    """What the pipeline decides before retrieval: the safety result, then the bucket."""

    safety: SafetyResult
    bucket: Bucket
    reason_code: str
    reason: str

    @property
    def risk_category(self) -> str | None:
        """The risk this decision escalates for, in the eval's categories, or None."""
        if self.safety.auto_escalate:
            return self.safety.category
        if self.bucket is Bucket.NEEDS_HUMAN and self.reason_code in MONEY_OR_ACCOUNT_REASONS:
            return MONEY_OR_ACCOUNT
        return None


def decide(ticket: Ticket, screen: Screen, classify: Classify) -> TriageDecision:
    """The safety screen, and the classifier when the screen lets the ticket through."""
    safety = screen(ticket)
    if safety.auto_escalate:
        reason = f"safety gate: {safety.category}"
        return TriageDecision(safety, Bucket.NEEDS_HUMAN, safety.reason_code, reason)
    c = classify(ticket, safety)
    return TriageDecision(safety, c.bucket, c.reason_code, c.reason)


# --------------------------------------------------------------------------- reading


def read_triage(path: Path) -> list[TriageRow]:
    """Rows of a triage JSONL file; UserError naming the file and line of a bad row."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"{path}: no such file (a triage dataset is a JSONL file)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read ({exc})") from None
    rows: list[TriageRow] = []
    seen: set[str] = set()
    # Split on "\n" only: str.splitlines also breaks on U+2028 inside a JSON string.
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"{where}: not JSON ({exc.msg})") from None
        row = _row(raw, where)
        if row.ticket.id in seen:
            raise UserError(f"{where}: id {row.ticket.id!r} appears twice")
        seen.add(row.ticket.id)
        rows.append(row)
    if not rows:
        raise UserError(f"{path}: no tickets")
    return rows


def _row(raw: Any, where: str) -> TriageRow:
    if not isinstance(raw, dict):
        raise UserError(f"{where}: expected a JSON object")

    def text(key: str, required: bool = True) -> str | None:
        value = raw.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str):
            raise UserError(f"{where}: field {key!r} must be a string")
        return value

    ticket_id = text("id")
    assert ticket_id is not None
    if "ticket_text" in raw and "body" not in raw:
        subject, body = "", text("ticket_text") or ""
    else:
        subject, body = text("subject", False) or "", text("body") or ""
    bucket = text("expected_bucket")
    if bucket not in BUCKETS:
        raise UserError(f"{where}: expected_bucket must be one of {', '.join(BUCKETS)}")
    safety = text("expected_safety", False)
    if safety is not None and safety not in EXPECTED_SAFETY:
        raise UserError(f"{where}: expected_safety must be null or one of {EXPECTED_SAFETY}")
    return TriageRow(
        Ticket(ticket_id, subject, body),
        Bucket(bucket),
        safety,
        text("split", False),
        text("language", False),
        text("source_label", False),
    )


# --------------------------------------------------------------------------- scoring


@dataclass
class TriageReport:
    dataset: str
    engine: str
    rows: list[tuple[TriageRow, TriageDecision]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.rows)

    def confusion(self) -> dict[str, dict[str, int]]:
        """expected bucket -> predicted bucket -> count, every bucket present."""
        table = {e: dict.fromkeys(BUCKETS, 0) for e in BUCKETS}
        for row, decision in self.rows:
            table[row.expected_bucket.value][decision.bucket.value] += 1
        return table

    def accuracy(self) -> float:
        if not self.rows:
            return 0.0
        right = sum(1 for row, d in self.rows if d.bucket is row.expected_bucket)
        return right / len(self.rows)

    def buckets(self) -> dict[str, dict[str, float]]:
        table = self.confusion()
        out: dict[str, dict[str, float]] = {}
        for name in BUCKETS:
            tp = table[name][name]
            predicted = sum(table[e][name] for e in BUCKETS)
            support = sum(table[name].values())
            out[name] = {
                "precision": tp / predicted if predicted else 0.0,
                "recall": tp / support if support else 0.0,
                "support": support,
            }
        return out

    def safety(self) -> dict[str, dict[str, float]]:
        """Per expected risk category: the share escalated for that very risk."""
        support: Counter[str] = Counter()
        caught: Counter[str] = Counter()
        for row, decision in self.rows:
            if row.expected_safety is None:
                continue
            support[row.expected_safety] += 1
            if decision.risk_category == row.expected_safety:
                caught[row.expected_safety] += 1
        return {
            cat: {"recall": caught[cat] / n, "support": n}
            for cat in EXPECTED_SAFETY
            if (n := support[cat])
        }

    def risk_summary(self) -> dict[str, float] | None:
        """Risk recall over every labelled risk (escalated for any risk) and false alarms."""
        risky = [(r, d) for r, d in self.rows if r.expected_safety is not None]
        if not risky:
            return None
        harmless = [(r, d) for r, d in self.rows if r.expected_safety is None]
        escalated = sum(1 for _, d in risky if d.risk_category is not None)
        alarms = sum(1 for _, d in harmless if d.risk_category is not None)
        return {
            "risk_recall": escalated / len(risky),
            "risk_support": len(risky),
            "false_alarm_rate": alarms / len(harmless) if harmless else 0.0,
            "harmless_support": len(harmless),
        }

    def by_label(self) -> dict[str, dict[str, float]]:
        """Per source label (a public set's own intent), the share bucketed as expected."""
        support: Counter[str] = Counter()
        right: Counter[str] = Counter()
        for row, decision in self.rows:
            if row.source_label:
                support[row.source_label] += 1
                right[row.source_label] += decision.bucket is row.expected_bucket
        return {
            label: {"recall": right[label] / n, "support": n}
            for label, n in sorted(support.items())
        }

    def misses(self) -> list[dict[str, Any]]:
        out = []
        for row, d in self.rows:
            wrong_bucket = d.bucket is not row.expected_bucket
            wrong_risk = row.expected_safety is not None and d.risk_category != row.expected_safety
            if wrong_bucket or wrong_risk:
                out.append(
                    {
                        "id": row.ticket.id,
                        "expected_bucket": row.expected_bucket.value,
                        "bucket": d.bucket.value,
                        "expected_safety": row.expected_safety,
                        "risk": d.risk_category,
                        "reason_code": d.reason_code,
                        "reason": d.reason,
                        "text": " ".join(row.ticket.text.split())[:160],
                    }
                )
        return out

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "dataset": self.dataset,
            "engine": self.engine,
            "tickets": self.total,
            "accuracy": self.accuracy(),
            "buckets": self.buckets(),
            "confusion": self.confusion(),
            "safety": self.safety(),
            "labels": self.by_label(),
            "misses": self.misses(),
        }
        risk = self.risk_summary()
        if risk is not None:
            out["risk"] = risk
        return out

    def result(self) -> EvalResult:
        metrics = {"accuracy": Metric(self.accuracy())}
        for name, values in self.buckets().items():
            if values["support"]:
                metrics[f"{name}.recall"] = Metric(values["recall"])
                metrics[f"{name}.precision"] = Metric(values["precision"])
        for cat, values in self.safety().items():
            metrics[f"safety.{cat}.recall"] = Metric(values["recall"])
        risk = self.risk_summary()
        if risk is not None:
            metrics["risk_recall"] = Metric(risk["risk_recall"])
            metrics["false_alarm_rate"] = Metric(risk["false_alarm_rate"], higher_is_better=False)
        return EvalResult("triage", self.dataset, metrics, self.to_json())


def evaluate_triage(
    rows: Sequence[TriageRow],
    screen: Screen,
    classify: Classify,
    *,
    dataset: str,
    engine: str,
    on_progress: Callable[[int, int], None] | None = None,
) -> TriageReport:
    report = TriageReport(dataset, engine)
    for done, row in enumerate(rows, start=1):
        report.rows.append((row, decide(row.ticket, screen, classify)))
        if on_progress is not None:
            on_progress(done, len(rows))
    return report


def select(rows: Iterable[TriageRow], split: str | None) -> list[TriageRow]:
    """The rows of one split (all rows when ``split`` is None); UserError when none match.

    A row without a ``split`` field is placed by a hash of its id (``evals.catalog``), the
    same halves the calibration scripts tune on.
    """
    rows = list(rows)
    if split is None:
        return rows
    chosen = [r for r in rows if (r.split or hash_split(r.ticket.id)) == split]
    if not chosen:
        splits = sorted({r.split for r in rows if r.split}) or ["none"]
        raise UserError(f"no rows in split {split!r}; the dataset has: {', '.join(splits)}")
    return chosen
