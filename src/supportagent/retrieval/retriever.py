"""HybridRetriever: BM25 over passage bodies and over titles, dense similarity, fused, explained.

Every hit says which signal found it, at what rank and with what raw score; its fused score
follows from those numbers and the fusion in use (``fusion.py``), so a reviewer can see why a
passage came first. ``scales(query)`` gives the divisors weighted fusion applied. From
``CANDIDATES_FROM`` passages on, no signal scores every passage: fusion works on what each
signal knows of the query (``candidates.py``) and gives the same hits; a lexical rank far
down a signal's list is then a lower bound.

Readers never lock: each search works on one immutable snapshot of passages and indexes.
Writers (``add``) build the next snapshot under a lock and swap it in with one assignment. A
new document is appended: its passages are embedded and join a BM25 tail, nothing else is
redone; the BM25 tail is merged once it has grown (see ``bm25.py``).
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from supportagent.domain import DocKind, Document, Hit, Passage, SignalScore
from supportagent.retrieval import adaptive, ivf
from supportagent.retrieval.adaptive import FIXED, CorpusEstimate, CorpusView, estimate
from supportagent.retrieval.bm25 import BM25Index, Mask
from supportagent.retrieval.candidates import (
    ArrayScores,
    SignalScores,
    SparseScores,
    normalized,
    weighted_top,
)
from supportagent.retrieval.dense import Embedder, Progress, Vectors, embed_with_progress
from supportagent.retrieval.fusion import (
    DEFAULT_LEXICAL_TRUST,
    Fusion,
    reciprocal_rank_fusion,
)
from supportagent.retrieval.history import (
    HISTORY_WEIGHT,
    HistoryIndex,
    build_history,
    linked_questions,
)
from supportagent.retrieval.ivf import IVFIndex
from supportagent.retrieval.mapped_corpus import Joined, MappedCorpus
from supportagent.retrieval.maxscore import LexicalScores
from supportagent.retrieval.passages import dense_text, split_passages, title_text
from supportagent.retrieval.persisted import IndexNotCurrent, open_index
from supportagent.retrieval.text import tokenize

log = logging.getLogger(__name__)

#: body: BM25 over the passage text; title: BM25 over the title and heading path (and, for a
#: resolved ticket, its question); dense: cosine similarity of embeddings; history: cosine with
#: the questions of resolved tickets that link to the passage's article (``history.py``).
SIGNALS = ("body", "title", "dense", "history")
#: Signals scored by cosine similarity (used as they are by weighted fusion).
_COSINE = ("dense", "history")
LEXICAL = ("body", "title")
#: One query's scores, per signal (BM25 scores, or cosine similarities), computed where asked.
Scores = Mapping[str, SignalScores]

_QUERY_CACHE = 512
#: How many queries' scores are kept, and at most how many bytes of them beyond the latest
#: query's: the agent searches again with the same query (articles, then resolved tickets).
#: An exact dense signal spans the corpus (4 bytes a passage), candidates do not.
_RECENT_SCORES = 8
_RECENT_BYTES = 16 << 20
#: How many candidates weighted fusion asks each signal for, at least (``candidates.py``):
#: deep enough that the fused top is nearly always settled without a retry.
CANDIDATE_DEPTH = 200
#: From this many passages on, BM25 is scored for candidates only (``candidates.py``), as
#: dense search goes through the IVF; below, scoring every passage is cheaper (8 against 10 ms
#: CPU a query at 20k passages) and fusion runs over every passage, as it always did.
CANDIDATES_FROM = ivf.MIN_PASSAGES


@dataclass(frozen=True, slots=True)
class _Prepared:
    """One document's passages, tokens and vectors, kept so a rebuild never redoes them.

    ``tokens`` is filled on first use for a document whose index came from disk: mapping the
    index needs no tokens, only a later merge or rebuild does.
    """

    document: Document
    passages: tuple[Passage, ...]
    tokens: dict[str, tuple[tuple[str, ...], ...]]
    vectors: Vectors | None = None

    def tokens_of(self, signal: str) -> tuple[tuple[str, ...], ...]:
        found = self.tokens.get(signal)
        if found is None:
            if signal == "body":
                found = tuple(tuple(tokenize(p.text)) for p in self.passages)
            else:
                found = tuple(tuple(tokenize(title_text(p, self.document))) for p in self.passages)
            self.tokens[signal] = found  # a race tokenizes twice; both results are equal
        return found


@dataclass(frozen=True, slots=True)
class _Snapshot:
    #: A tuple, or (index on disk) passages made from the mapped corpus as they are read.
    passages: Sequence[Passage]
    by_id: Mapping[str, int]
    indexes: Mapping[str, BM25Index]
    kinds: np.ndarray
    dense: Vectors | None
    history: HistoryIndex | None = None
    #: Approximate dense search over the mapped rows (large corpora only, see ``ivf.py``);
    #: rows appended since it was built are scored exactly.
    ivf: IVFIndex | None = None
    #: Kind masks already computed for this snapshot (it never changes, so neither do they).
    masks: dict[frozenset[DocKind], Mask] = field(default_factory=dict)


def _prepare(document: Document, *, tokenized: bool = True) -> _Prepared:
    prepared = _Prepared(document, tuple(split_passages(document)), {})
    if tokenized:
        for signal in LEXICAL:
            prepared.tokens_of(signal)
    return prepared


_KIND_CODES = {kind: code for code, kind in enumerate(DocKind)}


class _AddedIds(Mapping[str, int]):
    """Mapped passage ids and, over them, the positions of passages added since."""

    def __init__(self, base: Mapping[str, int], added: dict[str, int]) -> None:
        self._base, self._added = base, added

    @classmethod
    def of(cls, ids: Mapping[str, int], added: dict[str, int]) -> _AddedIds:
        if isinstance(ids, _AddedIds):
            return cls(ids._base, {**ids._added, **added})
        return cls(ids, added)

    def __getitem__(self, passage_id: str) -> int:
        found = self._added.get(passage_id)
        return self._base[passage_id] if found is None else found

    def __len__(self) -> int:
        return len(self._base) + sum(1 for p in self._added if p not in self._base)

    def __iter__(self) -> Iterator[str]:
        yield from self._base
        yield from (p for p in self._added if p not in self._base)


class _MappedDocuments(Mapping[str, _Prepared]):
    """The documents of a mapped corpus, each made when it is read, plus those added or
    replaced since (``overlay``): iterated in the order a dict of them would be (a replaced
    document keeps its place, a new one comes last)."""

    def __init__(
        self, corpus: MappedCorpus, dense: Vectors | None, overlay: Mapping[str, _Prepared]
    ) -> None:
        self._corpus, self._dense, self._overlay = corpus, dense, overlay

    def with_document(self, prepared: _Prepared) -> _MappedDocuments:
        return _MappedDocuments(
            self._corpus, self._dense, {**self._overlay, prepared.document.id: prepared}
        )

    def _at(self, j: int) -> _Prepared:
        positions = self._corpus.passage_range(j)
        vectors = None if self._dense is None else self._dense[positions.start : positions.stop]
        return _Prepared(self._corpus.document_at(j), self._corpus.passages_at(j), {}, vectors)

    def __getitem__(self, doc_id: str) -> _Prepared:
        found = self._overlay.get(doc_id)
        if found is not None:
            return found
        return self._at(self._corpus.document_ids[doc_id])  # KeyError when unknown

    def _new(self) -> list[str]:
        return [d for d in self._overlay if d not in self._corpus.document_ids]

    def __len__(self) -> int:
        return len(self._corpus) + len(self._new())

    def __iter__(self) -> Iterator[str]:
        yield from (self._corpus.document_id(j) for j in range(len(self._corpus)))
        yield from self._new()


class _GrowingRows:
    """A matrix that rows are appended to in place (capacity doubles), so adding a document
    costs its own rows, not a copy of all of them. A snapshot keeps a view of the rows that
    existed when it was taken; later appends write past that view and never disturb it."""

    def __init__(self, rows: Vectors, *, copy: bool = True) -> None:
        # copy=False keeps memory-mapped rows mapped (shared pages); the first append copies.
        self._data = np.array(rows, dtype=np.float32) if copy else rows
        self._count = len(rows)

    def view(self) -> Vectors:
        return self._data[: self._count]

    def append(self, rows: Vectors) -> Vectors:
        need = self._count + len(rows)
        if need > len(self._data):
            grown = np.empty((max(need, 2 * len(self._data)), self._data.shape[1]), np.float32)
            grown[: self._count] = self._data[: self._count]
            self._data = grown
        self._data[self._count : need] = rows
        self._count = need
        return self.view()


def _frozen(scores: np.ndarray) -> ArrayScores:
    """An array over the corpus, read-only: it is shared by the searches that reuse it."""
    scores.setflags(write=False)
    return ArrayScores(scores)


def _kind_codes(passages: Iterable[Passage]) -> np.ndarray:
    return np.array([_KIND_CODES[p.kind] for p in passages], dtype=np.uint8)


class HybridRetriever:
    """Search over passages of knowledge-base articles and resolved tickets."""

    def __init__(
        self,
        documents: Iterable[Document],
        *,
        embedder: Embedder | None = None,
        fusion: Fusion | None = None,
        progress: Progress | None = None,
        index_dir: Path | None = None,
        corpus_estimate: Mapping[str, float] | None = None,
        build_index: bool = True,
    ) -> None:
        """``index_dir``: keep the index there (see ``persisted.py``), mapped by every process
        that opens the same corpus; None builds it in memory. ``build_index=False``: map the
        index there or raise ``persisted.IndexNotCurrent`` (nothing is embedded or written).

        Without ``fusion``, the weights are read from the corpus at build (``adaptive.py``);
        ``corpus_estimate`` (``self.corpus_estimate.to_dict()`` of an earlier build of the same
        corpus) skips that step. ``Fusion()`` is the fixed-weight fusion."""
        self._check_fusion(fusion or Fusion())
        self.embedder = embedder
        self._question_vectors: dict[str, Vectors] = {}
        self._lock = threading.Lock()
        self._rows: _GrowingRows | None = None
        self._query_vectors: OrderedDict[str, Vectors] = OrderedDict()
        # The last few queries' raw scores: the agent searches articles and then resolved
        # tickets with the same query, and both are slices of the same scoring.
        self._recent: OrderedDict[
            tuple[str, tuple[str, ...], frozenset[str]], tuple[_Snapshot, Scores]
        ] = OrderedDict()
        # Insertion-ordered; a replaced document keeps its place, so order is deterministic.
        # With an index on disk, a view of the mapped corpus instead of objects (see _open).
        self._prepared: Mapping[str, _Prepared] = {}
        #: How this retriever's index came to be: built in memory, mapped from disk, or built
        #: and saved (with the reason).
        self.index_status = "in memory"
        #: What the articles say about themselves, as the index on disk kept it at build
        #: (``traits.py``); None in memory, and once a document is added or replaced.
        self.traits: Mapping[str, Any] | None = None
        prepared: dict[str, _Prepared] = {}
        if index_dir is not None:
            for document in documents:
                prepared[document.id] = _prepare(document, tokenized=False)
            self._snapshot = self._open(index_dir, prepared, progress, build_index)
        else:
            for document in documents:
                prepared[document.id] = _prepare(document)
            self._prepared = self._embed(prepared, progress)
            self._snapshot = self._build(self._prepared.values())
        # --- fusion that reads the corpus (kept apart from building, see adaptive.py) ---
        if fusion is not None or adaptive.SHRINK == 0:
            # SHRINK 0 means the fixed weights (the leave-one-dataset-out choice, see
            # docs/retrieval.md): the build then skips the estimate and costs nothing extra.
            self.corpus_estimate = FIXED
        elif corpus_estimate is not None:
            self.corpus_estimate = CorpusEstimate.from_dict(corpus_estimate)
        else:
            self.corpus_estimate = estimate(self._corpus_view(self._snapshot))
        self.fusion = fusion or Fusion(
            "weighted", self.default_weights(), lexical_trust=DEFAULT_LEXICAL_TRUST
        )

    def default_weights(self) -> dict[str, float]:
        """The corpus-read weights, plus the history signal where there is history."""
        weights = self.corpus_estimate.weights()
        history = self._snapshot.history
        if history is not None and len(history) and self.embedder is not None:
            weights["history"] = HISTORY_WEIGHT
        return weights

    def _corpus_view(self, snapshot: _Snapshot) -> CorpusView:
        doc_index: dict[str, int] = {}
        doc_of = np.array(
            [doc_index.setdefault(p.doc_id, len(doc_index)) for p in snapshot.passages],
            dtype=np.int64,
        )
        searchable = np.asarray(snapshot.kinds == _KIND_CODES[DocKind.KB], dtype=np.bool_)
        history = []
        for doc in self._prepared.values():
            for _, question, linked in linked_questions([doc.document]):
                targets = frozenset(doc_index[d] for d in linked if d in doc_index)
                history.append((question, targets))
        embedder = self.embedder

        def embed(texts: Sequence[str]) -> Vectors:
            assert embedder is not None
            return np.asarray(embedder.embed(list(texts)), dtype=np.float32)

        return CorpusView(
            texts=[p.text for p in snapshot.passages],
            dense_texts=[dense_text(p) for p in snapshot.passages],
            doc_of=doc_of,
            searchable=searchable,
            indexes=snapshot.indexes,
            dense=snapshot.dense,
            embed=embed if embedder is not None and snapshot.dense is not None else None,
            history=history,
        )

    def _open(
        self,
        index_dir: Path,
        prepared: dict[str, _Prepared],
        progress: Progress | None,
        build: bool = True,
    ) -> _Snapshot:
        """The snapshot over the index on disk (built and saved first when it is missing,
        damaged or out of date); the documents' vectors are views of the mapped rows, and
        the documents and passages are read from the mapped corpus once it is open: the
        objects made to check the key are dropped."""
        docs = list(prepared.values())
        passages = tuple(p for doc in docs for p in doc.passages)
        documents = {doc.document.id: doc.document for doc in docs}
        try:
            loaded = open_index(
                index_dir, passages, documents, self.embedder, progress, build=build
            )
        except OSError as exc:  # a read-only or full disk: search still works, from memory
            if not build:
                raise IndexNotCurrent(f"cannot read {index_dir}: {exc}") from exc
            log.warning("cannot keep the search index in %s (%s); built in memory", index_dir, exc)
            self.index_status = f"in memory (could not write {index_dir}: {exc.strerror or exc})"
            self._prepared = self._embed(prepared, progress)
            return self._build(self._prepared.values())
        self.index_status = loaded.status
        self.traits = loaded.traits
        dense = None
        if self.embedder is not None and loaded.dense is not None and len(loaded.dense):
            self._rows = _GrowingRows(loaded.dense, copy=False)
            dense = self._rows.view()
        history = self._history(docs, passages, dense)
        approximate = loaded.ivf if dense is not None else None
        corpus = loaded.corpus
        listed: Sequence[Passage]
        by_id: Mapping[str, int]
        if corpus is None:  # a corpus that could not be saved as it is: kept in memory
            start = 0
            for doc in docs:
                end = start + len(doc.passages)
                vectors = None if dense is None else dense[start:end]
                prepared[doc.document.id] = replace(doc, vectors=vectors)
                start = end
            self._prepared = prepared
            listed, by_id = passages, {p.id: i for i, p in enumerate(passages)}
            kinds = _kind_codes(passages)
        else:
            self._prepared = _MappedDocuments(corpus, dense, {})
            listed, by_id, kinds = corpus.passages, corpus.passage_ids, corpus.kinds
        return _Snapshot(
            listed, by_id, dict(loaded.indexes), kinds, dense, history, ivf=approximate
        )

    # --- reading -------------------------------------------------------------------------

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

    def idf(self, token: str, signal: str = "body") -> float:
        """The BM25 idf of a token in one lexical signal's index."""
        return self._snapshot.indexes[signal].idf(token)

    def df(self, token: str, signal: str = "body") -> int:
        """How many passages one lexical signal's index has ``token`` in."""
        return self._snapshot.indexes[signal].df(token)

    def similarity(self, text: str, passage_ids: Sequence[str]) -> list[float] | None:
        """Cosine similarity of ``text`` to each passage (0.0 for an unknown id), or None
        without an embedder."""
        snapshot = self._snapshot
        if self.embedder is None or snapshot.dense is None:
            return None
        vector = self._query_vector(text)
        out = []
        for passage_id in passage_ids:
            position = snapshot.by_id.get(passage_id)
            out.append(0.0 if position is None else float(snapshot.dense[position] @ vector))
        return out

    def signals(self, fusion: Fusion | None = None) -> tuple[str, ...]:
        """The signals a search with ``fusion`` uses: weighted above zero and available."""
        fusion = fusion or self.fusion
        usable = [s for s in SIGNALS if s not in _COSINE or self.embedder is not None]
        return tuple(s for s in usable if fusion.weight(s) > 0)

    def scales(self, query: str, fusion: Fusion | None = None) -> dict[str, float]:
        """What weighted fusion divides each signal's raw score by, for this query, so that
        ``score = sum of weight * raw / scale``. With ``lexical_trust`` the body's scale is its
        idf ceiling divided by this query's trust factor ``1 + trust * best body share``."""
        fusion = fusion or self.fusion
        tokens = tokenize(query)
        snapshot = self._snapshot
        out = {s: snapshot.indexes[s].ceiling(tokens) for s in LEXICAL}
        if fusion.lexical_trust and out["body"] > 0 and len(snapshot.passages):
            top = LexicalScores(snapshot.indexes["body"], tokens).top(1, None).scores
            best = float(top.max(initial=0.0)) / out["body"]
            out["body"] /= 1.0 + fusion.lexical_trust * best
        if self.embedder is not None:
            out["dense"] = 1.0
            if self._snapshot.history is not None:
                out["history"] = 1.0
        return out

    # --- searching -----------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 8,
        kinds: Collection[DocKind] | None = None,
        per_signal: int = 50,
        fusion: Fusion | None = None,
        exclude_history: Collection[str] = (),
    ) -> list[Hit]:
        """The ``k`` best passages for ``query``, optionally only of the given ``kinds``.

        ``exclude_history``: ids of resolved documents whose questions the history signal must
        ignore (an evaluation passes the ticket a query came from)."""
        if k < 1 or per_signal < 1:
            raise ValueError(f"k and per_signal must be at least 1, got {k} and {per_signal}")
        fusion = fusion or self.fusion
        self._check_fusion(fusion)
        snapshot = self._snapshot
        mask = self._mask(snapshot, kinds)
        tokens = tokenize(query)
        if not tokens or not snapshot.passages or (mask is not None and not mask.any()):
            return []
        scores = self._signal_scores(
            snapshot, query, tokens, self.signals(fusion), frozenset(exclude_history)
        )
        if not scores:
            return []
        if fusion.method == "rrf":
            return self._fuse_rrf(snapshot, scores, mask, k, per_signal, fusion)
        return self._fuse_weighted(snapshot, scores, tokens, mask, k, fusion)

    def _signal_scores(
        self,
        snapshot: _Snapshot,
        query: str,
        tokens: list[str],
        signals: tuple[str, ...],
        exclude: frozenset[str] = frozenset(),
    ) -> Scores:
        key = (query, signals, exclude)
        recent = self._recent.get(key)
        if recent is not None and recent[0] is snapshot:  # same query, same index version
            return recent[1]
        scores = self._score(snapshot, query, tokens, signals, exclude)
        with self._lock:
            self._recent[key] = (snapshot, scores)
            kept = sum(s.nbytes for _, found in self._recent.values() for s in found.values())
            while len(self._recent) > 1 and (
                len(self._recent) > _RECENT_SCORES or kept > _RECENT_BYTES
            ):
                _, (_, dropped) = self._recent.popitem(last=False)
                kept -= sum(s.nbytes for s in dropped.values())
        return scores

    def _score(
        self,
        snapshot: _Snapshot,
        query: str,
        tokens: list[str],
        signals: Sequence[str],
        exclude: frozenset[str] = frozenset(),
    ) -> Scores:
        """Each signal's scores of the query; an array over the corpus only where the signal
        computes one anyway (exact dense, history), ``full()`` gives it for the others."""
        raw: dict[str, SignalScores] = {}
        for signal in signals:
            if signal == "dense":
                if snapshot.dense is not None and len(snapshot.dense):
                    vector = self._query_vector(query)
                    if snapshot.ivf is not None:
                        size = len(snapshot.passages)
                        probed = snapshot.ivf.probed(vector, size, snapshot.dense)
                        raw[signal] = SparseScores(*probed, size)
                    else:
                        raw[signal] = _frozen(snapshot.dense @ vector)
            elif signal == "history":
                if snapshot.history is not None and len(snapshot.history):
                    vector = self._query_vector(query)
                    history = snapshot.history.scores(vector, len(snapshot.passages), exclude)
                    # What a linked question adds beyond the passage's own similarity: a
                    # passage is not lifted just for having history, only where the query is
                    # closer to a customer's wording than to the passage's.
                    if snapshot.ivf is not None and snapshot.dense is not None:
                        # The approximate dense scores are 0 outside the probed lists: take
                        # the exact similarity of the passages that have history instead.
                        scored, lifted = history, np.flatnonzero(history > 0)
                        own = snapshot.dense[lifted] @ vector
                        history = np.zeros(len(scored), dtype=np.float32)
                        history[lifted] = np.clip(scored[lifted] - own, 0.0, None)
                    else:
                        exact = raw.get("dense")
                        dense = None if exact is None else exact.full()
                        if dense is None and snapshot.dense is not None:
                            dense = snapshot.dense @ vector
                        if dense is not None:
                            history = np.clip(history - dense, 0.0, None).astype(np.float32)
                    raw[signal] = _frozen(history)
            elif len(snapshot.passages) < CANDIDATES_FROM:
                raw[signal] = _frozen(snapshot.indexes[signal].scores(tokens))
            else:
                raw[signal] = LexicalScores(snapshot.indexes[signal], tokens)
        return raw

    def _fuse_weighted(
        self,
        snapshot: _Snapshot,
        scores: Scores,
        tokens: list[str],
        mask: Mask | None,
        k: int,
        fusion: Fusion,
    ) -> list[Hit]:
        ceilings: dict[str, float | None] = {
            s: None if s in _COSINE else snapshot.indexes[s].ceiling(tokens) for s in scores
        }
        weights = {s: fusion.weight(s) for s in scores}
        if fusion.lexical_trust and "body" in scores:
            # The best body share over every passage (any kind): the best body passage's.
            best = normalized(scores["body"].top(1, None).scores, ceilings["body"])
            weights["body"] *= 1.0 + fusion.lexical_trust * float(best.max(initial=0.0))
        size = len(snapshot.passages)
        depth = max(CANDIDATE_DEPTH, 2 * k)
        found = weighted_top(scores, ceilings, weights, k, mask, depth, size)
        # A signal's rank of a hit: 1 + how many searched passages that signal scores higher
        # (only where the hit is explained: a positive score, or any dense score).
        ranks: dict[str, dict[int, int]] = {}
        for signal, values in found.raw.items():
            shown = np.flatnonzero((values > 0) | (signal == "dense"))
            above = scores[signal].count_above(values[shown], mask)
            ranks[signal] = dict(zip(shown.tolist(), (above + 1).tolist(), strict=True))
        hits: list[Hit] = []
        for i, (position, score) in enumerate(zip(found.positions, found.scores, strict=True)):
            explained = {
                signal: SignalScore(ranks[signal][i], float(found.raw[signal][i]))
                for signal in found.raw
                if i in ranks[signal]
            }
            hits.append(Hit(snapshot.passages[int(position)], i + 1, float(score), explained))
        return hits

    def _fuse_rrf(
        self,
        snapshot: _Snapshot,
        scores: Scores,
        mask: Mask | None,
        k: int,
        per_signal: int,
        fusion: Fusion,
    ) -> list[Hit]:
        rankings: dict[str, list[str]] = {}
        explained: dict[str, dict[str, SignalScore]] = {}
        for signal, signal_scores in scores.items():
            found = signal_scores.top(per_signal, mask)
            ids = [snapshot.passages[int(position)].id for position in found.positions]
            rankings[signal] = ids
            explained[signal] = {
                pid: SignalScore(rank, float(score))
                for rank, (pid, score) in enumerate(zip(ids, found.scores, strict=True), start=1)
            }
        weights = {signal: fusion.weight(signal) for signal in scores}
        fused = reciprocal_rank_fusion(rankings, k=fusion.rrf_k, weights=weights)
        hits: list[Hit] = []
        for rank, (pid, score) in enumerate(fused[:k], start=1):
            signals = {s: explained[s][pid] for s in scores if pid in explained[s]}
            passage = snapshot.passages[snapshot.by_id[pid]]
            hits.append(Hit(passage=passage, rank=rank, score=score, signals=signals))
        return hits

    def _query_vector(self, query: str) -> Vectors:
        assert self.embedder is not None
        cached = self._query_vectors.get(query)
        if cached is not None:
            return cached
        vector = np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
        with self._lock:
            self._query_vectors[query] = vector
            while len(self._query_vectors) > _QUERY_CACHE:
                self._query_vectors.popitem(last=False)
        return vector

    @staticmethod
    def _mask(snapshot: _Snapshot, kinds: Collection[DocKind] | None) -> Mask | None:
        if kinds is None:
            return None
        key = frozenset(DocKind(kind) for kind in kinds)
        mask = snapshot.masks.get(key)
        if mask is None:
            wanted = [_KIND_CODES[kind] for kind in key]
            mask = np.asarray(np.isin(snapshot.kinds, wanted), dtype=np.bool_)
            mask.setflags(write=False)
            snapshot.masks[key] = mask  # a race computes the same mask twice; both are right
        return mask

    @staticmethod
    def _check_fusion(fusion: Fusion) -> None:
        unknown = sorted(set(fusion.signal_weights) - set(SIGNALS))
        if unknown:
            raise ValueError(f"unknown signal(s) {unknown}; the signals are {list(SIGNALS)}")

    # --- writing -------------------------------------------------------------------------

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
            fresh = self._embed({document.id: _prepare(document)}, None)[document.id]
            prepared: Mapping[str, _Prepared]
            if isinstance(self._prepared, _MappedDocuments):
                prepared = self._prepared.with_document(fresh)
            else:
                prepared = {**self._prepared, document.id: fresh}
            if current is None:
                snapshot = self._append(self._snapshot, fresh, prepared.values())
            else:  # a replaced document keeps its place: positions shift, so rebuild
                snapshot = self._build(prepared.values())
            self._prepared = prepared
            self._snapshot = snapshot
            self.traits = None  # kept for the documents the index was built from

    def _embed(
        self, prepared: Mapping[str, _Prepared], progress: Progress | None
    ) -> Mapping[str, _Prepared]:
        """The same documents with their passages' vectors (all in one batched call)."""
        if self.embedder is None:
            return prepared
        texts = [dense_text(p) for doc in prepared.values() for p in doc.passages]
        vectors = embed_with_progress(self.embedder, texts, progress)
        out: dict[str, _Prepared] = {}
        start = 0
        for doc_id, doc in prepared.items():
            end = start + len(doc.passages)
            out[doc_id] = replace(doc, vectors=vectors[start:end])
            start = end
        return out

    def _build(self, prepared: Iterable[_Prepared]) -> _Snapshot:
        docs = list(prepared)
        passages = tuple(p for doc in docs for p in doc.passages)
        indexes = {
            s: BM25Index.from_tokens([t for doc in docs for t in doc.tokens_of(s)]) for s in LEXICAL
        }
        dense = None
        self._rows = None
        if self.embedder is not None:
            rows = [doc.vectors for doc in docs if doc.vectors is not None and len(doc.vectors)]
            if rows:
                self._rows = _GrowingRows(np.vstack(rows))
                dense = self._rows.view()
        by_id = {p.id: i for i, p in enumerate(passages)}
        history = self._history(docs, passages, dense)
        return _Snapshot(passages, by_id, indexes, _kind_codes(passages), dense, history)

    def _append(
        self, snapshot: _Snapshot, fresh: _Prepared, everything: Iterable[_Prepared]
    ) -> _Snapshot:
        """The snapshot plus one new document at the end; earlier positions do not move."""
        passages = Joined.of(snapshot.passages, fresh.passages)
        indexes: dict[str, BM25Index] = {}
        for signal in LEXICAL:
            index = snapshot.indexes[signal].with_added(fresh.tokens_of(signal))
            if index.needs_merge:
                index = BM25Index.from_tokens([t for d in everything for t in d.tokens_of(signal)])
            indexes[signal] = index
        dense = snapshot.dense
        if fresh.vectors is not None and len(fresh.vectors):
            if self._rows is None:
                self._rows = _GrowingRows(fresh.vectors)
                dense = self._rows.view()
            else:
                dense = self._rows.append(fresh.vectors)
        added = {p.id: len(snapshot.passages) + i for i, p in enumerate(fresh.passages)}
        by_id: Mapping[str, int]
        if isinstance(snapshot.by_id, dict):
            by_id = {**snapshot.by_id, **added}
        else:
            by_id = _AddedIds.of(snapshot.by_id, added)
        kinds = np.concatenate([snapshot.kinds, _kind_codes(fresh.passages)])
        history = snapshot.history
        if linked_questions([fresh.document]) or history is None:
            history = self._history(list(everything), passages, dense)
        return _Snapshot(passages, by_id, indexes, kinds, dense, history, ivf=snapshot.ivf)

    def _history(
        self, docs: Sequence[_Prepared], passages: Sequence[Passage], dense: Vectors | None
    ) -> HistoryIndex | None:
        """The history signal's index: linked questions, embedded once each (cached)."""
        if self.embedder is None or dense is None or not len(dense):
            return None
        questions = linked_questions([doc.document for doc in docs])
        if not questions:
            return None
        missing = [q for q in questions if q[1] not in self._question_vectors]
        if missing:
            vectors = self.embedder.embed([q[1] for q in missing])
            for (_, text, _), vector in zip(missing, vectors, strict=True):
                self._question_vectors[text] = np.asarray(vector, dtype=np.float32)
        matrix = np.vstack([self._question_vectors[q[1]] for q in questions])
        passages_of: dict[str, list[int]] = {}
        for position, passage in enumerate(passages):
            if passage.kind is DocKind.KB:
                passages_of.setdefault(passage.doc_id, []).append(position)
        return build_history(questions, matrix, passages_of, dense)
