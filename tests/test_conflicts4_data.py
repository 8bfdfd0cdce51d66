"""Shape of eval/conflicts4: two more fictional test products, each with 5 planted conflicts,
4 controls and 3 plain tickets (the checks shared with eval/conflicts, eval/conflicts2 and
eval/conflicts3: `conflict_sets.py`), and what this set asks besides: numbered steps, 200-290
words an article, hosts on `.example`, and no id or slug of the earlier sets."""

from __future__ import annotations

import pytest

import conflict_sets as checks
from conflict_sets import EVAL, ConflictSet

CONFLICTS4 = ConflictSet(
    EVAL / "conflicts4",
    # Product folder -> split of all its tickets (both products are test data).
    {"hexaloom": "test", "mirevane": "test"},
    {
        "HX-008": ("kb-loom-booking", "4 open bookings"),
        "HX-009": ("kb-yarn-stock", "10 days"),
        "MV-009": ("kb-group-and-school-bookings", "8 curlers"),
    },
)
PRODUCTS = list(CONFLICTS4.products)
EARLIER_SETS = ("conflicts", "conflicts2", "conflicts3")


@pytest.mark.parametrize("product", PRODUCTS)
def test_articles_are_markdown_with_headings_and_length(product: str) -> None:
    checks.check_articles(CONFLICTS4, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_resolved_tickets_have_the_fields_and_link_existing_articles(product: str) -> None:
    checks.check_resolved(CONFLICTS4, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_tickets_have_the_fields_and_existing_docs(product: str) -> None:
    checks.check_tickets(CONFLICTS4, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_every_fact_alternative_is_in_an_expected_doc_and_not_in_the_ticket(product: str) -> None:
    checks.check_fact_alternatives(CONFLICTS4, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_five_conflicts_four_controls_three_plain(product: str) -> None:
    checks.check_mix(CONFLICTS4, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_conflicts_put_one_value_in_each_source(product: str) -> None:
    checks.check_conflicts(CONFLICTS4, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_controls_agree_in_other_words_or_are_about_another_subject(product: str) -> None:
    checks.check_controls(CONFLICTS4, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_plain_tickets_have_one_source(product: str) -> None:
    checks.check_plain(CONFLICTS4, product)


def test_ids_and_conflict_slugs_are_unique_across_products() -> None:
    checks.check_unique_across_products(CONFLICTS4, tickets=24, slugs=10)


def test_only_the_two_products_are_present() -> None:
    checks.check_only_its_products(CONFLICTS4)


@pytest.mark.parametrize("product", PRODUCTS)
def test_articles_have_numbered_steps_and_200_to_290_words(product: str) -> None:
    checks.check_steps_and_length(CONFLICTS4, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_hosts_are_on_the_reserved_example_domain(product: str) -> None:
    checks.check_example_hosts(CONFLICTS4, product)


@pytest.mark.parametrize("earlier", EARLIER_SETS)
def test_ids_and_slugs_do_not_clash_with_the_earlier_conflicts_sets(earlier: str) -> None:
    checks.check_no_clash_with(CONFLICTS4, earlier)


def test_ids_are_not_used_by_any_other_eval_set() -> None:
    checks.check_ids_unused_elsewhere(CONFLICTS4)
