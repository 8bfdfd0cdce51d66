"""Round 27 of the offline drafter (twenty-eighth session, from conflicts5 released as tune):
a picture's resolution is a value of its own kind, and a rare kind of value that another
document gives for the question is quoted beside the best answer even when it ranks further
down.

- "4K", "1080p", "Full HD" are resolutions, as lines of height (4K is 2160 lines): "exported
  at 1080p" and "delivered in 4K" are two values of one kind. Not "100p" (a price), nor
  "4k users" (a count).
- "What resolution ...?" asks for a measure; two articles that answer it with two resolutions
  are both quoted.

The sentences are written for these tests and appear in no data file.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from drafting import kb, quoted
from supportagent.agent.facts import extract_facts, resolutions, stated_by, values_in


@pytest.mark.parametrize(
    ("text", "raw", "lines"),
    [
        ("Every clip is rendered in 4K before it is sent.", "4K", 2160),
        ("Previews are exported at 720p to keep them small.", "720p", 720),
        ("The doorbell records in Full HD at night.", "Full HD", 1080),
        ("The studio cameras shoot 8K for the archive.", "8K", 4320),
        ("Phones record 4k video by default.", "4k", 2160),
    ],
)
def test_a_resolution_is_read_as_lines(text: str, raw: str, lines: int) -> None:
    (found,) = resolutions(text)
    assert (found.raw, found.value, found.dimension) == (raw, Decimal(lines), "resolution")
    assert [q.dimension for q in values_in(text)] == ["resolution"]


@pytest.mark.parametrize(
    "text",
    [
        "A second copy of the receipt costs 100p.",
        "The plan covers 4k users at most.",
        "Version 4 came out in 2024.",
    ],
)
def test_what_is_no_resolution_stays_out(text: str) -> None:
    assert resolutions(text) == []


def test_a_resolution_is_stated_in_either_wording() -> None:
    (fact,) = extract_facts([kb("kb-video", "Finished videos are delivered in 2160p.")])
    assert stated_by("You will get them in 4K.", fact)
    assert not stated_by("You will get them in 1080p.", fact)


def test_two_articles_that_answer_what_resolution_with_two_values_are_both_quoted() -> None:
    deliverables = kb(
        "kb-deliverables",
        "Every edited video is delivered in 4K, whatever the package. Raw footage is kept "
        "until the job is closed.",
        heading="Video",
        title="What you receive",
    )
    portal = kb(
        "kb-portal",
        "Tour videos for estate agents are exported at 1080p so that listing sites take them "
        "as they are. Agents download them from the portal.",
        heading="Videos for estate agents",
        title="The client portal",
    )
    sentences = quoted(
        "Resolution of our tour videos",
        "We are estate agents and our vendors ask how sharp the tour videos will be. What "
        "resolution will the edited tour videos come in?",
        deliverables,
        portal,
    )
    assert any("1080p" in s for s in sentences), sentences
    assert any("4K" in s for s in sentences), sentences
