"""Leave-one-dataset-out check of the fusion that reads the corpus (``retrieval/adaptive.py``).

Run: .venv/bin/python bench/fusion_loo.py --cache FILE.db [--shared ../shared/eval]
       [--data /work/evaldata] [--json OUT.json]

Each dataset is indexed once; the corpus estimate is taken at build (no labels). The method's
one free parameter, ``SHRINK`` (how far the weights move from the fixed ones towards the
pseudo-query optimum), is chosen for each held-out dataset on the *other* datasets (highest
mean MRR gap to their best single signal), and the held-out dataset is reported at that value.
Datasets: StackFAQ, the demo eval set, Brightwrench (all 60 queries), and every BEIR folder under
``--data`` (fetched public sets, each with a SOURCE.md).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from supportagent.agent.knowledge import build_embedder
from supportagent.config import Settings
from supportagent.retrieval.eval import (
    DEFAULT_VARIANT,
    FIXED_VARIANT,
    SINGLE_SIGNALS,
    evaluate_retrieval,
    read_beir,
)
from supportagent.retrieval.fusion import Fusion
from supportagent.retrieval.retriever import HybridRetriever
from supportagent.runtime import demo_path
from supportagent.store.embeddings import StoreVectorCache
from supportagent.store.store import Store

SHRINKS = (0.0, 0.25, 0.5, 0.75, 1.0)


def shrink_variants(retriever: HybridRetriever) -> dict[str, Fusion]:
    return {
        f"shrink={s:g}": Fusion("weighted", retriever.corpus_estimate.weights(s)) for s in SHRINKS
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--shared", type=Path, default=Path("../shared/eval"))
    parser.add_argument("--data", type=Path, default=Path("/work/evaldata"))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    folders = [
        args.shared / "stackfaq",
        demo_path() / "eval",
        root / "eval" / "brightwrench" / "retrieval",
        *sorted(p for p in args.data.iterdir() if (p / "corpus.jsonl").is_file()),
    ]
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{args.cache or Path(tmp) / 'loo.db'}")
        store.migrate()
        embedder = build_embedder(Settings(_env_file=None), StoreVectorCache(store))
        for folder in folders:
            dataset = read_beir(folder)
            name = {"eval": "demo-eval", "retrieval": "brightwrench"}.get(folder.name, folder.name)
            started = time.perf_counter()
            report = evaluate_retrieval(dataset, embedder, extra_variants=shrink_variants)
            mrr = {v: m["mrr"] for v, m in report.metrics.items()}
            results[name] = {
                "mrr": mrr,
                "r3": {v: m["recall@3"] for v, m in report.metrics.items()},
                "estimate": dict(report.estimate),
                "weights": dict(report.weights),
                "seconds": time.perf_counter() - started,
            }
            print(name, json.dumps(results[name]["estimate"]), flush=True)
        store.close()
    print()
    print(f"{'held out':16} {'best single':>18} {'fixed':>7} {'rrf':>7} ", end="")
    print(f"{'shrink':>6} {'adapt':>7} {'gap':>7}")
    summary = {}
    for held in results:

        def gap(name: str, s: float) -> float:
            mrr = results[name]["mrr"]
            assert isinstance(mrr, dict)
            return mrr[f"shrink={s:g}"] - max(mrr[x] for x in SINGLE_SIGNALS if x in mrr)

        others = [n for n in results if n != held]
        chosen = max(SHRINKS, key=lambda s: (sum(gap(n, s) for n in others), -abs(s - 0.5)))
        mrr = results[held]["mrr"]
        assert isinstance(mrr, dict)
        best = max((x for x in SINGLE_SIGNALS if x in mrr), key=lambda x: mrr[x])
        adapt = mrr[f"shrink={chosen:g}"]
        summary[held] = {"chosen_shrink": chosen, "best_single": best, "adaptive": adapt}
        print(
            f"{held:16} {best:>10} {mrr[best]:.3f} {mrr[FIXED_VARIANT]:7.3f} "
            f"{mrr['rrf body+title+dense']:7.3f} {chosen:6.2f} {adapt:7.3f} "
            f"{adapt - mrr[best]:+7.3f}"
            f"   (default as built {mrr[DEFAULT_VARIANT]:.3f})"
        )
    if args.json:
        args.json.write_text(json.dumps({"datasets": results, "loo": summary}, indent=1))


if __name__ == "__main__":
    main()
