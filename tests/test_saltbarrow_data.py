"""Shape of eval/saltbarrow: a blind product (every ticket is `test`), its articles and facts."""

from product_sets import BlindProductChecks

#: Each planted conflict and the resolved ticket that holds its scoped side.
CONFLICT_TICKETS = {
    "enterprise-scan-files-per-case": "RT-1003",
    "scan-uploaded-webhook-timeout": "RT-1006",
}


class TestSaltbarrow(BlindProductChecks):
    NAME = "saltbarrow"
    CONFLICTS = frozenset(CONFLICT_TICKETS)
    CONFLICT_TICKETS = CONFLICT_TICKETS
