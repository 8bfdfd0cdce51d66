"""`eval run` (the whole pipeline on a corpus and tickets) and `eval checker` (groundedness)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape

from supportagent.cli.app import console, err, guard, settings_of
from supportagent.cli.evaluate import eval_app

if TYPE_CHECKING:
    from supportagent.evals.checker import CheckerReport
    from supportagent.evals.run import RunReport


@eval_app.command("run")
def eval_run(
    ctx: typer.Context,
    kb: Path = typer.Option(..., "--kb", help="Folder (or file) of knowledge-base articles."),
    resolved: Path = typer.Option(..., "--resolved", help="Resolved tickets (JSON, JSONL, CSV)."),
    tickets: Path = typer.Option(..., "--tickets", help="Tickets to run (JSON, JSONL, CSV)."),
    labels: Path | None = typer.Option(
        None, "--labels", help="JSONL of {id, expected_bucket, expected_docs?, expected_facts?}."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print tickets and summary as JSON."),
    repeat: int = typer.Option(
        1, "--repeat", min=1, help="Run k times on fresh stores; report pass^k consistency."
    ),
) -> None:
    """Every ticket through the whole pipeline in a fresh temporary store, then the scores."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from supportagent.evals.repeat import RepeatReport, run_repeated
    from supportagent.evals.results import save_result
    from supportagent.evals.run import run_eval
    from supportagent.render import print_problems

    settings = settings_of(ctx)

    def run() -> RunReport | RepeatReport:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
        with Progress(*columns, TimeElapsedColumn(), console=err, transient=True) as bar:
            task = bar.add_task("tickets", total=None)

            def on_ticket(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            report: RunReport | RepeatReport
            if repeat == 1:
                report = run_eval(settings, kb, resolved, tickets, labels, on_ticket=on_ticket)
            else:
                report = run_repeated(
                    settings, kb, resolved, tickets, labels, repeat, on_ticket=on_ticket
                )
        save_result(report.result(), settings.home)
        return report

    outcome = guard(run)
    first = outcome.first if isinstance(outcome, RepeatReport) else outcome
    if first.problems:
        print_problems(err, list(first.problems))
    if as_json:
        sys.stdout.write(json.dumps(outcome.to_json(), indent=2, ensure_ascii=False) + "\n")
        return
    print_run(first)
    if isinstance(outcome, RepeatReport):
        c = outcome.consistency
        differing = f"; differing: {escape(', '.join(c.differing))}" if c.differing else ""
        console.print(
            f"[bold]consistency[/bold] over {c.runs} runs (pass^{c.runs}): "
            f"{c.tickets - len(c.differing)}/{c.tickets} tickets the same = {c.share:.3f}"
            f"{differing} (the scores above are the first run's)"
        )


def print_run(report: RunReport) -> None:
    from rich.table import Table

    table = Table(title=f"{escape(report.dataset)}: {len(report.tickets)} tickets, {report.engine}")
    for column in ("id", "status", "reason", "bucket", "cites", "flags", "conf", "answer"):
        table.add_column(column)
    for t in report.tickets:
        answer = (t.answer or "").replace("\n", " ")
        table.add_row(
            t.id,
            t.status,
            t.reason_code,
            t.bucket or "-",
            ", ".join(t.citations),
            ", ".join(t.flags),
            "-" if t.confidence is None else f"{t.confidence:.2f}",
            escape(answer[:160] + ("..." if len(answer) > 160 else "")),
        )
    console.print(table)
    _print_summary("all", report.summary)
    for name, summary in report.splits.items():
        _print_summary(name, summary)


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _print_summary(name: str, s: Any) -> None:
    console.print(f"[bold]{escape(name)}[/bold]: {s['tickets']} tickets; outcomes {s['by_status']}")
    console.print(
        f"  bucket accuracy {_fmt(s['bucket_accuracy'])}; escalation precision "
        f"{_fmt(s['escalation_precision'])}, recall {_fmt(s['escalation_recall'])}"
    )
    console.print(
        f"  citation hit rate {_fmt(s['citation_hit_rate'])}, precision "
        f"{_fmt(s['citation_precision'])} ({s['drafts_with_expected_docs']} drafts); key facts "
        f"{s['key_fact_hits']}/{s['drafts_with_expected_facts']} staged drafts = "
        f"{_fmt(s['key_fact_hit_rate'])}; conflicts stated one-sided: "
        f"{len(s['conflicts_one_sided'])}/{s['conflict_tickets']}"
    )
    stages = ", ".join(f"{k} {v:.1f}" for k, v in s["ms_per_ticket_by_stage"].items())
    console.print(
        f"  model calls {s['model_calls']}, tokens {s['prompt_tokens']} + "
        f"{s['completion_tokens']}; ms per ticket {s['ms_per_ticket']:.1f} ({stages})"
    )


@eval_app.command("checker")
def eval_checker(
    ctx: typer.Context,
    dataset: Path = typer.Argument(..., help="A checker JSONL file (claims.jsonl) or its folder."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Only a fixed sample of N answers (picked by id hash)."
    ),
) -> None:
    """Balanced accuracy, and precision and recall on 'unsupported', of each checker."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from supportagent.evals.checker import evaluate_checker, read_claims
    from supportagent.evals.results import save_result
    from supportagent.evals.sample import sample, sampled_name

    settings = settings_of(ctx)

    def run() -> CheckerReport:
        every = read_claims(dataset)
        claims = sample(every, limit, lambda claim: claim.id)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
        with Progress(*columns, TimeElapsedColumn(), console=err, transient=True) as bar:
            task = bar.add_task("answers", total=None)
            report = evaluate_checker(
                settings,
                claims,
                sampled_name(str(dataset), limit, len(every)),
                on_progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
        save_result(report.result(), settings.home)
        return report

    report = guard(run)
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
        return
    table = Table(title=f"{escape(report.dataset)}: {report.claims} answers")
    for column in ("checker", "balanced acc.", "precision (unsup.)", "recall (unsup.)", "n"):
        table.add_column(column)
    for name, m in report.checkers.items():
        table.add_row(
            name,
            _fmt(m["balanced_accuracy"]),
            _fmt(m["precision_unsupported"]),
            _fmt(m["recall_unsupported"]),
            str(m["n"]),
        )
    console.print(table)
    for note in report.notes:
        console.print(escape(note))
