"""Turn raw rows into Tickets and resolved-ticket Documents, one problem per unusable row."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from supportagent.domain import (
    MAX_CREATED_AT_CHARS,
    MAX_CUSTOMER_CHARS,
    DocKind,
    Document,
    Ticket,
    resolved_body,
)
from supportagent.ingest.common import (
    IdRegistry,
    IngestProblem,
    IngestResult,
    Progress,
    RecordError,
    SourceFile,
    clean_text,
    coerce_id,
    collect_files,
    first_line,
    flagged_meta,
    read_each,
    show,
    type_name,
)
from supportagent.ingest.jira import jira_ticket_fields
from supportagent.ingest.records import RECORD_SUFFIXES, RawRow, parse_records

R = TypeVar("R")

#: Highest ticket priority; 0 is the default and the lowest.
MAX_PRIORITY = 3
#: Subjects and titles derived from a longer text keep this many characters.
DERIVED_TITLE_CHARS = 120

_LINK_SEPARATORS = re.compile(r"[;,]")

RowBuilder = Callable[[str, dict[str, object], SourceFile], R]
#: Renames a row's fields before it is built (Jira's names to ours, for tickets); it is told
#: the row's fields and the line where the row starts.
FieldMapper = Callable[[dict[str, object], int], dict[str, object]]


def read_tickets(path: Path, progress: Progress | None = None) -> IngestResult[Ticket]:
    """Tickets from a JSON list, JSONL or CSV file, or from every such file under a folder.

    A JSON file may also hold one ticket; Jira's field names (``key``, ``summary``,
    ``description``, ``priority`` names, ``fields``) are read as ours."""
    return _read_rows(
        path, "ticket files", _ticket, progress, lambda f, _line: jira_ticket_fields(f)
    )


def read_batch(path: Path, progress: Progress | None = None) -> IngestResult[Ticket]:
    """Tickets for ``triage --batch``: as :func:`read_tickets`, but ``ticket_id`` is read as
    ``id``, and a row with neither is named after its line (``row-7``), since a batch of
    questions often has no ids of its own."""
    return _read_rows(path, "ticket files", _ticket, progress, _batch_fields)


def _batch_fields(fields: dict[str, object], line: int) -> dict[str, object]:
    # A CSV has every column on every row: an empty cell means the field is not given.
    given = {k: v for k, v in fields.items() if not (isinstance(v, str) and not v.strip())}
    out = jira_ticket_fields(given)
    if out.get("id") is None:
        out["id"] = out.get("ticket_id") if out.get("ticket_id") is not None else f"row-{line}"
    return out


def read_resolved(path: Path, progress: Progress | None = None) -> IngestResult[Document]:
    """Resolved tickets (question and accepted answer) as documents, from the same formats."""
    return _read_rows(path, "resolved-ticket files", _resolved, progress)


def _read_rows(
    path: Path,
    what: str,
    build: RowBuilder[R],
    progress: Progress | None,
    mapper: FieldMapper | None = None,
) -> IngestResult[R]:
    files, problems = collect_files(path, RECORD_SUFFIXES, what)
    result: IngestResult[R] = IngestResult(problems=problems)
    ids = IdRegistry()
    for source, data in read_each(files, result, progress):
        for item in parse_records(source, data):
            if isinstance(item, IngestProblem):
                result.problems.append(item)
                continue
            if mapper is not None:
                item = RawRow(item.line, mapper(item.fields, item.line))
            try:
                result.records.append(_build_row(item, source, ids, build))
            except RecordError as exc:
                result.problems.append(IngestProblem(source.shown, item.line, str(exc)))
    return result


def _build_row(row: RawRow, source: SourceFile, ids: IdRegistry, build: RowBuilder[R]) -> R:
    raw_id = row.fields.get("id")
    if raw_id is None:
        raise RecordError("missing required field 'id'")
    record_id = coerce_id(raw_id)
    # Claim before validating the rest: whether a row repeats an id should not depend on
    # whether an earlier copy had some other fault.
    ids.claim(record_id, source.shown, row.line)
    return build(record_id, row.fields, source)


# --- tickets --------------------------------------------------------------------------------


def _ticket(record_id: str, fields: dict[str, object], source: SourceFile) -> Ticket:
    subject = _optional_text(fields, "subject")
    body = _optional_text(fields, "body")
    if body is None:
        body = _optional_text(fields, "ticket_text")
    if subject is None and body is None:
        raise RecordError(
            "missing required fields: give 'subject' and 'body', or a single 'ticket_text'"
        )
    if subject is None:
        subject = first_line(body or "", DERIVED_TITLE_CHARS)
    return Ticket(
        id=record_id,
        subject=subject,
        body=body or "",
        priority=_priority(fields.get("priority")),
        customer=_optional_label(fields, "customer", MAX_CUSTOMER_CHARS, allow_int=True),
        created_at=_optional_label(fields, "created_at", MAX_CREATED_AT_CHARS, allow_int=False),
    )


def _priority(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return 0
        # Length first: int() refuses strings of thousands of digits with a ValueError.
        if len(text) <= 3 and text.isascii() and text.isdigit():
            value = int(text)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_PRIORITY:
        return value
    shown = show(value) if isinstance(value, str) else _show_value(value)
    raise RecordError(f"priority must be a whole number from 0 to {MAX_PRIORITY}, not {shown}")


# --- resolved tickets -----------------------------------------------------------------------


def _resolved(record_id: str, fields: dict[str, object], source: SourceFile) -> Document:
    question = _required_text(fields, "question")
    answer = _required_text(fields, "answer", alias="accepted_answer")
    title = _optional_text(fields, "title") or first_line(question, DERIVED_TITLE_CHARS)
    return Document(
        id=record_id,
        kind=DocKind.RESOLVED,
        title=title,
        body=resolved_body(question, answer),
        source=source.relative,
        linked_docs=_linked_docs(fields.get("linked_docs")),
        meta={"question": question, "answer": answer, **flagged_meta(answer)},
    )


def _linked_docs(value: object) -> tuple[str, ...]:
    """Document ids from a list, or from a ';' or ',' separated string (as CSV cells hold)."""
    if value is None:
        return ()
    if isinstance(value, str):
        items: list[object] = [part for part in _LINK_SEPARATORS.split(value) if part.strip()]
    elif isinstance(value, list):
        items = value
    else:
        raise RecordError(
            f"linked_docs must be a list of ids or a ';'-separated string, not {type_name(value)}"
        )
    ids = (coerce_id(item, "linked_docs entry") for item in items)
    return tuple(dict.fromkeys(ids))


# --- fields ---------------------------------------------------------------------------------


def _optional_text(fields: dict[str, object], name: str) -> str | None:
    """The normalised text of a field, None when absent or null."""
    value = fields.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise RecordError(f"field '{name}' must be text, not {type_name(value)}")
    return clean_text(name, value)


def _required_text(fields: dict[str, object], name: str, alias: str | None = None) -> str:
    """The normalised, non-empty text of ``name`` (or of ``alias`` when ``name`` is absent)."""
    used = name if fields.get(name) is not None or alias is None else alias
    value = _optional_text(fields, used)
    if value is None:
        also = f" (or '{alias}')" if alias else ""
        raise RecordError(f"missing required field '{name}'{also}")
    if not value:
        raise RecordError(f"field '{used}' is empty")
    return value


def _optional_label(
    fields: dict[str, object], name: str, max_chars: int, *, allow_int: bool
) -> str | None:
    """A short optional string field of at most ``max_chars`` characters; empty means absent.

    The limit is the store's column width, checked here so that a long value is one rejected
    row on every database (PostgreSQL would refuse the whole insert; SQLite would keep it).
    """
    value = fields.get(name)
    if allow_int and isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if value is not None and not isinstance(value, str):
        kind = "text or a whole number" if allow_int else "text"
        raise RecordError(f"field '{name}' must be {kind}, not {type_name(value)}")
    text = _optional_text({name: value}, name)
    if text is not None and len(text) > max_chars:
        raise RecordError(
            f"field '{name}' is {len(text):,} characters long, over the limit of {max_chars}; "
            "shorten it"
        )
    return text or None


def _show_value(value: object) -> str:
    if isinstance(value, bool | int | float):
        return repr(value)
    return type_name(value)
