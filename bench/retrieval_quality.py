"""Retrieval quality on every dataset at hand: each signal alone, each fusion, the default.

Run: .venv/bin/python bench/retrieval_quality.py [--cache FILE.db] [--shared ../shared/eval]
Datasets:
- demo-eval: the paraphrased demo set shipped in the package (BEIR layout);
- demo-inbox: the demo inbox's answerable tickets (subject and body as the query) against the
  demo articles and resolved tickets, relevant = ``expected_docs`` in ``labels.jsonl``;
- stackfaq: ``<shared>/stackfaq`` (BEIR layout), when present;
- ragtruth-qa: built from ``<shared>/ragtruth_qa_dev/claims.jsonl``, when present: each question
  is a query, every distinct passage a document, relevant = the passages given with it.
For each, the table of ``supportagent eval retrieval`` and a line saying whether the default is
within 0.005 MRR of the best single signal. ``--cache`` keeps embeddings between runs.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from supportagent.agent.knowledge import build_embedder
from supportagent.cli.evaluate import print_report
from supportagent.config import Settings
from supportagent.ingest import read_kb, read_resolved
from supportagent.retrieval.eval import (
    DEFAULT_VARIANT,
    BeirDataset,
    evaluate_retrieval,
    read_beir,
)
from supportagent.runtime import demo_path
from supportagent.store.embeddings import StoreVectorCache
from supportagent.store.store import Store


def demo_inbox() -> BeirDataset:
    root = demo_path()
    corpus = (*read_kb(root / "kb").records, *read_resolved(root / "resolved.jsonl").records)
    labels = [json.loads(line) for line in (root / "labels.jsonl").read_text().splitlines()]
    tickets = {}
    for line in (root / "inbox.jsonl").read_text().splitlines():
        row = json.loads(line)
        tickets[row["id"]] = f"{row['subject']}\n{row['body']}"
    qrels = {
        label["id"]: frozenset(label["expected_docs"])
        for label in labels
        if label.get("expected_docs") and label["expected_bucket"] == "answerable"
    }
    return BeirDataset("demo-inbox", corpus, {q: tickets[q] for q in qrels}, qrels)


def ragtruth(claims: Path) -> BeirDataset:
    from supportagent.domain import DocKind, Document

    ids: dict[str, str] = {}
    queries: dict[str, str] = {}
    qrels: dict[str, set[str]] = {}
    for line in claims.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        query_id = "q-" + row["id"].split("-")[2]
        queries[query_id] = row["question"]
        for passage in row["passages"]:
            doc_id = ids.setdefault(passage["text"], f"p{len(ids):04d}")
            qrels.setdefault(query_id, set()).add(doc_id)
    corpus = tuple(Document(doc_id, DocKind.KB, "", text) for text, doc_id in ids.items())
    frozen = {q: frozenset(d) for q, d in qrels.items()}
    return BeirDataset("ragtruth-qa", corpus, queries, frozen)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=Path, help="SQLite file that keeps the embedding cache")
    parser.add_argument("--shared", type=Path, default=Path("../shared/eval"))
    args = parser.parse_args()
    datasets = [read_beir(demo_path() / "eval"), demo_inbox()]
    if (args.shared / "stackfaq").is_dir():
        datasets.append(read_beir(args.shared / "stackfaq"))
    claims = args.shared / "ragtruth_qa_dev" / "claims.jsonl"
    if claims.is_file():
        datasets.append(ragtruth(claims))
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{args.cache or Path(tmp) / 'quality.db'}")
        store.migrate()
        embedder = build_embedder(Settings(_env_file=None), StoreVectorCache(store))
        for dataset in datasets:
            report = evaluate_retrieval(dataset, embedder)
            print_report(report)
            best, best_mrr = report.best_single()
            default = report.metrics[DEFAULT_VARIANT]["mrr"]
            verdict = "ok" if default >= best_mrr - 0.005 else "BELOW the best single signal"
            print(
                f"{dataset.name}: default {default:.3f}, best single signal {best} "
                f"{best_mrr:.3f}: {verdict}\n"
            )
        store.close()


if __name__ == "__main__":
    main()
