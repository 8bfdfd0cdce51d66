"""Fusion: merge several signals' views of the same items into one ranking (pure).

Two methods. **Reciprocal Rank Fusion** adds ``w / (k + rank)`` per signal: it needs nothing
but ranks, and it is the textbook choice; but it lets a weak signal's noise pull a strong
signal's answer down (on StackFAQ, RRF of BM25 and dense scores below dense alone).
**Weighted score fusion** adds ``w * normalised score`` per signal, where each signal's score is
divided by a bound that depends only on the query (BM25: the sum of the query tokens' idf, the
most any passage could score; dense: cosine similarity, already at most 1). The normalised
scores keep their absolute meaning, so a signal that matches the query well speaks loudly and
one that barely matches stays quiet, query by query, and fused scores from two searches can be
compared. It is the default; ``docs/retrieval.md`` has the measurements behind that choice.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

DEFAULT_RRF_K = 60
FusionMethod = Literal["weighted", "rrf"]
#: Weighted fusion: dense similarity counts three times a full BM25 match of the passage body;
#: the title signal mostly breaks near-ties. Chosen on StackFAQ, the demo eval set, the demo
#: inbox and a RAGTruth-derived set; weights read per corpus (``adaptive.py``) did not beat them
#: under leave-one-dataset-out over five sets, nor over six (round 4), though they fall 0.023
#: MRR below BM25 alone on a technical-documentation set (docs/retrieval.md).
DEFAULT_WEIGHTS: Mapping[str, float] = {"body": 1.0, "title": 0.5, "dense": 3.0}
#: The default's per-query lexical trust (``Fusion.lexical_trust``): chosen by
#: leave-one-dataset-out over five sets, and the best mean over six (docs/retrieval.md).
DEFAULT_LEXICAL_TRUST = 2.0
_EQUAL_WEIGHTS: Mapping[str, float] = {"body": 1.0, "title": 1.0, "dense": 1.0}


@dataclass(frozen=True, slots=True)
class Fusion:
    """How to fuse: the method, each signal's weight and RRF's ``k``.

    The weights name the signals a search uses; a signal not named is not used. Without
    weights, ``weighted`` uses ``DEFAULT_WEIGHTS`` and ``rrf`` weighs every signal 1.
    """

    method: FusionMethod = "weighted"
    weights: Mapping[str, float] | None = None
    rrf_k: int = DEFAULT_RRF_K
    #: Weighted fusion only: the body weight of each query is multiplied by
    #: ``1 + lexical_trust * b``, where ``b`` is the best normalised BM25 body score of that
    #: query (the share of its idf weight the best passage matches). A query whose rare words a
    #: passage matches outright (a command name, an error code) leans on BM25; a paraphrase,
    #: which matches little, leaves the weights as they are. 0 = fixed weights.
    lexical_trust: float = 0.0

    def __post_init__(self) -> None:
        if self.method not in ("weighted", "rrf"):
            raise ValueError(f"unknown fusion method {self.method!r}; use 'weighted' or 'rrf'")
        validate_fusion(self.rrf_k, self.weights)
        if not self.lexical_trust >= 0 or math.isinf(self.lexical_trust):
            raise ValueError(f"lexical_trust must be finite and >= 0, got {self.lexical_trust}")

    @property
    def signal_weights(self) -> Mapping[str, float]:
        if self.weights is not None:
            return self.weights
        return DEFAULT_WEIGHTS if self.method == "weighted" else _EQUAL_WEIGHTS

    def weight(self, signal: str) -> float:
        return float(self.signal_weights.get(signal, 0.0))

    def describe(self) -> str:
        """A short label: ``weighted body=1 dense=3 title=0.5``, ``rrf(k=60) body+dense``."""
        used = {name: w for name, w in sorted(self.signal_weights.items()) if w > 0}
        if self.method == "rrf":
            names = "+".join(used) if all(w == 1 for w in used.values()) else _pairs(used)
            return f"rrf(k={self.rrf_k}) {names}"
        trust = f" lexical_trust={self.lexical_trust:g}" if self.lexical_trust else ""
        return f"weighted {_pairs(used)}{trust}"


def _pairs(weights: Mapping[str, float]) -> str:
    return " ".join(f"{name}={weight:g}" for name, weight in weights.items())


def validate_fusion(k: int, weights: Mapping[str, float] | None) -> None:
    """Raise ValueError unless ``k`` is positive and every weight is finite and non-negative."""
    if k <= 0:
        raise ValueError(f"RRF k must be positive, got {k}")
    for name, weight in (weights or {}).items():
        if not weight >= 0 or math.isinf(weight):
            raise ValueError(f"weight for signal {name!r} must be finite and >= 0, got {weight}")


def first_ranks(ranking: Sequence[str]) -> dict[str, int]:
    """1-based rank of each item at its first position; later repeats are ignored."""
    ranks: dict[str, int] = {}
    for position, item in enumerate(ranking, start=1):
        ranks.setdefault(item, position)
    return ranks


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[str]],
    k: int = DEFAULT_RRF_K,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse named rankings: ``score(d) = sum over signals of w / (k + rank(d))``.

    Ranks are 1-based; an item repeated within one ranking counts once, at its first
    position. A signal missing from ``weights`` has weight 1. The result holds every item of
    every ranking, best first; ties go to the better best single rank, then the smaller id.
    """
    validate_fusion(k, weights)
    weights = weights or {}
    scores: dict[str, float] = {}
    best_rank: dict[str, int] = {}
    # Signals in name order so the floating-point sum does not depend on mapping order.
    for signal in sorted(rankings):
        weight = float(weights.get(signal, 1.0))
        for item, rank in first_ranks(rankings[signal]).items():
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
            best_rank[item] = min(best_rank.get(item, rank), rank)
    ordered = sorted(scores, key=lambda item: (-scores[item], best_rank[item], item))
    return [(item, scores[item]) for item in ordered]


def weighted_score_fusion(
    normalized: Mapping[str, npt.NDArray[np.float32]], weights: Mapping[str, float]
) -> npt.NDArray[np.float64]:
    """``sum over signals of weight * normalised score``, item by item (aligned arrays).

    Signals are added in name order, so the floating-point sum does not depend on mapping
    order. A signal without a weight adds nothing.
    """
    validate_fusion(DEFAULT_RRF_K, weights)
    sizes = {len(scores) for scores in normalized.values()}
    if len(sizes) > 1:
        raise ValueError(f"signals disagree on the number of items: {sorted(sizes)}")
    total = np.zeros(sizes.pop() if sizes else 0, dtype=np.float64)
    for name in sorted(normalized):
        weight = float(weights.get(name, 0.0))
        if weight:
            total += weight * normalized[name].astype(np.float64)
    return total
