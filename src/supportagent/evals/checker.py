"""`eval checker`: how well each checker tells supported answers from unsupported ones.

Reads the checker format (``claims.jsonl``: ``{"id", "question", "passages": [{"id", "text"}],
"answer", "label"}``, label ``supported`` | ``unsupported``). The offline checker
(:func:`supportagent.agent.support.judge_support`) always runs; the llm engine's checker runs
too when an endpoint is configured. Reported per checker: balanced accuracy, and precision and
recall on ``unsupported`` (the class a checker exists to catch).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from supportagent.agent.support import judge_support
from supportagent.config import Settings
from supportagent.errors import UserError
from supportagent.evals.results import EvalResult, Metric
from supportagent.lines import physical_lines

LABELS = ("supported", "unsupported")


@dataclass(frozen=True, slots=True)
class Claim:
    id: str
    question: str
    passages: tuple[tuple[str, str], ...]
    answer: str
    label: str


def read_claims(path: Path) -> list[Claim]:
    """Claims from a checker JSONL file (or a folder holding ``claims.jsonl``)."""
    if path.is_dir():
        path = path / "claims.jsonl"
    try:
        lines = physical_lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{path}: cannot read the checker set ({exc})") from None
    claims = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            passages = tuple((str(p["id"]), str(p["text"])) for p in row["passages"])
            label = str(row["label"])
            if label not in LABELS:
                raise ValueError(f"label {label!r} is not one of {', '.join(LABELS)}")
            claims.append(
                Claim(str(row["id"]), str(row["question"]), passages, str(row["answer"]), label)
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise UserError(f"{path}:{number}: not a checker line ({exc})") from None
    if not claims:
        raise UserError(f"{path}: no claims")
    return claims


def scores(predicted: Sequence[str], gold: Sequence[str]) -> dict[str, Any]:
    """Balanced accuracy and precision / recall on ``unsupported`` (pure)."""
    pairs = list(zip(predicted, gold, strict=True))
    tp = sum(1 for p, g in pairs if p == g == "unsupported")
    fp = sum(1 for p, g in pairs if p == "unsupported" and g == "supported")
    fn = sum(1 for p, g in pairs if p == "supported" and g == "unsupported")
    tn = sum(1 for p, g in pairs if p == g == "supported")
    recall_u = tp / (tp + fn) if tp + fn else 0.0
    recall_s = tn / (tn + fp) if tn + fp else 0.0
    return {
        "n": len(pairs),
        "balanced_accuracy": round((recall_u + recall_s) / 2, 4),
        "precision_unsupported": round(tp / (tp + fp), 4) if tp + fp else None,
        "recall_unsupported": round(recall_u, 4),
        "recall_supported": round(recall_s, 4),
        "confusion": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
    }


Judge = Callable[[Claim], str]


def offline_judge(embed: Callable[[Sequence[str]], Any] | None) -> Judge:
    def judge(claim: Claim) -> str:
        verdict = judge_support(claim.answer, [text for _, text in claim.passages], embed)
        return "supported" if verdict.supported else "unsupported"

    return judge


def llm_judge(settings: Settings) -> Judge | None:
    """The llm engine's checker as a judge, or None when no endpoint is configured."""
    from supportagent.domain import DocKind, Draft, DraftSentence, Hit, Passage, Ticket
    from supportagent.engines.llm import LLMEngine
    from supportagent.llm.profiles import key_configured
    from supportagent.runtime import build_engine

    if not (key_configured(settings) or settings.llm_base_url):
        return None
    engine = build_engine(settings.model_copy(update={"engine": "llm"}))
    assert isinstance(engine, LLMEngine)

    def judge(claim: Claim) -> str:
        hits = [
            Hit(Passage(f"{claim.id}#{pid}", pid, DocKind.KB, pid, (), text), rank, 1.0)
            for rank, (pid, text) in enumerate(claim.passages, start=1)
        ]
        cites = tuple(h.id for h in hits)
        draft = Draft(tuple(DraftSentence(s, cites) for s in [claim.answer]), 0.0)
        verdict = engine.check(Ticket(claim.id, claim.question, ""), draft, hits)
        return "supported" if verdict.passed else "unsupported"

    return judge


@dataclass(frozen=True, slots=True)
class CheckerReport:
    dataset: str
    claims: int
    checkers: Mapping[str, Mapping[str, Any]]
    notes: tuple[str, ...] = ()
    misses: Mapping[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "claims": self.claims,
            "checkers": {k: dict(v) for k, v in self.checkers.items()},
            "notes": list(self.notes),
        }

    def result(self) -> EvalResult:
        metrics: dict[str, Metric] = {}
        for name, m in self.checkers.items():
            metrics[f"{name}.balanced_accuracy"] = Metric(float(m["balanced_accuracy"]))
            metrics[f"{name}.recall_unsupported"] = Metric(float(m["recall_unsupported"]))
            if m["precision_unsupported"] is not None:
                metrics[f"{name}.precision_unsupported"] = Metric(float(m["precision_unsupported"]))
        return EvalResult("checker", self.dataset, metrics, self.to_json())


def evaluate_checker(
    settings: Settings,
    claims: Sequence[Claim],
    dataset: str,
    *,
    on_progress: Callable[[int, int], None] | None = None,
) -> CheckerReport:
    from supportagent.agent.knowledge import build_embedder

    embedder = build_embedder(settings)
    judges: dict[str, Judge] = {"offline": offline_judge(embedder.embed if embedder else None)}
    notes = []
    model = llm_judge(settings)
    if model is None:
        notes.append("llm checker not run: no model endpoint configured.")
    else:
        judges["llm"] = model
    gold = [c.label for c in claims]
    total = len(claims) * len(judges)
    done = 0
    results: dict[str, dict[str, Any]] = {}
    for name, judge in judges.items():
        predicted = []
        for claim in claims:
            predicted.append(judge(claim))
            done += 1
            if on_progress:
                on_progress(done, total)
        results[name] = scores(predicted, gold)
    return CheckerReport(dataset, len(claims), results, tuple(notes))
