"""Leave-one-dataset-out check of the fusion that reads the corpus (``retrieval/adaptive.py``).

Run: .venv/bin/python bench/fusion_loo.py --cache FILE.db [--shared ../shared/eval]
       [--data /work/evaldata] [--json OUT.json]

Each dataset is indexed once and its corpus estimate taken at build, without labels. Each
query's normalised signal scores are kept, so any weighting is scored in a vector operation
(document level, ties counted against the relevant document). The method's free parameter,
``SHRINK`` (how far the weights move from the fixed ones towards the pseudo-query optimum), is
chosen for each held-out dataset on the *other* datasets (highest mean MRR margin over their
best single signal) and the held-out dataset is reported at that value. The last table is the
real ``eval retrieval`` run of every dataset (the shipped default, fixed weights, RRF). Also
scored leave-one-out: ``Fusion.lexical_trust``, a pseudo-query gap-to-ratio mapping, and a
dense weight lowered by the held-out set's gap ratio (BM25's mean top-document gap over
dense's), read from the evaluated queries or from the index-time cloze pseudo-queries
(measured only, not shipped).
Datasets: StackFAQ, the demo eval set, Brightwrench (all 60 queries) and every BEIR folder
under ``--data`` (fetched public sets, each with a SOURCE.md).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from supportagent.agent.knowledge import build_embedder
from supportagent.config import Settings
from supportagent.retrieval.adaptive import (
    CorpusEstimate,
    CorpusView,
    _normalized_scores,
    estimate,
    pseudo_queries,
)
from supportagent.retrieval.eval import (
    DEFAULT_VARIANT,
    FIXED_VARIANT,
    SINGLE_SIGNALS,
    BeirDataset,
    evaluate_retrieval,
    read_beir,
)
from supportagent.retrieval.fusion import DEFAULT_LEXICAL_TRUST, DEFAULT_WEIGHTS, Fusion
from supportagent.retrieval.retriever import HybridRetriever
from supportagent.retrieval.text import tokenize
from supportagent.runtime import demo_path
from supportagent.store.embeddings import StoreVectorCache
from supportagent.store.store import Store

SHRINKS = (0.0, 0.25, 0.5, 0.75, 1.0)
SIGNALS = ("body", "title", "dense")


class Scored:
    """Every query's normalised per-signal passage scores, and the documents' layout."""

    def __init__(self, dataset: BeirDataset, retriever: HybridRetriever) -> None:
        snapshot = retriever._snapshot
        doc_ids = [p.doc_id for p in snapshot.passages]
        self.starts = np.flatnonzero(np.r_[True, np.array(doc_ids[1:]) != np.array(doc_ids[:-1])])
        self.docs = [doc_ids[i] for i in self.starts]
        self.queries = sorted(dataset.qrels)
        self.relevant = [
            np.array([d in dataset.qrels[q] for d in self.docs], dtype=bool) for q in self.queries
        ]
        self.arrays: list[dict[str, np.ndarray]] = []
        for query_id in self.queries:
            text = dataset.queries[query_id]
            tokens = tokenize(text)
            found = retriever._score(snapshot, text, tokens, SIGNALS)
            raw = {signal: scores.full() for signal, scores in found.items()}
            scales = retriever.scales(text, Fusion())  # plain divisors, no lexical trust
            out = {}
            for signal, scores in raw.items():
                if signal == "dense":
                    out[signal] = np.clip(scores, 0.0, None).astype(np.float64)
                else:
                    scale = scales[signal]
                    out[signal] = scores / scale if scale > 0 else np.zeros(len(scores))
            self.arrays.append(out)
        self.gap_ratio = _mean_gap(self.arrays, self.starts, "body") / max(
            _mean_gap(self.arrays, self.starts, "dense"), 1e-9
        )

    def mrr(self, weights: Mapping[str, float], trust: float = 0.0) -> float:
        """MRR of a weighting; ``trust`` is ``Fusion.lexical_trust`` (per-query body factor)."""
        total = 0.0
        for arrays, relevant in zip(self.arrays, self.relevant, strict=True):
            w = dict(weights)
            if trust and "body" in w:
                w["body"] *= 1.0 + trust * float(arrays["body"].max())
            fused = sum(v * arrays[s] for s, v in w.items() if v and s in arrays)
            best = np.maximum.reduceat(np.asarray(fused, dtype=np.float64), self.starts)
            hit = best[relevant].max()
            if hit > 0:
                total += 1.0 / (1 + int((best[~relevant] >= hit).sum()))
        return total / len(self.arrays)


def _mean_gap(arrays: list[dict[str, np.ndarray]], starts: np.ndarray, signal: str) -> float:
    """Mean over queries of (top document score - second) / top for one signal: how sharply
    the signal singles out one document. Label-free, but read from the queries themselves."""
    gaps = []
    for out in arrays:
        doc = np.sort(np.maximum.reduceat(out[signal], starts))
        top, second = doc[-1], (doc[-2] if len(doc) > 1 else 0.0)
        gaps.append((top - second) / top if top > 0 else 0.0)
    return float(np.mean(gaps))


def _cloze_gap_ratio(view: CorpusView) -> float:
    """The same gap ratio on the index-time pseudo-queries (no evaluated query needed)."""
    queries = pseudo_queries(view)
    normalized = _normalized_scores(view, queries)
    starts = np.flatnonzero(np.r_[True, view.doc_of[1:] != view.doc_of[:-1]])
    arrays = [{s: normalized[s][n] for s in ("body", "dense")} for n in range(len(queries))]
    return _mean_gap(arrays, starts, "body") / max(_mean_gap(arrays, starts, "dense"), 1e-9)


def loo_folders(shared: Path, data: Path) -> dict[str, Path]:
    """The retrieval sets of the leave-one-dataset-out runs, by name: StackFAQ, the demo's eval
    set, Brightwrench's, and every BEIR folder under ``data`` (the fetched public sets)."""
    root = Path(__file__).resolve().parents[1]
    folders = {
        "stackfaq": shared / "stackfaq",
        "demo-eval": demo_path() / "eval",
        "brightwrench": root / "eval" / "brightwrench" / "retrieval",
    }
    for path in sorted(data.iterdir()):
        if (path / "corpus.jsonl").is_file():
            folders[path.name] = path
    return folders


def loo_arguments() -> argparse.ArgumentParser:
    """The options every leave-one-dataset-out script takes: where the vectors are cached, the
    two folders ``loo_folders`` reads, and where the JSON report goes."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--shared", type=Path, default=Path("../shared/eval"))
    parser.add_argument("--data", type=Path, default=Path("/work/evaldata"))
    parser.add_argument("--json", type=Path)
    return parser


def main() -> None:
    parser = loo_arguments()
    parser.add_argument("--no-final", action="store_true", help="skip the eval retrieval runs")
    args = parser.parse_args()
    folders = loo_folders(args.shared, args.data)
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{args.cache or Path(tmp) / 'loo.db'}")
        store.migrate()
        embedder = build_embedder(Settings(_env_file=None), StoreVectorCache(store))
        scored: dict[str, Scored] = {}
        estimates: dict[str, CorpusEstimate] = {}
        cloze_ratio: dict[str, float] = {}
        for name, folder in folders.items():
            dataset = read_beir(folder)
            retriever = HybridRetriever(dataset.corpus, embedder=embedder)
            scored[name] = Scored(dataset, retriever)
            view = retriever._corpus_view(retriever._snapshot)
            estimates[name] = estimate(view)
            cloze_ratio[name] = _cloze_gap_ratio(view)
            print(name, json.dumps(estimates[name].to_dict()), flush=True)

        def margin(name: str, shrink: float) -> float:
            s = scored[name]
            best = max(s.mrr({sig: 1.0}) for sig in SIGNALS)
            return s.mrr(estimates[name].weights(shrink)) - best

        print(f"\n{'held out':14} best single     fixed  shrink  adaptive  margin", flush=True)
        loo = {}
        for held in scored:
            others = [n for n in scored if n != held]
            chosen = max(SHRINKS, key=lambda x: (np.mean([margin(n, x) for n in others]), -x))
            s = scored[held]
            singles = {sig: s.mrr({sig: 1.0}) for sig in SIGNALS}
            best = max(singles, key=lambda k: singles[k])
            adaptive = s.mrr(estimates[held].weights(chosen))
            fixed = s.mrr(DEFAULT_WEIGHTS)
            loo[held] = {"shrink": chosen, "adaptive": adaptive, "fixed": fixed, **singles}
            print(
                f"{held:14} {best:6} {singles[best]:.3f}  {fixed:.3f}  {chosen:6.2f}  "
                f"{adaptive:.3f}    {adaptive - singles[best]:+.3f}",
                flush=True,
            )
        # The alternative: map the pseudo-query MRR gap (body - dense) to the body/dense ratio,
        # log2(ratio / fixed ratio) = a + b * gap, with (a, b) chosen leave-one-out too.
        grid = [(x, y) for x in (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0) for y in (0.0, 4.0, 8.0, 16.0)]

        def calibrated(name: str, ab: tuple[float, float]) -> dict[str, float]:
            mrr = estimates[name].signal_mrr
            f = ab[0] + ab[1] * (mrr.get("body", 0.0) - mrr.get("dense", 0.0))
            return {"body": 2 ** (f / 2), "title": 0.5, "dense": 3 * 2 ** (-f / 2)}

        def cal_margin(name: str, ab: tuple[float, float]) -> float:
            s = scored[name]
            best = max(s.mrr({sig: 1.0}) for sig in SIGNALS)
            return s.mrr(calibrated(name, ab)) - best

        print("\ncalibrated gap -> ratio, leave-one-out:")
        for held in scored:
            others = [n for n in scored if n != held]
            ab = max(
                grid,
                key=lambda g: (np.mean([cal_margin(n, g) for n in others]), -abs(g[0]) - g[1]),
            )
            print(f"{held:14} a={ab[0]:+.1f} b={ab[1]:4.1f} margin {cal_margin(held, ab):+.3f}")
        # Per query: Fusion.lexical_trust on the fixed weights, chosen leave-one-out.
        trusts = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)

        def trust_margin(name: str, trust: float) -> float:
            s = scored[name]
            best = max(s.mrr({sig: 1.0}) for sig in SIGNALS)
            return s.mrr(DEFAULT_WEIGHTS, trust) - best

        print("\nlexical trust on the fixed weights, leave-one-out:")
        for held in scored:
            others = [n for n in scored if n != held]
            chosen_trust = max(
                trusts, key=lambda t: (np.mean([trust_margin(n, t) for n in others]), -t)
            )
            print(
                f"{held:14} trust={chosen_trust:g} margin {trust_margin(held, chosen_trust):+.3f}"
            )
        all_trust = {
            t: round(float(np.mean([trust_margin(n, t) for n in scored])), 4) for t in trusts
        }
        print("mean margin over all datasets by trust:", all_trust)
        # Per corpus from sharpness: where BM25 singles out one document more sharply than
        # dense does (a mean gap ratio above r0), dense = 3 * 2 ** (-a * max(0, ratio - r0)),
        # with lexical trust 2. The ratio is read either from the evaluated queries themselves
        # or, at index time, from the cloze pseudo-queries of ``adaptive.py``.
        ratio_grid = [
            (r0, a) for r0 in (1.0, 1.1, 1.2, 1.3, 1.4, 1.5) for a in (0.0, 1.0, 2.0, 3.0, 4.0, 6.0)
        ]

        def ratio_margin(name: str, ratio: float, point: tuple[float, float]) -> float:
            s = scored[name]
            dense = DEFAULT_WEIGHTS["dense"] * 2 ** (-point[1] * max(0.0, ratio - point[0]))
            best = max(s.mrr({sig: 1.0}) for sig in SIGNALS)
            return s.mrr({**DEFAULT_WEIGHTS, "dense": dense}, DEFAULT_LEXICAL_TRUST) - best

        for source, ratios in (
            ("query", {n: s.gap_ratio for n, s in scored.items()}),
            ("cloze", cloze_ratio),
        ):
            print(f"\n{source} gap ratio (body/dense) -> dense weight, leave-one-out:")
            for held in scored:
                others = [n for n in scored if n != held]
                point = max(
                    ratio_grid,
                    key=lambda g: (
                        np.mean([ratio_margin(n, ratios[n], g) for n in others]),
                        -g[1],
                        g[0],
                    ),
                )
                print(
                    f"{held:14} ratio {ratios[held]:.2f} r0={point[0]:g} a={point[1]:g} "
                    f"margin {ratio_margin(held, ratios[held], point):+.3f}"
                )
        every = {x: np.mean([margin(n, x) for n in scored]) for x in SHRINKS}
        print(
            "mean margin over all datasets by shrink:", {k: round(v, 4) for k, v in every.items()}
        )
        results["loo"] = loo
        results["estimates"] = {n: e.to_dict() for n, e in estimates.items()}
        if not args.no_final:
            print("\neval retrieval (the shipped default), MRR / R@3:")
            final = {}
            for name, folder in folders.items():
                report = evaluate_retrieval(read_beir(folder), embedder)
                m = report.metrics
                final[name] = {
                    v: {"mrr": x["mrr"], "recall@3": x["recall@3"]} for v, x in m.items()
                }
                best, best_mrr = report.best_single()
                cells = [
                    f"{v} {m[v]['mrr']:.3f}/{m[v]['recall@3']:.3f}"
                    for v in (*SINGLE_SIGNALS, "rrf body+title+dense", FIXED_VARIANT)
                    if v in m
                ]
                default = m[DEFAULT_VARIANT]
                print(
                    f"{name}: {'; '.join(cells)}; DEFAULT {default['mrr']:.3f}/"
                    f"{default['recall@3']:.3f} ({default['mrr'] - best_mrr:+.3f} vs {best}); "
                    f"weights {json.dumps({k: round(v, 3) for k, v in report.weights.items()})}",
                    flush=True,
                )
            results["final"] = final
        store.close()
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
