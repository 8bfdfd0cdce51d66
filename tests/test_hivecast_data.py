"""Shape of eval/hivecast: a tune-only set dense with planted conflicts and false-conflict traps."""

from typing import Any, ClassVar

from product_sets import ProductSetChecks, Ticket, kind

# The conflicts whose resolved ticket links another article than the one it contradicts.
UNLINKED = {"nordic-camera-upload", "lite-probe-chill", "association-swap-fee"}


class TestHivecast(ProductSetChecks):
    NAME = "hivecast"
    ARTICLES = 16
    WORDS = (200, 300)
    WITH_STEPS = 14
    RESOLVED = 14
    TICKETS = 30
    SPLITS = frozenset({"tune"})
    ANSWER_KINDS: ClassVar[dict[str, int]] = {
        "number": 7,
        "duration": 2,
        "name": 2,
        "procedure": 3,
        "yes_no": 2,
        "conflict": 10,
        "no_draft": 4,
    }
    NO_DRAFT_COUNTS: ClassVar[dict[str, int] | None] = {
        "bug_report": 1,
        "money_specific": 1,
        "account_specific": 1,
        "human_requested": 1,
    }
    CONFLICTS = frozenset(
        {
            "firmware-window",
            "nordic-camera-upload",
            "nuc-swarm-drop",
            "lite-probe-chill",
            "ipad-photo-size",
            "camera-low-battery",
            "gateway-pro-hives",
            "association-swap-fee",
            "nectar-extra-hive",
            "research-retention",
        }
    )

    def test_three_conflicting_answers_link_another_article(
        self, tickets: list[Ticket], resolved: list[dict[str, Any]]
    ) -> None:
        links = {row["id"]: row["linked_docs"] for row in resolved}
        for ticket in tickets:
            if ticket["conflict"] is None:
                continue
            article, answer = ticket["expected_docs"]
            linked = article in links[answer]
            assert linked == (ticket["conflict"] not in UNLINKED), ticket["id"]
            assert ("not linked" in ticket["notes"]) == (not linked), ticket["id"]

    def test_conflicting_resolved_tickets_are_not_reused(self, tickets: list[Ticket]) -> None:
        answers = [t["expected_docs"][1] for t in tickets if t["conflict"] is not None]
        assert len(set(answers)) == len(answers) == 10, answers

    def test_eight_traps_name_a_resolved_ticket_with_a_look_alike_value(
        self, tickets: list[Ticket], sources: dict[str, str]
    ) -> None:
        traps = [t for t in tickets if "trap" in t["notes"]]
        assert len(traps) == 8, [t["id"] for t in traps]
        for ticket in traps:
            assert kind(ticket) not in {"conflict", "no_draft"}, ticket["id"]
            # The trap's answer comes from an article alone, and its resolved ticket
            # does not state that answer.
            assert all(doc.startswith("kb-") for doc in ticket["expected_docs"]), ticket["id"]
            words = ticket["notes"].split()
            named = [word.strip(",.;") for word in words if word.startswith("RT-")]
            assert len(named) == 1 and named[0] in sources, ticket["id"]
            for group in ticket["expected_facts"]:
                assert not any(text.lower() in sources[named[0]].lower() for text in group), (
                    ticket["id"],
                    group,
                )
