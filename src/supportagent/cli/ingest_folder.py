"""`ingest folder DIR`: a whole data folder (docs/, resolved/, inbox/) in one transaction.

Called from the ``ingest`` command in ``cli/core.py``; heavy imports stay inside the function
so that the CLI starts without them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from supportagent.cli.app import console, err

if TYPE_CHECKING:
    from rich.table import Table

    from supportagent.config import Settings
    from supportagent.ingest.common import IngestResult
    from supportagent.ingest.common import Progress as FileProgress
    from supportagent.ingest.folder import FolderContents, PartProgress


def ingest_folder(settings: Settings, path: Path, *, replace: bool) -> int:
    """Read every part of ``path``, then load it all in one transaction or nothing; exit code."""
    from supportagent.ingest.folder import read_folder
    from supportagent.runtime import open_store
    from supportagent.store.store import BundleRefused

    store = open_store(settings)
    with _part_progress() as progress:
        contents = read_folder(path, progress)
    console.print(_found_table(contents))
    for skipped in contents.skipped:
        console.print(f"[yellow]skipped[/yellow] {escape(str(skipped))}", soft_wrap=True)
    problems = contents.all_problems()
    if problems:
        _print_problems(problems)
        console.print(
            f"Nothing loaded: {len(problems)} problem(s) above. The folder loads in one "
            "transaction, all or nothing; fix or remove those files and run again."
        )
        return 1
    docs = [*contents.docs.records, *contents.resolved.records]
    try:
        doc_report, ticket_report = store.add_bundle(docs, contents.inbox.records, replace=replace)
    except BundleRefused as refused:
        _print_problems(
            [
                f"{clash.describe()}; not loaded (pass --replace to replace it, which the "
                "audit log records)"
                for clash in refused.clashes
            ],
        )
        console.print("Nothing loaded: the folder loads in one transaction, all or nothing.")
        return 1
    already = ticket_report.skipped_existing
    line = (
        f"Loaded in one transaction: {len(contents.docs.records)} articles and "
        f"{len(contents.resolved.records)} resolved tickets ({doc_report.added} documents "
        f"added, {doc_report.updated} updated), {ticket_report.added} inbox tickets added"
    )
    if already:
        shown = ", ".join(already[:5]) + (" ..." if len(already) > 5 else "")
        line += f"; {len(already)} already in the store, left as they were ({shown})"
    if doc_report.replaced:
        line += f"; {len(doc_report.replaced)} documents replaced on request (audited)"
    console.print(escape(line) + ".")
    return 0


def _found_table(contents: FolderContents) -> Table:
    from rich.table import Table

    from supportagent.ingest.folder import PARTS

    table = Table(title=f"Found in {escape(str(contents.root))}")
    for column in ("part", "folder", "files read", "records", "problems"):
        table.add_column(column, justify="left" if column in {"part", "folder"} else "right")
    results: dict[str, IngestResult[Any]] = {
        "docs": contents.docs,
        "resolved": contents.resolved,
        "inbox": contents.inbox,
    }
    for part in PARTS:
        folders = contents.found.get(part.name)
        result = results[part.name]
        where = ", ".join(f"{f.name}/" for f in folders) if folders else "(missing)"
        table.add_row(
            part.name,
            where,
            str(result.files_read),
            str(len(result.records)),
            str(len(result.problems)),
        )
    return table


def _print_problems(problems: Sequence[object], limit: int = 50) -> None:
    # Unwrapped: a problem names a file by its whole path, which must stay copyable.
    for problem in problems[:limit]:
        err.print(f"[red]rejected[/red] {escape(str(problem))}", soft_wrap=True)
    if len(problems) > limit:
        err.print(f"[red]... and {len(problems) - limit} more problems[/red]")


@contextmanager
def _part_progress() -> Iterator[PartProgress]:
    """A progress bar per part over its files, on stderr; gone once the files are read."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True) as bar:

        def start(part: str) -> FileProgress:
            task = bar.add_task(f"reading {part}", total=None)

            def advance(done: int, total: int) -> None:
                bar.update(task, completed=done, total=total)

            return advance

        yield start
