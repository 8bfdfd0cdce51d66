"""Search over the knowledge base and resolved tickets: BM25 and dense signals, fused, explained."""

from supportagent.retrieval.bm25 import BM25Index, bm25_scores
from supportagent.retrieval.dense import CachedEmbedder, Embedder, OnnxMiniLM, OpenAIEmbedder
from supportagent.retrieval.fusion import Fusion, reciprocal_rank_fusion, weighted_score_fusion
from supportagent.retrieval.metrics import evaluate, ndcg_at_k, recall_at_k, reciprocal_rank
from supportagent.retrieval.passages import split_passages
from supportagent.retrieval.retriever import SIGNALS, HybridRetriever
from supportagent.retrieval.text import tokenize

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
