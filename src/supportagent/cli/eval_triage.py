"""`eval triage DATASET`: bucket accuracy, per-bucket precision and recall, safety recall."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from supportagent.cli.app import console, err, guard, settings_of
from supportagent.cli.evaluate import eval_app

if TYPE_CHECKING:
    from supportagent.evals.triage import TriageReport

MISSES_SHOWN = 15


@eval_app.command("triage")
def eval_triage(
    ctx: typer.Context,
    dataset: Path = typer.Argument(..., help="A triage JSONL file (id, subject, body, ...)."),
    split: str | None = typer.Option(None, help="Only rows whose 'split' is this (tune, test)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Only a fixed sample of N rows (picked by id hash)."
    ),
) -> None:
    """Safety gate and classifier on labelled tickets: accuracy, confusion, misses."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from supportagent.evals.results import save_result
    from supportagent.evals.sample import sample, sampled_name
    from supportagent.evals.triage import evaluate_triage, read_triage, select
    from supportagent.runtime import build_engine, build_screen, describe_engine

    settings = settings_of(ctx)

    def run() -> TriageReport:
        every = select(read_triage(dataset), split)
        rows = sample(every, limit, lambda row: row.ticket.id)
        engine = build_engine(settings)
        screen = build_screen(settings)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
        with Progress(*columns, TimeElapsedColumn(), console=err, transient=True) as bar:
            task = bar.add_task("tickets", total=len(rows))
            name = str(dataset) if split is None else f"{dataset}#{split}"
            name = sampled_name(name, limit, len(every))
            report = evaluate_triage(
                rows,
                screen,
                engine.classify,
                dataset=name,
                engine=describe_engine(engine),
                on_progress=lambda done, _total: bar.update(task, completed=done),
            )
        save_result(report.result(), settings.home)
        return report

    report = guard(run)
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
        return
    print_triage(report)


def print_triage(report: TriageReport) -> None:
    from rich.table import Table

    from supportagent.evals.triage import BUCKETS

    console.print(
        f"{escape(report.dataset)}: {report.total} tickets, engine {escape(report.engine)}; "
        f"bucket accuracy [bold]{report.accuracy():.1%}[/bold]"
    )
    table = Table(title="expected (rows) against predicted (columns)")
    table.add_column("")
    for name in BUCKETS:
        table.add_column(name, justify="right")
    table.add_column("precision", justify="right")
    table.add_column("recall", justify="right")
    buckets = report.buckets()
    for expected, row in report.confusion().items():
        stats = buckets[expected]
        table.add_row(
            expected,
            *(str(row[p]) for p in BUCKETS),
            f"{stats['precision']:.3f}",
            f"{stats['recall']:.3f}",
        )
    console.print(table)
    safety = report.safety()
    if safety:
        risk = Table(title="risk recall (escalated for that very risk)")
        risk.add_column("category")
        risk.add_column("caught", justify="right")
        risk.add_column("recall", justify="right")
        for cat, values in safety.items():
            caught = round(values["recall"] * values["support"])
            risk.add_row(cat, f"{caught}/{int(values['support'])}", f"{values['recall']:.3f}")
        console.print(risk)
    summary = report.risk_summary()
    if summary is not None:
        console.print(
            f"risk recall (any risk reason) {summary['risk_recall']:.3f} over "
            f"{int(summary['risk_support'])}; harmless tickets escalated for a risk "
            f"{summary['false_alarm_rate']:.3f} of {int(summary['harmless_support'])}"
        )
    misses = report.misses()
    if misses:
        console.print(f"{len(misses)} misses (first {min(len(misses), MISSES_SHOWN)}):")
        for miss in misses[:MISSES_SHOWN]:
            console.print(
                f"  {escape(miss['id'])}: expected {miss['expected_bucket']}"
                f"{'/' + miss['expected_safety'] if miss['expected_safety'] else ''}, got "
                f"{miss['bucket']} ({escape(miss['reason_code'])}): {escape(miss['text'])}"
            )
