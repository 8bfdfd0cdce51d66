"""Audit and numbers: `audit export`, `audit verify`, `stats`, `gaps`."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import typer
from rich.console import Console
from rich.markup import escape

from supportagent.cli.app import app, console, err, guard, load_knowledge, settings_of
from supportagent.errors import UserError

if TYPE_CHECKING:
    from supportagent.insights import Gap, Stats

audit_app = typer.Typer(
    help="The tamper-evident audit log of every decision: export it, verify it.",
    no_args_is_help=True,
)
app.add_typer(audit_app, name="audit")


@audit_app.command("export")
def audit_export(
    ctx: typer.Context,
    out: Path | None = typer.Option(None, "--out", help="CSV file to write (default: stdout)."),
) -> None:
    """Write every audit event as CSV, one row per decision, in chain order."""
    from supportagent.runtime import open_store
    from supportagent.store.audit import export_csv
    from supportagent.store.audit_verify import verify

    settings = settings_of(ctx)

    def run() -> None:
        store = open_store(settings)
        report = verify(store.engine, seal=store.audit)
        if out is None:
            export_csv(store.engine, sys.stdout)
        else:
            count = _write_atomically(out, lambda f: export_csv(store.engine, f))
            console.print(f"Wrote {count} audit events to {escape(str(out))}.")
        if not report.intact:
            err.print(
                f"[red]warning:[/red] the audit log is broken ({len(report.problems)} "
                "problem(s)); `supportagent audit verify` names them"
            )

    guard(run)


@audit_app.command("verify")
def audit_verify(
    ctx: typer.Context,
    anchor: str | None = typer.Option(
        None, help="SEQ:HASH printed by an earlier verify; that event must be unchanged."
    ),
) -> None:
    """Check the chain, its head, the MACs and the head file; name every edited, inserted,
    deleted or forged event, and say what this proves. Exit 1 when anything is wrong."""
    from supportagent.runtime import open_store
    from supportagent.store.audit_verify import verify

    settings = settings_of(ctx)

    def run() -> int:
        pinned = _parse_anchor(anchor) if anchor else None
        store = open_store(settings)
        report = verify(store.engine, pinned, store.audit)
        if report.intact:
            console.print(f"Audit log intact: {report.events} events.")
            _print_list(console, "What this proves:", report.proves)
            _print_list(console, "What it cannot prove:", report.cannot)
            console.print(f"Anchor to keep elsewhere: {report.head_seq}:{report.head_hash}")
            return 0
        err.print(f"[red]Audit log broken:[/red] {len(report.problems)} problem(s)")
        for problem in report.problems[:_MAX_SHOWN]:
            err.print(f"  {escape(problem.message)}", soft_wrap=True)
        if len(report.problems) > _MAX_SHOWN:
            err.print(f"  ... and {len(report.problems) - _MAX_SHOWN} more")
        _print_list(err, "What this check cannot prove:", report.cannot)
        return 1

    raise typer.Exit(guard(run))


_MAX_SHOWN = 50


def _print_list(out: Console, title: str, lines: tuple[str, ...]) -> None:
    if lines:
        out.print(title)
        for line in lines:
            out.print(f"  - {escape(line)}")


@app.command()
def stats(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the numbers as JSON."),
) -> None:
    """Outcomes and reviewer decisions; the headline is the share approved without edits."""
    from supportagent.insights import compute_stats
    from supportagent.runtime import open_store

    settings = settings_of(ctx)

    def run() -> None:
        result = compute_stats(open_store(settings))
        if as_json:
            sys.stdout.write(json.dumps(result.to_json(), indent=2) + "\n")
            return
        _print_stats(result)

    guard(run)


@app.command()
def gaps(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the gaps as JSON."),
) -> None:
    """Tickets escalated for weak evidence or rejected, grouped, with their nearest articles."""
    from supportagent.insights import knowledge_gaps
    from supportagent.runtime import open_store

    settings = settings_of(ctx)

    def run() -> None:
        store = open_store(settings)
        report = knowledge_gaps(
            store, load_knowledge(store, settings), settings.confidence_threshold
        )
        if as_json:
            payload = [gap.to_json() for gap in report.gaps]
            sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
            return
        _print_gaps(report.gaps)
        for m in report.missed:
            console.print(
                f"[bold]The drafter missed it[/bold]: {m.ticket_id} ({escape(m.detail)}); "
                f"{m.article.passage_id} ({escape(m.article.title)}) covers it"
            )

    guard(run)


def _print_stats(s: Stats) -> None:
    from rich.table import Table

    if s.unedited_share is None:
        console.print(f"[bold]No draft has been reviewed yet[/bold] ({s.pending_review} pending).")
    else:
        console.print(
            f"[bold]{s.unedited_share:.0%} of reviewed drafts approved without edits[/bold] "
            f"({s.approved_unedited} of {s.reviewed}; {s.pending_review} still pending, "
            "not counted)"
        )
    table = Table(title="Tickets")
    table.add_column("what")
    table.add_column("count", justify="right")
    mean = (
        f" (mean edit {s.mean_edit_chars:.0f} characters, {s.mean_edit_ratio:.0%} of words)"
        if s.mean_edit_chars is not None and s.mean_edit_ratio is not None
        else ""
    )
    rows: list[tuple[str, Any]] = [
        ("tickets", s.tickets),
        ("not handled yet", s.unhandled),
        ("drafted for review", s.drafted),
        ("  pending review", s.pending_review),
        ("  approved unedited", s.approved_unedited),
        (f"  approved with edits{mean}", s.approved_with_edits),
        ("  rejected", s.rejected),
        ("routed", s.routed),
        *((f"  {reason}", n) for reason, n in s.routed_by_reason.items()),
        ("escalated", s.escalated),
        *((f"  {reason}", n) for reason, n in s.escalated_by_reason.items()),
        ("handed off (rejected drafts)", s.handed_off),
    ]
    for label, value in rows:
        table.add_row(escape(label), str(value))
    console.print(table)


def _print_gaps(found: list[Gap]) -> None:
    if not found:
        console.print("No gaps: every ticket the agent could not answer has an article near it.")
        return
    for number, gap in enumerate(found, start=1):
        console.print(
            f"[bold]Gap {number}[/bold]: {gap.size} ticket(s) about {escape(gap.topic) or '-'}"
        )
        for ticket in gap.tickets:
            why = f"rejected: {ticket.detail}" if ticket.why == "rejected" else ticket.why
            console.print(f"  {ticket.ticket_id}  {escape(ticket.subject)}  ({escape(why)})")
        nearest = ", ".join(f"{a.doc_id} ({a.title})" for a in gap.nearest) or "none"
        console.print(f"  nearest articles: {escape(nearest)}\n")


def _parse_anchor(text: str) -> tuple[int, str]:
    seq, _, digest = text.partition(":")
    if not seq.isdigit() or len(digest) != 64:
        raise UserError("An anchor is SEQ:HASH, as `supportagent audit verify` prints it.")
    return int(seq), digest.lower()


def _write_atomically(path: Path, write: Callable[[TextIO], int]) -> int:
    """Write through a temporary file beside ``path``, so a failure leaves no half file."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UserError(f"Cannot write {path}: folder {folder} does not exist.")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".audit-", suffix=".csv", dir=folder)
    except OSError as exc:
        raise UserError(f"Cannot write {path}: {exc.strerror}.") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            count = write(handle)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UserError(f"Cannot write {path}: {exc.strerror}.") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count
