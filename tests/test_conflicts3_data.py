"""Shape of eval/conflicts3: two more fictional test products, each with 5 planted conflicts,
4 controls and 3 plain tickets (the checks shared with eval/conflicts and eval/conflicts2:
`conflict_sets.py`), and what this set asks besides: numbered steps, 200-290 words an article,
hosts on `.example`, and no id or slug of the earlier sets."""

from __future__ import annotations

from conflict_sets import EVAL, ConflictSet, HelperWrittenSetChecks

CONFLICTS3 = ConflictSet(
    EVAL / "conflicts3",
    # Product folder -> split of all its tickets (both products are test data).
    {"pinfathom": "test", "quaybarrel": "test"},
    {
        "PN-008": ("kb-courses", "4 people"),
        "PN-009": ("kb-diver-app", "48 hours"),
        "QB-009": ("kb-wholesale-orders", "45 days"),
    },
)


class TestConflicts3(HelperWrittenSetChecks):
    SET = CONFLICTS3
    EARLIER = ("conflicts", "conflicts2")
