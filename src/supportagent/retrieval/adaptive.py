"""Fusion weights that read the corpus: each signal's worth measured on pseudo-queries, no labels.

Fixed weights chosen on a few datasets do not transfer: on a long product manual BM25 beats
the embedding model, on paraphrased FAQ questions the embedding model wins. So at index build
we ask the corpus itself which signal it rewards, with queries whose answer we know:

- **inverse cloze**: a sentence cut out of a knowledge-base passage is the query, and the right
  answer is that passage *without the sentence* (its BM25 score and its vector are recomputed
  on the remaining text, so the sentence cannot find itself);
- **history**: a resolved ticket's question is the query, and the articles it links to are the
  right answers (real customer wording).

Every weight combination of a small grid (factors of the fixed ``DEFAULT_WEIGHTS``) is scored
by its mean reciprocal rank on those pseudo-queries, at document level like the evaluation.
The best combination's factors are then *shrunk* towards the fixed weights,
``weight = default * factor ** SHRINK``: cloze sentences share words with their passage, so
the raw optimum over-trusts BM25, and ``SHRINK`` (the method's one free parameter) was chosen
by leave-one-dataset-out (docs/retrieval.md). With too few pseudo-queries the fixed weights
stay. The result is a plain dict of floats (``CorpusEstimate.to_dict``), small enough for an
on-disk index to store beside its postings.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from supportagent.retrieval.bm25 import K1, B, BM25Index
from supportagent.retrieval.fusion import DEFAULT_WEIGHTS
from supportagent.retrieval.text import tokenize

#: The exponent that pulls the pseudo-query optimum towards the fixed weights (0 = fixed
#: weights, 1 = the raw optimum); chosen by leave-one-dataset-out, docs/retrieval.md.
SHRINK = 0.0
#: Cloze queries drawn per corpus (spread evenly over the passages): enough for a stable MRR,
#: few enough that the extra embeddings cost about a second on two cores.
CLOZE_QUERIES = 64
#: Below this many pseudo-queries the estimate is noise, and the fixed weights are kept.
MIN_QUERIES = 12
#: The grid: each signal's weight is its fixed weight times one of these factors.
FACTORS: Mapping[str, tuple[float, ...]] = {
    "body": (0.25, 0.5, 1.0, 2.0, 4.0),
    "title": (0.0, 0.5, 1.0, 2.0),
    "dense": (0.25, 0.5, 1.0, 2.0, 4.0),
}
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_MIN_SENTENCE_TOKENS = 5

Floats = npt.NDArray[np.float64]
Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]


@dataclass(frozen=True, slots=True)
class CorpusEstimate:
    """What the corpus said: the best grid factor per signal, the pseudo-query count, and each
    signal's MRR alone on them (reported, and the reason the factors are what they are)."""

    factors: Mapping[str, float]
    queries: int
    signal_mrr: Mapping[str, float]

    def weights(self, shrink: float | None = None) -> dict[str, float]:
        """Fusion weights: the fixed ones where the estimate is too thin, else shrunk factors
        (by ``SHRINK`` unless ``shrink`` is given)."""
        shrink = SHRINK if shrink is None else shrink
        if self.queries < MIN_QUERIES or not self.factors:
            return dict(DEFAULT_WEIGHTS)
        out = {}
        for signal, base in DEFAULT_WEIGHTS.items():
            factor = self.factors.get(signal, 1.0)
            out[signal] = 0.0 if factor == 0 else base * factor**shrink
        return out

    def to_dict(self) -> dict[str, float]:
        """Flat and serialisable: ``factor.<signal>``, ``mrr.<signal>``, ``queries``."""
        flat = {f"factor.{s}": float(f) for s, f in self.factors.items()}
        flat.update({f"mrr.{s}": float(m) for s, m in self.signal_mrr.items()})
        flat["queries"] = float(self.queries)
        return flat

    @classmethod
    def from_dict(cls, flat: Mapping[str, float]) -> CorpusEstimate:
        factors = {k.split(".", 1)[1]: v for k, v in flat.items() if k.startswith("factor.")}
        mrr = {k.split(".", 1)[1]: v for k, v in flat.items() if k.startswith("mrr.")}
        return cls(factors, int(flat.get("queries", 0)), mrr)


FIXED = CorpusEstimate({}, 0, {})


@dataclass(frozen=True, slots=True)
class PseudoQuery:
    """One query with known answers. A cloze query names its passage (``cloze``) and that
    passage's text without the sentence (``rest``), which is scored in the passage's place."""

    text: str
    targets: frozenset[int]  # document indexes that count as right
    cloze: int | None = None
    rest_tokens: tuple[str, ...] = ()
    rest_dense: str = ""


@dataclass(frozen=True, slots=True)
class CorpusView:
    """The parts of an index that estimation reads (all positions are passage positions)."""

    texts: Sequence[str]  # passage body text
    dense_texts: Sequence[str]  # what the dense signal embedded
    doc_of: npt.NDArray[np.int64]  # document index of each passage (contiguous per document)
    searchable: npt.NDArray[np.bool_]  # passages that answers may be (knowledge base)
    indexes: Mapping[str, BM25Index]
    dense: npt.NDArray[np.float32] | None
    embed: Embed | None
    #: (question, indexes of the documents it links to), from resolved tickets and answers.
    history: Sequence[tuple[str, frozenset[int]]] = ()


def _cloze_sentence(text: str) -> tuple[str, str] | None:
    """The middle sentence of at least five tokens and the text without it; None when the
    passage has fewer than three sentences (the rest would not say what it is about)."""
    sentences = [s for s in _SENTENCE.split(text) if s.strip()]
    if len(sentences) < 3:
        return None
    order = sorted(range(len(sentences)), key=lambda i: abs(i - (len(sentences) - 1) / 2))
    for i in order:
        if len(tokenize(sentences[i])) >= _MIN_SENTENCE_TOKENS:
            rest = " ".join(s for j, s in enumerate(sentences) if j != i)
            return sentences[i], rest
    return None


def _bm25_one(index: BM25Index, query: Sequence[str], doc: Sequence[str], avgdl: float) -> float:
    """BM25 (the formula of ``bm25.py``) of one token list that is not in the index."""
    counts: dict[str, int] = {}
    for token in doc:
        counts[token] = counts.get(token, 0) + 1
    norm = K1 * (1 - B + B * len(doc) / avgdl) if avgdl else K1
    score = 0.0
    for token in query:
        tf = counts.get(token, 0)
        if tf:
            score += index.idf(token) * tf / (tf + norm)
    return score


def pseudo_queries(view: CorpusView, limit: int = CLOZE_QUERIES) -> list[PseudoQuery]:
    """Cloze queries spread evenly over the searchable passages, then (as many at most) history
    queries spread evenly over the linked resolved tickets."""
    candidates = [int(i) for i in np.flatnonzero(view.searchable)]
    step = max(1, len(candidates) // max(limit, 1))
    out: list[PseudoQuery] = []
    for position in candidates[::step]:
        if len(out) >= limit:
            break
        cut = _cloze_sentence(view.texts[position])
        if cut is None:
            continue
        sentence, rest = cut
        rest_dense = view.dense_texts[position].replace(sentence, " ")
        doc = frozenset({int(view.doc_of[position])})
        out.append(PseudoQuery(sentence, doc, position, tuple(tokenize(rest)), rest_dense))
    linked = [(q, targets) for q, targets in view.history if targets]
    every = max(1, len(linked) // max(limit, 1))
    out.extend(PseudoQuery(q, targets) for q, targets in linked[::every][:limit])
    return out


def _normalized_scores(view: CorpusView, queries: Sequence[PseudoQuery]) -> dict[str, list[Floats]]:
    """Per signal, per pseudo-query: the normalised score of every passage (as in fusion)."""
    body_lengths = [len(tokenize(t)) for t in view.texts]
    avgdl = sum(body_lengths) / len(body_lengths) if body_lengths else 0.0
    out: dict[str, list[Floats]] = {"body": [], "title": []}
    for query in queries:
        tokens = tokenize(query.text)
        for signal in ("body", "title"):
            index = view.indexes[signal]
            scores = index.scores(tokens).astype(np.float64)
            if signal == "body" and query.cloze is not None:
                scores[query.cloze] = _bm25_one(index, tokens, query.rest_tokens, avgdl)
            ceiling = index.ceiling(tokens)
            out[signal].append(scores / ceiling if ceiling > 0 else np.zeros_like(scores))
    if view.embed is not None and view.dense is not None and len(view.dense):
        cloze = [q for q in queries if q.cloze is not None]
        vectors = view.embed([q.text for q in queries] + [q.rest_dense for q in cloze])
        rest = iter(vectors[len(queries) :])
        dense: list[Floats] = []
        for query, vector in zip(queries, vectors[: len(queries)], strict=True):
            scores = (view.dense @ vector).astype(np.float64)
            if query.cloze is not None:
                scores[query.cloze] = float(next(rest) @ vector)
            dense.append(np.clip(scores, 0.0, None))
        out["dense"] = dense
    return out


def _doc_ranks(
    fused: Floats, view: CorpusView, starts: npt.NDArray[np.int64], targets: frozenset[int]
) -> float:
    """Reciprocal rank of the best target document, passages rolled up to documents."""
    masked = np.where(view.searchable, fused, -np.inf)
    best = np.maximum.reduceat(masked, starts)
    hit = max(best[t] for t in targets)
    if not np.isfinite(hit) or hit <= 0:
        return 0.0  # the signal does not find it at all
    # Ties count half: a signal that scores every document alike learns nothing.
    return 1.0 / (1 + int((best > hit).sum()) + 0.5 * (int((best == hit).sum()) - 1))


def estimate(view: CorpusView, limit: int = CLOZE_QUERIES) -> CorpusEstimate:
    """Score every grid combination on the corpus's pseudo-queries; keep the best factors."""
    queries = pseudo_queries(view, limit)
    if len(queries) < MIN_QUERIES or len(view.texts) == 0:
        return CorpusEstimate({}, len(queries), {})
    normalized = _normalized_scores(view, queries)
    signals: list[str] = [s for s in ("body", "title", "dense") if s in normalized]
    starts = np.flatnonzero(np.r_[True, view.doc_of[1:] != view.doc_of[:-1]])
    signal_mrr = {
        s: float(
            np.mean(
                [
                    _doc_ranks(normalized[s][n], view, starts, q.targets)
                    for n, q in enumerate(queries)
                ]
            )
        )
        for s in signals
    }
    best: tuple[float, float, dict[str, float]] | None = None
    for combo in itertools.product(*(FACTORS[s] for s in signals)):
        factors: dict[str, float] = dict(zip(signals, combo, strict=True))
        if all(f == 0 for f in factors.values()):
            continue
        total = 0.0
        for n, query in enumerate(queries):
            fused = sum(
                DEFAULT_WEIGHTS[s] * factors[s] * normalized[s][n] for s in signals if factors[s]
            )
            total += _doc_ranks(np.asarray(fused), view, starts, query.targets)
        mrr = total / len(queries)
        # Ties go to the combination nearest the fixed weights.
        distance = float(sum(abs(math.log2(f)) if f else 2.0 for f in factors.values()))
        if best is None or (mrr, -distance) > (best[0], best[1]):
            best = (mrr, -distance, factors)
    assert best is not None
    return CorpusEstimate(best[2], len(queries), signal_mrr)
