"""Shape of eval/forkline: articles, resolved tickets, labelled tickets, the split and key facts."""

import re
from typing import Any

from product_sets import RECIPE_ANSWER_KINDS, RECIPE_NO_DRAFT, ProductSetChecks, Ticket, kind


class TestForkline(ProductSetChecks):
    NAME = "forkline"
    ARTICLES = 22
    WORDS = (220, 300)
    WITH_STEPS = 18
    RESOLVED = 12
    TICKETS = 44
    ANSWER_KINDS = RECIPE_ANSWER_KINDS
    SPLITS = frozenset({"tune"})
    NO_DRAFT_COUNTS = RECIPE_NO_DRAFT
    CONFLICTS = frozenset({"android-offline", "eu-guest-erasure"})

    def test_five_resolved_tickets_carry_another_customers_reference(
        self, resolved: list[dict[str, Any]]
    ) -> None:
        # Booking, refund and site references, device serials and voucher codes.
        pattern = re.compile(r"\b(?:FKB-\d+|FPR-\d+|TH-\d+|GV-[A-Z0-9]{8}|DMPX\w+)\b")
        carrying = {row["id"] for row in resolved if pattern.search(row["answer"])}
        assert len(carrying) == 5, sorted(carrying)

    def test_yes_no_answers_both_ways_and_a_third_paraphrased(self, tickets: list[Ticket]) -> None:
        yes_no = [t["notes"] for t in tickets if kind(t) == "yes_no"]
        assert any("answer yes" in n for n in yes_no) and any("answer no" in n for n in yes_no)
        answerable = [t for t in tickets if kind(t) != "no_draft"]
        paraphrased = [t for t in answerable if "paraphrase" in t["notes"]]
        assert 3 * len(paraphrased) >= len(answerable)
