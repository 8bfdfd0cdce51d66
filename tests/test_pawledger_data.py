"""Shape of eval/pawledger: a blind product (every ticket is `test`), its articles and key facts."""

import re
from collections import Counter

from product_sets import RECIPE_ANSWER_KINDS, RECIPE_NO_DRAFT, ProductSetChecks, Ticket, kind

#: Each planted conflict and the resolved ticket that holds its scoped side.
CONFLICT_TICKETS = {"rabies-reminder-count": "RT-1003", "corvane-attachment-size": "RT-1006"}


class TestPawledger(ProductSetChecks):
    NAME = "pawledger"
    ARTICLES = 22
    WORDS = (220, 300)
    WITH_STEPS = 22
    RESOLVED = 12
    TICKETS = 44
    ANSWER_KINDS = RECIPE_ANSWER_KINDS
    SPLITS = frozenset({"test"})
    NO_DRAFT_COUNTS = RECIPE_NO_DRAFT
    CONFLICTS = frozenset(CONFLICT_TICKETS)

    def test_yes_no_tickets_expect_two_yes_and_two_no(self, tickets: list[Ticket]) -> None:
        verdicts = Counter(
            re.match(r"yes_no: (yes|no)\b", t["notes"]).group(1)  # type: ignore[union-attr]
            for t in tickets
            if kind(t) == "yes_no"
        )
        assert verdicts == Counter({"yes": 2, "no": 2})

    def test_each_conflict_names_its_resolved_ticket(self, tickets: list[Ticket]) -> None:
        for ticket in tickets:
            if ticket["conflict"] is not None:
                resolved = ticket["expected_docs"][1]
                assert resolved == CONFLICT_TICKETS[ticket["conflict"]], ticket["id"]
