"""The stats page: outcome numbers and knowledge gaps, as tiles, SVG charts and a table.

The numbers come from :mod:`supportagent.insights`; this module only lays them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from supportagent.agent.knowledge import Knowledge
from supportagent.insights import Stats, compute_stats, knowledge_gaps
from supportagent.reasons import explain
from supportagent.store.store import Store
from supportagent.web.charts import BarChart, bar_chart


@dataclass(frozen=True, slots=True)
class Tile:
    label: str
    value: str
    note: str = ""


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def tiles(stats: Stats) -> list[Tile]:
    edits = (
        f"{stats.mean_edit_chars:g} characters changed on average"
        if stats.mean_edit_chars is not None
        else ""
    )
    return [
        Tile("tickets", str(stats.tickets), f"{stats.unhandled} not handled yet"),
        Tile("drafts for review", str(stats.drafted), f"{stats.pending_review} still pending"),
        Tile(
            "approved as drafted",
            _share(stats.unedited_share),
            f"{stats.approved_unedited} of {stats.reviewed} decided drafts",
        ),
        Tile("approved with edits", str(stats.approved_with_edits), edits),
        Tile("rejected", str(stats.rejected), f"{stats.handed_off} handed to a person"),
        Tile("escalated", str(stats.escalated), "no draft: a person decides"),
        Tile("routed", str(stats.routed), "bug reports, feature requests, outages"),
    ]


def charts(stats: Stats) -> list[BarChart]:
    outcomes = [
        ("drafted", stats.drafted, "pending_review"),
        ("escalated", stats.escalated, "escalated"),
        ("routed", stats.routed, "routed"),
        ("not handled yet", stats.unhandled, "new"),
    ]
    decisions = [
        ("approved as drafted", stats.approved_unedited, "approved"),
        ("approved with edits", stats.approved_with_edits, "amended"),
        ("rejected", stats.rejected, "rejected"),
        ("pending", stats.pending_review, "new"),
    ]
    return [
        bar_chart(
            "What the agent did",
            [(a, float(b)) for a, b, _ in outcomes],
            keys=[k for *_, k in outcomes],
        ),
        bar_chart(
            "What reviewers decided",
            [(a, float(b)) for a, b, _ in decisions],
            keys=[k for *_, k in decisions],
        ),
        bar_chart(
            "Why tickets were escalated",
            [(explain(k).label, float(v)) for k, v in stats.escalated_by_reason.items()],
        ),
        bar_chart(
            "Why tickets were routed",
            [(explain(k).label, float(v)) for k, v in stats.routed_by_reason.items()],
        ),
    ]


def stats_context(
    store: Store, knowledge: Knowledge, threshold: float | None = None
) -> dict[str, Any]:
    stats = compute_stats(store)
    report = knowledge_gaps(store, knowledge, threshold)
    return {
        "tiles": tiles(stats),
        "charts": charts(stats),
        "gaps": report.gaps,
        "missed": report.missed,
    }
