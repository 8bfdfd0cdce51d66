"""BM25 scores of one query for the passages a max-score walk reaches (``candidates.py``).

The walk takes the query terms by their peak contribution (the most any passage gets from
the term): the passages of the highest-peak terms give a threshold (the ``depth``-th best of
what those terms add), and the lowest-peak terms whose peaks sum below it cannot lift a
passage to it on their own, so their postings are never scanned. Every walked passage gets a
lower bound (what the scanned terms add) and an upper bound (plus the skipped peaks); every
other passage is bounded by the skipped peaks alone. A passage's exact score (``at``) is a
binary search in each term's postings, done only where a bound is not enough.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from supportagent.retrieval.bm25 import BM25Index, Mask, Term
from supportagent.retrieval.candidates import (
    ArrayScores,
    Candidates,
    Counts,
    Known,
    Positions,
    Scores,
    all_flags,
    best_first,
    counts,
    highest,
    lookup,
    union,
)

#: A walk whose passages would pass this share of the corpus scores every passage instead:
#: past it, adding up whole posting lists is cheaper than binary searches.
FULL_SHARE = 0.1


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
            where, found = lookup(term.docs, positions)  # a term's postings are never empty
            if found.any():
                out[found] += term.contributions(where[found])
        return out

    def known(self, depth: int, mask: Mask | None) -> Known:
        walk = self._walk(depth, mask)
        exact = all_flags(len(walk.positions), walk.exact)
        return Known(walk.positions, walk.upper, exact, walk.bound, walk.complete)

    def top(self, depth: int, mask: Mask | None) -> Candidates:
        walk = self._walk(depth, mask)
        if walk.exact:
            found = best_first(walk.positions, walk.lower, depth)
            return Candidates(found.positions, found.scores, max(found.bound, walk.bound))
        scores, done = walk.upper.copy(), all_flags(len(walk.positions), False)
        while True:
            scored = np.flatnonzero(done)
            if len(scored) >= depth:
                ranked = scores[scored]
                floor = np.partition(ranked, len(ranked) - depth)[len(ranked) - depth]
                pending = np.flatnonzero(~done & (walk.upper >= floor))
            else:
                pending = highest(walk.upper, np.flatnonzero(~done), depth)
            if not len(pending):
                break
            scores[pending] = self.at(walk.positions[pending])
            done[pending] = True
        found = best_first(walk.positions[done], scores[done], depth)
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
            return counts(full if mask is None else full[mask], values)
        out = counts(walk.lower, values)  # passages surely above each value
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
        return union(parts)

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
            positions = union([positions, self._postings(needed, mask)])
        if not skipped:
            return self._complete(positions, mask)
        lower = self._gather(chosen + needed, positions, mask)
        upper = _round_up((lower.astype(np.float64) + rest) * widen)
        bound = _round_up(np.array([rest * widen]))[0]
        return _Walk(positions, lower, upper, bound, False, False)
