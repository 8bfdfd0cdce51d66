"""Shape of eval/rillgate: a blind product (every ticket is `test`), its articles and key facts."""

from product_sets import BlindProductChecks

#: Each planted conflict and the resolved ticket that holds its scoped side.
CONFLICT_TICKETS = {"solar-update-window": "RT-8003", "regional-rain-threshold": "RT-8006"}


class TestRillgate(BlindProductChecks):
    NAME = "rillgate"
    WITH_STEPS = 18
    CONFLICTS = frozenset(CONFLICT_TICKETS)
    CONFLICT_TICKETS = CONFLICT_TICKETS
