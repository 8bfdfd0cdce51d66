"""Shape of eval/conflicts6: a sixth pair of fictional test products (Gripmantle, Orbenmoor),
each with 5 planted conflicts, 4 controls and 3 plain tickets. The checks are the shared ones in
`conflict_sets.py`, as for eval/conflicts to eval/conflicts5, plus what the helper-written sets
ask: numbered steps and 200-290 words an article, hosts on `.example`, and no id or slug of an
earlier set."""

from __future__ import annotations

from conflict_sets import EVAL, ConflictSet, HelperWrittenSetChecks

CONFLICTS6 = ConflictSet(
    EVAL / "conflicts6",
    # Product folder -> split of all its tickets (both products are test data).
    {"gripmantle": "test", "orbenmoor": "test"},
    # Different-subject controls -> the article with the look-alike value, and that value.
    {
        "GR-008": ("kb-belay-certification", "6 learners"),
        "GR-009": ("kb-check-in-and-waivers", "20 minutes"),
        "OB-009": ("kb-star-parties-and-events", "40 guests"),
    },
)


class TestConflicts6(HelperWrittenSetChecks):
    SET = CONFLICTS6
    EARLIER = ("conflicts", "conflicts2", "conflicts3", "conflicts4", "conflicts5")
