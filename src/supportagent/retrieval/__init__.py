"""Search over the knowledge base and resolved tickets: BM25 and dense signals, fused, explained.

The names below are loaded from their modules on first use (PEP 562), so that importing one
module of this package (``retrieval.dense``, say, which a one-shot ``triage`` loads MiniLM
from in a thread while the rest is imported) does not import all the others first.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "BM25Index": "bm25",
    "bm25_scores": "bm25",
    "CachedEmbedder": "dense",
    "Embedder": "dense",
    "OnnxMiniLM": "dense",
    "OpenAIEmbedder": "dense",
    "Fusion": "fusion",
    "reciprocal_rank_fusion": "fusion",
    "weighted_score_fusion": "fusion",
    "evaluate": "metrics",
    "ndcg_at_k": "metrics",
    "recall_at_k": "metrics",
    "reciprocal_rank": "metrics",
    "split_passages": "passages",
    "SIGNALS": "retriever",
    "HybridRetriever": "retriever",
    "tokenize": "text",
}


def __getattr__(name: str) -> Any:
    module = _HOMES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


__all__ = [
    "SIGNALS",
    "BM25Index",
    "CachedEmbedder",
    "Embedder",
    "Fusion",
    "HybridRetriever",
    "OnnxMiniLM",
    "OpenAIEmbedder",
    "bm25_scores",
    "evaluate",
    "ndcg_at_k",
    "recall_at_k",
    "reciprocal_rank",
    "reciprocal_rank_fusion",
    "split_passages",
    "tokenize",
    "weighted_score_fusion",
]
