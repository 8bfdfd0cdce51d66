"""Per-query sharpness in the fusion: does lowering the dense weight, for one query, when BM25
singles out its top passage more sharply than dense does, hold under leave-one-dataset-out?

Run: .venv/bin/python bench/fusion_query_gap.py --cache FILE.db [--shared ../shared/eval]
       [--data /work/evaldata] [--json OUT.json]

For each query, ``gb`` and ``gd`` are BM25's and dense's relative gap between their two best
passages ((top - second) / top), read from that query's own scores only (label-free and not
transductive: nothing is learned from other queries). The dense weight becomes
``3 * 2 ** (-k * max(0, gb - gd - c))`` with lexical trust ``t``; (t, k, c) are chosen on the
other datasets for each held-out one, by the mean margin over their best single signal, and
also by the smallest margin first (the floor). Measured only: see docs/retrieval.md.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
from fusion_loo import SIGNALS, Scored, loo_arguments, loo_folders

from supportagent.agent.knowledge import build_embedder
from supportagent.config import Settings
from supportagent.retrieval.eval import read_beir
from supportagent.retrieval.retriever import HybridRetriever
from supportagent.store.embeddings import StoreVectorCache
from supportagent.store.store import Store

GRID = [
    (t, k, c)
    for t in (0.0, 1.0, 2.0, 4.0)
    for k in (0.0, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0)
    for c in (0.0, 0.05, 0.1, 0.2)
]


def _gap(scores: np.ndarray) -> float:
    top, second = np.sort(scores)[-2:][::-1] if len(scores) > 1 else (scores.max(), 0.0)
    return float((top - second) / top) if top > 0 else 0.0


def _mrr(scored: Scored, point: tuple[float, float, float]) -> float:
    t, k, c = point
    total = 0.0
    for arrays, relevant in zip(scored.arrays, scored.relevant, strict=True):
        dense = 3.0 * 2 ** (-k * max(0.0, _gap(arrays["body"]) - _gap(arrays["dense"]) - c))
        body = 1.0 + t * float(arrays["body"].max())
        fused = body * arrays["body"] + 0.5 * arrays["title"] + dense * arrays["dense"]
        best = np.maximum.reduceat(fused, scored.starts)
        hit = best[relevant].max()
        if hit > 0:
            total += 1.0 / (1 + int((best[~relevant] >= hit).sum()))
    return total / len(scored.arrays)


Point = tuple[float, float, float]


def _choose(margins: dict[Point, dict[str, float]], names: list[str], floor_first: bool) -> Point:
    """The grid point with the best mean margin over ``names`` (ties: the best smallest), or
    with the best smallest margin first."""

    def key(point: Point) -> tuple[float, float]:
        values = [margins[point][n] for n in names]
        mean, low = float(np.mean(values)), min(values)
        return (low, mean) if floor_first else (mean, low)

    return max(GRID, key=key)


def main() -> None:
    args = loo_arguments().parse_args()
    folders = loo_folders(args.shared, args.data)
    margins: dict[Point, dict[str, float]] = {p: {} for p in GRID}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{args.cache or Path(tmp) / 'loo.db'}")
        store.migrate()
        embedder = build_embedder(Settings(_env_file=None), StoreVectorCache(store))
        for name, folder in folders.items():
            dataset = read_beir(folder)
            scored = Scored(dataset, HybridRetriever(dataset.corpus, embedder=embedder))
            best = max(scored.mrr({signal: 1.0}) for signal in SIGNALS)
            for point in GRID:
                margins[point][name] = _mrr(scored, point) - best
            print(name, "shipped (t=2, k=0):", f"{margins[(2.0, 0.0, 0.0)][name]:+.3f}", flush=True)
        store.close()
    names = list(folders)
    report: dict[str, object] = {}
    for rule in ("mean", "floor"):
        chosen = {}
        for held in names:
            point = _choose(margins, [n for n in names if n != held], floor_first=rule == "floor")
            chosen[held] = {"point": point, "margin": round(margins[point][held], 4)}
        report[f"loo_{rule}"] = chosen
        print(f"\nleave-one-out, chosen by the {rule}:")
        for held, row in chosen.items():
            print(f"  {held:16} t, k, c = {row['point']}  margin {row['margin']:+.3f}")
    floor = _choose(margins, names, floor_first=True)
    report["in_sample_floor"] = {"point": floor, "margins": margins[floor]}
    rounded = {n: round(v, 3) for n, v in margins[floor].items()}
    print("\nin sample, the best floor:", floor, rounded)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
