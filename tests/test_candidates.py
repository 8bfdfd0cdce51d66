"""Candidate search (retrieval/candidates.py, maxscore.py) against scoring every passage:
the same top k, the same scores to the bit, the same per-signal tops and ranks, on generated
corpora; and a saved vocabulary searched where it is mapped (vocabulary.py)."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embedding_fakes import HashingEmbedder
from supportagent.domain import DocKind, Document
from supportagent.retrieval import maxscore
from supportagent.retrieval import retriever as retriever_module
from supportagent.retrieval.bm25 import BM25Index, top_k
from supportagent.retrieval.candidates import (
    ArrayScores,
    SignalScores,
    SparseScores,
    normalized,
    weighted_top,
)
from supportagent.retrieval.fusion import Fusion, weighted_score_fusion
from supportagent.retrieval.maxscore import LexicalScores
from supportagent.retrieval.retriever import HybridRetriever
from supportagent.retrieval.text import tokenize

# Words that the tokenizer keeps as they are; a few are common, most are rare.
WORDS = ["alpha", "bravo", "carbon", "delta", "ember", "fjord", "gravel", "harbor", "indigo"]
COMMON = ["alpha", "alpha", "alpha", "bravo", "bravo"]

documents = st.lists(
    st.lists(st.sampled_from(WORDS + COMMON), min_size=1, max_size=12), min_size=1, max_size=60
)
queries = st.lists(st.sampled_from([*WORDS, "unknownword"]), min_size=1, max_size=5)


def _signals(
    docs: list[list[str]], tail: list[list[str]], query: list[str], seed: int, sparse: bool
) -> tuple[dict[str, SignalScores], dict[str, float | None], int]:
    """Body BM25 (with an unmerged tail), title BM25 over each document's first two words,
    and a dense signal: exact cosine, or known only at some passages (as the IVF's)."""
    body = BM25Index.from_tokens(docs).with_added(tail) if tail else BM25Index.from_tokens(docs)
    every = docs + tail
    title = BM25Index.from_tokens([d[:2] for d in every])
    size = len(every)
    rng = np.random.default_rng(seed)
    cosines = np.round(rng.uniform(-0.5, 1.0, size), 1).astype(np.float32)  # ties are common
    if sparse:
        probed = np.flatnonzero(rng.random(size) < 0.5).astype(np.int32)
        dense: SignalScores = SparseScores(probed, cosines[probed], size)
    else:
        dense = ArrayScores(cosines)
    signals: dict[str, SignalScores] = {
        "body": LexicalScores(body, query),
        "title": LexicalScores(title, query),
        "dense": dense,
    }
    ceilings = {"body": body.ceiling(query), "title": title.ceiling(query), "dense": None}
    return signals, ceilings, size


@settings(max_examples=150, deadline=None)
@given(
    docs=documents,
    tail=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6), max_size=4),
    query=queries,
    seed=st.integers(0, 2**16),
    sparse=st.booleans(),
    k=st.integers(1, 12),
    depth=st.integers(1, 6),
    weights=st.fixed_dictionaries(
        {
            "body": st.sampled_from([0.0, 1.0, 2.5]),
            "title": st.sampled_from([0.0, 0.5]),
            "dense": st.sampled_from([0.0, 1.0, 3.0]),
        }
    ),
    masked=st.booleans(),
    full_share=st.sampled_from([0.05, 1.0, 100.0]),
)
def test_candidate_fusion_is_the_exact_fusion(
    docs: list[list[str]],
    tail: list[list[str]],
    query: list[str],
    seed: int,
    sparse: bool,
    k: int,
    depth: int,
    weights: dict[str, float],
    masked: bool,
    full_share: float,
) -> None:
    # full_share: scored by walks (100), by walks that give up early (0.05), in between (1).
    with patch.object(maxscore, "FULL_SHARE", full_share):
        signals, ceilings, size = _signals(docs, tail, query, seed, sparse)
        mask = np.random.default_rng(seed + 1).random(size) < 0.6 if masked else None
        full = {name: signal.full() for name, signal in signals.items()}
        fused = weighted_score_fusion(
            {name: normalized(full[name], ceilings[name]) for name in full}, weights
        )
        expected = top_k(fused, k, mask)
        found = weighted_top(signals, ceilings, weights, k, mask, depth, size)
        assert list(zip(found.positions.tolist(), found.scores.tolist(), strict=True)) == expected
        for name, raw in found.raw.items():
            assert raw.tolist() == full[name][found.positions].tolist()
        # Each signal's own top (what RRF fuses), and its ranks of the hits.
        for name, signal in signals.items():
            top = signal.top(depth, mask)
            assert list(zip(top.positions.tolist(), top.scores.tolist(), strict=True)) == top_k(
                full[name], depth, mask
            )
            values = full[name][found.positions]
            searched = full[name] if mask is None else full[name][mask]
            exact = np.array([np.count_nonzero(searched > v) for v in values.tolist()])
            counted = signal.count_above(values, mask)
            if isinstance(signal, LexicalScores):  # exact down to the walk's bound, then a floor
                settled = values >= top.bound
                assert (counted[settled] == exact[settled]).all()
                assert (counted <= exact).all()
            else:
                assert counted.tolist() == exact.tolist()


def test_lexical_ranks_past_the_walk_are_a_lower_bound_on_large_corpora() -> None:
    rng = np.random.default_rng(5)
    docs = [list(rng.choice(WORDS + COMMON * 4, size=8)) for _ in range(3000)]
    index = BM25Index.from_tokens(docs)
    query = ["alpha", "bravo", "fjord"]
    full = index.scores(query)
    scores = LexicalScores(index, query)
    top = scores.top(20, None)
    assert top.positions.tolist() == [p for p, _ in top_k(full, 20)]
    values = np.unique(full[full > 0])
    counted = scores.count_above(values, None)
    exact = np.array([np.count_nonzero(full > v) for v in values])
    assert (counted <= exact).all()  # never more than the truth
    settled = values >= top.bound
    assert (counted[settled] == exact[settled]).all()  # exact above the walk's bound
    assert (counted[~settled] >= 20).all()  # below it, at least the walk's depth


def _corpus(rng: np.random.Generator, size: int) -> list[Document]:
    out = []
    for i in range(size):
        words = " ".join(rng.choice(WORDS + COMMON, size=int(rng.integers(3, 15))))
        kind = DocKind.KB if i % 3 else DocKind.RESOLVED
        out.append(Document(f"D-{i}", kind, f"{rng.choice(WORDS)} {i}", words))
    return out


def _exact_hits(retriever: HybridRetriever, query: str, k: int) -> list[tuple[str, float]]:
    """The hits of fusing every passage, as search did before candidates."""
    tokens = tokenize(query)
    snapshot = retriever._snapshot
    scores = retriever._score(snapshot, query, tokens, retriever.signals())
    full = {name: s.full() for name, s in scores.items()}
    ceilings = {n: None if n == "dense" else snapshot.indexes[n].ceiling(tokens) for n in full}
    normal = {n: normalized(full[n], ceilings[n]) for n in full}
    weights = {n: retriever.fusion.weight(n) for n in full}
    trust = retriever.fusion.lexical_trust
    weights["body"] *= 1.0 + trust * float(normal["body"].max())
    found = top_k(weighted_score_fusion(normal, weights), k)
    return [(snapshot.passages[p].id, score) for p, score in found]


def test_retriever_hits_equal_fusing_every_passage(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retriever_module, "CANDIDATES_FROM", 0)  # candidates at any size
    rng = np.random.default_rng(11)
    retriever = HybridRetriever(_corpus(rng, 400), embedder=HashingEmbedder(), fusion=None)
    for query in ["alpha fjord", "gravel harbor indigo", "bravo", "ember delta carbon alpha"]:
        hits = retriever.search(query, k=10)
        assert [(h.id, h.score) for h in hits] == _exact_hits(retriever, query, 10)


def test_a_query_no_passage_has_and_k_beyond_every_candidate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(retriever_module, "CANDIDATES_FROM", 0)
    rng = np.random.default_rng(12)
    retriever = HybridRetriever(_corpus(rng, 12), embedder=HashingEmbedder())
    # No passage has the word: BM25 knows nothing and bounds nothing; dense alone decides.
    unknown = "zzyzx"
    hits = retriever.search(unknown, k=5)
    assert [(h.id, h.score) for h in hits] == _exact_hits(retriever, unknown, 5)
    assert all("body" not in h.signals and "title" not in h.signals for h in hits)
    lexical = HybridRetriever(_corpus(rng, 12), fusion=Fusion("weighted", {"body": 1.0}))
    assert lexical.search(unknown, k=5) == []
    # k far past the passages any signal scores above 0: every one of them, nothing else.
    many = lexical.search("fjord", k=100)
    full = lexical._snapshot.indexes["body"].scores(["fjord"])
    assert len(many) == int(np.count_nonzero(full > 0))
    assert [h.score for h in many] == sorted((h.score for h in many), reverse=True)


def test_a_token_with_no_postings_in_an_index_from_arrays() -> None:
    # An index written by other code (bench/hybrid_1m.py) may list a token no passage has.
    arrays = {
        "vocab": np.frombuffer(b"alphabravo", dtype=np.uint8),
        "vocab_ends": np.array([5, 10], dtype=np.int64),
        "start": np.array([0, 2, 2], dtype=np.int64),
        "docs": np.array([0, 2], dtype=np.int32),
        "weights": np.array([0.5, 0.25], dtype=np.float32),
    }
    index = BM25Index.from_arrays(arrays, size=3, avgdl=1.0)
    assert index.terms(["bravo"]) == []
    scores = LexicalScores(index, ["bravo", "alpha"])
    top = scores.top(5, None)
    assert list(zip(top.positions.tolist(), top.scores.tolist(), strict=True)) == top_k(
        index.scores(["bravo", "alpha"]), 5
    )


@settings(max_examples=80, deadline=None)
@given(
    docs=st.lists(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=5), max_size=20),
    probes=st.lists(st.text(max_size=6), max_size=10),
)
def test_a_saved_vocabulary_is_searched_where_it_lies(
    docs: list[list[str]], probes: list[str]
) -> None:
    built = BM25Index.from_tokens(docs)
    arrays, numbers = built.to_arrays()
    mapped = BM25Index.from_arrays(arrays, numbers["size"], numbers["avgdl"])
    old = {name: array for name, array in arrays.items() if name != "vocab_order"}
    as_dict = BM25Index.from_arrays(old, numbers["size"], numbers["avgdl"])  # an older save
    words = sorted({t for d in docs for t in d})
    for token in [*words, *probes, "", "\U0001f600"]:
        assert mapped.df(token) == as_dict.df(token) == built.df(token)
    query = [*words[:3], *probes[:2]]
    assert mapped.scores(query).tolist() == built.scores(query).tolist()
    assert as_dict.scores(query).tolist() == built.scores(query).tolist()
