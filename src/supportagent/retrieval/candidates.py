"""Candidate search: each signal names its best passages, and fusion scores only those.

Scoring every passage on every signal builds, fuses and sorts arrays as long as the corpus,
several per query (4 MB each at 1M passages): most of a query's time at that size, and the
peak of those temporaries is what glibc keeps in each worker. Here a signal returns its
``depth`` best passages with a *bound*, a score that no passage it did not return exceeds:

* BM25 (``LexicalScores``) walks the query terms' postings by their peak contribution
  (max-score): the passages of the rarest terms give a threshold, and a term whose peak, added
  to those of all rarer-peaked terms, stays below it cannot lift a passage on its own, so its
  postings are never scanned; the passages scanned are scored exactly on every term by
  binary search in the postings;
* the IVF (``SparseScores``) returns what it probed, every other passage scoring exactly 0;
* an array already computed (exact dense, history; ``ArrayScores``) returns its own top.

``weighted_top`` scores the union of the candidates on every signal, and keeps its top ``k``
only if the ``k``-th fused score is above the fused bounds (what a passage no signal returned
could reach at most); otherwise it deepens. Its hits are therefore exactly those of fusing
every passage, scores to the last bit, since each passage's raw scores are computed by the
same float32 operations in the same order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from supportagent.retrieval.bm25 import BM25Index, Mask, Term, top_indices
from supportagent.retrieval.fusion import weighted_score_fusion

Positions = npt.NDArray[np.int32]
Scores = npt.NDArray[np.float32]
Counts = npt.NDArray[np.int64]

#: A lexical walk whose passages would pass this share of the corpus scores every passage
#: instead: past it, adding up whole posting lists is cheaper than binary searches.
FULL_SHARE = 0.1
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


def _best_first(positions: Positions, scores: Scores, depth: int) -> Candidates:
    """The ``depth`` best positive of already scored passages, ``top_k``'s order."""
    keep = scores > 0
    if len(scores) > 4 * depth:  # only the depth best and their ties can matter
        kth = np.partition(scores, len(scores) - depth)[len(scores) - depth]
        keep &= scores >= kth
    positions, scores = positions[keep], scores[keep]
    order = np.lexsort((positions, -scores))[:depth]
    bound = scores[order[-1]] if len(order) == depth else np.float32(0.0)
    return Candidates(positions[order], scores[order], np.float32(bound))


def _counts(pool: Scores, values: Scores) -> Counts:
    """How many of ``pool`` lie above each value (one pass per value; values are few)."""
    if values.size:
        pool = pool[pool > values.min()]  # only these can be above any value
    return np.array([np.count_nonzero(pool > v) for v in values.tolist()], dtype=np.int64)


def _all(n: int, value: bool = True) -> Mask:
    return np.full(n, value, dtype=np.bool_)


def _union(parts: list[Positions]) -> Positions:
    """The positions in any of the parts, ascending, each once."""
    if not parts:
        return np.empty(0, dtype=np.int32)
    joined = np.concatenate(parts).astype(np.int32, copy=False)
    joined.sort(kind="stable")  # a radix sort for integers: linear in the length
    if len(joined) < 2:
        return joined
    keep = np.empty(len(joined), dtype=np.bool_)
    keep[0] = True
    np.not_equal(joined[1:], joined[:-1], out=keep[1:])
    return joined[keep]


def _highest(
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
        exact = _all(len(order))
        return Known(found.positions[order], found.scores[order], exact, found.bound, False)

    def top(self, depth: int, mask: Mask | None) -> Candidates:
        found = top_indices(self.scores, depth, mask).astype(np.int32)
        values = self.scores[found]
        bound = values[-1] if len(found) == depth else np.float32(0.0)
        return Candidates(found, values, np.float32(bound))

    def count_above(self, values: Scores, mask: Mask | None) -> Counts:
        return _counts(self.scores if mask is None else self.scores[mask], values)

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
        where = np.minimum(np.searchsorted(self.positions, positions), len(self.positions) - 1)
        found = self.positions[where] == positions
        out[found] = self.scores[where[found]]
        return out

    def _searched(self, mask: Mask | None) -> tuple[Positions, Scores]:
        if mask is None:
            return self.positions, self.scores
        keep = mask[self.positions]
        return self.positions[keep], self.scores[keep]

    def known(self, depth: int, mask: Mask | None) -> Known:
        positions, scores = self._searched(mask)
        return Known(positions, scores, _all(len(positions)), np.float32(0.0), True)

    def top(self, depth: int, mask: Mask | None) -> Candidates:
        found = _best_first(*self._searched(mask), depth)
        # The passages left out score at most the last one returned, or exactly 0.
        return Candidates(found.positions, found.scores, max(found.bound, np.float32(0.0)))

    def count_above(self, values: Scores, mask: Mask | None) -> Counts:
        scores = self._searched(mask)[1]
        searched = self.size if mask is None else int(np.count_nonzero(mask))
        zeros = searched - len(scores)  # the passages scoring exactly 0
        return _counts(scores, values) + np.where(values < 0, zeros, 0)

    def full(self) -> Scores:
        out = np.zeros(self.size, dtype=np.float32)
        out[self.positions] = self.scores
        return out


def _round_up(values: npt.NDArray[np.float64]) -> Scores:
    """Each value as the nearest float32 at or above it (a bound must not round down)."""
    out = values.astype(np.float32)
    low = out.astype(np.float64) < values
    out[low] = np.nextafter(out[low], np.float32(np.inf))
    return out


@dataclass(frozen=True, slots=True)
class _Walk:
    """The passages a lexical walk reached (ascending), a lower and an upper bound of each
    one's score (equal, and the score, when ``exact``), and ``bound`` above every passage
    it did not reach (their score itself, 0, when ``complete``)."""

    positions: Positions
    lower: Scores
    upper: Scores
    bound: np.float32
    complete: bool
    exact: bool


class LexicalScores:
    """BM25 scores of one query, computed for the passages a max-score walk reaches.

    The walk scans the postings of the terms with the highest peak contribution; the terms
    it skips (the lowest peaks) add at most the sum of their peaks to any passage, which
    bounds every passage it did not reach and the rest of the ones it did. A passage's exact
    score (``at``) is then only computed where a bound is not enough.
    """

    def __init__(self, index: BM25Index, tokens: list[str]) -> None:
        self.index = index
        self.tokens = tokens
        self.terms: list[Term] = index.terms(tokens)
        self.peaks = [index.peak(term) for term in self.terms]
        # Walks done, by mask (compared by identity: the retriever keeps one mask per kinds).
        self._walks: list[tuple[Mask | None, int, _Walk]] = []
        self._full: Scores | None = None

    @property
    def nbytes(self) -> int:
        kept = sum(3 * w.positions.nbytes for _, _, w in self._walks)
        return kept + (0 if self._full is None else int(self._full.nbytes))

    def at(self, positions: Positions) -> Scores:
        """Each passage's score: every term in query order, as ``BM25Index.scores`` adds."""
        if self._full is not None:
            return self._full[positions]
        out = np.zeros(len(positions), dtype=np.float32)
        for term in self.terms:
            where = np.minimum(np.searchsorted(term.docs, positions), len(term.docs) - 1)
            found = term.docs[where] == positions
            if found.any():
                out[found] += term.contributions(where[found])
        return out

    def known(self, depth: int, mask: Mask | None) -> Known:
        walk = self._walk(depth, mask)
        exact = _all(len(walk.positions), walk.exact)
        return Known(walk.positions, walk.upper, exact, walk.bound, walk.complete)

    def top(self, depth: int, mask: Mask | None) -> Candidates:
        walk = self._walk(depth, mask)
        if walk.exact:
            found = _best_first(walk.positions, walk.lower, depth)
            return Candidates(found.positions, found.scores, max(found.bound, walk.bound))
        scores, done = walk.upper.copy(), _all(len(walk.positions), False)
        while True:
            scored = np.flatnonzero(done)
            if len(scored) >= depth:
                ranked = scores[scored]
                floor = np.partition(ranked, len(ranked) - depth)[len(ranked) - depth]
                pending = np.flatnonzero(~done & (walk.upper >= floor))
            else:
                pending = _highest(walk.upper, np.flatnonzero(~done), depth)
            if not len(pending):
                break
            scores[pending] = self.at(walk.positions[pending])
            done[pending] = True
        found = _best_first(walk.positions[done], scores[done], depth)
        # Left out: walked passages at or below the depth-th (exactly, or by their upper
        # bound), and unwalked ones below the walk's bound, itself below the depth-th.
        return Candidates(found.positions, found.scores, max(found.bound, walk.bound))

    def count_above(self, values: Scores, mask: Mask | None) -> Counts:
        """Exact for a value at or above the walk's bound; below it, the lower bound the walk
        proves (more than its depth: the passages it scored higher), since the exact count
        would mean scoring every passage. Exact throughout once every passage was scored."""
        walks = [w for m, _, w in self._walks if m is mask]
        walk = min(walks, key=lambda w: w.bound) if walks else None
        if walk is None or self._full is not None:
            full = self.full()
            return _counts(full if mask is None else full[mask], values)
        out = _counts(walk.lower, values)  # passages surely above each value
        settled = values >= walk.bound  # every passage above these was walked
        if settled.any() and not walk.exact:
            lowest = values[settled].min()
            unsure = np.flatnonzero((walk.upper > lowest) & (walk.lower <= values[settled].max()))
            exact = self.at(walk.positions[unsure])
            lower = walk.lower[unsure]
            for i in np.flatnonzero(settled).tolist():
                v = values[i]
                out[i] += np.count_nonzero((exact > v) & (lower <= v))
        return out

    def full(self) -> Scores:
        if self._full is None:
            self._full = self.index.scores(self.tokens)
        return self._full

    def _walk(self, depth: int, mask: Mask | None) -> _Walk:
        for m, d, walk in self._walks:
            if m is mask and d == depth:
                return walk
        walk = self._scan(depth, mask)
        self._walks.append((mask, depth, walk))
        return walk

    def _postings(self, chosen: list[int], mask: Mask | None) -> Positions:
        """The passages in any chosen term's postings (and the mask), ascending."""
        parts = [self.terms[i].docs for i in chosen]
        if mask is not None:
            parts = [docs[mask[docs]] for docs in parts]
        if len(parts) == 1:
            return np.asarray(parts[0], dtype=np.int32)
        return _union(parts)

    def _gather(self, chosen: list[int], positions: Positions, mask: Mask | None) -> Scores:
        """What the chosen terms add to each passage (all of them in ``positions``), in
        query order: with every term, each passage's exact score."""
        out = np.zeros(len(positions), dtype=np.float32)
        for i in sorted(chosen):
            term = self.terms[i]
            docs, adds = term.docs, term.contributions()
            if mask is not None:
                keep = mask[docs]
                docs, adds = docs[keep], adds[keep]
            out[np.searchsorted(positions, docs)] += adds
        return out

    def _complete(self, positions: Positions, mask: Mask | None) -> _Walk:
        scores = self._gather(list(range(len(self.terms))), positions, mask)
        return _Walk(positions, scores, scores, np.float32(0.0), True, True)

    def _everything(self, depth: int, mask: Mask | None) -> _Walk:
        """Every passage scored (a walk would reach too many): the ``depth`` best are the
        walk, the rest is bounded by the last of them and looked up in the full scores."""
        found = ArrayScores(self.full()).top(depth, mask)
        order = np.argsort(found.positions)
        positions, scores = found.positions[order], found.scores[order]
        return _Walk(positions, scores, scores, found.bound, False, True)

    def _scan(self, depth: int, mask: Mask | None) -> _Walk:
        """Max-score: seed with the highest-peak terms until ``depth`` passages, take the
        ``depth``-th best of what they add as threshold, and skip the lowest-peak terms
        whose peaks sum below it: no passage reaches the threshold through them alone."""
        limit = FULL_SHARE * len(self.index)
        by_peak = sorted(range(len(self.terms)), key=lambda i: -self.peaks[i])
        chosen: list[int] = []
        seen, positions = 0, np.empty(0, dtype=np.int32)
        while len(chosen) < len(by_peak) and (len(positions) < depth or not chosen):
            batch: list[int] = []  # take terms until their postings could hold depth passages
            while len(chosen) + len(batch) < len(by_peak) and (not batch or seen < depth):
                batch.append(by_peak[len(chosen) + len(batch)])
                seen += len(self.terms[batch[-1]].docs)
            chosen += batch
            if seen > limit:
                return self._everything(depth, mask)
            positions = self._postings(chosen, mask)
        if len(chosen) == len(by_peak):
            return self._complete(positions, mask)
        partial = self._gather(chosen, positions, mask)
        threshold = float(np.partition(partial, len(partial) - depth)[len(partial) - depth])
        # Float32 sums of up to n terms round by at most n half-ulps each way: widen.
        widen = 1.0 + len(self.terms) * 2.0**-21
        rest, skipped = 0.0, 0
        for i in reversed(by_peak[len(chosen) :]):
            if (rest + self.peaks[i]) * widen >= threshold:
                break
            rest, skipped = rest + self.peaks[i], skipped + 1
        needed = by_peak[len(chosen) : len(by_peak) - skipped]
        if needed:
            seen += sum(len(self.terms[i].docs) for i in needed)
            if seen > limit:
                return self._everything(depth, mask)
            positions = _union([positions, self._postings(needed, mask)])
        if not skipped:
            return self._complete(positions, mask)
        lower = self._gather(chosen + needed, positions, mask)
        upper = _round_up((lower.astype(np.float64) + rest) * widen)
        bound = _round_up(np.array([rest * widen]))[0]
        return _Walk(positions, lower, upper, bound, False, False)


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
        self.positions = _union([k.positions for k in known.values()])
        self.values: dict[str, Scores] = {}
        self.exact: dict[str, Mask] = {}
        for name, k in known.items():
            values = np.full(len(self.positions), k.bound, dtype=np.float32)
            exact = _all(len(self.positions), k.rest_exact)
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
    best = [kn.positions[_highest(kn.upper, np.arange(len(kn.upper)), k)] for kn in known.values()]
    seeds = _union(best)
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
                pending = _highest(pool.fused, waiting, 4 * k)
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
