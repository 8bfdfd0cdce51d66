"""What the agent knows: the search index over the store's documents, kept current.

Built once from the store; an approved answer is added in place so that the very next search
sees it, with no restart.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Collection, Sequence

from supportagent.domain import DocKind, Document, Hit, Passage
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

    def linked_passages(self, passages: Sequence[Passage]) -> list[Passage]:
        """Passages of the articles that the resolved tickets among ``passages`` link to.

        A resolved answer can be out of date; checking it against the articles it was based
        on is how a contradiction between the two comes to light.
        """
        have = {p.id for p in passages}
        out: list[Passage] = []
        for passage in passages:
            if passage.kind is not DocKind.RESOLVED:
                continue
            doc = self.retriever.document(passage.doc_id)
            for linked in doc.linked_docs if doc else ():
                for extra in self.retriever.passages_of(linked):
                    if extra.id not in have:
                        have.add(extra.id)
                        out.append(extra)
        return out

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
