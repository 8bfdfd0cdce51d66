"""Shape of eval/tidewell: articles, resolved tickets, labelled tickets (all test) and key facts."""

from typing import ClassVar

from product_sets import ProductSetChecks, Ticket, kind


class TestTidewell(ProductSetChecks):
    NAME = "tidewell"
    ARTICLES = 22
    WORDS = (220, 300)
    WITH_STEPS = 22  # every article
    RESOLVED = 12
    TICKETS = 44
    # The first word of a ticket's notes names the kind of answer.
    ANSWER_KINDS: ClassVar[dict[str, int]] = {
        "number": 6,
        "duration": 6,
        "version": 4,
        "name": 6,
        "procedure": 6,
        "yes_no": 4,
        "two_questions": 4,
        "conflict": 2,
        "no_draft": 6,
    }
    SPLITS = frozenset({"test"})
    NO_DRAFT_COUNTS: ClassVar[dict[str, int] | None] = {
        "bug_report": 1,
        "feature_request": 1,
        "human_requested": 1,
        "money_specific": 2,
        "account_specific": 1,
    }
    CONFLICTS = frozenset({"state-late-fee", "legacy-keypad-offline"})

    def test_yes_no_tickets_expect_both_answers(self, tickets: list[Ticket]) -> None:
        answers = [t["notes"] for t in tickets if kind(t) == "yes_no"]
        assert {note.split(":", 1)[1].split(",")[0].strip() for note in answers} == {"yes", "no"}
