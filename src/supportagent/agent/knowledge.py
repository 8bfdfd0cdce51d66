"""What the agent knows: the search index over the store's documents, kept current.

Built once from the store; an approved answer is added in place so that the very next search
sees it, with no restart. Dense vectors come from the embedder the settings name, behind the
store's embedding cache, so a corpus is embedded once per model, not once per process.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from supportagent.config import Settings, load_settings
from supportagent.domain import DocKind, Document, Hit, Passage
from supportagent.errors import UserError
from supportagent.retrieval.dense import (
    CachedEmbedder,
    Embedder,
    OnnxMiniLM,
    OpenAIEmbedder,
    Progress,
    VectorCache,
    Vectors,
)
from supportagent.retrieval.fusion import Fusion
from supportagent.retrieval.persisted import IndexNotCurrent
from supportagent.retrieval.retriever import HybridRetriever
from supportagent.retrieval.traits import (
    corpus_language,
    corpus_own_names,
    stored_language,
    stored_own_names,
)
from supportagent.retrieval.vectorlog import VectorLog

if TYPE_CHECKING:
    from supportagent.store.readonly import ReadOnlyStore
    from supportagent.store.records import DocumentSource
    from supportagent.store.store import Store

#: The offline embedder, unless a caller says otherwise (``None`` turns dense search off).
DEFAULT_EMBEDDER = "default"
DEFAULT_OPENAI_EMBEDDING_MODEL = "text-embedding-3-small"
#: The file of sentence vectors in the index folder (see ``sentence_embedder``).
SENTENCE_VECTORS = "sentence-vectors.bin"


def build_embedder(settings: Settings, cache: VectorCache | None = None) -> Embedder | None:
    """The embedder ``settings.embedder`` names (``onnx``, ``openai`` or ``none``), cached."""
    inner: Embedder
    if settings.embedder == "none":
        return None
    if settings.embedder == "openai":
        key = settings.llm_api_key or settings.openai_api_key
        base_url = settings.embedding_base_url
        if key is None and base_url is None:
            raise UserError(
                "SUPPORTAGENT_EMBEDDER=openai needs an endpoint: set OPENAI_API_KEY, or "
                "SUPPORTAGENT_EMBEDDING_BASE_URL for a local server; or use the offline "
                "embedder (SUPPORTAGENT_EMBEDDER=onnx, the default)."
            )
        inner = OpenAIEmbedder(
            settings.embedding_model or DEFAULT_OPENAI_EMBEDDING_MODEL,
            base_url=base_url,
            api_key=key.get_secret_value() if key else None,
            timeout=settings.llm_timeout or 60.0,
        )
    else:
        inner = OnnxMiniLM()
    return inner if cache is None else CachedEmbedder(inner, cache)


def index_folder(home: Path, model_id: str | None) -> Path:
    """Where the search index for one embedder lives under the data directory."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", model_id or "no-embedder").strip("_")[:80]
    digest = hashlib.sha256((model_id or "").encode()).hexdigest()[:8]
    return home / "index" / f"{name}-{digest}"


#: How far before its last look a sync reads again, for writes that committed late.
SYNC_OVERLAP = timedelta(minutes=5)


class Knowledge:
    """A HybridRetriever plus the corpus statistics the evidence gate needs."""

    def __init__(
        self,
        documents: Iterable[Document],
        *,
        embedder: Embedder | str | None = DEFAULT_EMBEDDER,
        fusion: Fusion | None = None,
        progress: Progress | None = None,
        index_dir: Path | None = None,
        build_index: bool = True,
    ) -> None:
        """``build_index=False``: map the index in ``index_dir`` or raise
        ``IndexNotCurrent`` (see ``HybridRetriever``)."""
        if isinstance(embedder, str):
            if embedder != DEFAULT_EMBEDDER:
                raise ValueError(f"unknown embedder {embedder!r}")
            embedder = OnnxMiniLM()
        self._lock = threading.Lock()
        self._synced_at: datetime | None = None
        self._revision: int | None = None
        self._language: str | None = None
        self._own_names: tuple[str, ...] | None = None
        self._index_dir = index_dir
        self._sentences: CachedEmbedder | None = None
        self.retriever = HybridRetriever(
            documents,
            embedder=embedder,
            fusion=fusion,
            progress=progress,
            index_dir=index_dir,
            build_index=build_index,
        )

    @classmethod
    def from_store(
        cls,
        store: Store,
        settings: Settings | None = None,
        *,
        progress: Progress | None = None,
    ) -> Knowledge:
        """The store's documents, with the embedder the settings name behind the store's cache.

        Without ``settings``, they are read from the environment and ``.env``.
        """
        from supportagent.store.embeddings import StoreVectorCache  # SQLAlchemy, as the store

        settings = settings or load_settings()
        embedder = build_embedder(settings, StoreVectorCache(store))
        revision = store.document_revision()  # before reading: a later write is seen next time
        documents, newest = store.documents_changed_since(None)
        folder = index_folder(settings.home, embedder.model_id if embedder else None)
        knowledge = cls(documents, embedder=embedder, progress=progress, index_dir=folder)
        knowledge._synced_at, knowledge._revision = newest, revision
        return knowledge

    @classmethod
    def from_readonly(cls, store: ReadOnlyStore, settings: Settings) -> Knowledge | None:
        """The documents of a store read without SQLAlchemy (``store/readonly.py``), when the
        index on disk is theirs; None when it is not, and the caller must open the ``Store``
        (which builds the index and fills the embedding cache).

        The same documents, index and cached vectors as ``from_store``; what differs is only
        that a vector the store's cache lacks is not written to it (``ReadOnlyVectorCache``).
        """
        from supportagent.store.readonly import ReadOnlyVectorCache

        embedder = build_embedder(settings, ReadOnlyVectorCache(store))
        documents, newest, revision = store.documents()
        folder = index_folder(settings.home, embedder.model_id if embedder else None)
        try:
            knowledge = cls(documents, embedder=embedder, index_dir=folder, build_index=False)
        except IndexNotCurrent:
            return None
        knowledge._synced_at, knowledge._revision = newest, revision
        return knowledge

    def sync(self, store: DocumentSource) -> int:
        """Add what other processes wrote to ``store`` since the last look; returns how many.

        The pipeline calls this before each ticket, so a worker finds an answer approved in
        another process (or a re-ingested article) without a restart. The usual case, nothing
        changed, reads one row (the documents' revision counter). When something did, documents
        written since a little before the last look are read again: a write whose transaction
        began earlier may have committed later, and re-adding an unchanged document is a no-op.
        """
        revision = store.document_revision()
        if revision == self._revision:
            return 0
        since = None if self._synced_at is None else self._synced_at - SYNC_OVERLAP
        documents, newest = store.documents_changed_since(since)
        for document in documents:
            self.add(document)
        self._synced_at, self._revision = newest, revision
        return len(documents)

    @property
    def dense(self) -> bool:
        """True when searches use dense similarity."""
        return "dense" in self.retriever.signals()

    def search(self, query: str, k: int, kinds: Collection[DocKind] | None = None) -> list[Hit]:
        return self.retriever.search(query, k=k, kinds=kinds)

    def add(self, document: Document) -> None:
        """Make ``document`` searchable now (an approved answer joining the resolved corpus)."""
        with self._lock:
            self.retriever.add(document)

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

    def sibling_passages(self, passages: Sequence[Passage]) -> list[Passage]:
        """The other sections of the article the best passage comes from (none when the best
        is a resolved ticket). Passage search can rank an article's introduction first and
        leave out the section that answers ("Which role may change the plan?" finds "Team
        roles" by its first paragraph, not by its list of roles)."""
        top = next(iter(passages), None)
        if top is None or top.kind is not DocKind.KB:
            return []
        have = {p.id for p in passages}
        return [p for p in self.retriever.passages_of(top.doc_id) if p.id not in have]

    def idf(self, term: str) -> float:
        """Rarity of ``term`` across passage bodies; a term the corpus never uses weighs most."""
        return self.retriever.idf(term)

    def knows(self, term: str) -> bool:
        """True when some passage uses ``term`` in its text, title or headings."""
        return self.retriever.df(term) > 0 or self.retriever.df(term, "title") > 0

    def language(self) -> str:
        """The language most articles are written in (``en`` when none can tell), found once:
        as the index on disk kept it, or from the articles (``traits.py``)."""
        if self._language is None:
            self._language = stored_language(self.retriever.traits) or corpus_language(
                self.retriever.passages
            )
        return self._language

    def own_names(self) -> tuple[str, ...]:
        """The name the articles call their product by (``retrieval.own_name``), found once:
        as the index on disk kept it, or from the articles."""
        if self._own_names is None:
            stored = stored_own_names(self.retriever.traits)
            self._own_names = (
                stored if stored is not None else corpus_own_names(self.retriever.passages)
            )
        return self._own_names

    def links(self, doc_id: str) -> tuple[str, ...]:
        """The documents ``doc_id`` links to (a resolved ticket's articles)."""
        doc = self.retriever.document(doc_id)
        return doc.linked_docs if doc is not None else ()

    def sentence_embedder(self) -> Callable[[Sequence[str]], Vectors] | None:
        """How to embed short texts (a ticket's candidate sentences) with the search's model;
        None without dense search.

        The offline MiniLM is not put behind the store's cache, which sentences need not fill,
        but behind a file of sentence vectors next to the index (``vectorlog.py``): a one-shot
        ``triage`` then embeds only the texts no earlier run saw, the ticket's own, not the
        evidence's sentences again. Without an index folder its in-process memo does alone.
        """
        embedder = self.retriever.embedder
        if embedder is None:
            return None
        if isinstance(embedder, CachedEmbedder) and isinstance(embedder.inner, OnnxMiniLM):
            if self._index_dir is None:
                return embedder.inner.embed
            with self._lock:
                if self._sentences is None:
                    log = VectorLog(self._index_dir / SENTENCE_VECTORS, embedder.inner.dimension)
                    self._sentences = CachedEmbedder(embedder.inner, log)
            return self._sentences.embed
        return embedder.embed

    def similarity(self, text: str, passage_ids: Sequence[str]) -> list[float] | None:
        """Cosine similarity of ``text`` to each passage; None when search has no dense signal."""
        return self.retriever.similarity(text, passage_ids)
