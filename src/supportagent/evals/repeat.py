"""`eval run --repeat k`: the same eval k times on fresh stores, and how consistent it was.

Consistency is pass^k over outcomes: the share of tickets whose outcome (status, reason,
bucket and cited documents) is the same in all k runs. The wording of a draft is left out on
purpose: a model may phrase the same grounded answer differently, and a reviewer cares whether
the ticket was drafted, routed or escalated, and from which documents. The offline engine is
deterministic, so it should score 1.0; a model behind the llm engine may not.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supportagent.config import Settings
from supportagent.errors import UserError
from supportagent.evals.results import EvalResult, Metric
from supportagent.evals.run import RunReport, TicketRun, run_eval

Outcome = tuple[str, str, str | None, tuple[str, ...]]


def outcome(run: TicketRun) -> Outcome:
    """What must not change between runs of one ticket."""
    return (run.status, run.reason_code, run.bucket, tuple(sorted(run.citations)))


@dataclass(frozen=True, slots=True)
class Consistency:
    runs: int
    tickets: int
    #: Tickets whose outcome differed between runs (or that a run lacked), sorted.
    differing: tuple[str, ...]

    @property
    def share(self) -> float:
        """pass^k: the share of tickets with one outcome in all runs (1.0 with no tickets)."""
        if not self.tickets:
            return 1.0
        return round((self.tickets - len(self.differing)) / self.tickets, 4)

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "tickets": self.tickets,
            "consistency": self.share,
            "differing": list(self.differing),
        }


def consistency(repeats: Sequence[Sequence[TicketRun]]) -> Consistency:
    """Compare the runs of each ticket id across ``repeats`` (pure)."""
    seen: dict[str, list[Outcome]] = {}
    for runs in repeats:
        for run in runs:
            seen.setdefault(run.id, []).append(outcome(run))
    differing = sorted(
        ticket
        for ticket, outcomes in seen.items()
        if len(outcomes) != len(repeats) or len(set(outcomes)) > 1
    )
    return Consistency(len(repeats), len(seen), tuple(differing))


@dataclass(frozen=True, slots=True)
class RepeatReport:
    """The first run's report, with the consistency of all of them."""

    first: RunReport
    consistency: Consistency

    def to_json(self) -> dict[str, Any]:
        return {**self.first.to_json(), "repeat": self.consistency.to_json()}

    def result(self) -> EvalResult:
        base = self.first.result()
        metrics: Mapping[str, Metric] = {
            **base.metrics,
            "consistency": Metric(self.consistency.share),
        }
        return EvalResult(base.kind, base.dataset, metrics, self.to_json())


def run_repeated(
    settings: Settings,
    kb: Path,
    resolved: Path,
    tickets: Path,
    labels: Path | None,
    k: int,
    *,
    on_ticket: Callable[[int, int], None] | None = None,
) -> RepeatReport:
    """:func:`run_eval` ``k`` times, each in its own fresh temporary store."""
    if k < 1:
        raise UserError(f"--repeat takes a positive number of runs, got {k}")
    reports: list[RunReport] = []
    for round_ in range(k):

        def progress(done: int, total: int, offset: int = round_) -> None:
            if on_ticket:
                on_ticket(offset * total + done, k * total)

        reports.append(run_eval(settings, kb, resolved, tickets, labels, on_ticket=progress))
    return RepeatReport(reports[0], consistency([r.tickets for r in reports]))
