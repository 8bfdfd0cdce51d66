"""Shape of eval/tidewell: articles, resolved tickets, labelled tickets (all test) and key facts."""

from product_sets import RECIPE_ANSWER_KINDS, RECIPE_NO_DRAFT, ProductSetChecks, Ticket, kind


class TestTidewell(ProductSetChecks):
    NAME = "tidewell"
    ARTICLES = 22
    WORDS = (220, 300)
    WITH_STEPS = 22  # every article
    RESOLVED = 12
    TICKETS = 44
    ANSWER_KINDS = RECIPE_ANSWER_KINDS
    SPLITS = frozenset({"test"})
    NO_DRAFT_COUNTS = RECIPE_NO_DRAFT
    CONFLICTS = frozenset({"state-late-fee", "legacy-keypad-offline"})

    def test_yes_no_tickets_expect_both_answers(self, tickets: list[Ticket]) -> None:
        answers = [t["notes"] for t in tickets if kind(t) == "yes_no"]
        assert {note.split(":", 1)[1].split(",")[0].strip() for note in answers} == {"yes", "no"}
