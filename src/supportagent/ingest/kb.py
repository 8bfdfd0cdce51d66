"""Read knowledge-base articles (markdown, HTML, plain text) into KB Documents."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

import yaml

from supportagent.domain import MAX_ID_CHARS, DocKind, Document
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
    flagged_meta,
    read_each,
    type_name,
    utf8_error_position,
)
from supportagent.ingest.html_text import HtmlError, html_to_text

MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
HTML_SUFFIXES = frozenset({".html", ".htm"})
TEXT_SUFFIXES = frozenset({".txt"})
KB_SUFFIXES = MARKDOWN_SUFFIXES | HTML_SUFFIXES | TEXT_SUFFIXES

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)^(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S | re.M)
_OPENING_FENCE = re.compile(r"\A---[ \t]*\n")
_H1 = re.compile(r"^ {0,3}#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_CODE_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_NOT_SLUG = re.compile(r"[^a-z0-9]+")

#: libyaml's safe loader when PyYAML was built with it (about 20 times faster on large front
#: matter), else the pure-Python one. Both build the same safe types and raise the same errors.
YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_kb(path: Path, progress: Progress | None = None) -> IngestResult[Document]:
    """Articles from one file, or from every article file under a folder (others skipped).

    ``progress(done, total)`` hears about each file as it is finished."""
    files, problems = collect_files(path, KB_SUFFIXES, "articles")
    result: IngestResult[Document] = IngestResult(problems=problems)
    ids = IdRegistry()
    for source, data in read_each(files, result, progress):
        try:
            document = read_article(source, data)
            ids.claim(document.id, source.shown, None)
        except RecordError as exc:
            result.problems.append(IngestProblem(source.shown, exc.line, str(exc)))
            continue
        result.records.append(document)
    return result


def read_article(source: SourceFile, data: bytes) -> Document:
    """One article from the bytes of ``source``; RecordError if it cannot be used."""
    text = _decode(data)
    meta: dict[str, Any] = {}
    if source.suffix in HTML_SUFFIXES:
        try:
            page = html_to_text(text)
        except HtmlError as exc:
            raise RecordError(f"{exc}; fix the page or export it again", exc.line) from exc
        title, body = page.title, page.text
    elif source.suffix in MARKDOWN_SUFFIXES:
        meta, body = split_front_matter(text)
        title = ""
    else:
        title, body = "", text

    body = clean_text("body", body)
    if not body:
        raise RecordError("article has no text; add some or remove the file")
    record_id = coerce_id(meta["id"]) if meta.get("id") is not None else slug_id(source.relative)
    title = _meta_title(meta) or clean_text("title", title) or markdown_title(body)
    return Document(
        id=record_id,
        kind=DocKind.KB,
        title=title or Path(source.relative).stem,
        body=body,
        source=source.relative,
        meta=flagged_meta(body),
    )


def _decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, where = utf8_error_position(data, exc)
        raise RecordError(f"file is not valid UTF-8 ({where}); save it as UTF-8", line) from exc
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """YAML front matter (between ``---`` lines at the top) as a dict, and the rest."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        if _OPENING_FENCE.match(text):
            raise RecordError(
                "front matter opened with '---' is never closed; end it with a '---' line", 1
            )
        return {}, text
    try:
        loaded = yaml.load(match.group(1), Loader=YAML_LOADER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # The YAML starts on line 2 of the file, after the opening '---'.
        line = mark.line + 2 if mark is not None else 1
        problem = getattr(exc, "problem", None) or "cannot parse it"
        raise RecordError(f"front matter is not valid YAML: {problem}", line) from exc
    except (ValueError, RecursionError) as exc:
        # PyYAML's safe constructors raise ValueError for values like "date: 2024-13-45".
        raise RecordError(f"front matter has a value that cannot be read: {exc}", 1) from exc
    if loaded is None:
        loaded = {}
    if not isinstance(loaded, dict):
        raise RecordError(f"front matter must be 'key: value' lines, not {type_name(loaded)}", 1)
    return loaded, text[match.end() :]


def _meta_title(meta: dict[str, Any]) -> str:
    value = meta.get("title")
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise RecordError(f"front matter 'title' must be text, not {type_name(value)}", 1)
    return clean_text("title", str(value))


def markdown_title(text: str) -> str:
    """The text of the first level-1 ``#`` heading outside code blocks, or ``""``."""
    in_code = False
    for line in text.split("\n"):
        if _CODE_FENCE.match(line):
            in_code = not in_code
            continue
        if not in_code:
            match = _H1.match(line)
            if match:
                return match.group(1).strip()
    return ""


def slug_id(relative: str) -> str:
    """An id made from a file's path inside the knowledge base: ``Billing/Refunds.md`` →
    ``billing-refunds``."""
    stem = str(Path(relative).with_suffix(""))
    ascii_text = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode("ascii")
    slug = _NOT_SLUG.sub("-", ascii_text.lower()).strip("-")
    slug = slug[:MAX_ID_CHARS].rstrip("-")
    if not slug:
        raise RecordError(
            "cannot make an id from this file name; rename it using letters or digits "
            "(or, for markdown, set 'id' in the front matter)"
        )
    return slug
