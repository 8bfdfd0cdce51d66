"""`eval run`: a corpus and tickets through the whole pipeline in a fresh store, then the scores.

Per ticket: what was staged (status, reason, bucket), the draft (answer text, cited documents,
flags, confidence). Summary: outcome counts; where tickets are labelled, bucket accuracy,
escalation precision and recall, citation hit rate and precision (``expected_docs``), key-fact
hit rate (``expected_facts``: groups of alternatives, every group must have one alternative in
the answer, case-insensitively) and conflicts stated one-sided (``conflict``); model calls,
tokens and time per stage. Labels come from the tickets file itself or from ``--labels``
(``{"id", "expected_bucket", "expected_docs"?, "expected_facts"?}``); a ``split`` field (tune,
test) gets a summary of its own per half.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supportagent.config import Settings
from supportagent.errors import UserError
from supportagent.evals.results import EvalResult, Metric
from supportagent.ingest import IngestProblem, read_kb, read_resolved, read_tickets
from supportagent.lines import physical_lines
from supportagent.store.store import Store

#: Statuses that carry a draft for a reviewer.
DRAFTED = "pending_review"


@dataclass(frozen=True, slots=True)
class TicketLabel:
    expected_bucket: str | None = None
    expected_docs: tuple[str, ...] | None = None
    expected_facts: tuple[tuple[str, ...], ...] | None = None
    expected_status: str | None = None
    conflict: str | None = None
    split: str | None = None


@dataclass(frozen=True, slots=True)
class TicketRun:
    id: str
    status: str
    reason_code: str
    bucket: str | None
    answer: str | None
    citations: tuple[str, ...]
    flags: tuple[str, ...]
    confidence: float | None
    stages_ms: Mapping[str, float] = field(default_factory=dict)
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "reason_code": self.reason_code,
            "bucket": self.bucket,
            "answer": self.answer,
            "citations": list(self.citations),
            "flags": list(self.flags),
            "confidence": self.confidence,
        }


# ---------------------------------------------------------------------------- labels


def _label(row: Mapping[str, Any]) -> TicketLabel:
    facts = row.get("expected_facts")
    docs = row.get("expected_docs")
    return TicketLabel(
        expected_bucket=row.get("expected_bucket"),
        expected_docs=tuple(str(d) for d in docs) if isinstance(docs, list) else None,
        expected_facts=(
            tuple(tuple(str(alt) for alt in group) for group in facts)
            if isinstance(facts, list) and facts
            else None
        ),
        expected_status=row.get("expected_status"),
        conflict=row.get("conflict"),
        split=row.get("split"),
    )


def read_run_labels(path: Path) -> dict[str, TicketLabel]:
    """``expected_*`` fields of a JSONL (or JSON list) file, by ticket id; other files: none."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read labels ({exc})") from None
    rows: list[Any]
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{path}: not JSON ({exc})") from None
        rows = data if isinstance(data, list) else list(data.get("tickets", []))
    elif path.suffix.lower() == ".jsonl":
        rows = []
        for number, line in enumerate(physical_lines(text), start=1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise UserError(f"{path}:{number}: not a JSON line ({exc})") from None
    else:
        return {}
    return {str(r["id"]): _label(r) for r in rows if isinstance(r, dict) and "id" in r}


def merge_labels(
    own: Mapping[str, TicketLabel], extra: Mapping[str, TicketLabel]
) -> dict[str, TicketLabel]:
    """Labels from the tickets file, each field overridden by a ``--labels`` file's."""
    out = dict(own)
    for key, label in extra.items():
        base = out.get(key, TicketLabel())
        out[key] = TicketLabel(
            *(
                getattr(label, name) if getattr(label, name) is not None else getattr(base, name)
                for name in TicketLabel.__slots__
            )
        )
    return out


# ---------------------------------------------------------------------------- scores


def facts_found(answer: str, groups: Sequence[Sequence[str]]) -> bool:
    """True when every group has one alternative in ``answer`` (case-insensitive)."""
    text = answer.casefold()
    return all(any(alt.casefold() in text for alt in group) for group in groups)


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def summarize(runs: Sequence[TicketRun], labels: Mapping[str, TicketLabel]) -> dict[str, Any]:
    """The summary of one set of ticket runs (pure)."""
    outcomes = Counter(f"{r.status}/{r.reason_code}" for r in runs)
    by_status = Counter(r.status for r in runs)
    labelled = [(r, labels[r.id]) for r in runs if r.id in labels]
    bucketed = [(r, lab) for r, lab in labelled if lab.expected_bucket]
    correct = sum(1 for r, lab in bucketed if r.bucket == lab.expected_bucket)
    esc_true = esc_pred = esc_both = 0
    for r, lab in bucketed:
        expected = (lab.expected_status or "") == "escalated" or (
            lab.expected_status is None and lab.expected_bucket == "needs_human"
        )
        predicted = r.status == "escalated"
        esc_true += expected
        esc_pred += predicted
        esc_both += expected and predicted
    docs = [(r, lab) for r, lab in labelled if lab.expected_docs and r.status == DRAFTED]
    hit = sum(1 for r, lab in docs if set(r.citations) & set(lab.expected_docs or ()))
    cited = sum(len(r.citations) for r, _ in docs)
    right = sum(len(set(r.citations) & set(lab.expected_docs or ())) for r, lab in docs)
    with_facts = [(r, lab) for r, lab in labelled if lab.expected_facts and r.status == DRAFTED]
    fact_hits = [
        r.id for r, lab in with_facts if facts_found(r.answer or "", lab.expected_facts or ())
    ]
    answerable = [lab for _, lab in labelled if lab.expected_facts]
    conflicted = [(r, lab) for r, lab in labelled if lab.conflict]
    one_sided = [
        r.id
        for r, lab in conflicted
        if r.status == DRAFTED and not facts_found(r.answer or "", lab.expected_facts or ())
    ]
    stage_ms: dict[str, float] = {}
    for r in runs:
        for stage, ms in r.stages_ms.items():
            stage_ms[stage] = stage_ms.get(stage, 0.0) + ms
    n = max(len(runs), 1)
    return {
        "tickets": len(runs),
        "outcomes": dict(sorted(outcomes.items())),
        "by_status": dict(sorted(by_status.items())),
        "bucket_accuracy": _ratio(correct, len(bucketed)),
        "bucket_labelled": len(bucketed),
        "escalation_precision": _ratio(esc_both, esc_pred),
        "escalation_recall": _ratio(esc_both, esc_true),
        "citation_hit_rate": _ratio(hit, len(docs)),
        "citation_precision": _ratio(right, cited),
        "drafts_with_expected_docs": len(docs),
        "key_fact_hit_rate": _ratio(len(fact_hits), len(with_facts)),
        "key_fact_hits": len(fact_hits),
        "drafts_with_expected_facts": len(with_facts),
        "tickets_with_expected_facts": len(answerable),
        "key_fact_misses": sorted(r.id for r, _ in with_facts if r.id not in fact_hits),
        "conflict_tickets": len(conflicted),
        "conflicts_one_sided": sorted(one_sided),
        "model_calls": sum(r.model_calls for r in runs),
        "prompt_tokens": sum(r.prompt_tokens for r in runs),
        "completion_tokens": sum(r.completion_tokens for r in runs),
        "ms_per_ticket_by_stage": {k: round(v / n, 2) for k, v in sorted(stage_ms.items())},
        "ms_per_ticket": round(sum(stage_ms.values()) / n, 2),
    }


# ---------------------------------------------------------------------------- running


@dataclass(frozen=True, slots=True)
class RunReport:
    dataset: str
    engine: str
    tickets: tuple[TicketRun, ...]
    summary: Mapping[str, Any]
    splits: Mapping[str, Mapping[str, Any]]
    problems: tuple[IngestProblem, ...] = ()

    def to_json(self) -> dict[str, Any]:
        summary = dict(self.summary)
        if self.splits:
            summary["splits"] = {k: dict(v) for k, v in self.splits.items()}
        return {
            "tickets": [t.to_json() for t in self.tickets],
            "summary": {"dataset": self.dataset, "engine": self.engine, **summary},
        }

    def result(self) -> EvalResult:
        metrics: dict[str, Metric] = {}
        for name in (
            "bucket_accuracy",
            "escalation_precision",
            "escalation_recall",
            "citation_hit_rate",
            "citation_precision",
            "key_fact_hit_rate",
        ):
            value = self.summary.get(name)
            if value is not None:
                metrics[name] = Metric(float(value))
        metrics["conflicts_one_sided"] = Metric(
            float(len(self.summary["conflicts_one_sided"])), higher_is_better=False
        )
        metrics["ms_per_ticket"] = Metric(float(self.summary["ms_per_ticket"]), False)
        return EvalResult("run", self.dataset, metrics, self.to_json())


def _ticket_run(store: Store, ticket_id: str) -> TicketRun:
    record = store.latest_outcome(ticket_id)
    if record is None:
        return TicketRun(ticket_id, "new", "", None, None, (), (), None)
    stages: dict[str, float] = {}
    calls = prompt = completion = 0
    for event in store.trace(ticket_id):
        stages[event["stage"]] = stages.get(event["stage"], 0.0) + float(event["duration_ms"])
        if event["stage"] == "model":
            detail = event["detail"]
            calls += 1
            prompt += int(detail.get("prompt_tokens") or 0)
            completion += int(detail.get("completion_tokens") or 0)
    draft = record.draft if record.status.value == DRAFTED else None
    citations = tuple(
        dict.fromkeys(str(c).split("#", 1)[0] for c in (draft or {}).get("citations", []))
    )
    return TicketRun(
        ticket_id,
        record.status.value,
        record.reason_code,
        record.bucket,
        str(draft["answer"]) if draft else None,
        citations,
        tuple(str(f) for f in (draft or {}).get("flags", [])),
        float(draft["confidence"]) if draft else None,
        stages,
        calls,
        prompt,
        completion,
    )


def run_eval(
    settings: Settings,
    kb: Path,
    resolved: Path,
    tickets: Path,
    labels: Path | None = None,
    *,
    on_ticket: Callable[[int, int], None] | None = None,
) -> RunReport:
    """Load the corpus and tickets into a temporary store and run every ticket."""
    # Imported here: the runtime wires the whole agent, which the pure parts above need not.
    from supportagent.agent.knowledge import Knowledge
    from supportagent.runtime import build_engine, build_pipeline, describe_engine, open_store

    articles, answers, inbox = read_kb(kb), read_resolved(resolved), read_tickets(tickets)
    problems = (*articles.problems, *answers.problems, *inbox.problems)
    if not inbox.records:
        raise UserError(f"{tickets}: no tickets to run")
    own = read_run_labels(tickets)
    extra = read_run_labels(labels) if labels is not None else {}
    if labels is not None and not extra:
        raise UserError(f"{labels}: no labels read (a JSONL file of {{'id', ...}} rows)")
    merged = merge_labels(own, extra)
    with tempfile.TemporaryDirectory(prefix="supportagent-eval-") as tmp:
        local = settings.model_copy(update={"home": Path(tmp), "database_url": None})
        store = open_store(local)
        try:
            store.upsert_documents([*articles.records, *answers.records])
            store.add_tickets(inbox.records)
            knowledge = Knowledge.from_store(store, local)
            engine = build_engine(local)
            pipeline = build_pipeline(local, store, engine, knowledge)
            ids = [t.id for t in inbox.records]
            for done, ticket_id in enumerate(ids, start=1):
                pipeline.run(ticket_id)
                if on_ticket:
                    on_ticket(done, len(ids))
            runs = tuple(_ticket_run(store, ticket_id) for ticket_id in ids)
            engine_name = describe_engine(engine)
        finally:
            store.close()
    splits = _split_summaries(runs, merged)
    return RunReport(
        str(tickets), engine_name, runs, summarize(runs, merged), splits, tuple(problems)
    )


def _split_summaries(
    runs: Iterable[TicketRun], labels: Mapping[str, TicketLabel]
) -> dict[str, dict[str, Any]]:
    by_split: dict[str, list[TicketRun]] = {}
    for run in runs:
        split = labels[run.id].split if run.id in labels else None
        if split:
            by_split.setdefault(split, []).append(run)
    return {name: summarize(group, labels) for name, group in sorted(by_split.items())}
