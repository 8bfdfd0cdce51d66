"""Hybrid search at 1M passages, shared by 1, 2 and 3 worker processes: latency and memory.

Run: .venv/bin/python bench/hybrid_1m.py [--size 1000000] [--workers 1,2,3] [--queries 100]
[--blas-threads default,1] [--keep FOLDER]

Building a ``HybridRetriever`` over 1M documents is out of reach here (it holds every document
and passage as Python objects, and a 100k build already took 458 s under load; see
docs/scaling.md). So the parent writes, with numpy alone, the arrays the on-disk index holds
for the corpus of ``bench/retrieval.py`` (same seed, Zipf words, one resolved ticket per
passage, titles ``ticket <i>`` plus the first 60 characters, as ``bench/workers.py`` makes):

* BM25 postings of bodies and titles, in ``BM25Index.to_arrays`` layout (the vocabulary
  searched where it is mapped, ``vocabulary.py``), with the weights
  ``bm25._postings`` computes (checked against ``BM25Index.from_tokens`` on the first 2,000
  passages, which must give the same scores);
* the passage vectors (clustered unit vectors, as ``bench/dense_ivf.py`` makes) and the IVF
  (``ivf.build``), as ``persisted.py`` writes them above ``ivf.MIN_PASSAGES``;
* the passage texts as one UTF-8 blob with int64 offsets (what the retriever does not do yet:
  it keeps ``Passage`` objects; here one is built only for each hit).

``MALLOC_MMAP_THRESHOLD_=1048576`` in the environment (glibc; the children inherit it) makes
every array of 1 MiB or more its own mapping, handed back when it is freed: without it glibc
raises that threshold to the size of the last freed array, and a worker's heap keeps what a
query's corpus-sized temporaries needed at their peak.

Each worker process maps those files and runs the retriever's own ``search`` (candidate
fusion, ``candidates.py``; weighted fusion with the default fixed weights, explanations) on
a snapshot made of the mapped arrays. Private memory is ``Private_Clean + Private_Dirty``
from ``/proc/self/smaps_rollup``, read when every worker has searched; time per query is wall
and CPU of the child. Everything is written under ``--folder`` (default /tmp) and deleted,
unless ``--keep FOLDER`` names where the files stay (written there only if they are not
already, for this size): the same files can then be searched by another checkout's code
(``PYTHONPATH=<checkout>/src``), which is how a change is compared under the same load.

``--blas-threads``: each setting runs every worker count again, with ``OPENBLAS_NUM_THREADS``
set to it in the workers (``default``: left as the environment has it). The IVF scan is a
matrix-vector product per probed list; with OpenBLAS's threads on a loaded two-core machine
it cost four to five times the CPU of one thread (the threads spin while they wait).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dense_ivf import DIMENSION, make
from dense_ivf import queries as query_vectors
from retrieval import SEED, VOCABULARY, words
from workers import gather as gather_children
from workers import memory

from supportagent.domain import DocKind, Passage
from supportagent.retrieval import ivf, ondisk
from supportagent.retrieval.bm25 import K1, B, BM25Index
from supportagent.retrieval.dense import file_sha256
from supportagent.retrieval.fusion import Fusion
from supportagent.retrieval.retriever import HybridRetriever, _Snapshot
from supportagent.retrieval.text import tokenize
from supportagent.retrieval.vocabulary import sorted_order


def draws(size: int, n_queries: int) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """Word ids of every passage (flat) and passage lengths, then the queries' word ids:
    the very draws of ``retrieval.corpus_and_queries``."""
    rng = np.random.default_rng(SEED)
    p = 1.0 / np.arange(1, VOCABULARY + 1) ** 1.1
    p /= p.sum()
    lengths = rng.integers(30, 91, size=size)
    flat = rng.choice(VOCABULARY, size=int(lengths.sum()), p=p).astype(np.int32)
    qs = [
        rng.choice(VOCABULARY, size=int(rng.integers(3, 9)), p=p).tolist() for _ in range(n_queries)
    ]
    return flat, lengths, qs


def postings(tokens: np.ndarray, lengths: np.ndarray, vocab: list[str]) -> dict[str, Any]:
    """``BM25Index.to_arrays`` of passages given as token ids (flat) and lengths."""
    size = len(lengths)
    doc = np.repeat(np.arange(size, dtype=np.int64), lengths)
    pairs, tf = np.unique(tokens.astype(np.int64) * size + doc, return_counts=True)
    tok, docs = pairs // size, (pairs % size).astype(np.int32)
    avgdl = float(lengths.sum()) / size
    norm = np.float32(K1) * (
        np.float32(1 - B) + np.float32(B) * (lengths[docs].astype(np.float32) / np.float32(avgdl))
    )
    tf32 = tf.astype(np.float32)
    counts = np.bincount(tok, minlength=len(vocab))
    idfs = np.log1p((np.float64(size) - counts + 0.5) / (counts + 0.5)).astype(np.float32)
    weights = tf32 / (tf32 + norm) * np.repeat(idfs, counts)
    start = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(counts, out=start[1:])
    blob = [t.encode("utf-8") for t in vocab]
    arrays = {
        "vocab": np.frombuffer(b"".join(blob), dtype=np.uint8),
        "vocab_ends": np.cumsum([len(t) for t in blob], dtype=np.int64),
        "vocab_order": sorted_order(blob),
        "start": start,
        "docs": docs,
        "weights": weights.astype(np.float32),
    }
    return {"arrays": arrays, "size": size, "avgdl": avgdl}


def texts_of(flat: np.ndarray, lengths: np.ndarray, names: list[str]) -> Iterator[str]:
    start = 0
    for length in lengths.tolist():
        chunk = [names[w] for w in flat[start : start + length].tolist()]
        yield ". ".join(" ".join(chunk[i : i + 10]) for i in range(0, length, 10)) + "."
        start += length


def write(folder: Path, size: int, n_queries: int) -> dict[str, Any]:
    t0, c0 = time.perf_counter(), time.process_time()
    names = words(VOCABULARY)
    word_token = [tokenize(w) for w in names]
    assert all(len(t) == 1 for t in word_token)  # each synthetic word is one token
    flat, lengths, qs = draws(size, n_queries)
    body = postings(flat, lengths, [t[0] for t in word_token])
    # Titles: "ticket <i>\n<first 60 characters>"; tokenized for real (digits drop out).
    vocab: dict[str, int] = {}
    title_ids: list[int] = []
    title_lengths = np.empty(size, dtype=np.int64)
    blob = bytearray()
    offsets = np.zeros(size + 1, dtype=np.int64)
    for i, text in enumerate(texts_of(flat, lengths, names)):
        tokens = tokenize(f"ticket {i}\n{text[:60]}")
        title_ids.extend(vocab.setdefault(t, len(vocab)) for t in tokens)
        title_lengths[i] = len(tokens)
        blob += text.encode("utf-8")
        offsets[i + 1] = len(blob)
    title = postings(np.array(title_ids, dtype=np.int32), title_lengths, list(vocab))
    meta: dict[str, Any] = {"size": size}
    for signal, index in (("body", body), ("title", title)):
        for name, array in index["arrays"].items():
            np.save(folder / f"{signal}.{name}.npy", array, allow_pickle=False)
        meta[signal] = {"avgdl": index["avgdl"]}
    np.save(folder / "texts.npy", np.frombuffer(bytes(blob), dtype=np.uint8), allow_pickle=False)
    np.save(folder / "offsets.npy", offsets, allow_pickle=False)
    del blob, body, title
    make(folder / "dense.npy", size, "clustered", SEED)
    rows = np.load(folder / "dense.npy", mmap_mode="r")
    out = np.lib.format.open_memmap(folder / "ivf.vectors.npy", "w+", np.float32, rows.shape)
    built = ivf.build(rows, out=out)
    out.flush()
    for name in ("centroids", "starts", "order"):
        np.save(folder / f"ivf.{name}.npy", built[name], allow_pickle=False)
    qv = query_vectors(rows, "clustered", n_queries, SEED)
    np.save(folder / "queries.npy", qv, allow_pickle=False)
    meta["queries"] = [" ".join(names[w] for w in q) for q in qs]
    meta["build_s"], meta["build_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return meta


class MappedPassages(Sequence[Passage]):
    """Passages read from the mapped blob; a ``Passage`` is built only when one is asked for."""

    def __init__(self, texts: np.ndarray, offsets: np.ndarray) -> None:
        self._texts, self._offsets = texts, offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, i: int) -> Passage: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Passage]: ...
    def __getitem__(self, i: int | slice) -> Passage | Sequence[Passage]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        lo, hi = int(self._offsets[i]), int(self._offsets[i + 1])
        text = self._texts[lo:hi].tobytes().decode("utf-8")
        return Passage(f"r{i}#answer", f"r{i}", DocKind.RESOLVED, f"ticket {i}", (), text)


class FixedVectors:
    """The query vectors written by the parent, in query order."""

    model_id = "bench-clustered-384"

    def __init__(self, queries: list[str], vectors: np.ndarray) -> None:
        self._rows = dict(zip(queries, vectors, strict=True))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.vstack([self._rows[t] for t in texts]).reshape(-1, DIMENSION)


def print_private_by_mapping() -> None:
    """The mappings with the most private memory (MiB), on stderr."""
    totals: dict[str, float] = {}
    name = ""
    with open("/proc/self/smaps", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            parts = line.split()
            if parts and "-" in parts[0] and not parts[0].endswith(":"):
                name = parts[5] if len(parts) > 5 else "[anonymous]"
            elif parts and parts[0] in ("Private_Clean:", "Private_Dirty:"):
                totals[name] = totals.get(name, 0.0) + int(parts[1]) / 1024
    for mapping, mib in sorted(totals.items(), key=lambda item: -item[1])[:8]:
        print(f"private {mib:8.1f} MiB  {mapping}", file=sys.stderr)


def load(name: Path) -> np.ndarray:
    return np.load(name, mmap_mode="r", allow_pickle=False)


def child(folder: Path, n_queries: int, profile: bool = False) -> None:
    before = memory()
    t0, c0 = time.perf_counter(), time.process_time()
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    size = int(meta["size"])
    indexes = {}
    for signal in ("body", "title"):
        parts = {
            n: load(folder / f"{signal}.{n}.npy")
            for n in ("vocab", "vocab_ends", "vocab_order", "start", "docs", "weights")
        }
        indexes[signal] = BM25Index.from_arrays(parts, size, meta[signal]["avgdl"])
    dense = load(folder / "dense.npy")
    approximate = ivf.IVFIndex.from_arrays(
        {n: load(folder / f"ivf.{n}.npy") for n in ("centroids", "starts", "order", "vectors")}
    )
    passages = MappedPassages(load(folder / "texts.npy"), load(folder / "offsets.npy"))
    queries = meta["queries"][:n_queries]
    embedder = FixedVectors(meta["queries"], load(folder / "queries.npy"))
    retriever = HybridRetriever([], embedder=embedder, fusion=Fusion())
    retriever._snapshot = _Snapshot(  # the retriever's search over the mapped arrays
        passages,  # type: ignore[arg-type]
        {},
        indexes,
        np.zeros(size, dtype=np.uint8),
        dense,
        None,
        ivf=approximate,
    )
    opened, opened_cpu = time.perf_counter() - t0, time.process_time() - c0
    for query in queries:  # the query vectors are not what is timed: fetch them first
        retriever._query_vector(query)
    if profile:  # where one worker's search time goes, on stderr
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for query in queries:
            retriever.search(query, k=10)
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(14)
    walls, cpus, top = [], [], []
    for query in queries:
        t1, c1 = time.perf_counter(), time.process_time()
        hits = retriever.search(query, k=10)
        walls.append((time.perf_counter() - t1) * 1000)
        cpus.append((time.process_time() - c1) * 1000)
        top.append(hits[0].passage.id if hits else "")
    print("ready", flush=True)
    sys.stdin.readline()
    after = memory()
    if profile:
        print_private_by_mapping()
    result = {
        "open_s": opened,
        "open_cpu_s": opened_cpu,
        "p50_ms": statistics.median(walls),
        "p95_ms": sorted(walls)[int(0.95 * (len(walls) - 1))],
        "cpu_p50_ms": statistics.median(cpus),
        "private_before": before["private"],
        "private": after["private"],
        "private_clean": after["private_clean"],
        "anonymous": after["anonymous"],
        "shared": after["shared"],
        "top": top[:3],
    }
    print(json.dumps(result), flush=True)


def gather(
    folder: Path, workers: int, n_queries: int, threads: str, profile: bool = False
) -> list[dict[str, Any]]:
    argv = [sys.executable, __file__, "--child", "--folder", str(folder)]
    argv += ["--queries", str(n_queries)] + (["--profile"] if profile else [])
    env = dict(os.environ)
    if threads != "default":
        env["OPENBLAS_NUM_THREADS"] = threads
    procs = [
        subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(workers)
    ]
    return gather_children(procs)


def files(folder: Path, size: int, n_queries: int) -> dict[str, Any]:
    """The bench's files in ``folder``: the ones already there for this size, or new ones."""
    found = folder / "meta.json"
    if found.is_file():
        meta: dict[str, Any] = json.loads(found.read_text(encoding="utf-8"))
        if meta["size"] == size and len(meta["queries"]) >= n_queries:
            print(f"files already in {folder}, not written again")
            for signal in ("body", "title"):  # files kept before the vocabulary was sorted
                order = folder / f"{signal}.vocab_order.npy"
                if not order.is_file():
                    blob = load(folder / f"{signal}.vocab.npy").tobytes()
                    ends = load(folder / f"{signal}.vocab_ends.npy").tolist()
                    tokens = [blob[a:b] for a, b in zip([0, *ends[:-1]], ends, strict=True)]
                    np.save(order, sorted_order(tokens), allow_pickle=False)
            return meta
    folder.mkdir(parents=True, exist_ok=True)
    return write(folder, size, n_queries)


def check_postings(size: int = 2000) -> None:
    """The numpy postings score as ``BM25Index.from_tokens`` does, on the first passages."""
    names = words(VOCABULARY)
    flat, lengths, qs = draws(size, 20)
    texts = list(texts_of(flat, lengths, names))
    reference = BM25Index.from_tokens([tokenize(t) for t in texts])
    ours = postings(flat, lengths, [tokenize(w)[0] for w in names])
    mine = BM25Index.from_arrays(ours["arrays"], size, ours["avgdl"])
    for q in qs:
        tokens = tokenize(" ".join(names[w] for w in q))
        np.testing.assert_allclose(mine.scores(tokens), reference.scores(tokens), rtol=1e-5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--workers", default="1,2,3")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--folder", default="/tmp")
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--profile", action="store_true", help="cProfile the first worker")
    parser.add_argument("--blas-threads", default="default", help="e.g. default,1")
    parser.add_argument("--keep", help="a folder where the files are kept (and reused)")
    args = parser.parse_args()
    if args.child:
        child(Path(args.folder), args.queries, args.profile)
        return
    check_postings()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    if args.keep:
        folder = Path(args.keep)
    else:
        folder = Path(tempfile.mkdtemp(prefix="bench-hybrid-", dir=args.folder))
    try:
        meta = files(folder, args.size, args.queries)
        mib = sum(p.stat().st_size for p in folder.glob("*.npy")) / 2**20
        for name, digest in (("sample", ondisk.sample_sha256), ("full", file_sha256)):
            t0, c0 = time.perf_counter(), time.process_time()
            for path in sorted(folder.glob("*.npy")):
                digest(path)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            print(f"checking every file, {name} digest: {wall:.2f} s wall, {cpu:.2f} s CPU")
        print(
            f"{args.size:,} passages: files written in {meta['build_s']:.0f} s wall, "
            f"{meta['build_cpu_s']:.0f} s CPU; {mib:,.0f} MiB of .npy files"
        )
        print(
            "| BLAS threads | workers | worker | opened in s (CPU) | wall p50 ms | p95 ms "
            "| CPU p50 ms | private MiB | of it clean | anonymous | before opening | shared MiB |"
        )
        print("| --- |" + " ---: |" * 11)
        for threads in args.blas_threads.split(","):
            for n in (int(w) for w in args.workers.split(",")):
                found = gather(folder, n, args.queries, threads, args.profile)
                for i, r in enumerate(found, start=1):
                    print(
                        f"| {threads} | {n} | {i} | {r['open_s']:.2f} ({r['open_cpu_s']:.2f}) | "
                        f"{r['p50_ms']:.1f} | {r['p95_ms']:.1f} | {r['cpu_p50_ms']:.1f} | "
                        f"{r['private']:.0f} | {r['private_clean']:.0f} | {r['anonymous']:.0f} | "
                        f"{r['private_before']:.0f} | {r['shared']:.0f} |"
                    )
                sys.stdout.flush()
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
