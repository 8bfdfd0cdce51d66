"""Verifying the audit chain: walk it, and name every edited or deleted event.

An edited event no longer matches its own hash, or (when its hash was recomputed) the hash the
next event recorded for it. A deleted event leaves a gap in the sequence numbers, or, at the end,
a head that records more events than there are. An anchor (``seq:hash`` kept elsewhere) catches
a rewrite of the whole chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from supportagent.store.audit import GENESIS, HEAD_ID, audit_events, audit_head, event_hash


@dataclass(frozen=True, slots=True)
class AuditProblem:
    """One break in the chain; ``seq`` names the event that was edited or deleted."""

    seq: int
    kind: str  # "edited" | "deleted" | "anchor"
    message: str


@dataclass(frozen=True, slots=True)
class VerifyReport:
    events: int
    head_seq: int
    head_hash: str
    problems: tuple[AuditProblem, ...] = field(default=())

    @property
    def intact(self) -> bool:
        return not self.problems


def verify(engine: sa.Engine, anchor: tuple[int, str] | None = None) -> VerifyReport:
    """Walk the chain; report each edited or deleted event by its sequence number.

    ``anchor`` (``seq``, ``hash``): a pair recorded earlier outside the database; the event at
    ``seq`` must still carry that hash.
    """
    with engine.connect() as conn:
        # The head first: events appended after this read are not judged against it.
        head = conn.execute(sa.select(audit_head).where(audit_head.c.id == HEAD_ID)).first()
        query = sa.select(audit_events).order_by(audit_events.c.seq)
        if head is not None:
            query = query.where(audit_events.c.seq <= head.last_seq)
        walk = _ChainWalk()
        for mapping in conn.execute(query).mappings():
            walk.step(dict(mapping))
    problems = walk.problems
    if head is None:
        problems.append(AuditProblem(0, "deleted", "the chain head row is missing"))
        head_seq, head_hash = walk.last_seq, walk.last_hash
    else:
        head_seq, head_hash = int(head.last_seq), str(head.last_hash)
        if head_seq > walk.last_seq:
            problems.append(_deleted(walk.last_seq + 1, head_seq, walk.prev, None))
        elif head_hash != walk.last_hash and walk.prev is not None:
            walk.flag_edited(walk.prev, "the chain head recorded a different hash for it")
    if anchor is not None:
        seq, expected_hash = anchor
        found = walk.hashes.get(seq)
        if found is None:
            problems.append(AuditProblem(seq, "anchor", f"event {seq}, the anchor, is missing"))
        elif found != expected_hash:
            problems.append(
                AuditProblem(seq, "anchor", f"event {seq} no longer carries the anchor's hash")
            )
    problems.sort(key=lambda p: p.seq)
    return VerifyReport(walk.count, head_seq, head_hash, tuple(problems))


class _ChainWalk:
    """State of a walk along the chain, one event at a time."""

    def __init__(self) -> None:
        self.count = 0
        self.last_seq = 0
        self.last_hash = GENESIS
        self.prev: dict[str, Any] | None = None
        self.problems: list[AuditProblem] = []
        self.edited: set[int] = set()
        self.hashes: dict[int, str] = {}

    def step(self, row: dict[str, Any]) -> None:
        seq = int(row["seq"])
        if seq > self.last_seq + 1:
            self.problems.append(_deleted(self.last_seq + 1, seq - 1, self.prev, row))
        elif row["prev_hash"] != self.last_hash and self.prev is not None:
            # The link is broken but both rows are there: the row before was re-hashed.
            self.flag_edited(self.prev, f"event {seq} recorded a different hash for it")
        fields = [row[c] for c in ("created_at", "ticket_id", "event", "actor", "payload")]
        if event_hash(seq, row["prev_hash"], *fields) != row["hash"]:
            self.flag_edited(row, "its content no longer matches its hash")
        self.count += 1
        self.last_seq, self.last_hash, self.prev = seq, str(row["hash"]), row
        self.hashes[seq] = self.last_hash

    def flag_edited(self, row: dict[str, Any], why: str) -> None:
        seq = int(row["seq"])
        if seq not in self.edited:
            self.edited.add(seq)
            self.problems.append(
                AuditProblem(
                    seq,
                    "edited",
                    f"event {seq} ({row['event']}, ticket {row['ticket_id']}) was edited: {why}",
                )
            )


def _deleted(
    first: int, last: int, before: Mapping[str, Any] | None, after: Mapping[str, Any] | None
) -> AuditProblem:
    span = f"event {first}" if first == last else f"events {first} to {last}"
    where = []
    if before is not None:
        where.append(f"after event {before['seq']} (ticket {before['ticket_id']})")
    if after is not None:
        where.append(f"before event {after['seq']} (ticket {after['ticket_id']})")
    else:
        where.append("at the end of the chain")
    verb = "is" if first == last else "are"
    return AuditProblem(first, "deleted", f"{span} {verb} missing (deleted), {', '.join(where)}")
