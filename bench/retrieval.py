"""Retrieval speed: index build, query latency and memory, ours against rank_bm25 and raw bm25s.

Run: .venv/bin/python bench/retrieval.py [--sizes 1000,10000,100000] [--queries 200]
One run, one synthetic corpus per size (Zipf-distributed words, 30 to 90 per passage, fixed
seed) and one set of queries (3 to 8 words), searched by:

- ours: ``BM25Index`` (our tokenizer's tokens in, top 10 out);
- bm25s: ``bm25s.BM25`` (lucene) on the same tokens, ``get_scores_from_ids`` plus the same top 10;
- rank_bm25: ``BM25Okapi`` on the same tokens, ``get_scores`` plus top 10 (fewer queries at
  100k: it is slow);
- hybrid: the whole ``HybridRetriever`` search (tokenizing, BM25 over bodies and titles, the
  query embedded by the real MiniLM model, dense similarity, weighted fusion, explanations).
  Passage vectors are random unit vectors, because embedding 100k passages takes the model
  about half an hour on two cores and the values do not change the cost of a search.

Build time and query latency are timed without tracing; peak memory is the tracemalloc peak
of a second, traced build (Python and numpy allocations).
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

import bm25s
import numpy as np
from rank_bm25 import BM25Okapi

from supportagent.domain import DocKind, Document
from supportagent.retrieval.bm25 import BM25Index, top_k
from supportagent.retrieval.dense import OnnxMiniLM, content_key
from supportagent.retrieval.fusion import Fusion
from supportagent.retrieval.retriever import HybridRetriever, dense_text
from supportagent.retrieval.text import tokenize

VOCABULARY = 20_000
SEED = 20241130


def words(count: int) -> list[str]:
    """Pronounceable distinct words, so the tokenizer keeps them (no stopwords, no digits)."""
    syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "da", "fe"]
    out: list[str] = []
    n = 0
    while len(out) < count:
        parts, value = [], n
        for _ in range(4):
            parts.append(syllables[value % len(syllables)])
            value //= len(syllables)
        word = "".join(parts) + "x"
        out.append(word)
        n += 1
    return out


def corpus_and_queries(size: int, queries: int) -> tuple[list[str], list[str]]:
    rng = np.random.default_rng(SEED)
    vocab = np.array(words(VOCABULARY))
    ranks = np.arange(1, VOCABULARY + 1)
    p = 1.0 / ranks**1.1
    p /= p.sum()
    lengths = rng.integers(30, 91, size=size)
    draws = rng.choice(VOCABULARY, size=int(lengths.sum()), p=p)
    texts, start = [], 0
    for length in lengths:
        chunk = vocab[draws[start : start + length]]
        # Sentences of ten words (the tokenizer drops the full stops), so the fusion's
        # index-time cloze queries (retrieval/adaptive.py) have sentences to cut out.
        texts.append(". ".join(" ".join(chunk[i : i + 10]) for i in range(0, length, 10)) + ".")
        start += length
    query_texts = [
        " ".join(vocab[rng.choice(VOCABULARY, size=int(rng.integers(3, 9)), p=p)])
        for _ in range(queries)
    ]
    return texts, query_texts


def timed(action: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    result = action()
    return result, time.perf_counter() - start


def peak_memory(action: Callable[[], Any]) -> float:
    """MiB at the tracemalloc peak while ``action`` runs (what it allocates and keeps or frees)."""
    gc.collect()
    tracemalloc.start()
    kept = action()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return peak / 2**20


def latencies(search: Callable[[Any], Any], queries: Sequence[Any]) -> tuple[float, float]:
    times = []
    for query in queries:
        start = time.perf_counter()
        search(query)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


class RandomVectors:
    """Passage vectors: a random unit vector per text. Queries: the real MiniLM model."""

    model_id = "bench-random-plus-minilm"

    def __init__(self, texts: Sequence[str]) -> None:
        rng = np.random.default_rng(SEED)
        matrix = rng.standard_normal((len(texts), 384)).astype(np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        self._rows = {content_key(t): i for i, t in enumerate(texts)}
        self._matrix = matrix
        self._model = OnnxMiniLM()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = [self._rows.get(content_key(t)) for t in texts]
        if all(r is not None for r in rows):
            return self._matrix[[r for r in rows if r is not None]]
        return self._model.embed(texts)


def bench_size(size: int, n_queries: int) -> list[tuple[str, str, str, str, str]]:
    texts, queries = corpus_and_queries(size, n_queries)
    tokens, tokenize_s = timed(lambda: [tokenize(t) for t in texts])
    query_tokens = [tokenize(q) for q in queries]
    rows: list[tuple[str, str, str, str, str]] = []

    def row(name: str, build_s: float, p50_p95: tuple[float, float], mib: float) -> None:
        p50, p95 = p50_p95
        rows.append((name, f"{build_s:.2f}", f"{p50:.2f}", f"{p95:.2f}", f"{mib:.0f}"))

    ours, build = timed(lambda: BM25Index.from_tokens(tokens))
    row(
        "ours (BM25Index)",
        build,
        latencies(lambda q: ours.search_tokens(q, 10), query_tokens),
        peak_memory(lambda: BM25Index.from_tokens(tokens)),
    )

    def bm25s_build() -> Any:
        model = bm25s.BM25(k1=1.5, b=0.75, method="lucene", backend="numpy")
        model.index(tokens_as_ids, show_progress=False)
        return model

    vocab: dict[str, int] = {}
    tokens_as_ids = bm25s.tokenization.Tokenized(
        ids=[[vocab.setdefault(t, len(vocab)) for t in doc] for doc in tokens], vocab=vocab
    )
    raw, build = timed(bm25s_build)
    ids = [[vocab[t] for t in q if t in vocab] for q in query_tokens]
    row(
        "bm25s (raw)",
        build,
        latencies(lambda q: top_k(raw.get_scores_from_ids(q), 10), ids),
        peak_memory(bm25s_build),
    )

    okapi, build = timed(lambda: BM25Okapi(tokens))
    few = query_tokens[: max(5, n_queries // (10 if size >= 100_000 else 1))]
    row(
        f"rank_bm25 ({len(few)} queries)",
        build,
        latencies(lambda q: np.argsort(-okapi.get_scores(q))[:10], few),
        peak_memory(lambda: BM25Okapi(tokens)),
    )

    docs = [Document(f"P{i}", DocKind.KB, f"Passage {i}", t) for i, t in enumerate(texts)]
    embedder = RandomVectors([dense_text(p) for d in docs for p in _passages(d)])
    embedder.embed(["warm the model up"])
    fixed, build = timed(lambda: HybridRetriever(docs, embedder=embedder, fusion=Fusion()))
    row(
        "hybrid, fixed weights (Fusion())",
        build,
        latencies(lambda q: fixed.search(q, k=8), queries),
        peak_memory(lambda: HybridRetriever(docs, embedder=embedder, fusion=Fusion())),
    )
    extra = estimate_seconds(fixed)
    hybrid, build = timed(lambda: HybridRetriever(docs, embedder=embedder))
    row(
        "hybrid, default (weights read from the corpus)",
        build,
        latencies(lambda q: hybrid.search(q, k=8), queries),
        peak_memory(lambda: HybridRetriever(docs, embedder=embedder)),
    )
    print(f"corpus estimate alone: {extra:.2f} s; {hybrid.corpus_estimate.to_dict()}")
    print(f"\n{size:,} passages; our tokenizer took {tokenize_s:.2f} s (not in the builds)")
    return rows


def _passages(doc: Document) -> list[Any]:
    from supportagent.retrieval.passages import split_passages

    return split_passages(doc)


def bench_demo_build() -> None:
    """Build the demo index (articles and resolved tickets, real MiniLM, nothing cached) with
    fixed weights and with the default (weights read from the corpus), one after the other."""
    from supportagent.ingest import read_kb, read_resolved
    from supportagent.retrieval.dense import OnnxMiniLM
    from supportagent.runtime import demo_path

    root = demo_path()
    docs = [*read_kb(root / "kb").records, *read_resolved(root / "resolved.jsonl").records]
    model = OnnxMiniLM()
    model.embed(["warm the model up"])
    built, seconds = timed(lambda: HybridRetriever(docs, embedder=model, fusion=Fusion()))
    print(f"demo corpus ({len(built)} passages), fixed weights: build {seconds:.2f} s, uncached")
    print(f"  + reading the weights from the corpus: {estimate_seconds(built):.2f} s")


def estimate_seconds(built: HybridRetriever) -> float:
    """What the default adds to a build: the corpus estimate (its pseudo-queries embedded
    by the real model, never cached before)."""
    from supportagent.retrieval.adaptive import estimate

    _, seconds = timed(lambda: estimate(built._corpus_view(built._snapshot)))
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--demo", action="store_true", help="also time the demo index build")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if args.demo:
        bench_demo_build()
    for size in (int(s) for s in args.sizes.split(",")):
        rows = bench_size(size, args.queries)
        header = ("system", "build s", "p50 ms", "p95 ms", "peak MiB")
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(5)]
        for r in [header, *rows]:
            print("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)))
        ours = next(float(r[2]) for r in rows if r[0].startswith("ours"))
        raw = next(float(r[2]) for r in rows if r[0].startswith("bm25s"))
        okapi = next(float(r[2]) for r in rows if r[0].startswith("rank_bm25"))
        print(f"ours / bm25s p50: {ours / raw:.2f}x; rank_bm25 / ours p50: {okapi / ours:.0f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
