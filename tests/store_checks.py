"""Checks on what the store holds, shared by the scheduler and worker tests."""

from __future__ import annotations

import sqlalchemy as sa

from supportagent.store import tables as t
from supportagent.store.store import Store


def outcome_counts(store: Store) -> dict[str, int]:
    """Staged outcome rows per ticket (every ticket of the store, zero included)."""
    with store.engine.connect() as conn:
        rows = conn.execute(
            sa.select(t.tickets.c.id, sa.func.count(t.outcomes.c.id))
            .select_from(t.tickets.outerjoin(t.outcomes))
            .group_by(t.tickets.c.id)
        ).all()
    return {ticket_id: n for ticket_id, n in rows}
