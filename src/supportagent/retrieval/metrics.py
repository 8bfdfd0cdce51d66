"""Retrieval quality measures with binary relevance: Recall@k, MRR and nDCG@k (pure).

A ranking may repeat an id (several passages of one document, say); repeats are dropped
before the cut at ``k``, so a system cannot score twice for the same document.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence

DEFAULT_KS = (1, 3, 5, 10)


def _check_k(k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")


def _check_relevant(relevant: Collection[str]) -> None:
    if not relevant:
        raise ValueError("the metric is undefined for a query without relevant documents")


def _dedupe(ranked: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ranked))


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Share of the relevant documents that appear in the top ``k``."""
    _check_k(k)
    _check_relevant(relevant)
    wanted = set(relevant)
    found = sum(1 for doc in _dedupe(ranked)[:k] if doc in wanted)
    return found / len(wanted)


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str]) -> float:
    """``1 / rank`` of the first relevant document; 0.0 when none is retrieved."""
    wanted = set(relevant)
    for rank, doc in enumerate(_dedupe(ranked), start=1):
        if doc in wanted:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """DCG of the top ``k`` (gain 1 per relevant document, discount ``log2(rank + 1)``) over
    the ideal DCG, where all relevant documents come first (``min(k, |relevant|)`` of them)."""
    _check_k(k)
    _check_relevant(relevant)
    wanted = set(relevant)
    dcg = sum(
        1.0 / math.log2(rank + 1)
        for rank, doc in enumerate(_dedupe(ranked)[:k], start=1)
        if doc in wanted
    )
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(wanted)) + 1))
    return dcg / ideal


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean; ValueError for no values (an average of nothing is a bug upstream)."""
    items = list(values)
    if not items:
        raise ValueError("mean of no values")
    return math.fsum(items) / len(items)


def evaluate(
    run: Mapping[str, Sequence[str]],
    qrels: Mapping[str, Collection[str]],
    ks: Iterable[int] = DEFAULT_KS,
) -> dict[str, float]:
    """Mean metrics over the queries in ``qrels`` that have at least one relevant document.

    A query missing from ``run`` counts as an empty ranking. Keys: ``recall@k`` and
    ``ndcg@k`` for each ``k`` in ``ks`` (ascending), and ``mrr``.
    """
    cutoffs = sorted(set(ks))
    for k in cutoffs:
        _check_k(k)
    queries = sorted(qid for qid, relevant in qrels.items() if relevant)
    if not queries:
        raise ValueError("no query in qrels has a relevant document")
    result: dict[str, float] = {}
    for k in cutoffs:
        result[f"recall@{k}"] = mean(recall_at_k(run.get(q, ()), qrels[q], k) for q in queries)
    for k in cutoffs:
        result[f"ndcg@{k}"] = mean(ndcg_at_k(run.get(q, ()), qrels[q], k) for q in queries)
    result["mrr"] = mean(reciprocal_rank(run.get(q, ()), qrels[q]) for q in queries)
    return result
