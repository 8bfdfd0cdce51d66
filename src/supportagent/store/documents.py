"""Writing documents: insert or replace by id, but never replace what must not go silently.

Re-ingesting a folder replaces its articles, and that is the point. Two replacements are not:
a document of another kind under the same id (a KB article ``RT-1001`` over the resolved ticket
``RT-1001``), and an answer a reviewer approved (``AR-...``, whose history is in the audit log).
Those are refused, or, when the caller asks for it, done with an audit event each.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import sqlalchemy as sa

from supportagent.domain import Document
from supportagent.store import tables as t
from supportagent.store.audit import append_event
from supportagent.store.audit_seal import AuditSeal

#: Where the review loop's resolved records come from (see ``review._resolved_record``).
REVIEWED_SOURCE_PREFIX = "review:"
REPLACE_EVENT = "document.replace"

_CHUNK = 500


@dataclass(frozen=True, slots=True)
class DocumentClash:
    """A document that would replace one it must not replace without being asked."""

    doc_id: str
    kind: str
    existing_kind: str
    existing_source: str
    why: Literal["kind", "reviewed"]

    def describe(self) -> str:
        if self.why == "kind":
            return (
                f"document {self.doc_id} would replace the {self.existing_kind} document "
                f"{self.doc_id} (from {self.existing_source or 'an earlier ingest'}) with a "
                f"{self.kind} document"
            )
        return (
            f"document {self.doc_id} would replace an answer a reviewer approved "
            f"({self.existing_source})"
        )


@dataclass(frozen=True, slots=True)
class Written:
    added: int
    updated: int
    refused: tuple[DocumentClash, ...]
    replaced: tuple[DocumentClash, ...]
    #: The audit chain's head after the replacement events, if any were appended.
    head: tuple[int, str] | None


def document_values(doc: Document, now: datetime) -> dict[str, Any]:
    """The ``documents`` row of ``doc`` but its id (the key to insert under or update)."""
    return {
        "kind": doc.kind.value,
        "title": doc.title,
        "body": doc.body,
        "source": doc.source,
        "linked_docs": list(doc.linked_docs),
        "meta": doc.meta,
        "added_at": now,
    }


def write_documents(
    conn: sa.Connection,
    docs: Sequence[Document],
    *,
    replace: bool,
    actor: str,
    seal: AuditSeal,
) -> Written:
    """Insert or replace ``docs`` inside the caller's transaction (see the module docstring)."""
    now = datetime.now(UTC)
    existing = _existing(conn, [d.id for d in docs])
    added = updated = 0
    refused: list[DocumentClash] = []
    replaced: list[DocumentClash] = []
    head: tuple[int, str] | None = None
    for doc in docs:
        values = document_values(doc, now)
        old = existing.get(doc.id)
        if old is None:
            conn.execute(t.documents.insert().values(id=doc.id, **values))
            added += 1
            continue
        clash = _clash(doc, old)
        if clash is not None and not replace:
            refused.append(clash)
            continue
        conn.execute(t.documents.update().where(t.documents.c.id == doc.id), values)
        updated += 1
        if clash is not None:
            replaced.append(clash)
            head = _audit_replacement(conn, clash, doc, old, actor, seal)
    return Written(added, updated, tuple(refused), tuple(replaced), head)


def _existing(conn: sa.Connection, ids: Sequence[str]) -> dict[str, Mapping[str, Any]]:
    found: dict[str, Mapping[str, Any]] = {}
    c = t.documents.c
    columns = (c.id, c.kind, c.source, c.body, c.meta)
    for start in range(0, len(ids), _CHUNK):
        chunk = list(ids[start : start + _CHUNK])
        query = sa.select(*columns).where(t.documents.c.id.in_(chunk))
        found.update({row.id: row._mapping for row in conn.execute(query)})
    return found


def _clash(doc: Document, old: Mapping[str, Any]) -> DocumentClash | None:
    kind, source = str(old["kind"]), str(old["source"] or "")
    if kind != doc.kind.value:
        return DocumentClash(doc.id, doc.kind.value, kind, source, "kind")
    if source.startswith(REVIEWED_SOURCE_PREFIX) and doc.source != source:
        return DocumentClash(doc.id, doc.kind.value, kind, source, "reviewed")
    return None


def _audit_replacement(
    conn: sa.Connection,
    clash: DocumentClash,
    doc: Document,
    old: Mapping[str, Any],
    actor: str,
    seal: AuditSeal,
) -> tuple[int, str]:
    meta = old["meta"] or {}
    ticket_id = str(meta.get("ticket_id", "")) if isinstance(meta, dict) else ""
    payload = {
        "status": "replaced",
        "reason": f"{clash.describe()}; replaced on request",
        "document_id": doc.id,
        "kind": doc.kind.value,
        "source": doc.source,
        "sha256": _sha256(doc.body),
        "replaced_kind": clash.existing_kind,
        "replaced_source": clash.existing_source,
        "replaced_sha256": _sha256(str(old["body"])),
    }
    return append_event(conn, REPLACE_EVENT, ticket_id, actor, payload, seal=seal)


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
