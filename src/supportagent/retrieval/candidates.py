"""Candidate search: each signal names what it knows of a query, and fusion scores only that.

Scoring every passage on every signal builds, fuses and sorts arrays as long as the corpus,
several per query (4 MB each at 1M passages). Here a signal returns passages with an upper
bound of each one's score (the score itself where it is exact) and a *bound* that no other
passage exceeds:

* BM25 (``maxscore.LexicalScores``) walks the query terms' postings by their peak
  contribution and bounds what it did not walk by the peaks it skipped;
* the IVF (``SparseScores``) returns what it probed, every other passage scoring exactly 0;
* an array already computed (exact dense, history; ``ArrayScores``) returns its own top.

``weighted_top`` pools what the signals know, scores exactly (``at``) every pooled passage
whose upper bound could reach the ``k``-th, and keeps its top ``k`` only if the ``k``-th fused
score is above the fused bounds (what a passage no signal knows could reach); otherwise it
deepens. Its hits are therefore exactly those of fusing every passage, scores to the last bit:
each passage's raw scores go through the same float32 operations in the same order, and
bounds are rounded up.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from supportagent.retrieval.bm25 import Mask, top_indices
from supportagent.retrieval.fusion import weighted_score_fusion

Positions = npt.NDArray[np.int32]
Scores = npt.NDArray[np.float32]
Counts = npt.NDArray[np.int64]

#: How much deeper each retry of ``weighted_top`` asks every signal to go.
DEEPEN = 4


@dataclass(frozen=True, slots=True)
class Candidates:
    """A signal's best passages of a search, best first (ties by position), their raw
    scores, and ``bound``: no searched passage outside ``positions`` scores above it."""

    positions: Positions
    scores: Scores
    bound: np.float32


@dataclass(frozen=True, slots=True)
class Known:
    """What a signal knows of a search before scoring more: passages (ascending), an upper
    bound of each one's raw score (the score itself where ``exact``), and ``bound`` above
    every other searched passage's score (its score itself when ``rest_exact``)."""

    positions: Positions
    upper: Scores
    exact: Mask
    bound: np.float32
    rest_exact: bool


class SignalScores(Protocol):
    """One signal's scores of one query, computed only where they are asked for."""

    @property
    def nbytes(self) -> int: ...

    def at(self, positions: Positions) -> Scores:
        """The raw score of each passage at ``positions``."""
        ...

    def known(self, depth: int, mask: Mask | None) -> Known:
        """At least the ``depth`` best passages (only where ``mask`` is true), bounded."""
        ...

    def top(self, depth: int, mask: Mask | None) -> Candidates:
        """The ``depth`` best passages with a positive score (only where ``mask`` is true)."""
        ...

    def count_above(self, values: Scores, mask: Mask | None) -> Counts:
        """For each value, how many searched passages score above it."""
        ...

    def full(self) -> Scores:
        """The score of every passage (for analysis; a search does not need it)."""
        ...


def best_first(positions: Positions, scores: Scores, depth: int) -> Candidates:
    """The ``depth`` best positive of already scored passages at ascending ``positions``, in
    ``top_k``'s order (ties by index are then ties by position)."""
    order = top_indices(scores, depth)
    bound = scores[order[-1]] if len(order) == depth and depth else np.float32(0.0)
    return Candidates(positions[order], scores[order], np.float32(bound))


def lookup(ascending: Positions, positions: Positions) -> tuple[npt.NDArray[np.intp], Mask]:
    """Where each of ``positions`` is in the non-empty ``ascending``, and whether it is there
    (where it is not, the index is of a neighbour)."""
    where = np.minimum(np.searchsorted(ascending, positions), len(ascending) - 1)
    return where, ascending[where] == positions


def counts(pool: Scores, values: Scores) -> Counts:
    """How many of ``pool`` lie above each value (one pass per value; values are few)."""
    if values.size:
        pool = pool[pool > values.min()]  # only these can be above any value
    return np.array([np.count_nonzero(pool > v) for v in values.tolist()], dtype=np.int64)


def all_flags(n: int, value: bool = True) -> Mask:
    """``n`` flags, every one ``value``."""
    return np.full(n, value, dtype=np.bool_)


def union(parts: list[Positions]) -> Positions:
    """The positions in any of the parts, ascending, each once."""
    if not parts:
        return np.empty(0, dtype=np.int32)
    joined = np.concatenate(parts).astype(np.int32, copy=False)
    joined.sort(kind="stable")  # timsort, which merges the parts' sorted runs
    if len(joined) < 2:
        return joined
    keep = np.empty(len(joined), dtype=np.bool_)
    keep[0] = True
    np.not_equal(joined[1:], joined[:-1], out=keep[1:])
    return joined[keep]


def highest(
    values: Scores | npt.NDArray[np.float64], among: npt.NDArray[np.intp], n: int
) -> npt.NDArray[np.intp]:
    """The (at most) ``n`` indices of ``among`` whose values are highest, in no order."""
    if len(among) <= n:
        return among
    return among[np.argpartition(-values[among], n - 1)[:n]]


class ArrayScores:
    """A signal whose scores are already an array over every passage."""

    def __init__(self, scores: Scores) -> None:
        self.scores = scores

    @property
    def nbytes(self) -> int:
        return int(self.scores.nbytes)

    def at(self, positions: Positions) -> Scores:
        return self.scores[positions]

    def known(self, depth: int, mask: Mask | None) -> Known:
        found = self.top(depth, mask)
        order = np.argsort(found.positions)
        exact = all_flags(len(order))
        return Known(found.positions[order], found.scores[order], exact, found.bound, False)

    def top(self, depth: int, mask: Mask | None) -> Candidates:
        found = top_indices(self.scores, depth, mask).astype(np.int32)
        values = self.scores[found]
        bound = values[-1] if len(found) == depth else np.float32(0.0)
        return Candidates(found, values, np.float32(bound))

    def count_above(self, values: Scores, mask: Mask | None) -> Counts:
        return counts(self.scores if mask is None else self.scores[mask], values)

    def full(self) -> Scores:
        return self.scores


class SparseScores:
    """Scores known at some passages (ascending ``positions``), exactly 0 everywhere else."""

    def __init__(self, positions: Positions, scores: Scores, size: int) -> None:
        self.positions, self.scores, self.size = positions, scores, size

    @property
    def nbytes(self) -> int:
        return int(self.positions.nbytes + self.scores.nbytes)

    def at(self, positions: Positions) -> Scores:
        out = np.zeros(len(positions), dtype=np.float32)
        if not len(self.positions):
            return out
        where, found = lookup(self.positions, positions)
        out[found] = self.scores[where[found]]
        return out

    def _searched(self, mask: Mask | None) -> tuple[Positions, Scores]:
        if mask is None:
            return self.positions, self.scores
        keep = mask[self.positions]
        return self.positions[keep], self.scores[keep]

    def known(self, depth: int, mask: Mask | None) -> Known:
        positions, scores = self._searched(mask)
        return Known(positions, scores, all_flags(len(positions)), np.float32(0.0), True)

    def top(self, depth: int, mask: Mask | None) -> Candidates:
        found = best_first(*self._searched(mask), depth)
        # The passages left out score at most the last one returned, or exactly 0.
        return Candidates(found.positions, found.scores, max(found.bound, np.float32(0.0)))

    def count_above(self, values: Scores, mask: Mask | None) -> Counts:
        scores = self._searched(mask)[1]
        searched = self.size if mask is None else int(np.count_nonzero(mask))
        zeros = searched - len(scores)  # the passages scoring exactly 0
        return counts(scores, values) + np.where(values < 0, zeros, 0)

    def full(self) -> Scores:
        out = np.zeros(self.size, dtype=np.float32)
        out[self.positions] = self.scores
        return out


def normalized(raw: Scores, ceiling: float | None) -> Scores:
    """Weighted fusion's view of a raw score: cosine clipped at 0 (``ceiling`` None), BM25
    divided by the query's idf ceiling."""
    if ceiling is None:
        return np.clip(raw, 0.0, None)
    return raw / ceiling if ceiling > 0 else np.zeros_like(raw)


@dataclass(frozen=True, slots=True)
class Fused:
    """The top ``k`` of a weighted fusion: positions, fused scores and each signal's raw."""

    positions: Positions
    scores: npt.NDArray[np.float64]
    raw: Mapping[str, Scores]


class _Pool:
    """The passages some signal knows, each signal's value there (exact, or an upper
    bound) and the fused score those values give (exact where every value is)."""

    def __init__(
        self,
        known: Mapping[str, Known],
        ceilings: Mapping[str, float | None],
        weights: Mapping[str, float],
    ) -> None:
        self.ceilings, self.weights = ceilings, weights
        self.positions = union([k.positions for k in known.values()])
        self.values: dict[str, Scores] = {}
        self.exact: dict[str, Mask] = {}
        for name, k in known.items():
            values = np.full(len(self.positions), k.bound, dtype=np.float32)
            exact = all_flags(len(self.positions), k.rest_exact)
            where = np.searchsorted(self.positions, k.positions)  # every one is there
            values[where] = k.upper
            exact[where] = k.exact
            self.values[name], self.exact[name] = values, exact
        self.fused = self._fuse(slice(None))
        self.done = np.logical_and.reduce(list(self.exact.values()))

    def _fuse(self, at: slice | npt.NDArray[np.intp]) -> npt.NDArray[np.float64]:
        parts = {n: normalized(v[at], self.ceilings[n]) for n, v in self.values.items()}
        return weighted_score_fusion(parts, self.weights)

    def settle(self, at: npt.NDArray[np.intp], signals: Mapping[str, SignalScores]) -> None:
        """Score the passages at ``at`` exactly on every signal."""
        for name, signal in signals.items():
            lacking = at[~self.exact[name][at]]
            if len(lacking):
                self.values[name][lacking] = signal.at(self.positions[lacking])
                self.exact[name][lacking] = True
        self.fused[at] = self._fuse(at)
        self.done[at] = True


def _floor(
    signals: Mapping[str, SignalScores],
    known: Mapping[str, Known],
    ceilings: Mapping[str, float | None],
    weights: Mapping[str, float],
    k: int,
) -> float:
    """A fused score the final ``k``-th reaches at least: the ``k``-th of the passages each
    signal knows best, scored exactly (0 when they are fewer than ``k``)."""
    best = [kn.positions[highest(kn.upper, np.arange(len(kn.upper)), k)] for kn in known.values()]
    seeds = union(best)
    exact = {n: normalized(signal.at(seeds), ceilings[n]) for n, signal in signals.items()}
    fused = weighted_score_fusion(exact, weights)
    found = top_indices(fused, k)
    return float(fused[found[-1]]) if len(found) == k else 0.0


def _prune(
    name: str,
    known: Mapping[str, Known],
    ceilings: Mapping[str, float | None],
    weights: Mapping[str, float],
    floor: float,
) -> Known:
    """``known[name]`` without the passages that stay below ``floor`` even with every other
    signal at its highest; what is dropped raises the bound of the rest."""
    mine = known[name]
    if floor <= 0 or not len(mine.positions):
        return mine
    parts = {}
    for other, kn in known.items():
        if other == name:
            parts[other] = normalized(mine.upper, ceilings[other])
        else:
            top = max(float(kn.upper.max(initial=0.0)), float(kn.bound))
            parts[other] = normalized(np.full(len(mine.upper), top, np.float32), ceilings[other])
    keep = weighted_score_fusion(parts, weights) >= floor
    if keep.all():
        return mine
    bound = max(mine.bound, mine.upper[~keep].max())
    return Known(mine.positions[keep], mine.upper[keep], mine.exact[keep], bound, False)


def weighted_top(
    signals: Mapping[str, SignalScores],
    ceilings: Mapping[str, float | None],
    weights: Mapping[str, float],
    k: int,
    mask: Mask | None,
    depth: int,
    size: int,
) -> Fused:
    """The ``k`` best passages by ``sum of weight * normalized score``, highest first, ties
    by position: exactly ``top_k`` over every passage, from the candidates alone (signals
    that are all arrays over the corpus are simply fused whole).

    A passage outside the pool either was never known to any signal (it scores at most the
    fused bounds, ``reach``) or was pruned (it scores below the floor, which the final
    ``k``-th reaches); inside the pool, every passage whose upper bound could reach the
    ``k``-th is scored exactly before the top is read."""
    if all(isinstance(signal, ArrayScores) for signal in signals.values()):
        every = {name: signal.full() for name, signal in signals.items()}
        fused = weighted_score_fusion(
            {name: normalized(every[name], ceilings[name]) for name in every}, weights
        )
        best = top_indices(fused, k, mask)
        raw = {name: scores[best] for name, scores in every.items()}
        return Fused(best.astype(np.int32), fused[best], raw)
    while True:
        known = {name: signal.known(depth, mask) for name, signal in signals.items()}
        floor = _floor(signals, known, ceilings, weights, k)
        pruned = {name: _prune(name, known, ceilings, weights, floor) for name in known}
        pool = _Pool(pruned, ceilings, weights)
        while True:  # settle every passage whose bound could still reach the top k
            found = top_indices(pool.fused, k, pool.done)
            if len(found) == k:
                kth = pool.fused[found[-1]]
                pending = np.flatnonzero(~pool.done & (pool.fused >= kth))
            else:
                waiting = np.flatnonzero(~pool.done & (pool.fused > 0))
                pending = highest(pool.fused, waiting, 4 * k)
            if not len(pending):
                break
            pool.settle(pending, signals)
        # What a passage that no signal knows could reach, by the same arithmetic.
        bounds = {n: normalized(np.array([kn.bound]), ceilings[n]) for n, kn in known.items()}
        reach = weighted_score_fusion(bounds, weights)
        ceiling = float(reach[0]) if len(reach) else 0.0
        enough = len(found) == k and float(pool.fused[found[-1]]) > ceiling
        if ceiling <= 0 or enough or depth >= size:
            raw = {name: values[found] for name, values in pool.values.items()}
            return Fused(pool.positions[found], pool.fused[found], raw)
        depth *= DEEPEN
