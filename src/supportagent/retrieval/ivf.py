"""Approximate dense search for large corpora: a coarse inverted file (IVF) in numpy.

Exact dense search reads every passage vector for every query: 1.5 GiB of float32 at 1M
passages of 384 dimensions. Above ``MIN_PASSAGES`` the on-disk index also keeps an IVF:

* ``lists`` centroids (about the square root of the passage count), found by spherical
  k-means on a sample of the vectors (a fixed seed, so every build of a corpus agrees);
* every vector assigned to its nearest centroid, and a copy of the vectors sorted by list,
  so that one list is one contiguous slice of the file (a second copy on disk, shared page
  cache, never private memory);
* a query is compared with the centroids, the ``probe`` nearest lists are scanned exactly
  (float32, the same dot product as the exact path), and every passage outside them scores 0,
  which weighted fusion reads as "no dense evidence" (it clips cosines below 0 to 0 anyway).

What is traded: a passage whose vector lies in a list the query does not probe loses its
dense score. ``bench/dense_ivf.py`` measures recall@10 against exact search on clustered
vectors (and on structureless random ones, the worst case); docs/scaling.md has the figures.
Below ``MIN_PASSAGES`` search stays exact, so every figure measured on the evaluation sets is
unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]

#: Corpora smaller than this are searched exactly (and keep no IVF).
MIN_PASSAGES = 200_000
#: Share of the lists a query scans. Chosen on bench/dense_ivf.py's tune seed at 1M clustered
#: vectors: the smallest share whose recall@10 is within 0.01 of scanning 8% (1%: 0.976, 2%:
#: 0.980, 4%: 0.984, 8%: 0.987).
PROBE_SHARE = 0.02
SEED = 17
_SAMPLE = 40_000
_ITERATIONS = 10
_CHUNK = 16_384


def list_count(size: int) -> int:
    return max(1, round(math.sqrt(size)))


def _nearest(vectors: npt.NDArray[Any], centroids: Vectors) -> npt.NDArray[np.int32]:
    """The nearest centroid (highest dot product) of every row, in chunks."""
    out = np.empty(len(vectors), dtype=np.int32)
    for lo in range(0, len(vectors), _CHUNK):
        block = np.asarray(vectors[lo : lo + _CHUNK], dtype=np.float32)
        out[lo : lo + len(block)] = np.argmax(block @ centroids.T, axis=1)
    return out


def train(vectors: npt.NDArray[Any], lists: int, seed: int = SEED) -> Vectors:
    """``lists`` unit centroids by spherical k-means on a sample of the rows."""
    rng = np.random.default_rng(seed)
    take = np.sort(rng.choice(len(vectors), size=min(len(vectors), _SAMPLE), replace=False))
    sample = np.asarray(vectors[take], dtype=np.float32)
    lists = min(lists, len(sample))
    centroids = sample[rng.choice(len(sample), size=lists, replace=False)].copy()
    for _ in range(_ITERATIONS):
        nearest = _nearest(sample, centroids)
        sums = np.zeros_like(centroids)
        np.add.at(sums, nearest, sample)
        norms = np.linalg.norm(sums, axis=1)
        filled = norms > 0  # an empty list keeps its centroid
        centroids[filled] = sums[filled] / norms[filled, None]
    return centroids


def build(
    vectors: npt.NDArray[Any], lists: int | None = None, out: Vectors | None = None
) -> dict[str, npt.NDArray[Any]]:
    """The IVF's arrays, for the on-disk index: centroids, list bounds, row order, sorted copy
    (written into ``out`` when given, a memory-mapped file, say)."""
    lists = list_count(len(vectors)) if lists is None else lists
    centroids = train(vectors, lists)
    nearest = _nearest(vectors, centroids)
    order = np.argsort(nearest, kind="stable").astype(np.int32)
    starts = np.zeros(len(centroids) + 1, dtype=np.int64)
    np.cumsum(np.bincount(nearest, minlength=len(centroids)), out=starts[1:])
    shape = (len(vectors), vectors.shape[1])
    sorted_rows = np.empty(shape, dtype=np.float32) if out is None else out
    for lo in range(0, len(order), _CHUNK):
        sorted_rows[lo : lo + _CHUNK] = vectors[order[lo : lo + _CHUNK]]
    return {"centroids": centroids, "starts": starts, "order": order, "vectors": sorted_rows}


@dataclass(frozen=True, slots=True)
class IVFIndex:
    """A built IVF over the first ``len(order)`` rows of a vector matrix."""

    centroids: Vectors
    starts: npt.NDArray[np.int64]
    order: npt.NDArray[np.int32]
    vectors: Vectors
    probe: int

    @classmethod
    def from_arrays(
        cls, arrays: Mapping[str, npt.NDArray[Any]], probe: int | None = None
    ) -> IVFIndex:
        lists = len(arrays["centroids"])
        probe = max(1, round(PROBE_SHARE * lists)) if probe is None else probe
        return cls(arrays["centroids"], arrays["starts"], arrays["order"], arrays["vectors"], probe)

    def __len__(self) -> int:
        return len(self.order)

    def scores(self, query: Vectors, size: int, rows: Vectors | None = None) -> Vectors:
        """Cosine similarity of ``query`` with the passages in the probed lists, 0 elsewhere.

        ``size`` passages in all; rows past the IVF's own (added since it was built) are
        scored exactly from ``rows``, the full matrix."""
        out = np.zeros(size, dtype=np.float32)
        positions, similarities = self.probed(query, size, rows)
        out[positions] = similarities
        return out

    def probed(
        self, query: Vectors, size: int, rows: Vectors | None = None
    ) -> tuple[npt.NDArray[np.int32], Vectors]:
        """The passages ``scores`` gives a similarity, ascending, and those similarities:
        what a search needs without an array as long as the corpus."""
        nearest = np.argsort(-(self.centroids @ query), kind="stable")[: self.probe]
        parts, found = [], []
        for i in np.sort(nearest):
            lo, hi = int(self.starts[i]), int(self.starts[i + 1])
            if hi > lo:
                parts.append(np.asarray(self.order[lo:hi], dtype=np.int32))
                found.append(self.vectors[lo:hi] @ query)
        covered = len(self.order)
        if size > covered and rows is not None:
            parts.append(np.arange(covered, size, dtype=np.int32))
            found.append(rows[covered:size] @ query)
        if not parts:
            return np.empty(0, dtype=np.int32), np.empty(0, dtype=np.float32)
        positions = np.concatenate(parts)
        order = np.argsort(positions, kind="stable")
        return positions[order], np.concatenate(found).astype(np.float32, copy=False)[order]
