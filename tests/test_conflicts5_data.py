"""Shape of eval/conflicts5: a fifth pair of fictional test products (Steamhollow, Hoverdell),
each with 5 planted conflicts, 4 controls and 3 plain tickets. The checks are the shared ones in
`conflict_sets.py`, as for eval/conflicts to eval/conflicts4, plus what the helper-written sets
ask: numbered steps and 200-290 words an article, hosts on `.example`, and no id or slug of an
earlier set."""

from __future__ import annotations

import pytest

import conflict_sets as checks
from conflict_sets import EVAL, ConflictSet

CONFLICTS5 = ConflictSet(
    EVAL / "conflicts5",
    # Product folder -> split of all its tickets (both products are test data).
    {"steamhollow": "test", "hoverdell": "test"},
    # Different-subject controls -> the article with the look-alike value, and that value.
    {
        "SH-008": ("kb-session-booking", "16 bathers"),
        "SH-009": ("kb-stoves-and-heaters", "15 minutes"),
        "HD-009": ("kb-plans-and-pricing", "5 pilot seats"),
    },
)
PRODUCTS = list(CONFLICTS5.products)
EARLIER_SETS = ("conflicts", "conflicts2", "conflicts3", "conflicts4")


@pytest.mark.parametrize("product", PRODUCTS)
def test_articles_are_markdown_with_headings_and_length(product: str) -> None:
    checks.check_articles(CONFLICTS5, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_resolved_tickets_have_the_fields_and_link_existing_articles(product: str) -> None:
    checks.check_resolved(CONFLICTS5, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_tickets_have_the_fields_and_existing_docs(product: str) -> None:
    checks.check_tickets(CONFLICTS5, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_every_fact_alternative_is_in_an_expected_doc_and_not_in_the_ticket(product: str) -> None:
    checks.check_fact_alternatives(CONFLICTS5, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_five_conflicts_four_controls_three_plain(product: str) -> None:
    checks.check_mix(CONFLICTS5, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_conflicts_put_one_value_in_each_source(product: str) -> None:
    checks.check_conflicts(CONFLICTS5, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_controls_agree_in_other_words_or_are_about_another_subject(product: str) -> None:
    checks.check_controls(CONFLICTS5, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_plain_tickets_have_one_source(product: str) -> None:
    checks.check_plain(CONFLICTS5, product)


def test_ids_and_conflict_slugs_are_unique_across_products() -> None:
    checks.check_unique_across_products(CONFLICTS5, tickets=24, slugs=10)


def test_only_the_two_products_are_present() -> None:
    checks.check_only_its_products(CONFLICTS5)


@pytest.mark.parametrize("product", PRODUCTS)
def test_articles_have_numbered_steps_and_200_to_290_words(product: str) -> None:
    checks.check_steps_and_length(CONFLICTS5, product)


@pytest.mark.parametrize("product", PRODUCTS)
def test_hosts_are_on_the_reserved_example_domain(product: str) -> None:
    checks.check_example_hosts(CONFLICTS5, product)


@pytest.mark.parametrize("earlier", EARLIER_SETS)
def test_ids_and_slugs_do_not_clash_with_the_earlier_conflicts_sets(earlier: str) -> None:
    checks.check_no_clash_with(CONFLICTS5, earlier)


def test_ids_are_not_used_by_any_other_eval_set() -> None:
    checks.check_ids_unused_elsewhere(CONFLICTS5)
