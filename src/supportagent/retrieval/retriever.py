"""HybridRetriever: BM25 over passage bodies and over titles, fused by RRF, with explanations.

Every hit says which signal found it, at what rank and with what raw score, and its fused
score is exactly the RRF of those ranks, so a reviewer can see why a passage came first.

Readers never lock: each search works on one immutable snapshot of passages and indexes.
Writers (``add``) build the next snapshot under a lock and swap it in with one assignment.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from supportagent.domain import DocKind, Document, Hit, Passage, SignalScore
from supportagent.retrieval.bm25 import BM25Index, Mask
from supportagent.retrieval.fusion import (
    DEFAULT_RRF_K,
    reciprocal_rank_fusion,
    validate_fusion,
)
from supportagent.retrieval.passages import split_passages
from supportagent.retrieval.text import tokenize

#: body: BM25 over the passage text; title: BM25 over the title and heading path
#: (and, for a resolved ticket, its question).
SIGNALS = ("body", "title")


def title_text(passage: Passage, document: Document) -> str:
    """What the ``title`` signal indexes for a passage."""
    parts = [passage.title, *passage.heading_path]
    question = document.meta.get("question")
    if passage.kind is DocKind.RESOLVED and isinstance(question, str):
        parts.append(question)
    return "\n".join(part for part in parts if part)


@dataclass(frozen=True, slots=True)
class _Prepared:
    """One document's passages and their tokens, kept so a rebuild never re-splits it."""

    document: Document
    passages: tuple[Passage, ...]
    tokens: Mapping[str, tuple[tuple[str, ...], ...]]


@dataclass(frozen=True, slots=True)
class _Snapshot:
    passages: tuple[Passage, ...]
    by_id: Mapping[str, int]
    indexes: Mapping[str, BM25Index]
    kind_masks: Mapping[DocKind, Mask]


def _prepare(document: Document) -> _Prepared:
    passages = tuple(split_passages(document))
    tokens = {
        "body": tuple(tuple(tokenize(p.text)) for p in passages),
        "title": tuple(tuple(tokenize(title_text(p, document))) for p in passages),
    }
    return _Prepared(document, passages, tokens)


def _build_snapshot(prepared: Iterable[_Prepared]) -> _Snapshot:
    docs = list(prepared)
    passages = tuple(p for doc in docs for p in doc.passages)
    # Rebuilt from cached tokens; an incremental index could replace this step later.
    indexes = {
        signal: BM25Index.from_tokens([t for doc in docs for t in doc.tokens[signal]])
        for signal in SIGNALS
    }
    kinds = np.array([p.kind.value for p in passages], dtype=object)
    kind_masks = {kind: np.asarray(kinds == kind.value, dtype=np.bool_) for kind in DocKind}
    by_id = {p.id: i for i, p in enumerate(passages)}
    return _Snapshot(passages, by_id, indexes, kind_masks)


class HybridRetriever:
    """Search over passages of knowledge-base articles and resolved tickets."""

    def __init__(
        self,
        documents: Iterable[Document],
        *,
        rrf_k: int = DEFAULT_RRF_K,
        weights: Mapping[str, float] | None = None,
    ) -> None:
        validate_fusion(rrf_k, weights)
        unknown = sorted(set(weights or {}) - set(SIGNALS))
        if unknown:
            raise ValueError(f"unknown signal(s) {unknown}; the signals are {list(SIGNALS)}")
        self._rrf_k = rrf_k
        self._weights = {signal: float((weights or {}).get(signal, 1.0)) for signal in SIGNALS}
        self._lock = threading.Lock()
        # Insertion-ordered; a replaced document keeps its place, so order is deterministic.
        self._prepared: dict[str, _Prepared] = {}
        for document in documents:
            self._prepared[document.id] = _prepare(document)
        self._snapshot = _build_snapshot(self._prepared.values())

    @property
    def passages(self) -> Sequence[Passage]:
        return self._snapshot.passages

    def __len__(self) -> int:
        return len(self._snapshot.passages)

    def get_passage(self, passage_id: str) -> Passage | None:
        snapshot = self._snapshot
        position = snapshot.by_id.get(passage_id)
        return None if position is None else snapshot.passages[position]

    def document(self, doc_id: str) -> Document | None:
        prepared = self._prepared.get(doc_id)
        return None if prepared is None else prepared.document

    def passages_of(self, doc_id: str) -> tuple[Passage, ...]:
        """Every passage of one document, in reading order (empty for an unknown id)."""
        prepared = self._prepared.get(doc_id)
        return () if prepared is None else prepared.passages

    def add(self, document: Document) -> None:
        """Add a document, or replace the one with the same id; the next search sees it."""
        with self._lock:
            current = self._prepared.get(document.id)
            if (
                current is not None
                and current.document == document
                and current.document.meta == document.meta
            ):
                return
            prepared = dict(self._prepared)
            prepared[document.id] = _prepare(document)
            snapshot = _build_snapshot(prepared.values())
            self._prepared = prepared
            self._snapshot = snapshot

    def search(
        self,
        query: str,
        k: int = 8,
        kinds: Collection[DocKind] | None = None,
        per_signal: int = 50,
    ) -> list[Hit]:
        """The ``k`` best passages for ``query``, optionally only of the given ``kinds``."""
        if k < 1 or per_signal < 1:
            raise ValueError(f"k and per_signal must be at least 1, got {k} and {per_signal}")
        snapshot = self._snapshot
        mask = self._mask(snapshot, kinds)
        query_tokens = tokenize(query)
        if not query_tokens or (mask is not None and not mask.any()):
            return []

        signal_hits: dict[str, dict[str, SignalScore]] = {}
        rankings: dict[str, list[str]] = {}
        for signal in SIGNALS:
            found = snapshot.indexes[signal].search_tokens(query_tokens, per_signal, mask)
            ids = [snapshot.passages[position].id for position, _ in found]
            rankings[signal] = ids
            signal_hits[signal] = {
                pid: SignalScore(rank, score)
                for rank, (pid, (_, score)) in enumerate(zip(ids, found, strict=True), start=1)
            }

        fused = reciprocal_rank_fusion(rankings, k=self._rrf_k, weights=self._weights)
        hits: list[Hit] = []
        for rank, (pid, score) in enumerate(fused[:k], start=1):
            signals = {s: signal_hits[s][pid] for s in SIGNALS if pid in signal_hits[s]}
            passage = snapshot.passages[snapshot.by_id[pid]]
            hits.append(Hit(passage=passage, rank=rank, score=score, signals=signals))
        return hits

    @staticmethod
    def _mask(snapshot: _Snapshot, kinds: Collection[DocKind] | None) -> Mask | None:
        if kinds is None:
            return None
        mask = np.zeros(len(snapshot.passages), dtype=np.bool_)
        for kind in set(kinds):
            mask |= snapshot.kind_masks[DocKind(kind)]
        return mask
