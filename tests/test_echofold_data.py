"""Shape of eval/echofold: a blind product (every ticket is `test`), its articles and key facts."""

from product_sets import RECIPE_ANSWER_KINDS, RECIPE_NO_DRAFT, BlindProductChecks

#: Each planted conflict and the resolved ticket that holds its scoped side.
CONFLICT_TICKETS = {"partner-revenue-share": "RT-1003", "network-delivery-bitrate": "RT-1006"}


class TestEchofold(BlindProductChecks):
    NAME = "echofold"
    ARTICLES = 22
    WORDS = (220, 300)
    WITH_STEPS = 22
    RESOLVED = 12
    TICKETS = 44
    ANSWER_KINDS = RECIPE_ANSWER_KINDS
    SPLITS = frozenset({"test"})
    NO_DRAFT_COUNTS = RECIPE_NO_DRAFT
    CONFLICTS = frozenset(CONFLICT_TICKETS)
    CONFLICT_TICKETS = CONFLICT_TICKETS
