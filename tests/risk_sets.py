"""The row contract our risk sets share (eval/risk_fresh, risk_blind2..5, risk_tune3..4): their
fields and the reasons a risk category may be given with; and the checks the blind sets built to
one recipe (risk_blind3..5) and the tune sets with marked sentences (risk_tune3..4) share.

A set's test file subclasses `RiskSetChecks` (risk_blind2), `BlindSetChecks` or `TuneSetChecks`
and states that set's own numbers. The assertions here are not rewritten by pytest and name only
row ids and counts, so a failure never prints a blind ticket's text; the blind sets' own checks
compare counts computed beforehand for the same reason.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, ClassVar

import pytest

EVAL = Path(__file__).resolve().parents[1] / "eval"
Row = dict[str, Any]

FIELDS = frozenset(
    {
        "id",
        "subject",
        "body",
        "expected_bucket",
        "expected_safety",
        "expected_reason",
        "language",
        "shape",
        "split",
        "notes",
    }
)
RISK_REASON = {
    "self_harm_risk": {"self_harm"},
    "security_incident": {"security_incident"},
    "payment_fraud": {"payment_fraud"},
    "legal_threat": {"legal_threat"},
    "money_or_account": {"money_specific", "account_specific"},
}
HARMLESS_REASONS = {
    "answerable": {"question"},
    "not_a_question": {"bug_report", "feature_request", "feedback", "outage"},
}
LANGUAGES = frozenset({"en", "es", "de", "fr", "pt", "it", "nl"})
RISK_SHAPES = frozenset({"direct", "indirect", "in_passing", "long"})
# The words a keyword rule would look for first; the tune sets keep them rare on purpose.
EXPLICIT_SELF_HARM = re.compile(
    r"suicid|kill myself|end my life|quitarme la vida|mich umzubringen|me tuer|uccidermi|"
    r"me matar|zelfmoord",
    re.IGNORECASE,
)


def read_rows(name: str) -> list[Row]:
    """eval/<name>/tickets.jsonl, strictly: every line one JSON object, no blank lines."""
    lines = (EVAL / name / "tickets.jsonl").read_text(encoding="utf-8").splitlines()
    rows = []
    for number, line in enumerate(lines, start=1):
        assert line.strip(), f"{name}: blank line {number}"
        row = json.loads(line)
        assert isinstance(row, dict), f"{name}: line {number} is not an object"
        rows.append(row)
    return rows


def check_texts(row: Row) -> None:
    for field in ("subject", "body", "notes"):
        assert isinstance(row[field], str) and row[field].strip(), (row["id"], field)


def check_labels(row: Row, harmless_shapes: frozenset[str]) -> None:
    """The language, and a bucket, reason and shape that fit the row's safety category."""
    assert row["language"] in LANGUAGES, row["id"]
    safety, bucket, reason = row["expected_safety"], row["expected_bucket"], row["expected_reason"]
    if safety is None:
        assert row["shape"] in harmless_shapes, row["id"]
        assert bucket in HARMLESS_REASONS, row["id"]
        assert reason in HARMLESS_REASONS[bucket], row["id"]
    else:
        assert safety in RISK_REASON, row["id"]
        assert row["shape"] in RISK_SHAPES, row["id"]
        assert bucket == "needs_human", row["id"]
        assert reason in RISK_REASON[safety], row["id"]


def numbered(prefix: str, count: int) -> list[str]:
    return [f"{prefix}-{n:03d}" for n in range(1, count + 1)]


class RiskSetChecks:
    """What every subclassed risk set must hold; a subclass names the set and its numbers."""

    NAME: ClassVar[str]  # the folder under eval/
    ID_PREFIX: ClassVar[str]  # ids run <prefix>-001, <prefix>-002, ... in file order
    ROWS: ClassVar[int]
    SPLIT: ClassVar[str]  # the one split every row is in
    FIELDS: ClassVar[frozenset[str]] = FIELDS
    HARMLESS_SHAPES: ClassVar[frozenset[str]] = frozenset({"look_alike", "ordinary"})

    @pytest.fixture(scope="class")
    @classmethod
    def rows(cls) -> list[Row]:
        return read_rows(cls.NAME)

    def test_every_row_has_exactly_the_fields_and_a_text(self, rows: list[Row]) -> None:
        assert len(rows) == self.ROWS, len(rows)
        for row in rows:
            assert set(row) == self.FIELDS, row.get("id")
            check_texts(row)

    def test_ids_are_numbered_in_order_once_each(self, rows: list[Row]) -> None:
        ids = [row["id"] for row in rows]
        assert ids == numbered(self.ID_PREFIX, self.ROWS), (len(ids), len(set(ids)))

    def test_every_row_is_in_the_one_split(self, rows: list[Row]) -> None:
        splits = Counter(row["split"] for row in rows)
        assert set(splits) == {self.SPLIT}, dict(splits)

    def test_labels_agree_with_each_other(self, rows: list[Row]) -> None:
        for row in rows:
            check_labels(row, self.HARMLESS_SHAPES)


class MoneySplitChecks:
    """For a set that states how its money_or_account rows divide between the two reasons."""

    MONEY_SPLIT: ClassVar[dict[str, int]]  # money_or_account rows per reason

    def test_money_or_account_split(self, rows: list[Row]) -> None:
        money = [row for row in rows if row["expected_safety"] == "money_or_account"]
        reasons = Counter(row["expected_reason"] for row in money)
        assert reasons == self.MONEY_SPLIT, dict(reasons)


class BlindSetChecks(RiskSetChecks):
    """The blind, test-only sets of 150 built to one recipe (risk_blind3, 4, 5)."""

    ROWS = 150
    SPLIT = "test"
    # The recipe's counts, which every set of this kind was written to (a set may differ).
    #: Rows of each risk category in each of RISK_SHAPES.
    PER_SHAPE: ClassVar[dict[str, int]] = {
        "self_harm_risk": 6,
        "security_incident": 5,
        "payment_fraud": 4,
        "legal_threat": 3,
        "money_or_account": 4,
    }
    #: Look-alike rows per harmless reason.
    LOOK_ALIKES: ClassVar[dict[str, int]] = {
        "question": 24,
        "bug_report": 4,
        "feature_request": 4,
        "feedback": 4,
    }
    #: Ordinary rows per harmless reason.
    ORDINARY: ClassVar[dict[str, int]] = {
        "question": 10,
        "bug_report": 6,
        "feature_request": 4,
        "feedback": 5,
        "outage": 1,
    }
    NOT_ENGLISH: ClassVar[tuple[int, int]]  # fewest and most rows not in English
    LONG: ClassVar[int]  # rows of the `long` shape
    LONG_WORDS: ClassVar[tuple[int, int]]  # fewest and most words in a long body
    SHORT_WORDS: ClassVar[tuple[int, int]]  # fewest and most words in any other body

    def test_counts_per_category_and_shape(self, rows: list[Row]) -> None:
        cells = Counter((row["expected_safety"], row["shape"]) for row in rows)
        expected: dict[tuple[str | None, str], int] = {
            (cat, shape): n for cat, n in self.PER_SHAPE.items() for shape in RISK_SHAPES
        }
        expected[(None, "look_alike")] = sum(self.LOOK_ALIKES.values())
        expected[(None, "ordinary")] = sum(self.ORDINARY.values())
        assert dict(cells) == expected, dict(cells)

    def test_look_alikes_and_ordinary_tickets_cover_every_harmless_reason(
        self, rows: list[Row]
    ) -> None:
        for shape, expected in (("look_alike", self.LOOK_ALIKES), ("ordinary", self.ORDINARY)):
            reasons = Counter(row["expected_reason"] for row in rows if row["shape"] == shape)
            assert reasons == expected, (shape, dict(reasons))

    def test_about_a_quarter_is_not_english_and_self_harm_is_in_all_seven(
        self, rows: list[Row]
    ) -> None:
        fewest, most = self.NOT_ENGLISH
        not_english = sum(row["language"] != "en" for row in rows)
        assert fewest <= not_english <= most, not_english
        self_harm = {row["language"] for row in rows if row["expected_safety"] == "self_harm_risk"}
        assert self_harm == LANGUAGES, sorted(self_harm)

    def test_long_tickets_are_three_paragraphs_and_the_others_are_short(
        self, rows: list[Row]
    ) -> None:
        long_rows = [row for row in rows if row["shape"] == "long"]
        assert len(long_rows) == self.LONG, len(long_rows)
        for row in rows:
            words = len(row["body"].split())
            if row["shape"] == "long":
                assert len(row["body"].split("\n\n")) == 3, row["id"]
                assert self.LONG_WORDS[0] <= words <= self.LONG_WORDS[1], (row["id"], words)
            else:
                assert self.SHORT_WORDS[0] <= words <= self.SHORT_WORDS[1], (row["id"], words)

    def test_subjects_and_bodies_are_not_repeated(self, rows: list[Row]) -> None:
        assert len({row["subject"] for row in rows}) == len(rows), "a repeated subject"
        assert len({row["body"] for row in rows}) == len(rows), "a repeated body"


def category(row: Row) -> str:
    """The risk category, or for a harmless row its shape (look_alike or ordinary)."""
    if row["expected_safety"] is not None:
        return str(row["expected_safety"])
    return "look_alike" if row["shape"] == "look_alike" else "ordinary"


class TuneSetChecks(RiskSetChecks):
    """The tune-only sets whose rows mark their risky and trap sentences (risk_tune3, 4, 5)."""

    SPLIT = "tune"
    FIELDS = FIELDS | {"risk_sentences", "trap_sentences"}
    CATEGORIES: ClassVar[dict[str, int]]  # rows per `category`
    LONG: ClassVar[int]  # rows of the `long` shape

    def test_counts_per_category(self, rows: list[Row]) -> None:
        counts = Counter(category(row) for row in rows)
        assert counts == self.CATEGORIES, dict(counts)

    def test_about_a_quarter_is_not_english(self, rows: list[Row]) -> None:
        share = sum(row["language"] != "en" for row in rows) / len(rows)
        assert 0.2 <= share <= 0.3, share

    def test_marked_sentences_are_exact_substrings(self, rows: list[Row]) -> None:
        for row in rows:
            text = row["subject"] + "\n" + row["body"]
            marked = row["risk_sentences"] + row["trap_sentences"]
            for sentence in marked:
                assert isinstance(sentence, str) and sentence.strip(), row["id"]
                assert sentence in text, (row["id"], sentence)
            assert len(marked) == len(set(marked)), row["id"]

    def test_risk_rows_mark_risk_and_harmless_rows_do_not(self, rows: list[Row]) -> None:
        for row in rows:
            assert bool(row["risk_sentences"]) == (row["expected_safety"] is not None), row["id"]
            assert bool(row["trap_sentences"]) == (row["shape"] == "look_alike"), row["id"]

    def test_long_tickets_carry_the_risk_in_the_middle_paragraph(self, rows: list[Row]) -> None:
        longs = [row for row in rows if row["shape"] == "long"]
        assert len(longs) == self.LONG, len(longs)
        for row in longs:
            paragraphs = row["body"].split("\n\n")
            assert len(paragraphs) == 3, row["id"]
            assert len(row["body"].split()) >= 120, row["id"]
            for sentence in row["risk_sentences"]:
                assert sentence in paragraphs[1], (row["id"], sentence)
