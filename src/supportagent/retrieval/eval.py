"""Retrieval evaluation: read a BEIR-layout dataset and score each signal and fusion on it.

A dataset folder holds ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl``
(``_id``, ``text``) and ``qrels/test.tsv`` (``query-id``, ``corpus-id``, ``score`` with a
header row; a score above 0 means relevant). Every corpus entry becomes a knowledge-base
document, split into passages like any article; a ranking of passages counts for the
documents they belong to (the metrics drop repeats).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from supportagent.domain import DocKind, Document
from supportagent.errors import UserError
from supportagent.lines import physical_lines
from supportagent.retrieval.dense import Embedder, Progress
from supportagent.retrieval.fusion import Fusion
from supportagent.retrieval.metrics import DEFAULT_KS, evaluate
from supportagent.retrieval.retriever import SIGNALS, HybridRetriever

#: Passages asked for per query: enough distinct documents for any cut-off we report.
SEARCH_DEPTH = 100

DEFAULT_VARIANT = "hybrid (default)"
#: Every way of searching the eval command compares; single signals first.
VARIANTS: Mapping[str, Fusion] = {
    "bm25-body": Fusion("weighted", {"body": 1.0}),
    "bm25-title": Fusion("weighted", {"title": 1.0}),
    "dense": Fusion("weighted", {"dense": 1.0}),
    "rrf body+title": Fusion("rrf", {"body": 1.0, "title": 1.0}),
    "rrf body+dense": Fusion("rrf", {"body": 1.0, "dense": 1.0}),
    "rrf body+title+dense": Fusion("rrf", {"body": 1.0, "title": 1.0, "dense": 1.0}),
    DEFAULT_VARIANT: Fusion(),
}
SINGLE_SIGNALS = ("bm25-body", "bm25-title", "dense")


class DatasetError(UserError):
    """A dataset that cannot be read; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class BeirDataset:
    name: str
    corpus: tuple[Document, ...]
    queries: Mapping[str, str]
    qrels: Mapping[str, frozenset[str]]


def _jsonl(path: Path, fields: Sequence[str]) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        lines = physical_lines(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DatasetError(f"{path}: missing (a BEIR dataset has {path.name} here)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read ({exc})") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict) or any(not isinstance(row.get(f), str) for f in fields):
            raise DatasetError(f"{path}:{number}: needs string fields {', '.join(fields)}")
        yield number, row


def read_beir(folder: Path, split: str = "test") -> BeirDataset:
    """Read a BEIR dataset; DatasetError (a UserError) says exactly what is wrong."""
    if not folder.is_dir():
        raise DatasetError(f"{folder}: not a folder (expected corpus.jsonl, queries.jsonl, qrels/)")
    corpus: dict[str, Document] = {}
    for number, row in _jsonl(folder / "corpus.jsonl", ("_id", "text")):
        doc_id = row["_id"]
        if doc_id in corpus:
            raise DatasetError(f"{folder / 'corpus.jsonl'}:{number}: duplicate _id {doc_id!r}")
        title = row.get("title") if isinstance(row.get("title"), str) else ""
        corpus[doc_id] = Document(doc_id, DocKind.KB, str(title), row["text"], source="beir")
    queries = {
        row["_id"]: row["text"] for _, row in _jsonl(folder / "queries.jsonl", ("_id", "text"))
    }
    qrels = _read_qrels(folder / "qrels" / f"{split}.tsv")
    unknown = sorted({d for docs in qrels.values() for d in docs} - set(corpus))
    if unknown:
        raise DatasetError(f"qrels name documents not in the corpus: {', '.join(unknown[:5])}")
    missing = sorted(set(qrels) - set(queries))
    if missing:
        raise DatasetError(f"qrels name queries not in queries.jsonl: {', '.join(missing[:5])}")
    if not qrels:
        raise DatasetError(f"{folder / 'qrels'}: no relevant (query, document) pair")
    frozen = {q: frozenset(docs) for q, docs in qrels.items()}
    return BeirDataset(folder.name, tuple(corpus.values()), queries, frozen)


def _read_qrels(path: Path) -> dict[str, set[str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(
            f"{path}: missing (qrels/test.tsv: query-id, corpus-id, score)"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{path}: cannot read ({exc})") from None
    qrels: dict[str, set[str]] = {}
    rows = csv.reader(physical_lines(text), delimiter="\t")
    for number, row in enumerate(rows, start=1):
        if number == 1 and row[:1] == ["query-id"]:
            continue
        if not row or not "".join(row).strip():
            continue
        if len(row) < 3:
            raise DatasetError(f"{path}:{number}: expected query-id, corpus-id and score")
        try:
            score = float(row[2])
        except ValueError:
            raise DatasetError(f"{path}:{number}: score {row[2]!r} is not a number") from None
        if score > 0:
            qrels.setdefault(row[0], set()).add(row[1])
    return qrels


@dataclass(frozen=True, slots=True)
class EvalReport:
    dataset: str
    documents: int
    passages: int
    queries: int
    embedder: str | None
    ks: tuple[int, ...]
    metrics: Mapping[str, Mapping[str, float]]

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "documents": self.documents,
            "passages": self.passages,
            "queries": self.queries,
            "embedder": self.embedder,
            "ks": list(self.ks),
            "variants": {name: dict(values) for name, values in self.metrics.items()},
        }

    def best_single(self, metric: str = "mrr") -> tuple[str, float]:
        """The single signal that scores best on ``metric``."""
        singles = [
            (name, self.metrics[name][metric]) for name in SINGLE_SIGNALS if name in self.metrics
        ]
        return max(singles, key=lambda pair: pair[1])


def evaluate_retrieval(
    dataset: BeirDataset,
    embedder: Embedder | None,
    ks: Sequence[int] = DEFAULT_KS,
    *,
    variants: Mapping[str, Fusion] = VARIANTS,
    on_embedding: Progress | None = None,
    on_query: Callable[[int, int], None] | None = None,
) -> EvalReport:
    """Index the corpus once, run every query under every variant, and score the runs."""
    cutoffs = tuple(sorted({*ks, 10}))
    retriever = HybridRetriever(dataset.corpus, embedder=embedder, progress=on_embedding)
    # A variant runs only when every signal it names is available (dense needs an embedder);
    # the default runs with whatever it has, as it does in the agent.
    usable = {
        name: fusion
        for name, fusion in variants.items()
        if set(retriever.signals(fusion)) == {s for s in SIGNALS if fusion.weight(s) > 0}
        or (name == DEFAULT_VARIANT and retriever.signals(fusion))
    }
    runs: dict[str, dict[str, list[str]]] = {name: {} for name in usable}
    wanted = sorted(dataset.qrels)
    for done, query_id in enumerate(wanted, start=1):
        text = dataset.queries[query_id]
        for name, fusion in usable.items():
            hits = retriever.search(text, k=SEARCH_DEPTH, fusion=fusion)
            runs[name][query_id] = [hit.passage.doc_id for hit in hits]
        if on_query:
            on_query(done, len(wanted))
    metrics = {name: evaluate(run, dataset.qrels, cutoffs) for name, run in runs.items()}
    return EvalReport(
        dataset.name,
        len(dataset.corpus),
        len(retriever),
        len(wanted),
        embedder.model_id if embedder else None,
        cutoffs,
        metrics,
    )
