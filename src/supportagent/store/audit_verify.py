"""Verifying the audit chain: name every edited, inserted, deleted or forged event, and say what
the check proves and what it cannot.

What is checked, from one consistent snapshot of the database:

- the chain: each event matches its own hash and links to the one before; the head row matches
  the last event; no event lies past the head (nothing but an append moves the head);
- the key, when ``SUPPORTAGENT_AUDIT_KEY`` is set: every event's MAC and the head's;
- the head file: each line's event still carries the hash it recorded (``audit_seal``);
- an anchor given by the user (``seq:hash`` kept elsewhere);
- tampering that appends found and recorded as ``audit.tamper`` events.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from supportagent.store.audit import (
    GENESIS,
    HEAD_ID,
    NO_SEAL,
    TAMPER_EVENT,
    audit_events,
    audit_head,
    event_hash,
)
from supportagent.store.audit_proof import HeadFileCheck, MacCheck, describe_proof
from supportagent.store.audit_seal import AuditSeal

#: Rows past the head named one by one; the rest are counted.
_MAX_NAMED = 20
#: How long verify waits for a just-committed append to write its head-file line.
_SETTLE_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class AuditProblem:
    """One break in the log; ``seq`` names the event that was edited, deleted or forged."""

    seq: int
    kind: str  # "edited" | "deleted" | "forged" | "head" | "tamper" | "anchor" | "key"
    message: str


@dataclass(frozen=True, slots=True)
class VerifyReport:
    events: int
    head_seq: int
    head_hash: str
    problems: tuple[AuditProblem, ...] = field(default=())
    #: What this verify proves (when intact) and what it cannot, in words.
    proves: tuple[str, ...] = field(default=())
    cannot: tuple[str, ...] = field(default=())

    @property
    def intact(self) -> bool:
        return not self.problems


def verify(
    engine: sa.Engine, anchor: tuple[int, str] | None = None, seal: AuditSeal | None = None
) -> VerifyReport:
    """Walk the chain; report each problem by the sequence number of the event concerned.

    ``anchor`` (``seq``, ``hash``): a pair recorded earlier outside the database; the event at
    ``seq`` must still carry that hash. ``seal``: the key and head file to check against.
    """
    seal = seal or NO_SEAL
    with engine.connect() as conn:
        _snapshot(conn)
        head = conn.execute(sa.select(audit_head).where(audit_head.c.id == HEAD_ID)).first()
        walk = _ChainWalk(seal)
        past: list[Mapping[str, Any]] = []
        for mapping in conn.execute(sa.select(audit_events).order_by(audit_events.c.seq)):
            row: Mapping[str, Any] = dict(mapping._mapping)
            if head is not None and int(row["seq"]) > int(head.last_seq):
                past.append(row)
            else:
                walk.step(row)
    problems = walk.problems
    if head is None:
        problems.append(AuditProblem(0, "head", "the chain head row is missing (deleted)"))
        head_seq, head_hash, head_mac = walk.last_seq, walk.last_hash, None
    else:
        head_seq, head_hash, head_mac = int(head.last_seq), str(head.last_hash), head.mac
        if head_seq > walk.last_seq:
            problems.append(_deleted(walk.last_seq + 1, head_seq, walk.prev, None))
        elif head_hash != walk.last_hash and walk.prev is not None:
            walk.flag_edited(walk.prev, "the chain head recorded a different hash for it")
        elif head_hash != walk.last_hash:
            problems.append(
                AuditProblem(
                    0,
                    "head",
                    "the chain head was rewritten: it names an event although the log is empty",
                )
            )
    problems.extend(_past_the_head(past, head_seq))
    macs = walk.mac_check(head_seq, head_hash, head_mac)
    problems.extend(macs.problems)
    files = _check_head_file(seal, walk.hashes, head_seq)
    problems.extend(files.problems)
    anchored = _check_anchor(anchor, walk.hashes, problems)
    problems.sort(key=lambda p: p.seq)
    proves, cannot = describe_proof(
        walk.count, head_seq, seal, macs, files, anchored, chain_ok=not problems
    )
    return VerifyReport(walk.count, head_seq, head_hash, tuple(problems), proves, cannot)


def _snapshot(conn: sa.Connection) -> None:
    """Read the head and the events from one snapshot, so appends meanwhile cannot confuse."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql("BEGIN")  # a deferred read transaction: one snapshot in WAL mode
    elif conn.dialect.name == "postgresql":
        conn.execute(sa.text("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"))


class _ChainWalk:
    """State of a walk along the chain, one event at a time."""

    def __init__(self, seal: AuditSeal) -> None:
        self.seal = seal
        self.count = 0
        self.last_seq = 0
        self.last_hash = GENESIS
        self.prev: Mapping[str, Any] | None = None
        self.problems: list[AuditProblem] = []
        self.edited: set[int] = set()
        self.hashes: dict[int, str] = {}
        self.macs = MacCheck()

    def step(self, row: Mapping[str, Any]) -> None:
        seq = int(row["seq"])
        if seq > self.last_seq + 1:
            self.problems.append(_deleted(self.last_seq + 1, seq - 1, self.prev, row))
        elif row["prev_hash"] != self.last_hash and self.prev is not None:
            # The link is broken but both rows are there: the row before was re-hashed.
            self.flag_edited(self.prev, f"event {seq} recorded a different hash for it")
        elif row["prev_hash"] != self.last_hash:
            self.flag_edited(row, "it is the first event but does not start the chain")
        fields = [row[c] for c in ("created_at", "ticket_id", "event", "actor", "payload")]
        if event_hash(seq, row["prev_hash"], *fields) != row["hash"]:
            self.flag_edited(row, "its content no longer matches its hash")
        self._check_mac(row, seq)
        if row["event"] == TAMPER_EVENT:
            self.problems.append(_recorded_tamper(row))
        self.count += 1
        self.last_seq, self.last_hash, self.prev = seq, str(row["hash"]), row
        self.hashes[seq] = self.last_hash

    def _check_mac(self, row: Mapping[str, Any], seq: int) -> None:
        mac, macs = row["mac"], self.macs
        if not self.seal.keyed:
            macs.unchecked += mac is not None
            return
        if mac is None:
            if macs.seen:
                macs.missing_after_keyed.append(seq)
            else:
                macs.before_key += 1
            return
        macs.seen = True
        if self.seal.matches(self.seal.event_mac(str(row["hash"])), str(mac)):
            macs.good += 1
            macs.last_good = seq
        else:
            macs.bad.append(seq)
            macs.bad_rows[seq] = (str(row["event"]), str(row["ticket_id"]))

    def mac_check(self, head_seq: int, head_hash: str, head_mac: str | None) -> MacCheck:
        """The MAC verdicts, the head's included, once the walk is over."""
        macs = self.macs
        if not self.seal.keyed:
            return macs
        if macs.bad and not macs.good:
            macs.problems.append(
                AuditProblem(
                    macs.bad[0],
                    "key",
                    "no event's MAC matches SUPPORTAGENT_AUDIT_KEY: it is not the key the log "
                    "was written with, or every MAC was forged",
                )
            )
            return macs
        for seq in macs.bad:
            event, ticket = macs.bad_rows[seq]
            self.flag_edited(
                {"seq": seq, "event": event, "ticket_id": ticket},
                "its MAC does not match (only a holder of the key can write one)",
            )
        for seq in macs.missing_after_keyed:
            macs.problems.append(
                AuditProblem(
                    seq,
                    "forged",
                    f"event {seq} carries no MAC although events before it do: it was written "
                    "without SUPPORTAGENT_AUDIT_KEY (forged, or by a process started without it)",
                )
            )
        expected = self.seal.head_mac(head_seq, head_hash)
        if head_mac is None and macs.seen:
            macs.problems.append(
                AuditProblem(
                    head_seq,
                    "head",
                    "the chain head carries no MAC: it was rewritten without the key",
                )
            )
        elif head_mac is not None and not self.seal.matches(expected, str(head_mac)):
            macs.problems.append(
                AuditProblem(
                    head_seq, "head", "the chain head was rewritten: its MAC does not match"
                )
            )
        else:
            macs.head_ok = head_mac is not None
        return macs

    def flag_edited(self, row: Mapping[str, Any], why: str) -> None:
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


def _past_the_head(rows: list[Mapping[str, Any]], head_seq: int) -> list[AuditProblem]:
    problems = [
        AuditProblem(
            int(row["seq"]),
            "forged",
            f"event {row['seq']} ({row['event']}, ticket {row['ticket_id'] or '-'}) lies past the "
            f"chain head (event {head_seq}): SupportAgent did not append it (inserted by hand, "
            "or the head was moved back); the next append sets it aside in audit_quarantine",
        )
        for row in rows[:_MAX_NAMED]
    ]
    if len(rows) > _MAX_NAMED:
        rest = len(rows) - _MAX_NAMED
        first = int(rows[_MAX_NAMED]["seq"])
        problems.append(AuditProblem(first, "forged", f"{rest} more rows lie past the chain head"))
    return problems


def _recorded_tamper(row: Mapping[str, Any]) -> AuditProblem:
    try:
        data = json.loads(str(row["payload"]))
    except ValueError:
        data = {}
    reason = str(data.get("reason", "tampering was found")) if isinstance(data, dict) else ""
    found = data.get("found", []) if isinstance(data, dict) else []
    named = "; ".join(
        f"row {f.get('seq')} ({f.get('event')}, ticket {f.get('ticket_id') or '-'})"
        for f in found[:3]
        if isinstance(f, dict)
    )
    more = f": {named}" if named else ""
    return AuditProblem(
        int(row["seq"]),
        "tamper",
        f"event {row['seq']} records tampering found at {row['created_at']}: {reason}{more}",
    )


def _check_head_file(seal: AuditSeal, hashes: Mapping[int, str], head_seq: int) -> HeadFileCheck:
    check = _compare_head_file(seal, hashes, head_seq)
    if check.behind:
        # An append that committed just before the snapshot may not have written its line yet
        # (the line follows the commit): look once more before calling the tail forged.
        time.sleep(_SETTLE_SECONDS)
        check = _compare_head_file(seal, hashes, head_seq)
    return check


def _compare_head_file(seal: AuditSeal, hashes: Mapping[int, str], head_seq: int) -> HeadFileCheck:
    found = seal.read_head_file()
    check = HeadFileCheck(found, complete=seal.head_file_complete)
    if found is None:
        return check
    for line in found.malformed[:3]:
        check.problems.append(
            AuditProblem(0, "head", f"head file {found.path}, line {line}, is not 'SEQ HASH'")
        )
    cut = [e for e in found.entries if e.seq > head_seq]
    if cut:
        last = max(e.seq for e in cut)
        check.problems.append(
            AuditProblem(
                head_seq + 1,
                "deleted",
                f"the head file records event {last}, but the chain head is at event {head_seq}: "
                f"events {head_seq + 1} to {last} were cut off and the head moved back",
            )
        )
    wrong = sorted(
        (e for e in found.entries if e.seq <= head_seq and hashes.get(e.seq) != e.digest),
        key=lambda e: e.seq,
    )
    if wrong:
        first = wrong[0]
        state = "is missing" if first.seq not in hashes else "no longer carries the hash"
        also = f"; {len(wrong) - 1} later lines disagree too" if len(wrong) > 1 else ""
        check.problems.append(
            AuditProblem(
                first.seq,
                "edited" if first.seq in hashes else "deleted",
                f"event {first.seq} {state} the head file recorded for it (line {first.line}): "
                f"it, or an event before it, was rewritten{also}",
            )
        )
    good = [e.seq for e in found.entries if e.seq <= head_seq and hashes.get(e.seq) == e.digest]
    check.vouched_through = max(good, default=0)
    if seal.head_file_complete and not cut and not wrong and check.vouched_through < head_seq:
        check.behind = True
        start = check.vouched_through + 1
        span = f"event {start} is" if start == head_seq else f"events {start} to {head_seq} are"
        check.problems.append(
            AuditProblem(
                start,
                "forged",
                f"{span} not in the head file {found.path}, which every "
                "append to this database records: they were appended by something other than "
                "SupportAgent, with the head moved to match (or the head file could not be "
                "written: see the warnings of the process that appended them)",
            )
        )
    return check


def _check_anchor(
    anchor: tuple[int, str] | None, hashes: Mapping[int, str], problems: list[AuditProblem]
) -> int | None:
    if anchor is None:
        return None
    seq, expected_hash = anchor
    found = hashes.get(seq)
    if found is None:
        problems.append(AuditProblem(seq, "anchor", f"event {seq}, the anchor, is missing"))
        return None
    if found != expected_hash:
        problems.append(
            AuditProblem(seq, "anchor", f"event {seq} no longer carries the anchor's hash")
        )
        return None
    return seq


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
