"""Dense search at 1M passages: exact against the IVF (retrieval/ivf.py), latency and recall@10.

Run: .venv/bin/python bench/dense_ivf.py [--size 1000000] [--queries 100] [--folder /tmp/x]

Synthetic unit vectors of 384 dimensions, written to a memory-mapped file under ``--folder``
(deleted at the end) so that the process holds no private copy:

* ``clustered``: 2,000 random centres, each vector a centre plus Gaussian noise of norm about
  1.2 (cosine to its centre about 0.64), normalised; a query is a corpus vector plus noise of
  norm about 0.8, normalised (cosine about 0.78 to the passage it was made from, as a
  paraphrase sits near its passage);
* ``random``: independent Gaussian vectors, no structure at all (the worst case for any
  coarse quantiser: a query's neighbours are spread over every list).

Two seeds: ``tune`` (where ``ivf.PROBE_SHARE`` was chosen, among the shares printed) and
``test`` (reported, not tuned on). Recall@10 = share of exact search's top 10 the IVF also
ranks in its top 10. Time per query is wall and CPU (the machine is shared), measured after
every page of both files has been read once (a worker that has been searching a while has
them mapped); the last row is the IVF's first pass, when each page it reads is faulted in.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from supportagent.retrieval import ivf
from supportagent.retrieval.bm25 import top_k

DIMENSION = 384
SEEDS = {"tune": 101, "test": 202}
SHARES = (0.01, 0.02, 0.04, 0.08)
#: Noise norms of a passage around its centre and of a query around its passage.
NOISE, QUERY_NOISE = 1.2, 0.8


def make(path: Path, size: int, structure: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = np.lib.format.open_memmap(path, "w+", np.float32, (size, DIMENSION))
    centres = rng.standard_normal((2000, DIMENSION)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    for lo in range(0, size, 65_536):
        n = min(65_536, size - lo)
        block = rng.standard_normal((n, DIMENSION)).astype(np.float32)
        if structure == "clustered":
            block = centres[rng.integers(0, len(centres), n)] + block * (NOISE / DIMENSION**0.5)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        rows[lo : lo + n] = block
    rows.flush()
    del rows


def queries(rows: npt.NDArray[np.float32], structure: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed + 1)
    if structure == "clustered":
        base = np.asarray(rows[np.sort(rng.choice(len(rows), n, replace=False))])
        noise = rng.standard_normal(base.shape).astype(np.float32)
        out = base + noise * (QUERY_NOISE / DIMENSION**0.5)
    else:
        out = rng.standard_normal((n, DIMENSION)).astype(np.float32)
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def top10(scores: np.ndarray) -> set[int]:
    """The 10 best positive scores, picked as the retriever picks them (``bm25.top_k``)."""
    return {i for i, _ in top_k(scores, 10)}


def timed(fn, qs):  # type: ignore[no-untyped-def]
    walls, cpus, outs = [], [], []
    for q in qs:
        t0, c0 = time.perf_counter(), time.process_time()
        outs.append(fn(q))
        walls.append((time.perf_counter() - t0) * 1000)
        cpus.append((time.process_time() - c0) * 1000)
    return statistics.median(walls), statistics.median(cpus), outs


def run(folder: Path, size: int, structure: str, half: str, n_queries: int) -> None:
    seed = SEEDS[half]
    path = folder / f"{structure}-{half}.npy"
    make(path, size, structure, seed)
    rows = np.load(path, mmap_mode="r")
    qs = queries(rows, structure, n_queries, seed)
    t0, c0 = time.perf_counter(), time.process_time()
    sorted_path = folder / f"{structure}-{half}-sorted.npy"
    out = np.lib.format.open_memmap(sorted_path, "w+", np.float32, rows.shape)
    arrays = ivf.build(rows, out=out)
    out.flush()
    build_wall, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    arrays["vectors"] = np.load(sorted_path, mmap_mode="r")  # as the index maps it
    lists = len(arrays["centroids"])
    default = ivf.IVFIndex.from_arrays(arrays)
    cold_wall, cold_cpu, _ = timed(lambda q: top10(default.scores(q, size)), qs)
    for matrix in (rows, arrays["vectors"]):  # a worker that has searched a while: all mapped
        for lo in range(0, size, 65_536):
            float(np.asarray(matrix[lo : lo + 65_536]).sum())
    wall, cpu, exact = timed(lambda q: top10(rows @ q), qs)
    print(
        f"\n{structure}, {half} seed, {size:,} vectors: IVF of {lists} lists built in "
        f"{build_wall:.0f} s wall, {build_cpu:.0f} s CPU"
    )
    print("| search | probe lists | scanned | wall p50 ms | CPU p50 ms | recall@10 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    print(f"| exact | | 100% | {wall:.1f} | {cpu:.1f} | 1.000 |")
    for share in SHARES:
        index = ivf.IVFIndex.from_arrays(arrays, probe=max(1, round(share * lists)))
        wall, cpu, found = timed(lambda q, index=index: top10(index.scores(q, size)), qs)
        recall = statistics.mean(len(a & b) / 10 for a, b in zip(exact, found, strict=True))
        mark = " (default)" if share == ivf.PROBE_SHARE else ""
        print(
            f"| IVF{mark} | {index.probe} | {share:.0%} | {wall:.1f} | {cpu:.1f} | {recall:.3f} |"
        )
    print(
        f"| IVF (default), first touch of its pages | {default.probe} | {ivf.PROBE_SHARE:.0%} "
        f"| {cold_wall:.1f} | {cold_cpu:.1f} | |"
    )
    sys.stdout.flush()
    del arrays
    path.unlink()
    sorted_path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--folder", default=None)
    parser.add_argument("--runs", default="clustered:tune,clustered:test,random:test")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-ivf-", dir=args.folder))
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    try:
        for item in args.runs.split(","):
            structure, half = item.split(":")
            run(folder, args.size, structure, half, args.queries)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
