"""Read a whole data folder laid out as ``docs/``, ``resolved/`` and ``inbox/`` in one go.

This is the layout of the C# SupportAgent's ``data/`` folder: articles (markdown, HTML,
text) under ``docs/``, one resolved ticket per JSON file under ``resolved/``, one inbox ticket
per JSON file under ``inbox/``. Nothing here writes: the caller loads what was read in one
transaction, or nothing when anything is wrong (``cli/ingest_folder.py``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from supportagent.domain import Document, Ticket
from supportagent.errors import UserError
from supportagent.ingest.common import IngestProblem, IngestResult, Progress
from supportagent.ingest.kb import KB_SUFFIXES, read_kb
from supportagent.ingest.records import RECORD_SUFFIXES
from supportagent.ingest.rows import read_resolved, read_tickets

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Part:
    """One sub-folder of the layout: its name, the names it may also go by, what it holds."""

    name: str
    folders: tuple[str, ...]
    suffixes: Collection[str]
    what: str


PARTS = (
    Part("docs", ("docs", "kb"), KB_SUFFIXES, "articles"),
    Part("resolved", ("resolved",), RECORD_SUFFIXES, "resolved tickets"),
    Part("inbox", ("inbox", "tickets"), RECORD_SUFFIXES, "inbox tickets"),
)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file or folder ``ingest folder`` did not read, and why (not an error)."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@dataclass
class FolderContents:
    """What a data folder holds, read but not written."""

    root: Path
    docs: IngestResult[Document] = field(default_factory=IngestResult)
    resolved: IngestResult[Document] = field(default_factory=IngestResult)
    inbox: IngestResult[Ticket] = field(default_factory=IngestResult)
    #: The sub-folders found for each part (``docs`` may be ``kb``); absent parts are missing.
    found: dict[str, list[Path]] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    #: Problems that concern the folder as a whole (an id used by two parts).
    problems: list[IngestProblem] = field(default_factory=list)

    def all_problems(self) -> list[IngestProblem]:
        return [
            *self.docs.problems,
            *self.resolved.problems,
            *self.inbox.problems,
            *self.problems,
        ]


#: Told when a part starts: (part name, its progress callback).
PartProgress = Callable[[str], Progress | None]


def read_folder(root: Path, progress: PartProgress | None = None) -> FolderContents:
    """Read ``root``'s ``docs/``, ``resolved/`` and ``inbox/``; UserError if it has none."""
    if not root.is_dir():
        raise UserError(f"{root}: not a folder (expected one holding docs/, resolved/, inbox/)")
    contents = FolderContents(root)
    known: set[str] = set()
    for part in PARTS:
        folders = [root / name for name in part.folders if (root / name).is_dir()]
        known.update(part.folders)
        if not folders:
            continue
        contents.found[part.name] = folders
        for folder in folders:
            tell = progress(part.name) if progress is not None else None
            _read_part(contents, part, folder, tell)
            contents.skipped += _unread_files(folder, part)
    if not contents.found:
        names = ", ".join(f"{p.name}/" for p in PARTS)
        raise UserError(f"{root}: holds none of {names}; nothing to load")
    for entry in sorted(root.iterdir()):
        if entry.name.startswith(".") or entry.name in known:
            continue
        contents.skipped.append(Skipped(str(entry), _NOT_A_PART))
    contents.problems += _shared_ids(contents)
    return contents


_NOT_A_PART = "not one of docs/ (or kb/), resolved/, inbox/ (or tickets/); not read"


def _read_part(contents: FolderContents, part: Part, folder: Path, tell: Progress | None) -> None:
    if part.name == "docs":
        _merge(contents.docs, read_kb(folder, tell))
    elif part.name == "resolved":
        _merge(contents.resolved, read_resolved(folder, tell))
    else:
        _merge(contents.inbox, read_tickets(folder, tell))


def _merge(into: IngestResult[T], more: IngestResult[T]) -> None:
    into.records += more.records
    into.problems += more.problems
    into.files_read += more.files_read


def _unread_files(folder: Path, part: Part) -> list[Skipped]:
    """Files under ``folder`` that no reader of ``part`` accepts (the readers pass them by)."""
    accepted = ", ".join(sorted(part.suffixes))
    out: list[Skipped] = []
    for current, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if name.startswith(".") or Path(name).suffix.lower() in part.suffixes:
                continue
            reason = f"not one of the {part.what} formats ({accepted}); not read"
            out.append(Skipped(str(Path(current) / name), reason))
    return out


def _shared_ids(contents: FolderContents) -> list[IngestProblem]:
    """Articles and resolved tickets share one id space in the store: a clash is a problem."""
    where = {doc.id: doc.source for doc in contents.docs.records}
    problems = []
    for doc in contents.resolved.records:
        if doc.id in where:
            problems.append(
                IngestProblem(
                    str(contents.root / "resolved" / doc.source),
                    None,
                    f"id {doc.id!r} is also the id of the article docs/{where[doc.id]}; "
                    "ids must be unique across docs/ and resolved/",
                )
            )
    return problems
