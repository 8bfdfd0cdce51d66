"""Shape of eval/ferrytale: articles, resolved tickets, labelled tickets, splits and key facts."""

from product_sets import ProductSetChecks


class TestFerrytale(ProductSetChecks):
    NAME = "ferrytale"
    ARTICLES = 22
    WORDS = (180, 330)
    WITH_STEPS = 18
    RESOLVED = 10
    TICKETS = 44
    SPLITS = frozenset({"tune", "test"})
    CONFLICTS = frozenset({"payout-schedule", "tidal-check-in"})
