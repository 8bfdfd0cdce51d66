"""Shape of eval/conflicts: four fictional products, each with 5 planted conflicts, 4 controls
and 3 plain tickets (the checks: `conflict_sets.py`)."""

from __future__ import annotations

import pytest

import conflict_sets as checks
from conflict_sets import EVAL, ConflictSet

CONFLICTS = ConflictSet(
    EVAL / "conflicts",
    # Product folder -> split of all its tickets (the first two are tune data, the last two
    # test data, as written; Kilnmark and Windlog were released as tune in the twenty-second
    # session).
    {"tallyfern": "tune", "cantorel": "tune", "kilnmark": "test", "windlog": "test"},
    {
        "TF-008": ("kb-rider-passes", "24 hours"),
        "TF-009": ("kb-data-and-reports", "50,000 rides"),
        "CT-009": ("kb-music-shelf", "40 MB"),
        "KM-008": ("kb-firing-queue", "30 days"),
        "KM-009": ("kb-memberships-and-shelves", "3 wheel bookings"),
        "WL-009": ("kb-windlog-app", "30 days"),
    },
)
PRODUCTS = list(CONFLICTS.products)


@pytest.mark.parametrize("product", PRODUCTS)
def test_articles_are_markdown_with_headings_and_length(product: str) -> None:
    checks.check_articles(CONFLICTS, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_resolved_tickets_have_the_fields_and_link_existing_articles(product: str) -> None:
    checks.check_resolved(CONFLICTS, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_tickets_have_the_fields_and_existing_docs(product: str) -> None:
    checks.check_tickets(CONFLICTS, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_every_fact_alternative_is_in_an_expected_doc_and_not_in_the_ticket(product: str) -> None:
    checks.check_fact_alternatives(CONFLICTS, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_five_conflicts_four_controls_three_plain(product: str) -> None:
    checks.check_mix(CONFLICTS, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_conflicts_put_one_value_in_each_source(product: str) -> None:
    checks.check_conflicts(CONFLICTS, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_controls_agree_in_other_words_or_are_about_another_subject(product: str) -> None:
    checks.check_controls(CONFLICTS, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_plain_tickets_have_one_source(product: str) -> None:
    checks.check_plain(CONFLICTS, product)


def test_ids_and_conflict_slugs_are_unique_across_products() -> None:
    checks.check_unique_across_products(CONFLICTS, tickets=48, slugs=20)


def test_only_the_four_products_are_present() -> None:
    checks.check_only_its_products(CONFLICTS)
