"""BM25 keyword search: a thin wrapper over ``bm25s`` plus the formula in plain Python.

Scoring is Lucene's BM25 (as in Lucene 8+, which bm25s calls "lucene"): for each query token
``t`` (repeats count again) and document ``d``::

    idf(t)     = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    score(t,d) = idf(t) * tf(t,d) / (tf(t,d) + k1 * (1 - b + b * len(d) / avgdl))

``bm25_scores`` is that formula written out, so tests can hold the wrapper to it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import bm25s
import numpy as np
import numpy.typing as npt

from supportagent.retrieval.text import tokenize

K1 = 1.5
B = 0.75

Mask = npt.NDArray[np.bool_]


def bm25_scores(
    query_tokens: Sequence[str],
    docs_tokens: Sequence[Sequence[str]],
    k1: float = K1,
    b: float = B,
) -> list[float]:
    """Lucene BM25 score of every document for the query, computed directly (reference)."""
    n_docs = len(docs_tokens)
    if n_docs == 0:
        return []
    avgdl = sum(len(doc) for doc in docs_tokens) / n_docs
    counts = [Counter(doc) for doc in docs_tokens]
    df: Counter[str] = Counter()
    for doc_counts in counts:
        df.update(doc_counts.keys())
    scores: list[float] = []
    for doc, doc_counts in zip(docs_tokens, counts, strict=True):
        norm = k1 * (1 - b + b * len(doc) / avgdl) if avgdl else k1
        total = 0.0
        for token in query_tokens:
            tf = doc_counts.get(token, 0)
            if tf == 0:
                continue
            idf = math.log(1 + (n_docs - df[token] + 0.5) / (df[token] + 0.5))
            total += idf * tf / (tf + norm)
        scores.append(total)
    return scores


def top_k(scores: npt.NDArray[Any], k: int, mask: Mask | None = None) -> list[tuple[int, float]]:
    """The ``k`` best positive scores as ``(index, score)``, highest first, ties by index."""
    keep = scores > 0
    if mask is not None:
        keep &= mask
    candidates = np.flatnonzero(keep)
    if k <= 0 or candidates.size == 0:
        return []
    # lexsort orders by the last key first: score descending, then index ascending.
    order = np.lexsort((candidates, -scores[candidates]))[:k]
    return [(int(candidates[i]), float(scores[candidates[i]])) for i in order]


class BM25Index:
    """An immutable BM25 index over a list of texts; search returns positions in that list."""

    def __init__(self, model: Any | None, size: int) -> None:
        # ``model`` is None when no document has a single token: every search is then empty.
        self._model = model
        self._size = size

    @classmethod
    def build(cls, texts: Sequence[str]) -> BM25Index:
        """Tokenize ``texts`` with :func:`tokenize` and index them."""
        return cls.from_tokens([tokenize(text) for text in texts])

    @classmethod
    def from_tokens(cls, docs_tokens: Sequence[Sequence[str]]) -> BM25Index:
        """Index documents that are already tokenized (with :func:`tokenize`)."""
        corpus = [list(tokens) for tokens in docs_tokens]
        if not any(corpus):
            return cls(None, len(corpus))
        model = bm25s.BM25(k1=K1, b=B, method="lucene", backend="numpy", csc_backend="numpy")
        model.index(corpus, show_progress=False)
        return cls(model, len(corpus))

    def __len__(self) -> int:
        return self._size

    def scores(self, query_tokens: Sequence[str]) -> npt.NDArray[np.float32]:
        """The score of every document (zero where no query token occurs)."""
        if self._model is None:
            return np.zeros(self._size, dtype=np.float32)
        vocab: dict[str, int] = self._model.vocab_dict
        ids = [vocab[token] for token in query_tokens if token and token in vocab]
        if not ids:
            return np.zeros(self._size, dtype=np.float32)
        result: npt.NDArray[np.float32] = self._model.get_scores_from_ids(ids)
        return result

    def search_tokens(
        self, query_tokens: Sequence[str], k: int, mask: Mask | None = None
    ) -> list[tuple[int, float]]:
        """Top ``k`` documents for a tokenized query, optionally only where ``mask`` is true."""
        if mask is not None and mask.shape != (self._size,):
            raise ValueError(f"mask has shape {mask.shape}, expected ({self._size},)")
        return top_k(self.scores(query_tokens), k, mask)

    def search(self, query: str, k: int, mask: Mask | None = None) -> list[tuple[int, float]]:
        """Top ``k`` ``(index, score)`` pairs with a positive score, best first, ties by index."""
        return self.search_tokens(tokenize(query), k, mask)
