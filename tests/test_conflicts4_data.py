"""Shape of eval/conflicts4: two more fictional test products, each with 5 planted conflicts,
4 controls and 3 plain tickets (the checks shared with eval/conflicts, eval/conflicts2 and
eval/conflicts3: `conflict_sets.py`), and what this set asks besides: numbered steps, 200-290
words an article, hosts on `.example`, and no id or slug of the earlier sets."""

from __future__ import annotations

from conflict_sets import EVAL, ConflictSet, HelperWrittenSetChecks

CONFLICTS4 = ConflictSet(
    EVAL / "conflicts4",
    # Product folder -> split of all its tickets (both products are test data).
    {"hexaloom": "test", "mirevane": "test"},
    {
        "HX-008": ("kb-loom-booking", "4 open bookings"),
        "HX-009": ("kb-yarn-stock", "10 days"),
        "MV-009": ("kb-group-and-school-bookings", "8 curlers"),
    },
)


class TestConflicts4(HelperWrittenSetChecks):
    SET = CONFLICTS4
    EARLIER = ("conflicts", "conflicts2", "conflicts3")
