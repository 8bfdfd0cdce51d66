"""BM25 keyword search: an append-friendly inverted index, and the formula in plain Python.

Scoring is Lucene's BM25 (as in Lucene 8+, which bm25s calls "lucene"): for each query token
``t`` (repeats count again) and document ``d``::

    idf(t)     = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    score(t,d) = idf(t) * tf(t,d) / (tf(t,d) + k1 * (1 - b + b * len(d) / avgdl))

``bm25_scores`` is that formula written out, so tests can hold the index to it.

The index keeps, per token, the documents it occurs in and the length-normalised term
frequency ``tf / (tf + k1 * (1 - b + b * len / avgdl))``, times the token's idf as of the last
merge; a query rescales that by the current idf, so idf is always exact. Adding documents
appends a small *tail* and leaves the merged part untouched; the retriever merges (rebuilds)
once the tail passes ``MERGE_FRACTION`` of the index. Until then length normalisation uses the
average length of the last merge, which is the only approximation, and a small one.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from supportagent.retrieval.text import tokenize
from supportagent.retrieval.vocabulary import MappedVocabulary, pack, sorted_order

K1 = 1.5
B = 0.75
#: A tail longer than this share of the merged documents (and than MERGE_MIN) asks for a merge.
MERGE_FRACTION = 0.05
MERGE_MIN = 64

Mask = npt.NDArray[np.bool_]
Scores = npt.NDArray[np.float32]


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
            total += idf(n_docs, df[token]) * tf / (tf + norm)
        scores.append(total)
    return scores


def idf(n_docs: int, df: int) -> float:
    """Lucene's BM25 idf; always positive, highest for a token no document has."""
    return math.log(1 + (n_docs - df + 0.5) / (df + 0.5))


def top_k(scores: npt.NDArray[Any], k: int, mask: Mask | None = None) -> list[tuple[int, float]]:
    """The ``k`` best positive scores as ``(index, score)``, highest first, ties by index."""
    found = top_indices(scores, k, mask)
    return [(int(i), float(scores[i])) for i in found]


def top_indices(scores: npt.NDArray[Any], k: int, mask: Mask | None = None) -> npt.NDArray[np.intp]:
    """The indices ``top_k`` returns, as an array (no Python objects for a deep cut)."""
    if k <= 0:
        return np.empty(0, dtype=np.intp)
    keep = scores > 0
    floor = _floor(scores, k, mask)
    if floor is not None:
        keep &= scores >= floor
    if mask is not None:
        keep &= mask
    candidates = np.flatnonzero(keep)
    if candidates.size > 4 * k:
        # Only the k best can matter: cut with a partial sort, keeping every tie of the k-th.
        values = scores[candidates]
        kth = np.partition(values, values.size - k)[values.size - k]
        candidates = candidates[values >= kth]
    # lexsort orders by the last key first: score descending, then index ascending.
    return candidates[np.lexsort((candidates, -scores[candidates]))[:k]]


#: Arrays at least this long are cut by a sampled bound first (see ``_floor``).
_SAMPLED = 1 << 16
_STRIDE = 16


def _floor(scores: npt.NDArray[Any], k: int, mask: Mask | None) -> float | None:
    """A value no higher than the k-th best positive score, from every 16th score; None for a
    short array or too few positive samples.

    The k-th best of a subset can only be at or below the k-th best of the whole, so keeping
    the scores at or above it keeps every one of the k best and all their ties: ``top_k``
    returns exactly what it would without it, after one pass instead of a partial sort of a
    million candidates."""
    if scores.size < _SAMPLED:
        return None
    sample = scores[::_STRIDE]
    if mask is not None:
        sample = sample[mask[::_STRIDE]]
    sample = sample[sample > 0]
    if sample.size < k:
        return None
    return float(np.partition(sample, sample.size - k)[sample.size - k])


@dataclass(frozen=True, slots=True)
class _Postings:
    """Compressed columns: the documents of token ``i`` are ``docs[start[i]:start[i + 1]]``."""

    vocab: Mapping[str, int]
    start: npt.NDArray[np.int64]
    docs: npt.NDArray[np.int32]
    weights: npt.NDArray[np.float32]

    def df(self, token: str) -> int:
        i = self.vocab.get(token)
        return 0 if i is None else int(self.start[i + 1] - self.start[i])


@dataclass(frozen=True, slots=True)
class Term:
    """One query token's postings in one part of the index (merged or tail): document
    ``docs[i]`` (ascending) gets ``weights[i] * scale`` from it, in float32, as ``scores``
    adds it. ``key`` names the token's postings for the cache of their peaks."""

    docs: npt.NDArray[np.int32]
    weights: npt.NDArray[np.float32]
    scale: np.float32 | None
    key: tuple[int, int]

    def contributions(self, at: npt.NDArray[np.intp] | None = None) -> Scores:
        """What the documents at ``at`` (indices into ``docs``; all when None) get."""
        weights = self.weights if at is None else self.weights[at]
        return weights if self.scale is None else weights * self.scale


def _postings(
    docs_tokens: Sequence[Sequence[str]], offset: int, avgdl: float, with_idf: bool
) -> _Postings:
    """Index ``docs_tokens`` as documents ``offset, offset + 1, ...``.

    Each posting's weight is ``tf / (tf + norm)``, times the token's idf over these documents
    when ``with_idf`` (the merged part, so that a query adds weights and multiplies nothing).
    """
    vocab: dict[str, int] = {}
    # Typed arrays, not lists of ints: a 100k-passage build would hold millions of them.
    token_ids, doc_ids, tfs, lengths = array("q"), array("i"), array("f"), array("f")
    for position, tokens in enumerate(docs_tokens):
        for token, count in Counter(tokens).items():
            token_ids.append(vocab.setdefault(token, len(vocab)))
            doc_ids.append(position)
            tfs.append(count)
        lengths.append(len(tokens))
    tok = np.frombuffer(token_ids, dtype=np.int64)
    order = np.argsort(tok, kind="stable")  # stable: documents stay ascending within a token
    docs = np.frombuffer(doc_ids, dtype=np.int32)[order]
    tf = np.frombuffer(tfs, dtype=np.float32)[order]
    length = np.frombuffer(lengths, dtype=np.float32)[docs]
    relative = length / np.float32(avgdl) if avgdl > 0 else np.ones_like(length)
    norm = np.float32(K1) * (np.float32(1 - B) + np.float32(B) * relative)
    counts = np.bincount(tok, minlength=len(vocab))
    start = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    weights = tf / (tf + norm)
    if with_idf and len(docs_tokens):
        n = np.float64(len(docs_tokens))
        idfs = np.log1p((n - counts + 0.5) / (counts + 0.5)).astype(np.float32)
        weights *= np.repeat(idfs, counts)
    return _Postings(vocab, start, docs + np.int32(offset), np.asarray(weights, np.float32))


class BM25Index:
    """An immutable BM25 index over token lists; search returns positions in that list.

    ``with_added`` returns a new index that shares this one's merged postings and appends the
    new documents to a small tail, so readers of the old index are never disturbed.
    """

    def __init__(
        self,
        merged: _Postings,
        tail: _Postings,
        size: int,
        merged_size: int,
        avgdl: float,
        tail_tokens: tuple[tuple[str, ...], ...] = (),
    ) -> None:
        self._merged, self._tail = merged, tail
        self._size, self._merged_size, self._avgdl = size, merged_size, avgdl
        self._tail_tokens = tail_tokens
        # The largest weight of each token's postings, computed once: the index never changes.
        self._peaks: dict[tuple[int, int], float] = {}

    @classmethod
    def build(cls, texts: Sequence[str]) -> BM25Index:
        """Tokenize ``texts`` with :func:`tokenize` and index them."""
        return cls.from_tokens([tokenize(text) for text in texts])

    @classmethod
    def from_tokens(cls, docs_tokens: Sequence[Sequence[str]]) -> BM25Index:
        """Index documents that are already tokenized (with :func:`tokenize`)."""
        total = sum(len(tokens) for tokens in docs_tokens)
        avgdl = total / len(docs_tokens) if docs_tokens else 0.0
        merged = _postings(docs_tokens, 0, avgdl, with_idf=True)
        empty = _postings((), 0, avgdl, with_idf=False)
        return cls(merged, empty, len(docs_tokens), len(docs_tokens), avgdl)

    def to_arrays(self) -> tuple[dict[str, npt.NDArray[Any]], dict[str, Any]]:
        """The merged index as plain arrays and numbers, for ``ondisk`` (no tail allowed)."""
        if self._tail_tokens:
            raise ValueError("merge the index before saving it (it has an unmerged tail)")
        tokens = [b""] * len(self._merged.vocab)
        for token, i in self._merged.vocab.items():
            tokens[i] = token.encode("utf-8")
        blob, ends = pack(tokens)
        arrays: dict[str, npt.NDArray[Any]] = {
            "vocab": blob,
            "vocab_ends": ends,
            "vocab_order": sorted_order(tokens),
            "start": self._merged.start,
            "docs": self._merged.docs,
            "weights": self._merged.weights,
        }
        return arrays, {"size": self._size, "avgdl": self._avgdl}

    @classmethod
    def from_arrays(
        cls, arrays: Mapping[str, npt.NDArray[Any]], size: int, avgdl: float
    ) -> BM25Index:
        """The index ``to_arrays`` saved; the postings stay as given (memory-mapped, read-only),
        and so does the vocabulary, searched where it lies (an index saved before the sorted
        order existed reads its vocabulary into a dict)."""
        vocab: Mapping[str, int]
        if "vocab_order" in arrays:
            vocab = MappedVocabulary(arrays["vocab"], arrays["vocab_ends"], arrays["vocab_order"])
        else:
            blob = arrays["vocab"].tobytes()
            vocab, begin = {}, 0
            for i, end in enumerate(arrays["vocab_ends"].tolist()):
                vocab[blob[begin:end].decode("utf-8")] = i
                begin = end
        merged = _Postings(vocab, arrays["start"], arrays["docs"], arrays["weights"])
        empty = _postings((), 0, avgdl, with_idf=False)
        return cls(merged, empty, size, size, avgdl)

    def with_added(self, docs_tokens: Iterable[Sequence[str]]) -> BM25Index:
        """This index plus documents appended after the last one (positions continue)."""
        tail_tokens = self._tail_tokens + tuple(tuple(tokens) for tokens in docs_tokens)
        if self._merged_size == 0:
            return BM25Index.from_tokens(tail_tokens)
        tail = _postings(tail_tokens, self._merged_size, self._avgdl, with_idf=False)
        size = self._merged_size + len(tail_tokens)
        return BM25Index(self._merged, tail, size, self._merged_size, self._avgdl, tail_tokens)

    @property
    def needs_merge(self) -> bool:
        """True once the unmerged tail is big enough that a rebuild is worth it."""
        tail = len(self._tail_tokens)
        return tail > MERGE_MIN and tail > MERGE_FRACTION * self._merged_size

    def __len__(self) -> int:
        return self._size

    def df(self, token: str) -> int:
        """How many documents contain ``token``."""
        return self._merged.df(token) + self._tail.df(token)

    def idf(self, token: str) -> float:
        return idf(self._size, self.df(token))

    def ceiling(self, query_tokens: Sequence[str]) -> float:
        """An upper bound of any document's score for the query: the sum of its tokens' idf.

        Each token adds at most its idf (the tf part stays below 1), so ``score / ceiling``
        lies in [0, 1): the share of the query's weight a document matches.
        """
        return sum(self.idf(token) for token in query_tokens if token)

    def terms(self, query_tokens: Sequence[str]) -> list[Term]:
        """The postings a query adds up, token by token in query order (repeats count again)."""
        out: list[Term] = []
        merged, tail = self._merged, self._tail
        for token, repeats in Counter(t for t in query_tokens if t).items():
            i, j = merged.vocab.get(token), tail.vocab.get(token)
            if i is None and j is None:
                continue
            now = idf(self._size, self.df(token))
            # A token can have no postings in one part (an index written by other code).
            if i is not None and merged.start[i + 1] > merged.start[i]:
                lo, hi = int(merged.start[i]), int(merged.start[i + 1])
                # The merged weights carry the idf of the last merge; rescale only if it moved.
                factor = repeats * now / idf(self._merged_size, hi - lo)
                scale = None if factor == 1.0 else np.float32(factor)
                out.append(Term(merged.docs[lo:hi], merged.weights[lo:hi], scale, (0, i)))
            if j is not None and tail.start[j + 1] > tail.start[j]:
                lo, hi = int(tail.start[j]), int(tail.start[j + 1])
                scale = np.float32(repeats * now)
                out.append(Term(tail.docs[lo:hi], tail.weights[lo:hi], scale, (1, j)))
        return out

    def peak(self, term: Term) -> float:
        """The most any document gets from ``term`` (the same float32 product it adds)."""
        weight = self._peaks.get(term.key)
        if weight is None:
            weight = float(term.weights.max())
            self._peaks[term.key] = weight  # a race computes the same value twice
        if term.scale is None:
            return weight
        return float(np.float32(weight) * term.scale)

    def scores(self, query_tokens: Sequence[str]) -> Scores:
        """The score of every document (zero where no query token occurs)."""
        out = np.zeros(self._size, dtype=np.float32)
        for term in self.terms(query_tokens):
            # A token's documents are distinct, and add.at is numpy's fast scatter-add.
            np.add.at(out, term.docs, term.contributions())
        return out

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
