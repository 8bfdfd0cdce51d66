"""Shape of eval/kettlewick: a blind product (every ticket is `test`), its articles and facts."""

from product_sets import BlindProductChecks

#: Each planted conflict and the resolved ticket that holds its scoped side.
CONFLICT_TICKETS = {
    "enterprise-guardians-per-student": "RT-1003",
    "uk-region-absence-cutoff": "RT-1006",
}


class TestKettlewick(BlindProductChecks):
    NAME = "kettlewick"
    CONFLICTS = frozenset(CONFLICT_TICKETS)
    CONFLICT_TICKETS = CONFLICT_TICKETS
