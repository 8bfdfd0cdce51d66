"""`triage`: one ticket (--ticket), a file of tickets (--batch), or a prompt (--interactive).

Every ticket goes through the whole pipeline against the store's knowledge, leaves no trace
in the inbox, and adds one row to the triage CSV log (``SUPPORTAGENT_TRIAGE_LOG``). Heavy
imports stay inside the functions so that the CLI starts without them.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from rich.markup import escape

from supportagent.cli.app import console, err, load_knowledge
from supportagent.errors import UserError

if TYPE_CHECKING:
    from rich.console import Console

    from supportagent.agent.knowledge import Knowledge
    from supportagent.config import Settings
    from supportagent.llm.budget import Budget

#: Rows of the per-ticket summary table; the log holds them all.
SUMMARY_ROWS = 100
PROMPT = "ticket> "


class Triager:
    """Triage tickets one by one against one knowledge base and one budget, logging each."""

    def __init__(self, settings: Settings) -> None:
        if settings.embedder == "onnx" or settings.semantic_safety:
            _load_minilm_meanwhile()
        from supportagent.runtime import mapped_knowledge, open_store, run_budget

        self.settings = settings
        self.log_path = settings.resolved_triage_log()
        # A triage writes nothing to the store (each ticket goes to a scratch store), so with
        # the index warm the store is only read, without SQLAlchemy; otherwise it is opened,
        # migrated if need be, and the index built.
        knowledge = mapped_knowledge(settings)
        if knowledge is None:
            knowledge = load_knowledge(open_store(settings), settings)
        self.knowledge: Knowledge = knowledge
        # One budget for the whole run: --max-api-calls caps a batch, not each ticket.
        self.budget: Budget = run_budget(settings)
        self.logged = 0

    def triage(self, text: str, ticket_id: str | None = None) -> dict[str, Any]:
        from supportagent.triage import triage_text
        from supportagent.triage_log import append_rows, log_row

        result = triage_text(
            self.settings, self.knowledge, text, budget=self.budget, ticket_id=ticket_id
        )
        if self.log_path is not None:
            # Written at once: a run stopped halfway keeps the rows of what it did.
            self.logged += append_rows(self.log_path, [log_row(result)])
        return result

    def logged_line(self) -> str:
        if self.log_path is None:
            return "triage log off (SUPPORTAGENT_TRIAGE_LOG=off)"
        return f"{self.logged} row(s) appended to the triage log {self.log_path}"


def _load_minilm_meanwhile() -> None:
    """Load MiniLM (its tokenizer and ONNX session) in a thread while this one imports the
    pipeline and opens the index: every ticket's safety screen and search embed with it.

    Wall time only: a one-shot ``triage`` runs on one core until its first embedding, and the
    session is created outside the GIL. The first embedding takes the loaded runtime or waits
    for it (``OnnxMiniLM._runtime`` holds a lock while it loads); a failure here is left to
    it, as it loads again and reports the error. The thread imports only onnxruntime,
    tokenizers and ``onnx_session``, none of which imports the pipeline, so neither thread
    waits on an import the other holds while wanting one of its own. It is not a daemon, so
    the process never exits in the middle of ONNX Runtime's set-up.
    """
    from supportagent.retrieval.dense import OnnxMiniLM  # numpy: the pipeline needs it anyway

    def load() -> None:
        with contextlib.suppress(Exception):
            OnnxMiniLM().load()

    threading.Thread(target=load, name="load-minilm").start()


def run_triage(
    settings: Settings,
    *,
    ticket: str | None,
    batch: Path | None,
    delay: float,
    interactive: bool,
    as_json: bool,
) -> int:
    """Dispatch on the mode; exactly one of ``ticket``, ``batch``, ``interactive``."""
    given = [
        name
        for name, on in (
            ("--ticket", ticket is not None),
            ("--batch", batch),
            ("--interactive", interactive),
        )
        if on
    ]
    if len(given) != 1:
        raise UserError(
            "give exactly one of --ticket TEXT, --batch FILE or --interactive"
            + (f" (got {' and '.join(given)})" if given else "")
        )
    if delay and batch is None:
        raise UserError("--delay only applies to --batch")
    if batch is not None:
        return run_batch(settings, batch, delay=delay, as_json=as_json)
    if interactive:
        return run_interactive(settings, sys.stdin, as_json=as_json)
    assert ticket is not None
    if not ticket.strip():
        raise UserError("--ticket is empty; give the ticket's text")
    triager = Triager(settings)
    result = triager.triage(ticket)
    if as_json:  # nothing but the JSON, as the one-shot form always printed
        _write_json(result, indent=2)
        return 0
    from supportagent.render import trace_timeline

    trace_timeline(console, "(triage)", result["trace"])
    _print_outcome(console, result)
    err.print(escape(triager.logged_line()), soft_wrap=True)
    return 0


def run_batch(settings: Settings, path: Path, *, delay: float, as_json: bool) -> int:
    """Each row of a CSV, JSON or JSONL file, with a progress bar, then a summary table.

    With ``--json`` each result is one JSON line on stdout and the summary goes to stderr.
    Rows that cannot be read are listed and the exit code is 1; the others still run.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from supportagent.ingest import read_batch
    from supportagent.render import outcome_table, print_problems

    rows = read_batch(path)
    if not rows.records and rows.problems:
        print_problems(err, rows.problems)
        raise UserError(f"{path}: no ticket could be read (problems above)")
    triager = Triager(settings)
    out = err if as_json else console
    results: list[dict[str, Any]] = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, TimeElapsedColumn(), console=err, transient=False) as bar:
        task = bar.add_task("triage", total=len(rows.records))
        for number, ticket in enumerate(rows.records):
            if number and delay:
                time.sleep(delay)  # spacing requests for a rate-limited endpoint
            bar.update(task, description=f"ticket {escape(ticket.id)}")
            text = f"{ticket.subject}\n{ticket.body}" if ticket.subject else ticket.body
            result = triager.triage(text, ticket_id=ticket.id)
            results.append(result)
            if as_json:
                _write_json(result)
            bar.advance(task)
    out.print(_summary_table(results))
    out.print(outcome_table((r["status"], r["reason_code"]) for r in results))
    print_problems(err, rows.problems)
    rejected = f"; {len(rows.problems)} row(s) rejected" if rows.problems else ""
    out.print(f"{len(results)} tickets triaged from {escape(str(path))}{rejected}.")
    err.print(escape(triager.logged_line()), soft_wrap=True)
    return 1 if rows.problems else 0


def run_interactive(settings: Settings, stdin: TextIO, *, as_json: bool) -> int:
    """A prompt: each line is a ticket (end a line with ``\\`` to go on); Ctrl-D ends it."""
    triager = Triager(settings)
    err.print(
        "Type a ticket and press Enter (first line = subject; end a line with \\ to add "
        "another). Ctrl-D ends."
    )
    count = 0
    while True:
        text = _read_ticket(stdin)
        if text is None:
            break
        if not text.strip():
            continue
        result = triager.triage(text)
        count += 1
        if as_json:
            _write_json(result)
        else:
            _print_outcome(console, result)
    err.print(f"\n{count} ticket(s) triaged; {escape(triager.logged_line())}", soft_wrap=True)
    return 0


def _read_ticket(stdin: TextIO) -> str | None:
    """The next ticket from the prompt; None at the end of input (Ctrl-D) or on Ctrl-C."""
    lines: list[str] = []
    while True:
        err.print(PROMPT if not lines else "...     ", end="")
        try:
            line = stdin.readline()
        except KeyboardInterrupt:
            return None
        if not line:
            return "\n".join(lines) if lines else None
        line = line.rstrip("\r\n")
        if line.endswith("\\"):
            lines.append(line[:-1])
            continue
        lines.append(line)
        return "\n".join(lines)


def _write_json(result: dict[str, Any], indent: int | None = None) -> None:
    sys.stdout.write(json.dumps(result, indent=indent, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _print_outcome(out: Console, result: dict[str, Any]) -> None:
    out.print(f"\n[bold]{result['status']}[/bold] ({escape(result['reason_code'])})")
    if result["answer"]:
        out.print(escape(result["answer"]))


def _summary_table(results: list[dict[str, Any]]) -> Any:
    from rich.table import Table

    table = Table(title="Triage")
    for column in ("ticket", "status", "reason", "bucket", "cited", "confidence"):
        table.add_column(column, justify="right" if column == "confidence" else "left")
    for result in results[:SUMMARY_ROWS]:
        confidence = result["confidence"]
        table.add_row(
            escape(result["ticket_id"]),
            result["status"],
            escape(result["reason_code"]),
            result["bucket"] or "-",
            escape(result["cited_doc_id"] or "-"),
            f"{confidence:.2f}" if confidence is not None else "-",
        )
    if len(results) > SUMMARY_ROWS:
        table.caption = f"first {SUMMARY_ROWS} of {len(results)}; the triage log has every row"
    return table
