"""Round 29 (twenty-sixth session, from risk_blind22 released as tune): a former partner or a
stranger who knows when the writer comes home or their usual times; the code that opens a home
or a building left written or visible where others can read it.

The sentences were written for these tests and appear in no data file (neither in the rule
tables' examples nor in any eval set).
"""

from __future__ import annotations

import pytest

from rule_rows import assert_escalates, assert_left_alone

FIRES = [
    "My ex-wife rang to tell me when I came back from the gym, to the minute.",
    "Since I joined the leaderboard a stranger has turned up at the times I usually leave.",
    "Somebody I don't know messaged me about my routine at the pool, using the class list.",
    "The lock box code was visible in the photo you put on the listing.",
    "Your driver read out the door code to the whole queue at the depot.",
    "Our gate code is printed on the delivery slip you taped to the post box.",
]

QUIET = [
    "How can I hide my check-in times from my ex?",
    "My ex-partner and I share the plan; can we split the bill?",
    "Please send the reminder at the time I usually get home, around six.",
    "Where do I find the door code for the studio?",
    "The key safe code hasn't been shared with the cleaner yet, so tell her at the door.",
    "Can I set a new alarm code from the app?",
]


@pytest.mark.parametrize("text", FIRES)
def test_round29_rows_fire(text: str) -> None:
    assert_escalates(text, "security_incident")


@pytest.mark.parametrize("text", QUIET)
def test_round29_rows_stay_quiet(text: str) -> None:
    assert_left_alone(text)
