"""The history signal (resolved tickets' questions as evidence of customer wording), measured.

Run: .venv/bin/python bench/history_paraphrase.py [--cache FILE.db]

- Brightwrench (``eval/brightwrench``): its 20 resolved tickets are the history; the history
  weight is chosen on the ``tune`` half of ``retrieval/splits.tsv`` only, and both halves are
  reported at that weight.
- The demo eval set (``demo/eval``) with the demo's 26 resolved tickets as history, at the weight
  chosen on Brightwrench's tune half.
No query is matched by its own ticket (``evaluate_retrieval`` excludes any resolved ticket
whose question has the query's words). Recall@3 and MRR per weight are printed.
"""

from __future__ import annotations

import argparse
import csv
import tempfile
from pathlib import Path

from supportagent.agent.knowledge import build_embedder
from supportagent.config import Settings
from supportagent.ingest import read_resolved
from supportagent.retrieval.eval import BeirDataset, evaluate_retrieval, read_beir
from supportagent.retrieval.fusion import Fusion
from supportagent.retrieval.retriever import HybridRetriever
from supportagent.runtime import demo_path
from supportagent.store.embeddings import StoreVectorCache
from supportagent.store.store import Store

HISTORY_WEIGHTS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)


def with_history(retriever: HybridRetriever) -> dict[str, Fusion]:
    base = {s: w for s, w in retriever.fusion.signal_weights.items() if s != "history"}
    trust = retriever.fusion.lexical_trust
    return {
        f"history={w:g}": Fusion("weighted", {**base, "history": w}, lexical_trust=trust)
        for w in HISTORY_WEIGHTS
    }


def half(dataset: BeirDataset, split: str, splits: dict[str, str]) -> BeirDataset:
    qrels = {q: d for q, d in dataset.qrels.items() if splits.get(q) == split}
    return BeirDataset(f"{dataset.name}-{split}", dataset.corpus, dataset.queries, qrels)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=Path)
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1] / "eval" / "brightwrench"
    bright = read_beir(root / "retrieval")
    with (root / "retrieval" / "splits.tsv").open() as f:
        splits = {row["query-id"]: row["split"] for row in csv.DictReader(f, delimiter="\t")}
    bright_history = tuple(read_resolved(root / "resolved.jsonl").records)
    demo = read_beir(demo_path() / "eval")
    demo_history = tuple(read_resolved(demo_path() / "resolved.jsonl").records)
    runs = [
        (half(bright, "tune", splits), bright_history),
        (half(bright, "test", splits), bright_history),
        (demo, demo_history),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{args.cache or Path(tmp) / 'history.db'}")
        store.migrate()
        embedder = build_embedder(Settings(_env_file=None), StoreVectorCache(store))
        table = {}
        for dataset, history in runs:
            report = evaluate_retrieval(
                dataset, embedder, (1, 3, 5), history=history, extra_variants=with_history
            )
            table[dataset.name] = report.metrics
            print(f"{dataset.name}: {report.queries} queries; default weights {report.weights}")
            for name, m in report.metrics.items():
                print(f"  {name:26} R@3 {m['recall@3']:.3f}  MRR {m['mrr']:.3f}")
        store.close()
    tune = table["retrieval-tune"]
    chosen = max(HISTORY_WEIGHTS, key=lambda w: (tune[f"history={w:g}"]["mrr"], -w))
    print(f"\nhistory weight chosen on the Brightwrench tune half: {chosen:g}")
    for name, metrics in table.items():
        m, off = metrics[f"history={chosen:g}"], metrics["history=0"]
        print(
            f"{name:16} without history R@3 {off['recall@3']:.3f} MRR {off['mrr']:.3f}; "
            f"with R@3 {m['recall@3']:.3f} MRR {m['mrr']:.3f}"
        )


if __name__ == "__main__":
    main()
