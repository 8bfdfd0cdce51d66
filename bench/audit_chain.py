"""Audit log costs: staging with and without the audit event, verify and export at N events.

Run by hand: ``.venv/bin/python bench/audit_chain.py [N] [DATABASE_URL] [--sealed]`` (default
5000 events, a SQLite file in a temporary folder). ``--sealed``: with a key (MACs) and a head
file, as ``SUPPORTAGENT_AUDIT_KEY`` and the default data directory give. Never run by the test
suite.
"""

from __future__ import annotations

import io
import sys
import tempfile
import time
from pathlib import Path

from supportagent.domain import Bucket, Draft, DraftSentence, Outcome, Status, Ticket
from supportagent.store import store as store_module
from supportagent.store.audit import export_csv
from supportagent.store.audit_seal import AuditSeal
from supportagent.store.audit_verify import verify
from supportagent.store.store import Store


def _outcome(ticket_id: str) -> Outcome:
    draft = Draft((DraftSentence(f"Answer for {ticket_id}.", ("kb-x#intro",)),), 0.7)
    return Outcome(
        ticket_id, Status.PENDING_REVIEW, "drafted", Bucket.ANSWERABLE, draft, None, (), "offline"
    )


def _stage_all(store: Store, prefix: str, n: int) -> float:
    """Seconds per staged outcome (the transaction that also appends the audit event)."""
    tickets = [Ticket(f"{prefix}-{i}", "s", "b") for i in range(n)]
    store.add_tickets(tickets)
    attempts = [store.begin_attempt(t.id) for t in tickets]
    t0 = time.perf_counter()
    for ticket, attempt in zip(tickets, attempts, strict=True):
        store.stage_outcome(_outcome(ticket.id), attempt)
    return (time.perf_counter() - t0) / n


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--sealed"]
    sealed = "--sealed" in sys.argv
    n = int(args[0]) if args else 5000
    folder = Path(tempfile.mkdtemp())
    url = args[1] if len(args) > 1 and args[1] else f"sqlite:///{folder / 'a.db'}"
    seal = AuditSeal(b"bench-key-" * 4, folder / "audit-head.log") if sealed else AuditSeal()
    store = Store(url, audit=seal)
    store.migrate()
    with_audit = _stage_all(store, "A", n)
    original = store_module.record_staged
    store_module.record_staged = lambda *_a, **_kw: (0, "")  # the same path, no audit event
    store.audit = AuditSeal()  # and no head-file line for the event that is not there
    try:
        without = _stage_all(store, "B", n)
    finally:
        store_module.record_staged = original
        store.audit = seal
    t0 = time.perf_counter()
    report = verify(store.engine, seal=seal)
    verify_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    rows = export_csv(store.engine, io.StringIO())
    export_s = time.perf_counter() - t0
    assert report.intact and report.events == rows == n
    print(f"database: {store.engine.dialect.name}, {n} events, sealed: {sealed}")
    print(
        f"stage_outcome: {with_audit * 1000:.2f} ms with the audit event, "
        f"{without * 1000:.2f} ms without"
    )
    print(f"verify: {verify_s:.2f} s ({n / verify_s:,.0f} events/s)")
    print(f"export: {export_s:.2f} s ({n / export_s:,.0f} events/s)")
    store.close()


if __name__ == "__main__":
    main()
