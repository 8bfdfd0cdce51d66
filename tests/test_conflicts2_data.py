"""Shape of eval/conflicts2: two more fictional products, each with 5 planted conflicts, 4
controls and 3 plain tickets (the checks shared with eval/conflicts: `conflict_sets.py`), and
what this set asks besides: numbered steps, 200-290 words an article, hosts on `.example`, and
no id or slug of the first set."""

from __future__ import annotations

from conflict_sets import EVAL, ConflictSet, HelperWrittenSetChecks

CONFLICTS2 = ConflictSet(
    EVAL / "conflicts2",
    # Product folder -> split of all its tickets (both products are test data).
    {"plotwise": "test", "tuftwagon": "test"},
    {
        "AL-008": ("kb-rent-and-billing", "30 days"),
        "AL-009": ("kb-rootstick-probes", "45 minutes"),
        "GV-009": ("kb-reminders-and-messages", "8 weeks"),
    },
)


class TestConflicts2(HelperWrittenSetChecks):
    SET = CONFLICTS2
    EARLIER = ("conflicts",)
