"""Shape of eval/conflicts5: a fifth pair of fictional test products (Steamhollow, Hoverdell),
each with 5 planted conflicts, 4 controls and 3 plain tickets. The checks are the shared ones in
`conflict_sets.py`, as for eval/conflicts to eval/conflicts4, plus what the helper-written sets
ask: numbered steps and 200-290 words an article, hosts on `.example`, and no id or slug of an
earlier set."""

from __future__ import annotations

from conflict_sets import EVAL, ConflictSet, HelperWrittenSetChecks

CONFLICTS5 = ConflictSet(
    EVAL / "conflicts5",
    # Product folder -> split of all its tickets (both products are test data).
    {"steamhollow": "test", "hoverdell": "test"},
    # Different-subject controls -> the article with the look-alike value, and that value.
    {
        "SH-008": ("kb-session-booking", "16 bathers"),
        "SH-009": ("kb-stoves-and-heaters", "15 minutes"),
        "HD-009": ("kb-plans-and-pricing", "5 pilot seats"),
    },
)


class TestConflicts5(HelperWrittenSetChecks):
    SET = CONFLICTS5
    EARLIER = ("conflicts", "conflicts2", "conflicts3", "conflicts4")
