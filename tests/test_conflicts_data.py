"""Shape of eval/conflicts: four fictional products, each with 5 planted conflicts, 4 controls
and 3 plain tickets (the checks: `conflict_sets.py`)."""

from __future__ import annotations

from conflict_sets import EVAL, ConflictSet, ConflictSetChecks

CONFLICTS = ConflictSet(
    EVAL / "conflicts",
    # Product folder -> split of all its tickets (the first two are tune data, the last two
    # test data, as written; Kilnmark and Windlog were released as tune in the twenty-second
    # session).
    {"tallyfern": "tune", "cantorel": "tune", "kilnmark": "test", "windlog": "test"},
    {
        "TF-008": ("kb-rider-passes", "24 hours"),
        "TF-009": ("kb-data-and-reports", "50,000 rides"),
        "CT-009": ("kb-music-shelf", "40 MB"),
        "KM-008": ("kb-firing-queue", "30 days"),
        "KM-009": ("kb-memberships-and-shelves", "3 wheel bookings"),
        "WL-009": ("kb-windlog-app", "30 days"),
    },
)


class TestConflicts(ConflictSetChecks):
    SET = CONFLICTS
    TICKETS = 48
    SLUGS = 20
