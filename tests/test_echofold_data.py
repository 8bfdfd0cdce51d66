"""Shape of eval/echofold: a blind product (every ticket is `test`), its articles and key facts."""

from product_sets import BlindProductChecks

#: Each planted conflict and the resolved ticket that holds its scoped side.
CONFLICT_TICKETS = {"partner-revenue-share": "RT-1003", "network-delivery-bitrate": "RT-1006"}


class TestEchofold(BlindProductChecks):
    NAME = "echofold"
    CONFLICTS = frozenset(CONFLICT_TICKETS)
    CONFLICT_TICKETS = CONFLICT_TICKETS
