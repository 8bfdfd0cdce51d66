"""Shared pieces of the ingest readers: results, problems, limits, text and id checks, files."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from supportagent.domain import id_problem
from supportagent.errors import UserError
from supportagent.planted import count_kinds, find_flags

#: Largest accepted text field (UTF-8 bytes). Bigger values are almost always a bad export.
MAX_FIELD_BYTES = 1_000_000
#: Largest accepted input file. Checked before reading so a huge file costs nothing.
MAX_FILE_BYTES = 50_000_000

T = TypeVar("T")


@dataclass(frozen=True)
class IngestProblem:
    """One thing wrong with the input, located as precisely as the format allows."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.file}: {self.message}"
        return f"{self.file}:{self.line}: {self.message}"


@dataclass
class IngestResult(Generic[T]):
    """The records that read cleanly, the problems with the rest, and how many files were read."""

    records: list[T] = field(default_factory=list)
    problems: list[IngestProblem] = field(default_factory=list)
    files_read: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


class RecordError(Exception):
    """Raised inside a reader when one record (row, article) cannot be used; never escapes.

    ``line`` is set when the error knows better than the caller where it is (a bad byte on
    line 7 of an article, a YAML error inside front matter).
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


# --- text -----------------------------------------------------------------------------------


def normalise_text(value: str) -> str:
    """Unix newlines, no NUL characters, no surrounding whitespace."""
    return value.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "").strip()


def utf8_size(value: str) -> int:
    # surrogatepass: a lone surrogate must not make the size check itself blow up.
    return len(value.encode("utf-8", "surrogatepass"))


def describe_size(size: int) -> str:
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB ({size:,} bytes)"
    return f"{size:,} bytes"


def clean_text(name: str, value: str) -> str:
    """Normalise a text field, rejecting ones over the size limit or holding broken Unicode."""
    size = utf8_size(value)
    if size > MAX_FIELD_BYTES:
        raise RecordError(
            f"field '{name}' is {describe_size(size)}, over the limit of "
            f"{MAX_FIELD_BYTES:,} bytes; shorten it or split the record"
        )
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        raise RecordError(
            f"field '{name}' contains an unpaired surrogate (invalid Unicode); "
            "re-export the file as UTF-8"
        )
    return normalise_text(value)


def first_line(text: str, limit: int) -> str:
    """The first non-empty line of ``text``, cut to ``limit`` characters."""
    for line in text.split("\n"):
        line = line.strip()
        if line:
            return line[:limit].rstrip()
    return ""


def show(value: str, limit: int = 40) -> str:
    """A value quoted for a message, shortened so a bad 5 MB id does not flood the terminal."""
    if len(value) > limit:
        value = value[:limit] + "..."
    return repr(value)


def flagged_meta(text: str) -> dict[str, Any]:
    """``{"flagged": [...]}`` when ``text`` holds sentences the ``planted`` rules flag (an
    instruction to the AI, a fake role fence, a claimed account action), else ``{}``.

    The flags are recorded, not acted on: the document loads whole, and the drafters leave the
    flagged sentences out wherever the document is used (``supportagent.planted``).
    """
    flags = find_flags(text)
    return {"flagged": [flag.to_json() for flag in flags]} if flags else {}


def count_flagged(docs: Sequence[Any]) -> str:
    """The ingest summary's words for the flags of ``docs`` ("" when there are none)."""
    flags = [f for doc in docs for f in (getattr(doc, "meta", {}) or {}).get("flagged", [])]
    if not flags:
        return ""
    kinds = count_kinds(flags)
    documents = sum(1 for doc in docs if (getattr(doc, "meta", {}) or {}).get("flagged"))
    parts = [
        f"{kinds['instruction'] + kinds['role_marker']} addressed to the AI",
        f"{kinds['action_claim']} claiming an account action",
    ]
    sentences = "1 sentence" if len(flags) == 1 else f"{len(flags)} sentences"
    where = "1 document" if documents == 1 else f"{documents} documents"
    return f"{sentences} flagged in {where} ({', '.join(parts)}; never quoted into a draft)"


# --- ids ------------------------------------------------------------------------------------


def coerce_id(value: object, label: str = "id") -> str:
    """A valid id from a raw field value (integers become strings); ``label`` names it."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise RecordError(f"{label} must be a string or an integer, not {type_name(value)}")
    # Surrounding whitespace goes (CSV cells, JSON written by hand); nothing else is changed.
    text = str(value).strip()
    if not text:
        raise RecordError(f"{label} is empty; give it a value")
    problem = id_problem(text)
    if problem is not None:
        raise RecordError(f"{label} {show(text)} {problem}")
    return text


def type_name(value: object) -> str:
    """How a JSON user would name the type of ``value``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


@dataclass
class IdRegistry:
    """Remembers where each id was first seen, so later copies can point back to it."""

    first_seen: dict[str, tuple[str, int | None]] = field(default_factory=dict)

    def claim(self, record_id: str, file: str, line: int | None) -> None:
        """Record ``record_id``; raise RecordError if it was already claimed."""
        earlier = self.first_seen.get(record_id)
        if earlier is None:
            self.first_seen[record_id] = (file, line)
            return
        where = _location(earlier, file)
        raise RecordError(f"duplicate id {show(record_id)}: first seen {where}; ids must be unique")


def _location(earlier: tuple[str, int | None], current_file: str) -> str:
    first_file, first_line_no = earlier
    if first_file == current_file:
        return f"at line {first_line_no}" if first_line_no is not None else "earlier in this file"
    if first_line_no is None:
        return f"in {first_file}"
    return f"at {first_file}:{first_line_no}"


# --- files ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceFile:
    """A file to read: where it is, how to name it in problems, and its path inside the input."""

    path: Path
    shown: str
    relative: str

    @property
    def suffix(self) -> str:
        return self.path.suffix.lower()


#: Told after each file: (files done, files in all).
Progress = Callable[[int, int], None]


def collect_files(
    path: Path, suffixes: Collection[str], what: str
) -> tuple[list[SourceFile], list[IngestProblem]]:
    """The files to read for ``path``: the file itself, or every matching file under a folder.

    Raises UserError for a missing path or a file whose extension the reader does not accept.
    Hidden files and folders (``.git``, ``.DS_Store``) are skipped; folders that cannot be
    listed come back as problems. Inside a folder, a link whose real path leaves the folder is
    refused (it could make ``/etc/passwd`` or a ``.env`` file an article) and a linked folder
    is not followed; both come back as problems, so nothing is skipped without a word.
    """
    accepted = ", ".join(sorted(suffixes))
    if not path.exists() and not path.is_symlink():
        raise UserError(f"{path}: no such file or folder")
    if not path.is_dir():
        if path.suffix.lower() not in suffixes:
            raise UserError(
                f"{path}: cannot read '{path.suffix or path.name}' files as {what}; "
                f"accepted extensions: {accepted}"
            )
        # A file named on the command line is the user's choice, link or not.
        return [SourceFile(_real(path) or path, str(path), path.name)], []
    root = path.resolve()
    found: list[SourceFile] = []
    problems: list[IngestProblem] = []

    def unreadable(exc: OSError) -> None:
        shown = exc.filename if exc.filename is not None else str(path)
        problems.append(IngestProblem(str(shown), None, f"cannot read folder: {exc.strerror}"))

    for folder, dirnames, filenames in os.walk(path, onerror=unreadable):
        kept = []
        for name in sorted(d for d in dirnames if not d.startswith(".")):
            if (Path(folder) / name).is_symlink():
                problems.append(IngestProblem(str(Path(folder) / name), None, _LINKED_FOLDER))
            else:
                kept.append(name)
        dirnames[:] = kept
        for name in sorted(filenames):
            if name.startswith(".") or Path(name).suffix.lower() not in suffixes:
                continue
            full = Path(folder) / name
            relative = full.relative_to(path).as_posix()
            target = full
            if full.is_symlink():
                real = _real(full)
                if real is not None and not real.is_relative_to(root):
                    message = f"links to {real}, outside the folder being read; not read"
                    problems.append(IngestProblem(str(full), None, message))
                    continue
                target = real or full  # a broken link: read_bytes says so
            found.append(SourceFile(target, str(full), relative))
    if not found and not problems:
        problems.append(
            IngestProblem(
                str(path), None, f"no {what} found in this folder (looked for {accepted})"
            )
        )
    return found, problems


_LINKED_FOLDER = (
    "folder is a symbolic link, which ingest does not follow; skipped "
    "(ingest the folder it points to on its own)"
)


def _real(path: Path) -> Path | None:
    """Where ``path`` really is, every link resolved; None for a broken or looping link."""
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):
        return None


def read_bytes(source: SourceFile) -> bytes:
    """The whole file, or RecordError when it is unreadable or over MAX_FILE_BYTES.

    ``source.path`` has its links resolved already; it is opened without following a link, so
    one swapped in since the folder was listed is refused rather than read.
    """
    try:
        # O_NONBLOCK: a FIFO named like an article must not hang the ingest waiting for a writer.
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(source.path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise RecordError(
                "not a regular file (a broken link or a special file); skipped"
            ) from exc
        raise RecordError(f"cannot read file: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise RecordError("not a regular file (a broken link or a special file); skipped")
            if info.st_size > MAX_FILE_BYTES:
                raise RecordError(_too_big(info.st_size))
            # Read one byte past the limit: a file can grow after stat().
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise RecordError(f"cannot read file: {exc.strerror or exc}") from exc
    if len(data) > MAX_FILE_BYTES:
        raise RecordError(_too_big(len(data)))
    return data


def read_each(
    files: Sequence[SourceFile], result: IngestResult[Any], progress: Progress | None = None
) -> Iterator[tuple[SourceFile, bytes]]:
    """Each readable file with its bytes; an unreadable one becomes a problem in ``result``."""
    for done, source in enumerate(files, start=1):
        try:
            data = read_bytes(source)
        except RecordError as exc:
            result.problems.append(IngestProblem(source.shown, exc.line, str(exc)))
        else:
            result.files_read += 1
            yield source, data
        if progress is not None:
            progress(done, len(files))


def _too_big(size: int) -> str:
    return (
        f"file is {describe_size(size)}, over the limit of {MAX_FILE_BYTES:,} bytes; "
        "split it into smaller files"
    )


def utf8_error_position(data: bytes, error: UnicodeDecodeError) -> tuple[int, str]:
    """The 1-based line of the first bad byte and a phrase describing it."""
    line = data.count(b"\n", 0, error.start) + 1
    bad = data[error.start : error.start + 1].hex()
    return line, f"byte 0x{bad} at offset {error.start}"
