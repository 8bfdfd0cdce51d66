"""The core commands: ingest, inspect, run the agent, review, triage, serve."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from supportagent.cli.app import app, console, err, guard, load_knowledge, settings_of
from supportagent.errors import UserError

if TYPE_CHECKING:
    from supportagent.domain import Status, Ticket
    from supportagent.ingest import Progress as FileProgress


class IngestKind(StrEnum):
    kb = "kb"
    resolved = "resolved"
    tickets = "tickets"
    folder = "folder"


class Decision(StrEnum):
    approve = "approve"
    amend = "amend"
    reject = "reject"


@app.command()
def ingest(
    ctx: typer.Context,
    kind: IngestKind = typer.Argument(
        ..., help="kb, resolved, tickets, or folder (docs/, resolved/, inbox/ at once)"
    ),
    path: Path = typer.Argument(..., help="A file or a folder."),
    replace: bool = typer.Option(
        False,
        "--replace",
        help="Replace documents of another kind, or reviewed answers, with the same id "
        "(each replacement is an audit event).",
    ),
) -> None:
    """Load KB articles, resolved tickets or inbox tickets. Good rows load; bad rows are listed.

    `ingest folder DIR` loads DIR/docs, DIR/resolved and DIR/inbox in one transaction: all of
    it, or nothing when anything is wrong."""
    from supportagent.ingest import read_kb, read_resolved, read_tickets
    from supportagent.ingest.common import count_flagged
    from supportagent.render import print_problems
    from supportagent.runtime import open_store

    settings = settings_of(ctx)

    def run() -> int:
        if kind is IngestKind.folder:
            from supportagent.cli.ingest_folder import ingest_folder

            return ingest_folder(settings, path, replace=replace)
        store = open_store(settings)
        with _file_progress(f"reading {kind.value}") as progress:
            if kind is IngestKind.tickets:
                tickets = read_tickets(path, progress)
            elif kind is IngestKind.kb:
                docs = read_kb(path, progress)
            else:
                docs = read_resolved(path, progress)
        if kind is IngestKind.tickets:
            problems: list[object] = list(tickets.problems)
            report = store.add_tickets(tickets.records)
            problems += [
                f"{path}: ticket {ticket_id} is already in the store; skipped"
                for ticket_id in report.skipped_existing
            ]
            loaded = f"{report.added} tickets added"
        else:
            problems = list(docs.problems)
            report = store.upsert_documents(docs.records, replace=replace)
            problems += [
                f"{path}: {clash.describe()}; not loaded (pass --replace to replace it, "
                "which the audit log records)"
                for clash in report.refused
            ]
            loaded = f"{report.added} {kind.value} documents added, {report.updated} updated"
            if report.replaced:
                loaded += f" ({len(report.replaced)} replaced on request, audited)"
            if flagged := count_flagged(docs.records):
                loaded += f"; {flagged}"
        print_problems(err, problems)
        console.print(f"{loaded}; {len(problems)} rejected.")
        return 1 if problems else 0

    code = guard(run)
    raise typer.Exit(code)


@contextmanager
def _file_progress(description: str) -> Iterator[FileProgress]:
    """A progress bar over the files of an ingest, on stderr; gone once the files are read."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task(description, total=None)

        def advance(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield advance


@app.command("load-demo")
def load_demo_command(ctx: typer.Context) -> None:
    """Load the demo corpus and inbox shipped with the package."""
    from supportagent.render import print_problems
    from supportagent.runtime import load_demo, open_store

    def run() -> None:
        store = open_store(settings_of(ctx))
        result = load_demo(store)
        print_problems(err, result.problems)
        console.print(
            f"Demo loaded: {result.articles} articles, {result.resolved} resolved tickets, "
            f"{result.tickets} inbox tickets."
        )

    guard(run)


@app.command("list-data")
def list_data(ctx: typer.Context) -> None:
    """What the store holds: documents by kind and tickets by status."""
    from rich.table import Table

    from supportagent.runtime import open_store

    def run() -> None:
        store = open_store(settings_of(ctx))
        table = Table(title="Store")
        table.add_column("what")
        table.add_column("count", justify="right")
        for kind, n in sorted(store.document_counts().items()):
            table.add_row(f"documents: {kind}", str(n))
        for status, n in sorted(store.status_counts().items()):
            table.add_row(f"tickets: {status}", str(n))
        console.print(table)
        tickets = Table(title="Tickets")
        for col in ("id", "priority", "status", "subject"):
            tickets.add_column(col)
        for ticket, status in store.list_tickets():
            tickets.add_row(
                ticket.id, str(ticket.priority), status.value, escape(ticket.subject[:70])
            )
        console.print(tickets)

    guard(run)


@app.command()
def agent(
    ctx: typer.Context,
    ticket_id: str = typer.Argument(..., help="The ticket to run."),
    demo_forbidden_post: bool = typer.Option(
        False,
        help="Demo: the agent asks for a decoy post_to_customer tool at its first step (and "
        "the drafter again); the gate refuses, whatever the outcome.",
    ),
) -> None:
    """Run the agent on one ticket and print its trace as a timeline."""
    from supportagent.domain import Status
    from supportagent.reasons import one_line
    from supportagent.render import trace_timeline
    from supportagent.runtime import (
        build_engine,
        build_pipeline,
        describe_engine,
        open_store,
        usage_summary,
    )

    settings = settings_of(ctx)

    def run() -> None:
        _check_id(ticket_id)
        store = open_store(settings)
        status = store.ticket_status(ticket_id)
        if status in {Status.APPROVED, Status.AMENDED, Status.HANDED_OFF, Status.HANDLED}:
            raise UserError(f"Ticket {ticket_id} was already reviewed ({status.value}).")
        engine = build_engine(settings, demo_forbidden_post=demo_forbidden_post)
        pipeline = build_pipeline(
            settings,
            store,
            engine,
            load_knowledge(store, settings),
            demo_forbidden_post=demo_forbidden_post,
        )
        console.print(f"engine: {escape(describe_engine(engine))}")
        outcome = pipeline.run(ticket_id)
        trace_timeline(console, ticket_id, store.trace(ticket_id))
        if used := usage_summary(engine):
            console.print(used)
        console.print(f"\n[bold]{outcome.status.value}[/bold] ({outcome.reason_code})")
        console.print(escape(one_line(outcome.reason_code)))
        if outcome.draft is not None:
            console.print(escape(outcome.draft.answer))

    guard(run)


@app.command()
def inbox(
    ctx: typer.Context,
    labels: Path | None = typer.Option(
        None, help="JSONL of expected buckets (default: the demo labels when the demo is loaded)."
    ),
    max_tickets: int | None = typer.Option(None, min=1, help="Stop after this many tickets."),
) -> None:
    """Work through every unhandled ticket, then print outcomes and bucket accuracy."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from supportagent.render import outcome_table
    from supportagent.run_report import exit_code
    from supportagent.runtime import (
        build_engine,
        build_pipeline,
        describe_engine,
        open_store,
        usage_summary,
    )
    from supportagent.scheduler import run_inbox

    settings = settings_of(ctx)

    def run() -> int:
        store = open_store(settings)
        engine = build_engine(settings)
        pipeline = build_pipeline(settings, store, engine, load_knowledge(store, settings))
        todo = len(store.unhandled_ticket_ids())
        console.print(f"engine: {escape(describe_engine(engine))}; {todo} tickets to handle")
        columns = (
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
        )
        with Progress(*columns, console=console, transient=False) as progress:
            task = progress.add_task("tickets", total=min(todo, max_tickets or todo))
            summary = run_inbox(
                pipeline,
                max_tickets=max_tickets,
                on_start=lambda tid: progress.update(task, description=f"ticket {tid}"),
                on_done=lambda _o: progress.advance(task),
            )
        console.print(f"{summary.processed} tickets handled ({summary.stopped_by}).")
        if used := usage_summary(engine):
            console.print(used)
        staged = store.staged()
        console.print(outcome_table((r.status.value, r.reason_code) for r in staged))
        _print_accuracy(labels, {r.ticket.id: r.bucket for r in staged}, store.list_tickets())
        return exit_code(summary.stopped_by)

    raise typer.Exit(guard(run))


def _check_id(ticket_id: str) -> None:
    """The same id rule as ingest and the API, before the id reaches the store."""
    from supportagent.domain import id_problem

    problem = id_problem(ticket_id)
    if problem is not None:
        shown = repr(ticket_id if len(ticket_id) <= 40 else ticket_id[:40] + "...")
        raise UserError(f"Ticket id {shown} {problem}.")


def _print_accuracy(
    labels_path: Path | None, predicted: dict[str, str | None], tickets: list[tuple[Ticket, Status]]
) -> None:
    from supportagent.labels import bucket_accuracy, misses_by_kind, read_labels
    from supportagent.runtime import demo_path

    if labels_path is None:
        default = demo_path() / "labels.jsonl"
        demo_ids = set(read_labels(default)) if default.exists() else set()
        if not demo_ids or not demo_ids <= {t.id for t, _ in tickets}:
            return
        labels_path = default
    labels = read_labels(labels_path)
    accuracy = bucket_accuracy(predicted, labels)
    console.print(
        f"bucket accuracy: {accuracy.correct}/{accuracy.total} = {accuracy.value:.1%} "
        f"(labels: {labels_path})"
    )
    for ticket_id, expected, got in accuracy.misses:
        console.print(f"  miss {ticket_id}: expected {expected}, got {got}")
    if accuracy.misses:
        console.print(f"  misses by kind: {misses_by_kind(accuracy, labels)}")


@app.command("review-queue")
def review_queue(ctx: typer.Context) -> None:
    """Drafts waiting for a human, newest first."""
    from supportagent.domain import Status
    from supportagent.reasons import explain
    from supportagent.runtime import open_store

    def run() -> None:
        store = open_store(settings_of(ctx))
        records = store.staged(Status.PENDING_REVIEW)
        if not records:
            console.print("No drafts are waiting for review.")
            return
        for record in records:
            draft = record.draft or {}
            console.print(
                f"[bold]{record.ticket.id}[/bold]  {escape(record.ticket.subject)}  "
                f"(draft confidence {draft.get('confidence', 0):.2f}; "
                f"{escape(explain(record.reason_code).sentence)})"
            )
            console.print(f"  {escape(str(draft.get('answer', '')))}\n")

    guard(run)


@app.command()
def review(
    ctx: typer.Context,
    decision: Decision = typer.Argument(..., help="approve, amend or reject"),
    ticket_id: str = typer.Argument(...),
    text: str | None = typer.Argument(
        None, help="amend: the final answer; reject: the reason. '-' reads it from stdin."
    ),
    reviewer: str = typer.Option("cli", help="Who decides (recorded with the decision)."),
) -> None:
    """Decide on a pending draft. Approved and amended answers join the resolved corpus."""
    from supportagent.review import amend, approve, reject
    from supportagent.runtime import open_store

    settings = settings_of(ctx)

    def run() -> None:
        _check_id(ticket_id)
        store = open_store(settings)
        given = sys.stdin.read() if text == "-" else text or ""
        if decision is Decision.approve and text is not None:
            raise UserError(
                "approve takes no text: it accepts the draft as written. To send your own "
                f"text, use `supportagent review amend {ticket_id} TEXT`."
            )
        if decision is Decision.approve:
            result = approve(store, None, ticket_id, reviewer)
        elif decision is Decision.amend:
            result = amend(store, None, ticket_id, given, reviewer)
        else:
            result = reject(store, ticket_id, given, reviewer)
        status = result.status.value
        console.print(f"{escape(result.effect)} (now {status}, by {escape(result.reviewer)})")
        if result.decision == "amend":
            console.print(f"edit: {result.edit_chars} characters, {result.edit_ratio:.0%} of words")
            if result.diff:
                console.print(escape(result.diff), highlight=False)

    guard(run)


@app.command()
def triage(
    ctx: typer.Context,
    ticket: str | None = typer.Option(None, "--ticket", help="The ticket text."),
    batch: Path | None = typer.Option(
        None, "--batch", help="A CSV, JSON or JSONL file of tickets, one a row."
    ),
    delay: float = typer.Option(
        0.0, "--delay", min=0.0, help="--batch: seconds to wait between tickets."
    ),
    interactive: bool = typer.Option(
        False, "--interactive", help="Read tickets from the prompt, one a line; Ctrl-D ends."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the structured result as JSON."),
    confidence_threshold: float | None = typer.Option(
        None,
        "--confidence-threshold",
        min=0.0,
        max=1.0,
        help="Evidence gate threshold (env SUPPORTAGENT_CONFIDENCE_THRESHOLD).",
    ),
) -> None:
    """Safety, retrieval and outcome for ticket texts, without touching the inbox.

    Every run appends one row per ticket to the triage CSV log (SUPPORTAGENT_TRIAGE_LOG,
    default triage-log.csv in the data folder).
    """
    settings = settings_of(ctx)
    if confidence_threshold is not None:
        settings = settings.model_copy(update={"confidence_threshold": confidence_threshold})

    def run() -> int:
        from supportagent.cli.triage_batch import run_triage

        return run_triage(
            settings,
            ticket=ticket,
            batch=batch,
            delay=delay,
            interactive=interactive,
            as_json=as_json,
        )

    raise typer.Exit(guard(run))


@app.command()
def ui(
    ctx: typer.Context,
    host: str | None = typer.Option(None, help="Address to bind (default: 127.0.0.1)."),
    port: int | None = typer.Option(None, min=1, max=65535, help="Port (default: 5050)."),
    demo: bool = typer.Option(False, help="Load the demo data first when the store is empty."),
    work: bool = typer.Option(True, help="Work through the inbox in the background."),
    max_tickets: int | None = typer.Option(
        None, min=1, help="Stop the background agent after this many tickets."
    ),
) -> None:
    """Serve the web UI and let the agent work through the inbox.

    Beyond loopback it needs SUPPORTAGENT_TOKEN; every page and API call then asks for it.
    """
    from supportagent.runtime import load_demo, open_store

    settings = settings_of(ctx)

    def run() -> None:
        import uvicorn

        from supportagent.web.app import create_app
        from supportagent.web.security import check_bind

        bind_host, bind_port = host or settings.host, port or settings.port
        check_bind(bind_host, settings.token)
        shown = f"[{bind_host}]" if ":" in bind_host else bind_host
        login = " (token required)" if settings.token is not None else ""
        # Said first, before the slow part (the first start embeds the corpus).
        console.print(
            f"SupportAgent UI on http://{shown}:{bind_port}/{login} · Ctrl-C to stop\n"
            "starting: loading the store and building the search index..."
        )
        store = open_store(settings)
        if demo and not store.document_counts() and not store.status_counts():
            load_demo(store)
        load_knowledge(store, settings)  # embeds the corpus once, with a progress bar
        application = create_app(settings, store, work=work, max_tickets=max_tickets)
        console.print(f"ready: open http://{shown}:{bind_port}/ (Ctrl-C to stop)")
        uvicorn.run(application, host=bind_host, port=bind_port, log_level="warning")

    guard(run)
