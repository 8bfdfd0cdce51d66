"""Shape of eval/conflicts2: two more fictional products, each with 5 planted conflicts, 4
controls and 3 plain tickets (the checks shared with eval/conflicts: `conflict_sets.py`), and
what this set asks besides: numbered steps, 200-290 words an article, hosts on `.example`, and
no id or slug of the first set."""

from __future__ import annotations

import pytest

import conflict_sets as checks
from conflict_sets import EVAL, ConflictSet

CONFLICTS2 = ConflictSet(
    EVAL / "conflicts2",
    # Product folder -> split of all its tickets (both products are test data).
    {"plotwise": "test", "tuftwagon": "test"},
    {
        "AL-008": ("kb-rent-and-billing", "30 days"),
        "AL-009": ("kb-rootstick-probes", "45 minutes"),
        "GV-009": ("kb-reminders-and-messages", "8 weeks"),
    },
)
PRODUCTS = list(CONFLICTS2.products)


@pytest.mark.parametrize("product", PRODUCTS)
def test_articles_are_markdown_with_headings_and_length(product: str) -> None:
    checks.check_articles(CONFLICTS2, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_resolved_tickets_have_the_fields_and_link_existing_articles(product: str) -> None:
    checks.check_resolved(CONFLICTS2, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_tickets_have_the_fields_and_existing_docs(product: str) -> None:
    checks.check_tickets(CONFLICTS2, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_every_fact_alternative_is_in_an_expected_doc_and_not_in_the_ticket(product: str) -> None:
    checks.check_fact_alternatives(CONFLICTS2, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_five_conflicts_four_controls_three_plain(product: str) -> None:
    checks.check_mix(CONFLICTS2, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_conflicts_put_one_value_in_each_source(product: str) -> None:
    checks.check_conflicts(CONFLICTS2, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_controls_agree_in_other_words_or_are_about_another_subject(product: str) -> None:
    checks.check_controls(CONFLICTS2, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_plain_tickets_have_one_source(product: str) -> None:
    checks.check_plain(CONFLICTS2, product)


def test_ids_and_conflict_slugs_are_unique_across_products() -> None:
    checks.check_unique_across_products(CONFLICTS2, tickets=24, slugs=10)


def test_only_the_two_products_are_present() -> None:
    checks.check_only_its_products(CONFLICTS2)


@pytest.mark.parametrize("product", PRODUCTS)
def test_articles_have_numbered_steps_and_200_to_290_words(product: str) -> None:
    checks.check_steps_and_length(CONFLICTS2, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_hosts_are_on_the_reserved_example_domain(product: str) -> None:
    checks.check_example_hosts(CONFLICTS2, product)


def test_ids_and_slugs_do_not_clash_with_the_first_conflicts_set() -> None:
    checks.check_no_clash_with(CONFLICTS2, "conflicts")
