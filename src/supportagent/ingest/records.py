"""Split JSON, JSONL and CSV files into raw rows (field dicts with their line numbers).

This layer knows file formats, not tickets: it reports malformed lines, bad bytes and rows of
the wrong shape, and hands every well-formed object on with the line where it starts.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass

from supportagent.ingest.common import (
    MAX_FILE_BYTES,
    IngestProblem,
    SourceFile,
    show,
    type_name,
    utf8_error_position,
)

JSON_SUFFIXES = frozenset({".json"})
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
CSV_SUFFIXES = frozenset({".csv"})
RECORD_SUFFIXES = JSON_SUFFIXES | JSONL_SUFFIXES | CSV_SUFFIXES

#: Keys under which a JSON object may hold its list of records.
WRAPPER_KEYS = ("tickets", "records")
#: Keys that make a JSON object one record on its own (``key``: a Jira issue's).
RECORD_ID_KEYS = ("id", "key")

_JSON_WHITESPACE = " \t\n\r"


@dataclass(frozen=True)
class RawRow:
    """One object from a file: its fields as parsed, and the 1-based line where it starts."""

    line: int
    fields: dict[str, object]


Parsed = RawRow | IngestProblem


def parse_records(source: SourceFile, data: bytes) -> list[Parsed]:
    """The rows of ``data`` in file order, with a problem in place of each unusable one."""
    if source.suffix in CSV_SUFFIXES:
        return _csv_rows(source.shown, data)
    if source.suffix in JSONL_SUFFIXES:
        return _jsonl_rows(source.shown, data)
    return _json_rows(source.shown, data)


def _as_row(file: str, line: int, value: object) -> Parsed:
    if not isinstance(value, dict):
        return IngestProblem(file, line, f"expected a JSON object {{...}}, got {type_name(value)}")
    return RawRow(line, value)


# --- JSONL ----------------------------------------------------------------------------------


def _jsonl_rows(file: str, data: bytes) -> list[Parsed]:
    out: list[Parsed] = []
    # Decode line by line so one bad byte costs one line, not the file.
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if number == 1:
            raw = raw.removeprefix(b"\xef\xbb\xbf")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = raw[exc.start : exc.start + 1].hex()
            out.append(
                IngestProblem(
                    file,
                    number,
                    f"line is not valid UTF-8 (byte 0x{bad} at column {exc.start + 1}); "
                    "save the file as UTF-8",
                )
            )
            continue
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            out.append(
                IngestProblem(
                    file,
                    number,
                    f"malformed JSON: {exc.msg} (column {exc.colno}); "
                    "each line must hold one complete JSON object",
                )
            )
            continue
        except (ValueError, RecursionError) as exc:
            # Integers too long to convert, nesting too deep for the parser.
            out.append(IngestProblem(file, number, f"malformed JSON: {exc}"))
            continue
        out.append(_as_row(file, number, value))
    # An empty JSONL file is a valid empty list, like "[]" in a JSON file: not a problem.
    return out


# --- JSON -----------------------------------------------------------------------------------


def _json_rows(file: str, data: bytes) -> list[Parsed]:
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line, where = utf8_error_position(data, exc)
        return [IngestProblem(file, line, f"file is not valid UTF-8 ({where}); save it as UTF-8")]
    if not text.strip():
        return [IngestProblem(file, None, "file is empty; expected a JSON list of objects")]
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        message = f"invalid JSON: {exc.msg} (column {exc.colno}); nothing in this file was read"
        return [IngestProblem(file, exc.lineno, message)]
    except (ValueError, RecursionError) as exc:
        return [IngestProblem(file, None, f"invalid JSON: {exc}; nothing in this file was read")]

    if isinstance(value, list):
        items: list[object] = value
        key = None
    elif isinstance(value, dict) and any(isinstance(value.get(k), list) for k in WRAPPER_KEYS):
        key = next(k for k in WRAPPER_KEYS if isinstance(value.get(k), list))
        items = value[key]
    elif isinstance(value, dict) and any(k in value for k in RECORD_ID_KEYS):
        # One record per file, as exports that write a file per ticket or article lay it out.
        return [RawRow(text.count("\n", 0, _skip_ws(text, 0)) + 1, value)]
    else:
        keys = " or ".join(f"'{k}'" for k in WRAPPER_KEYS)
        ids = " or ".join(f"'{k}'" for k in RECORD_ID_KEYS)
        message = (
            f"expected a JSON list of objects, an object with a {keys} list, or one record "
            f"(an object with an {ids}); got {type_name(value)}"
        )
        if isinstance(value, dict):
            message += f" without {ids}"
        return [IngestProblem(file, 1, message)]

    lines = _item_lines(text, key, len(items))
    return [_as_row(file, line, item) for line, item in zip(lines, items, strict=True)]


def _item_lines(text: str, key: str | None, count: int) -> list[int]:
    """The line where each list item starts; item index + 1 if the text cannot be mapped."""
    try:
        offsets = _list_offsets(text, key)
    except (ValueError, IndexError, RecursionError):
        offsets = None
    if offsets is None or len(offsets) != count:
        return list(range(1, count + 1))
    lines: list[int] = []
    line, previous = 1, 0
    for offset in offsets:  # ascending, so count newlines incrementally
        line += text.count("\n", previous, offset)
        previous = offset
        lines.append(line)
    return lines


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _JSON_WHITESPACE:
        pos += 1
    return pos


def _list_offsets(text: str, key: str | None) -> list[int] | None:
    """Offsets of the items of the top-level list, or of the list under ``key``.

    Runs only on text ``json.loads`` already accepted, so the structure is known to be valid.
    """
    decoder = json.JSONDecoder()
    pos = _skip_ws(text, 0)
    if key is None:
        return _array_items(text, pos, decoder)[0]
    found: list[int] | None = None
    pos = _skip_ws(text, pos + 1)  # past "{"
    if text[pos] == "}":
        return None
    while True:
        name, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, _skip_ws(text, pos) + 1)  # past ":"
        if name == key and text[pos] == "[":
            # A repeated key: json.loads keeps the last value, and so do we.
            found, pos = _array_items(text, pos, decoder)
        else:
            _, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if text[pos] == "}":
            return found
        pos = _skip_ws(text, pos + 1)  # past ","


def _array_items(text: str, pos: int, decoder: json.JSONDecoder) -> tuple[list[int], int]:
    starts: list[int] = []
    pos = _skip_ws(text, pos + 1)  # past "["
    if text[pos] == "]":
        return starts, pos + 1
    while True:
        starts.append(pos)
        _, pos = decoder.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if text[pos] == "]":
            return starts, pos + 1
        pos = _skip_ws(text, pos + 1)  # past ","


# --- CSV ------------------------------------------------------------------------------------


def _csv_rows(file: str, data: bytes) -> list[Parsed]:
    _allow_large_csv_fields()
    # surrogateescape keeps bad bytes as markers, so the rows around them still parse and
    # each bad row can be reported on its own.
    text = data.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        message = "file is empty; expected a header row and one row per record"
        return [IngestProblem(file, None, message)]

    out: list[Parsed] = []
    reader = csv.reader(_physical_lines(text))
    header: list[str] | None = None
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            out.append(IngestProblem(file, start, f"cannot parse this CSV row: {exc}"))
            continue
        if not any(cell.strip() for cell in row):
            continue
        bad = _first_bad_byte(row)
        if header is None:
            header_problem = _header_problem(row, bad)
            if header_problem:
                out.append(IngestProblem(file, start, header_problem))
                return out
            header = [name.strip().lower() for name in row]
            continue
        if bad is not None:
            column, byte = bad
            name = header[column] if column < len(header) else f"#{column + 1}"
            message = (
                f"row is not valid UTF-8 (byte 0x{byte:02x} in column '{name}'); "
                "save the file as UTF-8"
            )
            out.append(IngestProblem(file, start, message))
            continue
        if len(row) != len(header):
            message = (
                f"row has {len(row)} fields but the header has {len(header)}; quote values "
                "that contain commas or line breaks, and check for an unclosed quote"
            )
            out.append(IngestProblem(file, start, message))
            continue
        out.append(RawRow(start, dict(zip(header, row, strict=True))))
    return out


def _header_problem(row: list[str], bad: tuple[int, int] | None) -> str | None:
    if bad is not None:
        return f"header row is not valid UTF-8 (byte 0x{bad[1]:02x}); save the file as UTF-8"
    names = [name.strip().lower() for name in row]
    if len(names) == 1:
        hint = _delimiter_hint(row[0])
        if hint:
            return hint
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        listed = ", ".join(f"'{name}'" for name in repeated)
        return f"header repeats column {listed}; give each column a different name"
    return None


#: Separators that spreadsheets write instead of commas, and how to name them.
_OTHER_DELIMITERS = ((";", "semicolons"), ("\t", "tabs"), ("|", "'|' characters"))


def _delimiter_hint(header: str) -> str | None:
    """For a one-column header that holds another separator, what to do about it."""
    for delimiter, name in _OTHER_DELIMITERS:
        if delimiter in header:
            shown = show(header.replace("\t", " "))
            return (
                f"the header is a single column, {shown}: this file separates values with "
                f"{name}, but CSV files are read with commas; save it with commas as the "
                "separator (or as JSONL)"
            )
    return None


def _physical_lines(text: str) -> Iterator[str]:
    # Not str.splitlines: it also breaks on form feeds and Unicode separators, which would
    # make the reader's line numbers drift from what an editor shows.
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end == -1:
            yield text[start:]
            return
        yield text[start : end + 1]
        start = end + 1


def _first_bad_byte(row: list[str]) -> tuple[int, int] | None:
    """Column index and value of the first undecodable byte (a surrogate escape), if any."""
    for column, cell in enumerate(row):
        for ch in cell:
            if "\udc80" <= ch <= "\udcff":
                return column, ord(ch) - 0xDC00
    return None


def _allow_large_csv_fields() -> None:
    # The csv module refuses fields over 128 KiB by default, below our own per-field limit,
    # which we want to enforce with a clear message. The setting is process-wide, so only
    # ever raise it.
    if csv.field_size_limit() < MAX_FILE_BYTES:
        csv.field_size_limit(MAX_FILE_BYTES)
