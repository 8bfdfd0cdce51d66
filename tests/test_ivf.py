"""The approximate dense index (retrieval/ivf.py): exact when every list is probed, high
recall on clustered vectors with a few lists, appended rows scored exactly, and the retriever
keeps exact search below ``MIN_PASSAGES``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from embedding_fakes import HashingEmbedder
from supportagent.retrieval import ivf, ondisk
from supportagent.retrieval.retriever import HybridRetriever
from test_index_ondisk import QUERIES, _documents, _rankings


def _clustered(size: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, 32)).astype(np.float32)
    rows = centres[rng.integers(0, 40, size)] + 0.15 * rng.standard_normal((size, 32))
    rows = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)
    queries = rows[rng.choice(size, 30, replace=False)] + 0.05 * rng.standard_normal((30, 32))
    return rows, (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)


def test_probing_every_list_is_exact_search() -> None:
    rows, queries = _clustered(3000)
    arrays = ivf.build(rows)
    assert len(arrays["centroids"]) == ivf.list_count(3000) == 55
    assert sorted(arrays["order"].tolist()) == list(range(3000))
    index = ivf.IVFIndex.from_arrays(arrays, probe=55)
    for query in queries:
        np.testing.assert_allclose(index.scores(query, 3000), rows @ query, rtol=1e-5, atol=1e-6)


def test_a_few_lists_find_most_of_the_exact_top_ten_on_clustered_vectors() -> None:
    rows, queries = _clustered(3000)
    index = ivf.IVFIndex.from_arrays(ivf.build(rows), probe=4)  # 4 of 55 lists: 7% scanned
    recall = []
    for query in queries:
        exact = set(np.argsort(-(rows @ query))[:10].tolist())
        found = index.scores(query, 3000)
        assert np.count_nonzero(found) < 0.25 * len(rows)  # it did not scan everything
        recall.append(len(exact & set(np.argsort(-found)[:10].tolist())) / 10)
    assert np.mean(recall) >= 0.9


def test_rows_added_after_the_build_are_scored_exactly() -> None:
    rows, queries = _clustered(3000)
    index = ivf.IVFIndex.from_arrays(ivf.build(rows[:2500]), probe=1)
    scores = index.scores(queries[0], 3000, rows)
    np.testing.assert_allclose(scores[2500:], rows[2500:] @ queries[0], rtol=1e-5, atol=1e-6)


def test_below_the_threshold_the_index_on_disk_keeps_no_ivf(tmp_path: Path) -> None:
    retriever = HybridRetriever(_documents(), embedder=HashingEmbedder(), index_dir=tmp_path)
    generation = ondisk.read_generation(tmp_path)
    assert generation is not None
    assert not [name for name in generation.arrays if name.startswith("ivf.")]
    assert retriever._snapshot.ivf is None


def test_above_the_threshold_the_retriever_searches_through_the_ivf(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = _documents()
    exact = _rankings(HybridRetriever(docs, embedder=HashingEmbedder()))
    monkeypatch.setattr(ivf, "MIN_PASSAGES", 1)
    monkeypatch.setattr(ivf, "PROBE_SHARE", 1.0)  # every list probed: must rank as exact does
    HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    mapped = HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    assert mapped.index_status == "mapped"
    assert mapped._snapshot.ivf is not None
    assert _rankings(mapped) == exact
    # With one list probed of several, passages outside it lose their dense score.
    monkeypatch.setattr(ivf, "PROBE_SHARE", 0.0)
    narrow = HybridRetriever(docs, embedder=HashingEmbedder(), index_dir=tmp_path)
    assert narrow._snapshot.ivf is not None and narrow._snapshot.ivf.probe == 1
    dense = [
        sum("dense" in h.signals and h.signals["dense"].score == 0.0 for h in narrow.search(q))
        for q in QUERIES
    ]
    assert sum(dense) > 0
