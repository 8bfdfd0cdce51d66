"""Shape of eval/ferrytale: articles, resolved tickets, labelled tickets, splits and key facts."""

from typing import ClassVar

from product_sets import ProductSetChecks


class TestFerrytale(ProductSetChecks):
    NAME = "ferrytale"
    ARTICLES = 22
    WORDS = (180, 330)
    WITH_STEPS = 18
    RESOLVED = 10
    TICKETS = 44
    # Tickets per half asking for each kind of answer (the first word of the notes).
    ANSWER_KINDS: ClassVar[dict[str, int]] = {
        "number": 3,
        "duration": 3,
        "version": 2,
        "name": 3,
        "procedure": 3,
        "yes_no": 2,
        "two_questions": 2,
        "conflict": 1,
        "no_draft": 3,
    }
    SPLITS = frozenset({"tune", "test"})
    CONFLICTS = frozenset({"payout-schedule", "tidal-check-in"})
