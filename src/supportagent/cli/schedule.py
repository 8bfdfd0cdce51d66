"""`schedule` (work through the inbox within caps, with a live view) and `worker` (run forever)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from types import FrameType
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from supportagent.cli.app import app, console, err, guard, load_knowledge, settings_of

if TYPE_CHECKING:
    from rich.console import RenderableType

    from supportagent.agent.pipeline import Pipeline
    from supportagent.config import Settings
    from supportagent.run_report import Caps, RunSummary, Snapshot
    from supportagent.store.claims import Claims

LEASE_HELP = (
    "Seconds a claim lasts without renewal; a dead worker's tickets return after this long."
)


@app.command()
def schedule(
    ctx: typer.Context,
    max_tickets: int | None = typer.Option(None, min=1, help="Stop after this many tickets."),
    max_api_calls: int | None = typer.Option(
        None,
        min=0,
        help="Hard cap on model requests, retries included (env SUPPORTAGENT_MAX_API_CALLS).",
    ),
    max_tokens: int | None = typer.Option(
        None, min=0, help="Hard cap on model tokens (env SUPPORTAGENT_MAX_TOKENS)."
    ),
    concurrency: int = typer.Option(1, min=1, max=256, help="Tickets in flight at once."),
    retry_escalated: bool = typer.Option(
        False, help="Put escalated tickets back in the inbox first, to run them again."
    ),
    lease: float = typer.Option(30.0, min=0.5, help=LEASE_HELP),
    live: bool = typer.Option(True, help="Show the live view (only on a terminal)."),
) -> None:
    """Work through the inbox, K tickets at a time, until it is empty or a cap is reached.

    Run it again to continue where it stopped: finished tickets are never redone. Exit code 0:
    done; 1: a ticket failed (it is back in the inbox); 3: stopped by a cap with tickets
    still waiting.
    """
    settings = _with_caps(settings_of(ctx), max_api_calls, max_tokens)

    def run() -> int:
        stop = threading.Event()
        # From the start, so that a SIGTERM while the store and index load is a clean stop too.
        with _stop_on_signals(stop):
            return work(stop)

    def work(stop: threading.Event) -> int:
        from rich.live import Live

        from supportagent.run_report import Caps, exit_code
        from supportagent.scheduler import Scheduler

        claims, pipeline = _agent(settings, lease)
        if retry_escalated:
            console.print(f"{claims.requeue_escalated()} escalated tickets put back in the inbox.")
        caps = Caps(max_tickets, settings.max_api_calls, settings.max_tokens)
        scheduler = Scheduler(
            pipeline,
            claims=claims,
            concurrency=concurrency,
            caps=caps,
            wait_for_held=True,
            poll_seconds=min(1.0, lease / 3),
            stop=stop,
        )
        backlog = claims.backlog()
        console.print(
            f"engine: {pipeline.engine.name}; {backlog.free + backlog.held} tickets to handle; "
            f"concurrency {concurrency}"
        )
        if live and console.is_terminal:
            view = Live(get_renderable=lambda: _view(scheduler.snapshot()), console=console)
            with view:
                summary = scheduler.run()
        else:
            summary = scheduler.run()
        _print_summary(summary, caps)
        return exit_code(summary.stopped_by, failed=bool(summary.errors))

    raise typer.Exit(guard(run))


def one_blas_thread() -> None:
    """One OpenBLAS thread for this process, unless the environment says otherwise.

    Workers run one per core: a worker whose matrix products spread over every core fights
    the others for them (at 1M passages, hybrid CPU p50 65-76 ms with OpenBLAS's default
    threads against 22-30 ms with one; docs/scaling.md). OpenBLAS reads the variable when
    numpy is first imported, so this must run before that; later it changes nothing.
    """
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@app.command()
def worker(
    ctx: typer.Context,
    poll: float = typer.Option(2.0, min=0.05, help="Seconds between looks at an empty inbox."),
    lease: float = typer.Option(30.0, min=0.5, help=LEASE_HELP),
    concurrency: int = typer.Option(1, min=1, max=256, help="Tickets in flight at once."),
    grace: float = typer.Option(
        30.0, min=0, help="On SIGTERM, seconds to finish tickets in flight before handing back."
    ),
    max_api_calls: int | None = typer.Option(
        None, min=0, help="Hard cap on model requests, retries included."
    ),
    max_tokens: int | None = typer.Option(None, min=0, help="Hard cap on model tokens."),
) -> None:
    """Run until SIGTERM, picking up tickets as they arrive. Start one per core or machine.

    Workers share one database (SUPPORTAGENT_DATABASE_URL=postgresql://... for many machines).
    """
    one_blas_thread()
    settings = _with_caps(settings_of(ctx), max_api_calls, max_tokens)

    def run() -> int:
        stop = threading.Event()
        # From the start: a SIGTERM while the store and index load stops the worker cleanly.
        with _stop_on_signals(stop):
            return work(stop)

    def work(stop: threading.Event) -> int:
        from supportagent.run_report import Caps, exit_code
        from supportagent.scheduler import Scheduler

        claims, pipeline = _agent(settings, lease)
        scheduler = Scheduler(
            pipeline,
            claims=claims,
            concurrency=concurrency,
            caps=Caps(None, settings.max_api_calls, settings.max_tokens),
            stop=stop,
            follow=True,
            poll_seconds=poll,
            grace_seconds=grace,
            keep_outcomes=False,
            on_event=_log,
        )
        _log(
            f"worker {claims.worker} started: engine {pipeline.engine.name}, "
            f"concurrency {concurrency}"
        )
        summary = scheduler.run()
        _log(
            f"worker {claims.worker} stopped ({summary.stopped_by}): {summary.processed} "
            f"tickets handled, {len(summary.handed_back)} handed back"
        )
        return exit_code(summary.stopped_by)

    raise typer.Exit(guard(run))


def _agent(settings: Settings, lease: float) -> tuple[Claims, Pipeline]:
    """What `schedule` and `worker` run: claims on the store and the pipeline over it."""
    from supportagent.runtime import build_engine, build_pipeline, open_store
    from supportagent.store.claims import Claims

    store = open_store(settings)
    pipeline = build_pipeline(
        settings, store, build_engine(settings), load_knowledge(store, settings)
    )
    return Claims(store, lease_seconds=lease), pipeline


def _with_caps(settings: Settings, calls: int | None, tokens: int | None) -> Settings:
    """The settings with the command line's caps, which win over the environment."""
    update = {"max_api_calls": calls, "max_tokens": tokens}
    return settings.model_copy(update={k: v for k, v in update.items() if v is not None})


@contextmanager
def _stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGTERM and the first Ctrl-C ask for a clean stop; a second Ctrl-C interrupts."""

    def on_term(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    def on_int(_signum: int, _frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        err.print("stopping: finishing the tickets in flight (Ctrl-C again to interrupt)")
        stop.set()

    handlers: dict[int, Callable[[int, FrameType | None], None]] = {
        signal.SIGTERM: on_term,
        signal.SIGINT: on_int,
    }
    previous = {signum: signal.signal(signum, handler) for signum, handler in handlers.items()}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _log(message: str) -> None:
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    console.print(f"{stamp} {escape(message)}", soft_wrap=True)


def _used(used: int, cap: int | None) -> str:
    return f"{used}" if cap is None else f"{used}/{cap}"


def _view(snapshot: Snapshot) -> RenderableType:
    """The live view: tickets in flight with their stage, then what the caps have used."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title="In flight", expand=False)
    for column in ("ticket", "attempt", "stage", "seconds"):
        table.add_column(column)
    for item in sorted(snapshot.in_flight, key=lambda i: -i.seconds):
        table.add_row(escape(item.ticket_id), str(item.attempt), item.stage, f"{item.seconds:.1f}")
    caps = snapshot.caps
    line = (
        f"tickets {_used(snapshot.processed + len(snapshot.in_flight), caps.max_tickets)}  "
        f"model requests {_used(snapshot.api_calls, caps.max_api_calls)}  "
        f"tokens {_used(snapshot.tokens, caps.max_tokens)}  "
        f"elapsed {snapshot.seconds:.0f}s"
    )
    staged = ", ".join(f"{k} {v}" for k, v in sorted(snapshot.by_status.items())) or "none yet"
    parts: list[RenderableType] = [table, Text(line), Text(f"staged: {staged}")]
    if snapshot.held_elsewhere and not snapshot.in_flight:
        parts.append(Text(f"waiting for {snapshot.held_elsewhere} tickets other workers hold"))
    if snapshot.stopping:
        parts.append(Text(f"stopping: {snapshot.stopping}; finishing the tickets in flight"))
    return Group(*parts)


def _print_summary(summary: RunSummary, caps: Caps) -> None:
    from supportagent.render import outcome_table

    console.print(
        f"{summary.processed} tickets handled in {summary.seconds:.1f} s "
        f"(stopped by: {summary.stopped_by})."
    )
    console.print(
        f"model requests {_used(summary.api_calls, caps.max_api_calls)} "
        f"({summary.retries} retries), tokens {_used(summary.tokens, caps.max_tokens)}"
    )
    if summary.by_status:
        console.print(outcome_table(_statuses(summary)))
    if summary.handed_back:
        console.print(
            f"{len(summary.handed_back)} tickets handed back unfinished; the next run takes "
            f"them: {', '.join(summary.handed_back[:10])}"
        )
    if summary.lost:
        console.print(f"{len(summary.lost)} tickets were taken over by another worker.")
    for ticket_id, message in summary.errors:
        err.print(f"[red]error:[/red] {escape(ticket_id)}: {escape(message)}", soft_wrap=True)


def _statuses(summary: RunSummary) -> Iterator[tuple[str, str]]:
    for outcome in summary.outcomes:
        yield outcome.status.value, outcome.reason_code
