"""Workers on one machine sharing the on-disk index: memory per worker and hybrid latency.

Run: .venv/bin/python bench/workers.py [--sizes 10000,100000] [--workers 3] [--queries 100]

Per size, one synthetic corpus (the one ``bench/retrieval.py`` makes: Zipf words, one passage
per resolved ticket) with a random unit vector per passage, and a random unit vector per query
(seeded by the query's text), so that the numbers are the index's and not the embedding
model's (the model adds its own ~100 MiB and ~8 ms a query to every worker, index or not).

1. The parent builds the index into a temporary folder (``HybridRetriever(index_dir=...)``).
2. ``--workers`` child processes start at once; each makes the same documents, opens the index
   (memory-mapped), runs the queries through the whole hybrid search (BM25 on bodies and
   titles, dense, weighted fusion, explanations), then waits until every child is done, so
   the mapped pages are shared when it reads ``/proc/self/smaps_rollup``.
3. One more child builds its own index in memory, as every worker did before.

Private memory is ``Private_Clean + Private_Dirty``: what a worker adds to the machine. It is
read twice in each child: after making the documents (their Python objects, the same in
either mode) and after opening the index, dropping its own list of documents (as a worker
does once its retriever is open) and searching. A mapping worker then holds no document or
passage objects beyond those of the hits; one building its own index keeps them all.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from retrieval import SEED, corpus_and_queries

from supportagent.domain import DocKind, Document
from supportagent.retrieval.passages import split_passages
from supportagent.retrieval.retriever import HybridRetriever

DIMENSION = 384


class SeededVectors:
    """A random unit vector per text, the same in every process (seeded by the text's hash)."""

    model_id = "bench-seeded-384"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            rows[i] = np.random.default_rng(seed).standard_normal(DIMENSION)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        return rows


def documents(size: int) -> tuple[list[Document], list[str]]:
    texts, queries = corpus_and_queries(size, 200)
    docs = [
        Document(f"r{i}", DocKind.RESOLVED, f"ticket {i}", text, meta={"question": text[:60]})
        for i, text in enumerate(texts)
    ]
    return docs, queries


def memory() -> dict[str, float]:
    """MiB from smaps_rollup: private, shared and proportional set. Of private,
    ``private_clean`` is mostly pages of mapped files that no other process has touched (page
    cache, shared once another worker reads them); ``anonymous`` is the heap and its like."""
    fields: dict[str, float] = {}
    with open("/proc/self/smaps_rollup", encoding="ascii") as handle:
        for line in handle:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                fields[parts[0].rstrip(":")] = int(parts[1]) / 1024
    return {
        "private": fields.get("Private_Clean", 0) + fields.get("Private_Dirty", 0),
        "shared": fields.get("Shared_Clean", 0) + fields.get("Shared_Dirty", 0),
        "pss": fields.get("Pss", 0),
        "rss": fields.get("Rss", 0),
        "private_clean": fields.get("Private_Clean", 0),
        "anonymous": fields.get("Anonymous", 0),
    }


def child(size: int, folder: str | None, n_queries: int) -> None:
    docs, queries = documents(size)
    before = memory()
    start = time.perf_counter()
    index_dir = Path(folder) if folder else None
    retriever = HybridRetriever(docs, embedder=SeededVectors(), index_dir=index_dir)
    opened = time.perf_counter() - start
    del docs  # as in ``Knowledge.from_store``: the list read from the store is not kept
    times, cpu = [], []
    for query in queries[:n_queries]:
        t0, c0 = time.perf_counter(), time.process_time()
        retriever.search(query, k=10)
        times.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    times.sort()
    print("ready", flush=True)
    sys.stdin.readline()  # every child has searched: the shared pages are shared now
    after = memory()
    result = {
        "status": retriever.index_status,
        "open_s": opened,
        "p50_ms": statistics.median(times),
        "p95_ms": times[int(0.95 * (len(times) - 1))],
        "cpu_p50_ms": statistics.median(cpu),
        "docs_private": before["private"],
        "private": after["private"],
        "anonymous": after["anonymous"],
        "shared": after["shared"],
        "pss": after["pss"],
    }
    print(json.dumps(result), flush=True)


def spawn(size: int, folder: str | None, n_queries: int) -> subprocess.Popen[str]:
    argv = [sys.executable, __file__, "--child", "--sizes", str(size)]
    argv += ["--queries", str(n_queries)] + (["--folder", folder] if folder else [])
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def gather(children: list[subprocess.Popen[str]]) -> list[dict[str, float | str]]:
    for proc in children:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        if line != "ready":
            raise SystemExit(f"a child failed: {line!r}")
    for proc in children:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    results = []
    for proc in children:
        assert proc.stdout is not None
        results.append(json.loads(proc.stdout.readline()))
        proc.wait()
    return results


def bench_size(size: int, workers: int, n_queries: int) -> None:
    folder = tempfile.mkdtemp(prefix="bench-workers-")
    try:
        _bench_in(folder, size, workers, n_queries)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _bench_in(folder: str, size: int, workers: int, n_queries: int) -> None:
    docs, _ = documents(size)
    passages = sum(len(split_passages(d)) for d in docs)
    start = time.perf_counter()
    HybridRetriever(docs, embedder=SeededVectors(), index_dir=Path(folder))
    build = time.perf_counter() - start
    del docs
    files = sum(p.stat().st_size for p in Path(folder).rglob("*.npy")) / 2**20
    mapped = gather([spawn(size, folder, n_queries) for _ in range(workers)])
    own = gather([spawn(size, None, n_queries)])[0]
    print(f"\n{size:,} documents ({passages:,} passages): index built and saved in {build:.1f} s,")
    print(f"{files:.0f} MiB of .npy files; {workers} workers mapping it, 1 building its own")
    print(
        "| worker | opened in s | p50 ms | p95 ms | CPU p50 ms | private MiB "
        "| of it anonymous | before the index | shared MiB |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, r in [*((f"mapped {i + 1}", r) for i, r in enumerate(mapped)), ("own", own)]:
        print(
            f"| {name} ({r['status']}) | {r['open_s']:.2f} | {r['p50_ms']:.1f} | "
            f"{r['p95_ms']:.1f} | {r['cpu_p50_ms']:.1f} | {r['private']:.0f} | "
            f"{r['anonymous']:.0f} | {r['docs_private']:.0f} | {r['shared']:.0f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--folder")
    args = parser.parse_args()
    if args.child:
        child(int(args.sizes), args.folder, args.queries)
        return
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; seed {SEED}")
    for size in (int(s) for s in args.sizes.split(",")):
        bench_size(size, args.workers, args.queries)
        sys.stdout.flush()
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
