"""What the agent knows: the search index over the store's documents, kept current.

Built once from the store; an approved answer is added in place so that the very next search
sees it, with no restart.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Collection

from supportagent.domain import DocKind, Document, Hit
from supportagent.retrieval.retriever import HybridRetriever
from supportagent.retrieval.text import tokenize
from supportagent.store.store import Store


class Knowledge:
    """A HybridRetriever plus the corpus statistics the evidence gate needs."""

    def __init__(self, documents: Collection[Document]) -> None:
        self._lock = threading.Lock()
        self.retriever = HybridRetriever(documents)
        self._doc_freq: Counter[str] = Counter()
        self._recount()

    @classmethod
    def from_store(cls, store: Store) -> Knowledge:
        return cls(store.documents())

    def search(self, query: str, k: int, kinds: Collection[DocKind] | None = None) -> list[Hit]:
        return self.retriever.search(query, k=k, kinds=kinds)

    def add(self, document: Document) -> None:
        """Make ``document`` searchable now (an approved answer joining the resolved corpus)."""
        with self._lock:
            self.retriever.add(document)
            self._recount()

    def idf(self, term: str) -> float:
        """Rarity of ``term`` across passages; a term the corpus never uses weighs the most."""
        n = max(len(self.retriever), 1)
        df = self._doc_freq.get(term, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def _recount(self) -> None:
        counts: Counter[str] = Counter()
        for passage in self.retriever.passages:
            counts.update(set(tokenize(passage.title + " " + passage.text)))
        self._doc_freq = counts
