"""Shape of eval/pawledger: a blind product (every ticket is `test`), its articles and key facts."""

from product_sets import BlindProductChecks

#: Each planted conflict and the resolved ticket that holds its scoped side.
CONFLICT_TICKETS = {"rabies-reminder-count": "RT-1003", "corvane-attachment-size": "RT-1006"}


class TestPawledger(BlindProductChecks):
    NAME = "pawledger"
    CONFLICTS = frozenset(CONFLICT_TICKETS)
    CONFLICT_TICKETS = CONFLICT_TICKETS
