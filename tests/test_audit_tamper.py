"""Every way of tampering with the audit log, against every seal, on SQLite and PostgreSQL.

Each test tampers the way someone with write access to the database would (raw SQL on the
tables), then asserts what ``verify`` says: the problem it names, or, where a seal is missing,
that the report says what it cannot prove. Tampering that would once stop the system (a row
past the head, a missing head) must leave staging and review working.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from store_checks import empty_database, stage_draft
from supportagent.review import approve
from supportagent.store.audit import (
    GENESIS,
    TAMPER_EVENT,
    audit_events,
    audit_head,
    audit_quarantine,
    event_hash,
    export_csv,
    read_events,
)
from supportagent.store.audit_seal import AuditSeal
from supportagent.store.audit_verify import VerifyReport, verify
from supportagent.store.store import Store

KEY = b"k" * 16 + b"0123456789abcdef0123456789abcdef"
SEALS = ["chain", "file", "key"]


def make_seal(kind: str, folder: Path) -> AuditSeal:
    if kind == "chain":
        return AuditSeal()
    if kind == "file":
        return AuditSeal(head_file=folder / "audit-head.log", head_file_complete=True)
    return AuditSeal(key=KEY)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new SQLite file, or the module's PostgreSQL database emptied (cheaper than a new one)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'audit.db'}"
    shared = str(request.getfixturevalue("pg_module_url"))
    store = Store(shared)
    store.migrate()
    empty_database(store.engine)
    store.close()
    return shared


def open_sealed(url: str, seal: AuditSeal) -> Store:
    store = Store(url, audit=seal)
    store.migrate()
    return store


@pytest.fixture(params=SEALS)
def sealed(request: pytest.FixtureRequest, url: str, tmp_path: Path) -> Iterator[Store]:
    """A store with six events (five staged outcomes and one approval) under one seal."""
    store = open_sealed(url, make_seal(request.param, tmp_path))
    for n in range(1, 6):
        stage_draft(store, f"T-{n}")
    approve(store, None, "T-1", reviewer="ana")
    yield store
    store.close()


def kind_of(store: Store) -> str:
    if store.audit.keyed:
        return "key"
    return "file" if store.audit.head_file is not None else "chain"


def sql(store: Store, *statements: Any) -> None:
    with store.engine.begin() as conn:
        for statement in statements:
            conn.execute(statement)


def rows(store: Store) -> list[dict[str, Any]]:
    with store.engine.connect() as conn:
        query = sa.select(audit_events).order_by(audit_events.c.seq)
        return [dict(r) for r in conn.execute(query).mappings()]


def forge(seq: int, prev_hash: str, ticket_id: str = "T-2", event: str = "review.approve") -> dict:
    """A row as someone without the key would write it: a correct hash, linked to prev_hash."""
    fields = ("2025-01-01T00:00:00.000000+00:00", ticket_id, event, "mallory", '{"forged":true}')
    return {
        "seq": seq,
        "created_at": fields[0],
        "ticket_id": ticket_id,
        "event": event,
        "actor": "mallory",
        "payload": fields[4],
        "prev_hash": prev_hash,
        "hash": event_hash(seq, prev_hash, *fields),
        "mac": None,
    }


def rechain(store: Store, events: list[dict[str, Any]]) -> None:
    """Replace the whole log with ``events``, every hash recomputed and the head moved to match
    (no key, so no MACs): the strongest rewrite without the key."""
    prev = GENESIS
    rebuilt = []
    for seq, row in enumerate(events, start=1):
        fields = (row["created_at"], row["ticket_id"], row["event"], row["actor"], row["payload"])
        digest = event_hash(seq, prev, *fields)
        rebuilt.append({**row, "seq": seq, "prev_hash": prev, "hash": digest, "mac": None})
        prev = digest
    statements: list[Any] = [audit_events.delete()]
    if rebuilt:
        statements.append(audit_events.insert().values(rebuilt))
    statements.append(audit_head.update().values(last_seq=len(rebuilt), last_hash=prev, mac=None))
    sql(store, *statements)


def problems(report: VerifyReport) -> list[tuple[int, str]]:
    return [(p.seq, p.kind) for p in report.problems]


def text(report: VerifyReport) -> str:
    return " ".join(p.message for p in report.problems)


def cannot(report: VerifyReport) -> str:
    return " ".join(report.cannot)


def check(store: Store) -> VerifyReport:
    return verify(store.engine, seal=store.audit)


# --- what the chain alone catches, under every seal ---------------------------------------------


def test_an_untouched_log_is_intact_and_says_what_it_proves(sealed: Store) -> None:
    report = check(sealed)
    assert report.intact and report.events == report.head_seq == 6
    proven = " ".join(report.proves)
    assert "events 1 to 6 each match their hash" in proven
    kind = kind_of(sealed)
    assert ("valid MAC" in proven) is (kind == "key")
    assert ("the head file" in proven) is (kind == "file")
    assert ("no key" in cannot(report)) is (kind != "key")


def test_an_edited_event(sealed: Store) -> None:
    sql(sealed, audit_events.update().where(audit_events.c.seq == 3).values(actor="mallory"))
    report = check(sealed)
    assert problems(report) == [(3, "edited")]
    assert "event 3 (agent.staged, ticket T-3) was edited" in text(report)


def test_an_event_inserted_in_the_middle_without_rehashing(sealed: Store) -> None:
    all_rows = rows(sealed)
    # Make room at 4 (renumber 4..6 to 5..7, highest first) and put a forged row there.
    statements: list[Any] = [
        audit_events.update().where(audit_events.c.seq == seq).values(seq=seq + 1)
        for seq in (6, 5, 4)
    ]
    statements.append(audit_events.insert().values(forge(4, all_rows[2]["hash"])))
    statements.append(audit_head.update().values(last_seq=7))
    sql(sealed, *statements)
    report = check(sealed)
    assert not report.intact
    assert (5, "edited") in problems(report)  # the old event 4 no longer matches its number


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_deleted_event(sealed: Store, where: str) -> None:
    seq = {"first": 1, "middle": 3, "last": 6}[where]
    sql(sealed, audit_events.delete().where(audit_events.c.seq == seq))
    report = check(sealed)
    assert (seq, "deleted") in problems(report)
    assert f"event {seq} is missing (deleted)" in text(report)


def test_two_events_swapped(sealed: Store) -> None:
    sql(
        sealed,
        audit_events.update().where(audit_events.c.seq == 2).values(seq=-2),
        audit_events.update().where(audit_events.c.seq == 3).values(seq=2),
        audit_events.update().where(audit_events.c.seq == -2).values(seq=3),
    )
    report = check(sealed)
    assert {2, 3} <= {seq for seq, kind in problems(report) if kind == "edited"}


def test_the_head_rewritten_to_another_hash_or_further_on(sealed: Store) -> None:
    sql(sealed, audit_head.update().values(last_hash="f" * 64))
    assert (6, "edited") in problems(check(sealed))
    sql(sealed, audit_head.update().values(last_seq=9, last_hash=rows(sealed)[-1]["hash"]))
    report = check(sealed)
    assert (7, "deleted") in problems(report) and "events 7 to 9 are missing" in text(report)


# --- the red team's findings 1 and 2 --------------------------------------------------------------


def test_a_row_past_the_head_is_named_and_never_stops_staging_or_review(sealed: Store) -> None:
    """Finding 1: a forged review.approve at head + 1 broke every later append."""
    last = rows(sealed)[-1]
    sql(sealed, audit_events.insert().values(forge(7, last["hash"])))
    report = check(sealed)
    assert problems(report) == [(7, "forged")]
    assert "event 7 (review.approve, ticket T-2) lies past the chain head (event 6)" in text(report)
    # The system goes on: the next staging and the next review both append.
    stage_draft(sealed, "T-6")
    approve(sealed, None, "T-2", reviewer="bo")
    events = read_events(sealed.engine)
    assert [e["event"] for e in events[6:]] == [TAMPER_EVENT, "agent.staged", "review.approve"]
    assert "mallory" not in {e["actor"] for e in events}
    with sealed.engine.connect() as conn:
        kept = conn.execute(sa.select(audit_quarantine)).mappings().one()
    assert (kept["seq"], kept["actor"], kept["hash"]) == (
        7,
        "mallory",
        forge(7, last["hash"])["hash"],
    )
    # The chain is whole again, but the log keeps saying what was found.
    report = check(sealed)
    assert problems(report) == [(7, "tamper")]
    assert "row 7 (review.approve, ticket T-2)" in text(report)
    assert "set aside in the audit_quarantine table" in text(report)


def test_a_row_past_the_head_is_not_exported(sealed: Store) -> None:
    sql(sealed, audit_events.insert().values(forge(7, rows(sealed)[-1]["hash"])))
    out = io.StringIO()
    assert export_csv(sealed.engine, out) == 6
    assert "mallory" not in out.getvalue()


def test_a_row_past_the_head_with_the_head_moved_to_it(sealed: Store) -> None:
    """Finding 1 done thoroughly: the forged row and a head that names it."""
    row = forge(7, rows(sealed)[-1]["hash"])
    sql(
        sealed,
        audit_events.insert().values(row),
        audit_head.update().values(last_seq=7, last_hash=row["hash"]),
    )
    report = check(sealed)
    kind = kind_of(sealed)
    if kind == "chain":
        # A consistent chain: without a key or a head file nothing can tell, and it says so.
        assert report.intact and "no key" in cannot(report) and "no head file" in cannot(report)
    elif kind == "file":
        assert problems(report) == [(7, "forged")]
        assert "event 7 is not in the head file" in text(report)
    else:
        assert (7, "forged") in problems(report) and (7, "head") in problems(report)
        assert "carries no MAC although events before it do" in text(report)


def test_the_tail_cut_off_with_the_head_moved_back(sealed: Store) -> None:
    """Finding 2: delete the last rows and copy the new last row into the head."""
    keep = rows(sealed)[:4]
    sql(
        sealed,
        audit_events.delete().where(audit_events.c.seq > 4),
        audit_head.update().values(last_seq=4, last_hash=keep[-1]["hash"]),
    )
    report = check(sealed)
    kind = kind_of(sealed)
    if kind == "chain":
        assert report.intact and "no head file" in cannot(report)
    elif kind == "file":
        assert problems(report) == [(5, "deleted")]
        assert "records event 6, but the chain head is at event 4" in text(report)
        assert "events 5 to 6 were cut off" in text(report)
    else:
        assert problems(report) == [(4, "head")]
        assert "the chain head was rewritten: its MAC does not match" in text(report)


def test_every_event_deleted_and_the_head_reset(sealed: Store) -> None:
    sql(
        sealed,
        audit_events.delete(),
        audit_head.update().values(last_seq=0, last_hash=GENESIS, mac=None),
    )
    report = check(sealed)
    if kind_of(sealed) == "file":
        assert not report.intact and "records event 6, but the chain head is at event 0" in text(
            report
        )
    else:
        # An empty log with a fresh head looks like a new install to the chain and the key; the
        # report names the head file as what would have shown it.
        assert report.intact and report.events == 0 and "head file" in cannot(report)


def test_a_whole_rewrite_with_every_hash_and_the_head_recomputed(sealed: Store) -> None:
    events = rows(sealed)
    events[1] = {**events[1], "actor": "mallory"}
    rechain(sealed, events)
    report = check(sealed)
    kind = kind_of(sealed)
    if kind == "chain":
        assert report.intact  # the limit of a bare chain, stated in the report
        assert "rewrite an event, every hash after it and the head" in cannot(report)
    elif kind == "file":
        assert problems(report)[0] == (2, "edited")
        assert "no longer carries the hash the head file recorded" in text(report)
    else:
        # Every MAC stripped: the key alone cannot tell this from a log written before the key
        # was set, and the report says so (the head file, on by default, catches it).
        assert report.intact and "no event carries a MAC" in cannot(report)
        assert "the head file" in cannot(report)


def test_an_insert_in_the_middle_with_every_hash_recomputed(sealed: Store) -> None:
    events = rows(sealed)
    rechain(sealed, [*events[:3], forge(0, GENESIS), *events[3:]])
    report = check(sealed)
    kind = kind_of(sealed)
    assert report.intact is (kind != "file")
    if kind == "file":
        assert (4, "edited") in problems(report)
    elif kind == "key":
        assert "no event carries a MAC" in cannot(report)


def test_the_head_row_deleted_is_named_and_rebuilt_by_the_next_append(sealed: Store) -> None:
    sql(sealed, audit_head.delete())
    report = check(sealed)
    assert (0, "head") in problems(report) and "chain head row is missing" in text(report)
    stage_draft(sealed, "T-6")  # appending goes on
    events = read_events(sealed.engine)
    assert [e["event"] for e in events[6:]] == [TAMPER_EVENT, "agent.staged"]
    assert "rebuilt from event 6" in events[6]["data"]["reason"]
    assert problems(check(sealed)) == [(7, "tamper")]


# --- the key ---------------------------------------------------------------------------------


def test_a_wrong_key_is_one_problem_not_one_per_event(url: str) -> None:
    store = open_sealed(url, AuditSeal(key=KEY))
    for n in range(3):
        stage_draft(store, f"K-{n}")
    report = verify(store.engine, seal=AuditSeal(key=b"another key" * 4))
    assert problems(report) == [(1, "key")]
    assert "no event's MAC matches SUPPORTAGENT_AUDIT_KEY" in text(report)
    # Without a key the MACs are not checked, and the report says so.
    unkeyed = verify(store.engine)
    assert unkeyed.intact and "3 events carry MACs" in cannot(unkeyed)
    store.close()


def test_a_key_set_later_covers_the_events_before_it_and_a_keyless_writer_shows(
    url: str,
) -> None:
    plain = open_sealed(url, AuditSeal())
    stage_draft(plain, "K-1")
    stage_draft(plain, "K-2")
    keyed = Store(url, audit=AuditSeal(key=KEY))
    before = verify(keyed.engine, seal=keyed.audit)
    assert before.intact and "no event carries a MAC" in cannot(before)
    stage_draft(keyed, "K-3")
    report = verify(keyed.engine, seal=keyed.audit)
    assert report.intact and "since event 3 was appended" in " ".join(report.proves)
    assert "events 1 to 2 carry no MAC" in cannot(report)
    stage_draft(plain, "K-4")  # a process started without the key appends after keyed events
    report = verify(keyed.engine, seal=keyed.audit)
    assert (4, "forged") in problems(report) and (4, "head") in problems(report)
    plain.close()
    keyed.close()


def test_the_key_is_never_written(url: str, tmp_path: Path) -> None:
    key = "audit-key-" + "s3cr3t" * 8
    head = tmp_path / "audit-head.log"
    store = open_sealed(url, AuditSeal(key=key.encode(), head_file=head))
    stage_draft(store, "K-1")
    out = io.StringIO()
    export_csv(store.engine, out)
    report = verify(store.engine, seal=store.audit)
    assert report.intact
    written = [out.getvalue(), head.read_text(), repr(store.audit), json.dumps(report.proves)]
    with store.engine.connect() as conn:
        for table in (audit_events, audit_head):
            written.append(json.dumps([list(r) for r in conn.execute(sa.select(table))]))
    if url.startswith("sqlite"):
        written.append((tmp_path / "audit.db").read_bytes().decode("latin-1"))
    assert not any(key in blob for blob in written)
    store.close()
