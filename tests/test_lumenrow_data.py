"""Shape of eval/lumenrow: a blind product (every ticket is `test`), its articles and key facts."""

from product_sets import BlindProductChecks

#: Each planted conflict and the resolved ticket that holds its scoped side.
CONFLICT_TICKETS = {
    "enterprise-export-link-days": "RT-1003",
    "members-import-upload-size": "RT-1006",
}


class TestLumenrow(BlindProductChecks):
    NAME = "lumenrow"
    CONFLICTS = frozenset(CONFLICT_TICKETS)
    CONFLICT_TICKETS = CONFLICT_TICKETS
