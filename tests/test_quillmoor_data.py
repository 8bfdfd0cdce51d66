"""Shape of eval/quillmoor: a blind product (every ticket is `test`), its articles and facts."""

from product_sets import BlindProductChecks

#: Each planted conflict and the resolved ticket that holds its scoped side.
CONFLICT_TICKETS = {
    "guild-parcel-weight": "RT-1003",
    "case-binding-proof-pages": "RT-1008",
}


class TestQuillmoor(BlindProductChecks):
    NAME = "quillmoor"
    CONFLICTS = frozenset(CONFLICT_TICKETS)
    CONFLICT_TICKETS = CONFLICT_TICKETS
