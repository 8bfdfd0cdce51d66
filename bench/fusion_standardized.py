"""Leave-one-dataset-out test of standardized fusion against the shipped default (round 4).

Run: .venv/bin/python bench/fusion_standardized.py --cache FILE.db [--shared ../shared/eval]
       [--data /work/evaldata] [--scores SCORES.pkl] [--json OUT.json]

**The method, fixed before any leave-one-out run.** Most passages are not relevant to a query,
so a signal's scores over the corpus are, for that query, mostly the scores of non-relevant
passages. Standardizing each signal against that bulk, ``z = (score - mean) / std`` over the
query's passages, measures a passage in units of the signal's own noise for this query: a
signal whose best passage stands far above the rest (BM25 on a query naming a rare command)
speaks loudly, one whose scores are all alike (BM25 on a paraphrase) barely at all. The fused
score is ``sum of w_s * z_s`` with ``w_dense = 1``. The mean is the same for every passage of a
query, so the ranking is that of weighted fusion with per-query weights ``w_s / std_s``: only
the standard deviations matter (each signal's per-query divisor). Nothing is read from labels
or from other queries.

Grid (fixed in advance, 36 points): ``w_body`` in {0.25, 0.5, 0.75, 1, 1.5, 2}, ``w_title`` in
{0, 0.25, 0.5}, and the population the standard deviation is taken over, every passage
("all") or the signal's 100 best passages ("top100"). Leave-one-dataset-out over the six sets:
the point with the best mean MRR margin (over each set's best single signal) on the other five
is scored on the held-out set (ties go to the earlier grid point). The reference is the
shipped default, whose one parameter (lexical trust, {0, 0.5, 1, 2, 4, 8}) is chosen the same
way. Decision rule, also fixed in advance: standardized fusion replaces the default only if
its held-out margin is at least -0.005 on every set, its mean held-out margin is higher than
the default's, and it is at least +0.02 on as many sets as the default.
"""

from __future__ import annotations

import argparse
import json
import pickle
import tempfile
from collections.abc import Callable, Mapping
from itertools import product
from pathlib import Path

import numpy as np
from fusion_loo import SIGNALS, Scored, loo_arguments, loo_folders

from supportagent.agent.knowledge import build_embedder
from supportagent.config import Settings
from supportagent.retrieval.eval import read_beir
from supportagent.retrieval.fusion import DEFAULT_LEXICAL_TRUST, DEFAULT_WEIGHTS
from supportagent.retrieval.retriever import HybridRetriever
from supportagent.store.embeddings import StoreVectorCache
from supportagent.store.store import Store

BODY_WEIGHTS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)
TITLE_WEIGHTS = (0.0, 0.25, 0.5)
POPULATIONS = ("all", "top100")
GRID = list(product(POPULATIONS, BODY_WEIGHTS, TITLE_WEIGHTS))
TRUSTS = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)
FLOOR, GAIN = -0.005, 0.02


def spread(scores: np.ndarray, population: str) -> float:
    """The standard deviation a signal's scores are divided by, for one query."""
    if population == "top100" and len(scores) > 100:
        scores = np.partition(scores, len(scores) - 100)[-100:]
    return float(np.std(scores))


def standardized_mrr(s: Scored, point: tuple[str, float, float]) -> float:
    """MRR of standardized fusion at one grid point (document level, ties against)."""
    population, body, title = point
    weights = {"body": body, "title": title, "dense": 1.0}
    total = 0.0
    for arrays, relevant in zip(s.arrays, s.relevant, strict=True):
        fused = np.zeros(len(arrays["dense"]), dtype=np.float64)
        for signal, weight in weights.items():
            sd = spread(arrays[signal], population) if weight else 0.0
            if sd > 0:
                fused += (weight / sd) * arrays[signal]
        best = np.maximum.reduceat(fused, s.starts)
        hit = best[relevant].max()
        if hit > 0:
            total += 1.0 / (1 + int((best[~relevant] >= hit).sum()))
    return total / len(s.arrays)


def leave_one_out(
    names: list[str], points: list, margin: Callable[[str, object], float]
) -> dict[str, tuple[object, float]]:
    """For each held-out set, the point best on the others (mean margin) and its margin."""
    out = {}
    for held in names:
        others = [n for n in names if n != held]
        means = [float(np.mean([margin(n, p) for n in others])) for p in points]
        chosen = points[int(np.argmax(means))]
        out[held] = (chosen, margin(held, chosen))
    return out


def build_scores(args: argparse.Namespace) -> dict[str, Scored]:
    folders = loo_folders(args.shared, args.data)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{args.cache or Path(tmp) / 'loo.db'}")
        store.migrate()
        embedder = build_embedder(Settings(_env_file=None), StoreVectorCache(store))
        scored = {}
        for name, folder in folders.items():
            dataset = read_beir(folder)
            scored[name] = Scored(dataset, HybridRetriever(dataset.corpus, embedder=embedder))
            print("scored", name, flush=True)
        store.close()
    return scored


def main() -> None:
    parser = loo_arguments()
    parser.add_argument("--scores", type=Path, help="pickle of the kept scores (made if absent)")
    args = parser.parse_args()
    if args.scores and args.scores.is_file():
        scored: dict[str, Scored] = pickle.loads(args.scores.read_bytes())
    else:
        scored = build_scores(args)
        if args.scores:
            args.scores.write_bytes(pickle.dumps(scored))
    names = list(scored)
    best = {n: max(scored[n].mrr({sig: 1.0}) for sig in SIGNALS) for n in names}
    cache: dict[tuple[str, object], float] = {}

    def margin_of(fn: Callable[[Scored, object], float]) -> Callable[[str, object], float]:
        def margin(name: str, point: object) -> float:
            key = (name, (fn.__name__, point))
            if key not in cache:
                cache[key] = fn(scored[name], point) - best[name]
            return cache[key]

        return margin

    def trust_mrr(s: Scored, trust: object) -> float:
        return s.mrr(DEFAULT_WEIGHTS, float(trust))  # type: ignore[arg-type]

    default = {n: trust_mrr(scored[n], DEFAULT_LEXICAL_TRUST) - best[n] for n in names}
    trust_loo = leave_one_out(names, list(TRUSTS), margin_of(trust_mrr))
    z_loo = leave_one_out(names, GRID, margin_of(standardized_mrr))  # type: ignore[arg-type]
    print(f"\n{'held out':14} best single  default (trust 2)  trust LOO        standardized LOO")
    for n in names:
        t, tm = trust_loo[n]
        z, zm = z_loo[n]
        print(
            f"{n:14} {best[n]:.3f}        {default[n]:+.3f}             {t:<4g} {tm:+.3f}      "
            f"{z} {zm:+.3f}"
        )

    def summary(margins: Mapping[str, float]) -> dict[str, float]:
        values = list(margins.values())
        return {
            "mean": round(float(np.mean(values)), 4),
            "min": round(min(values), 4),
            "gains": sum(v >= GAIN for v in values),
        }

    trust_margins = {n: m for n, (_, m) in trust_loo.items()}
    z_margins = {n: m for n, (_, m) in z_loo.items()}
    print("trust LOO:", summary(trust_margins), " standardized LOO:", summary(z_margins))
    zs, ts = summary(z_margins), summary(trust_margins)
    ship = zs["min"] >= FLOOR and zs["mean"] > ts["mean"] and zs["gains"] >= ts["gains"]
    print("decision:", "standardized fusion replaces the default" if ship else "keep the default")
    every = {}
    for point in GRID:
        margins = [cache[(n, ("standardized_mrr", point))] for n in names]
        every[str(point)] = {
            "mean": round(float(np.mean(margins)), 4),
            "min": round(min(margins), 4),
        }
    print("in-sample margin over all six by grid point (mean, worst set):", json.dumps(every))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "best_single": best,
                    "default": default,
                    "trust_loo": {n: [p, m] for n, (p, m) in trust_loo.items()},
                    "standardized_loo": {n: [list(p), m] for n, (p, m) in z_loo.items()},
                    "all_points": every,
                    "ship": ship,
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
