"""Reciprocal Rank Fusion: merge several rankings of the same items into one (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

DEFAULT_RRF_K = 60


def validate_fusion(k: int, weights: Mapping[str, float] | None) -> None:
    """Raise ValueError unless ``k`` is positive and every weight is finite and non-negative."""
    if k <= 0:
        raise ValueError(f"RRF k must be positive, got {k}")
    for name, weight in (weights or {}).items():
        if not weight >= 0 or weight == float("inf"):
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
