"""Fusion weights read from the corpus (adaptive.py) and the history signal (history.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from embedding_fakes import HashingEmbedder
from supportagent.domain import DocKind, Document
from supportagent.retrieval import adaptive
from supportagent.retrieval import retriever as retriever_module
from supportagent.retrieval.adaptive import FIXED, MIN_QUERIES, CorpusEstimate
from supportagent.retrieval.eval import (
    DEFAULT_VARIANT,
    FIXED_VARIANT,
    NO_HISTORY_VARIANT,
    BeirDataset,
    _own_tickets,
    evaluate_retrieval,
)
from supportagent.retrieval.fusion import DEFAULT_WEIGHTS, Fusion
from supportagent.retrieval.retriever import HybridRetriever

WORDS = [f"w{i}{chr(97 + i % 26)}x" for i in range(400)]


@dataclass
class NoiseEmbedder:
    """Implements the Embedder protocol with vectors that carry no meaning (hash of the whole
    text): a dense signal that is useless, so the corpus should say so."""

    model_id: str = "test-noise-32"
    calls: list[list[str]] = field(default_factory=list)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
            rows.append(np.random.default_rng(seed).standard_normal(32))
        matrix = np.array(rows, dtype=np.float32).reshape(-1, 32)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def article(n: int) -> Document:
    """Forty articles of five sentences; each article has its own words, so a sentence cut
    from one is matched by BM25 against the rest of that article and no other."""
    own = WORDS[n * 10 : n * 10 + 10]
    sentences = [" ".join(own[(i + j) % 10] for j in range(6)) + "." for i in range(5)]
    return Document(f"KB-{n:02d}", DocKind.KB, f"Topic {n}", " ".join(sentences))


def test_cloze_sentence_is_cut_out_of_its_passage() -> None:
    cut = adaptive._cloze_sentence("One two three four five. Six seven eight nine ten. A b c.")
    assert cut is not None
    sentence, rest = cut
    assert sentence == "Six seven eight nine ten." and sentence not in rest
    assert adaptive._cloze_sentence("Only one sentence here. And two.") is None


def test_a_corpus_where_words_decide_raises_bm25_and_lowers_noise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(adaptive, "SHRINK", 1.0)  # the shipped 0 keeps the fixed weights
    docs = [article(n) for n in range(40)]
    retriever = HybridRetriever(docs, embedder=NoiseEmbedder())
    estimate = retriever.corpus_estimate
    assert estimate.queries >= MIN_QUERIES
    assert estimate.signal_mrr["body"] > 0.9 > 0.3 > estimate.signal_mrr["dense"]
    assert estimate.factors["body"] > estimate.factors["dense"]
    weights = retriever.fusion.signal_weights
    assert weights["body"] / weights["dense"] > DEFAULT_WEIGHTS["body"] / DEFAULT_WEIGHTS["dense"]
    monkeypatch.setattr(adaptive, "SHRINK", 0.0)
    fixed = HybridRetriever(docs, embedder=NoiseEmbedder())
    assert fixed.corpus_estimate == FIXED and fixed.fusion.signal_weights == dict(DEFAULT_WEIGHTS)
    # The cloze sentence does not find itself: without the patch, body MRR would be 1.0 from
    # the sentence's own words, and the reduced passage still wins here only by its neighbours.
    queries = adaptive.pseudo_queries(retriever._corpus_view(retriever._snapshot))
    for query in queries:
        assert query.cloze is not None and query.text not in " ".join(query.rest_tokens)


def test_estimate_round_trips_through_a_dict_of_floats() -> None:
    estimate = CorpusEstimate({"body": 2.0, "title": 0.0, "dense": 0.5}, 40, {"body": 0.9})
    flat = estimate.to_dict()
    assert all(isinstance(v, float) for v in flat.values())
    assert CorpusEstimate.from_dict(flat) == estimate
    assert estimate.weights(0.0) == {"body": 1.0, "title": 0.0, "dense": 3.0}
    assert estimate.weights(1.0) == {"body": 2.0, "title": 0.0, "dense": 1.5}
    assert estimate.weights(0.5)["body"] == pytest.approx(2**0.5)
    # Too few pseudo-queries: the fixed weights.
    assert CorpusEstimate({"body": 4.0}, MIN_QUERIES - 1, {}).weights() == dict(DEFAULT_WEIGHTS)
    assert FIXED.weights() == dict(DEFAULT_WEIGHTS)


def test_a_stored_estimate_skips_estimation_and_an_explicit_fusion_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refuse(*_: object, **__: object) -> CorpusEstimate:
        raise AssertionError("estimation should not run")

    monkeypatch.setattr(retriever_module, "estimate", refuse)
    monkeypatch.setattr(adaptive, "SHRINK", 0.5)
    docs = [article(n) for n in range(3)]
    stored = {"factor.body": 2.0, "factor.title": 1.0, "factor.dense": 1.0, "queries": 50.0}
    retriever = HybridRetriever(docs, embedder=HashingEmbedder(), corpus_estimate=stored)
    assert retriever.fusion.signal_weights["body"] == pytest.approx(2**adaptive.SHRINK)
    fixed = HybridRetriever(docs, embedder=HashingEmbedder(), fusion=Fusion())
    assert fixed.fusion == Fusion() and fixed.corpus_estimate == FIXED


def test_a_small_corpus_keeps_the_fixed_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(adaptive, "SHRINK", 1.0)
    docs = [article(n) for n in range(3)]
    retriever = HybridRetriever(docs, embedder=HashingEmbedder())
    assert retriever.corpus_estimate.queries < MIN_QUERIES
    assert retriever.fusion.signal_weights == dict(DEFAULT_WEIGHTS)


# --- history -------------------------------------------------------------------------------

ARTICLES = [
    Document("KB-SSO", DocKind.KB, "Single sign-on", "Configure SAML identity providers here."),
    Document("KB-BILL", DocKind.KB, "Invoices", "Invoices are issued monthly in arrears."),
]


def ticket(doc_id: str, question: str, linked: tuple[str, ...]) -> Document:
    return Document(
        doc_id,
        DocKind.RESOLVED,
        question,
        f"{question}\n\nSee the article.",
        linked_docs=linked,
        meta={"question": question, "answer": "See the article."},
    )


def test_history_lifts_the_linked_article_for_the_customers_wording() -> None:
    history = [ticket("RT-1", "okta login through company portal broken", ("KB-SSO",))]
    retriever = HybridRetriever([*ARTICLES, *history], embedder=HashingEmbedder())
    assert "history" in retriever.fusion.signal_weights
    query = "okta portal login"
    hits = retriever.search(query, k=2, kinds=[DocKind.KB])
    assert hits[0].passage.doc_id == "KB-SSO"
    assert hits[0].signals["history"].score > 0.5
    # The same search, told to ignore the ticket: no history evidence is left.
    hits = retriever.search(query, k=2, kinds=[DocKind.KB], exclude_history={"RT-1"})
    assert all(h.signals.get("history") is None or h.signals["history"].score == 0 for h in hits)


def test_an_added_resolved_ticket_joins_the_history_signal() -> None:
    retriever = HybridRetriever(ARTICLES, embedder=HashingEmbedder())
    assert "history" not in retriever.fusion.signal_weights
    retriever.add(ticket("RT-2", "okta portal login", ("KB-SSO",)))
    snapshot = retriever._snapshot
    assert snapshot.history is not None and snapshot.history.sources == ("RT-2",)
    sso = snapshot.by_id[retriever.passages_of("KB-SSO")[0].id]
    assert int(snapshot.history.positions[0]) == sso


def test_eval_never_matches_a_query_by_its_own_ticket(tmp_path: Path) -> None:
    question = "okta login through company portal broken"
    history = [ticket("RT-1", question, ("KB-SSO",)), ticket("RT-9", "pay bill", ("KB-BILL",))]
    # The query *is* ticket RT-1; with its own ticket excluded, history cannot help it.
    dataset = BeirDataset("t", tuple(ARTICLES), {"q1": question}, {"q1": frozenset({"KB-SSO"})})
    report = evaluate_retrieval(dataset, HashingEmbedder(), (1,), history=history)
    assert {DEFAULT_VARIANT, FIXED_VARIANT, NO_HISTORY_VARIANT} <= set(report.metrics)
    assert report.documents == 2
    assert _own_tickets({"q1": question, "q2": "other words"}, history) == {
        "q1": frozenset({"RT-1"}),
        "q2": frozenset(),
    }


def test_a_signal_that_scores_everything_alike_earns_nothing() -> None:
    view = adaptive.CorpusView(
        texts=["a", "b", "c", "d"],
        dense_texts=["a", "b", "c", "d"],
        doc_of=np.array([0, 1, 2, 3]),
        searchable=np.array([True, True, True, True]),
        indexes={},
        dense=None,
        embed=None,
    )
    starts = np.array([0, 1, 2, 3])
    assert adaptive._doc_ranks(np.zeros(4), view, starts, frozenset({2})) == 0.0
    flat = np.full(4, 0.3)
    assert adaptive._doc_ranks(flat, view, starts, frozenset({2})) == pytest.approx(1 / 2.5)
    assert adaptive._doc_ranks(np.array([0.1, 0.2, 0.9, 0.3]), view, starts, frozenset({2})) == 1


def test_lexical_trust_leans_on_bm25_only_when_a_passage_matches_the_query_outright() -> None:
    with pytest.raises(ValueError, match="lexical_trust"):
        Fusion(lexical_trust=-1.0)
    assert (
        Fusion(lexical_trust=2.0).describe() == "weighted body=1 dense=3 title=0.5 lexical_trust=2"
    )
    docs = [article(n) for n in range(6)]
    retriever = HybridRetriever(docs, embedder=NoiseEmbedder())
    assert retriever.fusion.lexical_trust > 0
    fixed = Fusion()
    # A query made of one article's own words: its best passage matches all of the query's idf
    # weight, so the body's scale shrinks by 1 + trust (the fused body term grows by as much).
    query = " ".join(WORDS[20:24])
    plain, trusted = retriever.scales(query, fixed), retriever.scales(query)
    factor = plain["body"] / trusted["body"]
    assert 1 < factor <= 1 + retriever.fusion.lexical_trust
    assert retriever.search(query, k=1)[0].passage.doc_id == "KB-02"
    # The fused score is still the weighted sum of raw scores over these scales.
    hit = retriever.search(query, k=1)[0]
    weights = retriever.fusion.signal_weights
    recomputed = sum(
        weights[name] * max(signal.score, 0.0) / trusted[name]
        for name, signal in hit.signals.items()
    )
    assert hit.score == pytest.approx(recomputed, rel=1e-5)
    # A query no passage shares a word with: nothing to trust, the scales are the fixed ones.
    assert retriever.scales("zzz unknown words", fixed) == retriever.scales("zzz unknown words")
