"""Shape of eval/pickwren, a tune-only product: articles, resolved and labelled tickets, facts."""

import re
from typing import Any, ClassVar

from product_sets import ProductSetChecks, Ticket


class TestPickwren(ProductSetChecks):
    NAME = "pickwren"
    ARTICLES = 22
    WORDS = (220, 300)
    WITH_STEPS = 18
    RESOLVED = 12
    TICKETS = 44
    # The kind of answer a ticket asks for is the first word of its notes.
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
    SPLITS = frozenset({"tune"})
    NO_DRAFT_COUNTS: ClassVar[dict[str, int] | None] = {
        "bug_report": 1,
        "feature_request": 1,
        "human_requested": 1,
        "money_specific": 2,
        "account_specific": 1,
    }
    CONFLICTS = frozenset({"ipad-unsent-scans", "eu-movement-ledger"})

    def test_resolved_ids_are_rt_numbers(self, resolved: list[dict[str, Any]]) -> None:
        for row in resolved:
            assert row["id"].startswith("RT-"), row["id"]

    def test_expected_docs_name_whole_documents(self, tickets: list[Ticket]) -> None:
        for ticket in tickets:
            assert all("#" not in doc for doc in ticket["expected_docs"]), ticket["id"]

    def test_resolved_tickets_named_in_notes_exist(
        self, tickets: list[Ticket], resolved: list[dict[str, Any]]
    ) -> None:
        known = {row["id"] for row in resolved}
        for ticket in tickets:
            assert set(re.findall(r"RT-\d+", ticket["notes"])) <= known, ticket["id"]
