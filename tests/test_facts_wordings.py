"""Values written the ways people write them: compound number words ("forty-eight hours"),
"and a half", "10k", bits per second, a fortnight, sizes and money in words; each is the value
its digits would be, and two sources that word one rule differently do not conflict while two
that give different values do. Passages are about invented services (a radio stream, a seed
library, a courier desk), worded for these tests."""

from __future__ import annotations

from decimal import Decimal

import pytest

from drafting import conflicts_of, resolved
from drafting import section as kb
from supportagent.agent.facts import quantities, word_value


def one(text: str) -> tuple[str, Decimal]:
    [q] = quantities(f"The limit is {text} for everyone.")
    return q.dimension, q.base_value


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("forty-eight hours", "48 hours"),
        ("twenty five minutes", "25 min"),
        ("two days", "forty-eight hours"),
        ("a fortnight", "14 days"),
        ("two fortnights", "4 weeks"),
        ("2 wks", "14 days"),
        ("an hour and a half", "90 minutes"),
        ("two and a half hours", "150 minutes"),
        ("a day and a half", "36 hours"),
        ("10k requests", "10,000 requests"),
        ("1.5k requests", "1500 requests"),
        ("320 kilobits per second", "320 kbps"),
        ("320 kbit/s", "320 kbps"),
        ("3 Mbit/s", "3 Mbps"),
        ("3 megabits per second", "3000 kbps"),
        ("eighty per cent", "80%"),
        ("seventy percent", "70 %"),
        ("two megabytes", "2 MB"),
        ("fifteen euros", "€15"),
        ("two hundred dollars", "$200"),
        ("ninety-nine days", "99 days"),
    ],
)
def test_a_value_in_words_is_the_value_in_digits(a: str, b: str) -> None:
    assert one(a) == one(b)


@pytest.mark.parametrize(
    ("words", "value"),
    [("forty-eight", 48), ("twenty five", 25), ("a hundred", 100), ("two thousand", 2000)],
)
def test_word_value(words: str, value: int) -> None:
    assert word_value(words) == value


def test_bits_are_an_eighth_of_bytes_and_not_a_bandwidth_without_per_second() -> None:
    [bits] = quantities("The buffer holds 8 kilobits.")
    assert (bits.dimension, bits.base_value) == ("size", Decimal(1000))


@pytest.mark.parametrize(
    "text",
    [
        "Send a message to one file.",
        "Add a second key for the backup.",
        "The digest goes out once a month.",
        "We keep a hundred files.",  # a count of things without a unit is not a limit
        "Two thirds of users never change it.",
        "Stream the 4k video from the app.",
        "Pick one of the files.",
        "The 10k run starts at the park.",
    ],
)
def test_words_that_are_not_values(text: str) -> None:
    assert quantities(text) == []


STREAM = kb(
    "kb-stream-quality",
    "Listener stream quality",
    "Every station's listener stream is encoded at 128 kbps, whatever the plan.",
    title="Streaming",
)


def test_one_bitrate_in_two_wordings_is_no_conflict() -> None:
    ticket = resolved(
        "RT-71",
        "What bitrate do listeners get?",
        "Listeners hear the stream at 128 kilobits per second.",
    )
    assert conflicts_of(STREAM, ticket, links={"RT-71": ("kb-stream-quality",)}) == []


def test_a_bitrate_in_words_that_differs_is_a_conflict() -> None:
    ticket = resolved(
        "RT-72",
        "Why does our station's stream sound better than the others?",
        "Listener streams are encoded at 320 kilobits per second.",
    )
    [conflict] = conflicts_of(STREAM, ticket, links={"RT-72": ("kb-stream-quality",)})
    assert {conflict.general.quantity.raw, conflict.specific.quantity.raw} == {
        "128 kbps",
        "320 kilobits per second",
    }


def test_a_window_in_compound_words_conflicts_with_its_digits() -> None:
    article = kb(
        "kb-seed-loans",
        "Seed loans",
        "A seed loan must be returned within 21 days, for every member.",
        title="Borrowing",
    )
    same = resolved(
        "RT-73",
        "How long can I keep a seed loan?",
        "A seed loan must be returned within twenty-one days.",
    )
    other = resolved(
        "RT-74",
        "How long can I keep a seed loan?",
        "A seed loan must be returned within forty-two days.",
    )
    assert conflicts_of(article, same, links={"RT-73": ("kb-seed-loans",)}) == []
    [conflict] = conflicts_of(article, other, links={"RT-74": ("kb-seed-loans",)})
    assert conflict.specific.quantity.raw == "forty-two days"
