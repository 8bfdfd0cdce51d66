"""`eval report` (every eval's latest result as one HTML page and JSON) and `eval compare`."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from supportagent.cli.app import console, guard, settings_of
from supportagent.cli.evaluate import eval_app

_STYLE = {"better": "green", "worse": "red", "changed": "yellow"}


@eval_app.command("report")
def eval_report(
    ctx: typer.Context,
    out: Path = typer.Option(Path("reports"), "--out", help="Folder for the HTML and JSON."),
) -> None:
    """One self-contained HTML page (tables, SVG charts) and a JSON file of every latest result."""
    from supportagent.evals.report import write_report
    from supportagent.evals.results import load_results

    settings = settings_of(ctx)

    def run() -> tuple[int, Path, Path]:
        results = load_results(settings.home)
        return (len(results), *write_report(results, out))

    count, html_path, json_path = guard(run)
    if not count:
        console.print("no eval results saved yet: the report is empty (run an eval first)")
    console.print(f"{count} results: {escape(str(html_path))}")
    console.print(f"JSON for `eval compare`: {escape(str(json_path))}")


@eval_app.command("compare")
def eval_compare(
    before: Path = typer.Argument(..., help="The earlier report JSON (or saved result)."),
    after: Path = typer.Argument(..., help="The later report JSON (or saved result)."),
    show_all: bool = typer.Option(False, "--all", help="List unchanged metrics too."),
) -> None:
    """What got better or worse from BEFORE to AFTER, metric by metric. Exit 0 whatever moved."""
    from rich.table import Table

    from supportagent.evals.compare import compare, counts, read_results_file
    from supportagent.evals.report import format_value

    changes = guard(lambda: compare(read_results_file(before), read_results_file(after)))
    table = Table(title=f"{escape(str(before))} -> {escape(str(after))}")
    for column in ("eval", "dataset", "metric"):
        table.add_column(column)
    for column in ("before", "after", "change"):
        table.add_column(column, justify="right")
    table.add_column("verdict")
    for c in changes:
        if c.verdict.value == "same" and not show_all:
            continue
        style = _STYLE.get(c.verdict.value)
        mark = f"[{style}]{c.verdict.value}[/{style}]" if style else c.verdict.value
        table.add_row(
            escape(c.kind),
            escape(c.dataset),
            escape(c.metric),
            "-" if c.before is None else format_value(c.before),
            "-" if c.after is None else format_value(c.after),
            "-" if c.delta is None else f"{c.delta:+.4g}",
            mark,
        )
    if show_all or any(c.verdict.value != "same" for c in changes):
        console.print(table)
    tally = counts(changes)
    console.print(", ".join(f"{n} {name}" for name, n in tally.items()) or "nothing to compare")
