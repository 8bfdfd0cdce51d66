"""Shape of eval/pickwren, a tune-only product: articles, resolved and labelled tickets, facts."""

import re
from typing import Any

from product_sets import RECIPE_ANSWER_KINDS, RECIPE_NO_DRAFT, ProductSetChecks, Ticket


class TestPickwren(ProductSetChecks):
    NAME = "pickwren"
    ARTICLES = 22
    WORDS = (220, 300)
    WITH_STEPS = 18
    RESOLVED = 12
    TICKETS = 44
    ANSWER_KINDS = RECIPE_ANSWER_KINDS
    SPLITS = frozenset({"tune"})
    NO_DRAFT_COUNTS = RECIPE_NO_DRAFT
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
