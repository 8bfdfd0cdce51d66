"""Evaluation commands: `eval retrieval DATASET` scores every signal and fusion on a BEIR set."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from supportagent.cli.app import app, console, err, guard, settings_of
from supportagent.errors import UserError

if TYPE_CHECKING:
    from supportagent.domain import Document
    from supportagent.retrieval.eval import EvalReport

eval_app = typer.Typer(help="Measure the agent on labelled data.", no_args_is_help=True)
app.add_typer(eval_app, name="eval")


def parse_ks(text: str) -> tuple[int, ...]:
    """``"1,3,5,10"`` as cut-offs; UserError for anything but positive integers."""
    try:
        ks = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise UserError(f"--k takes positive integers separated by commas, got {text!r}") from None
    if not ks or ks[0] < 1:
        raise UserError(f"--k takes positive integers separated by commas, got {text!r}")
    return ks


@eval_app.command("retrieval")
def eval_retrieval(
    ctx: typer.Context,
    dataset: Path = typer.Argument(..., help="A BEIR folder: corpus.jsonl, queries.jsonl, qrels/."),
    k: str = typer.Option("1,3,5,10", "--k", help="Recall cut-offs, comma-separated."),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics as JSON."),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Only a fixed sample of N queries (the whole corpus)."
    ),
    history: Path | None = typer.Option(
        None,
        "--history",
        help="Resolved tickets (with linked_docs) for the history signal; only articles are "
        "ranked, and no query is matched by its own ticket.",
    ),
) -> None:
    """Recall@k, MRR and nDCG@10 for BM25 alone, dense alone and each fusion."""
    from dataclasses import replace

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from supportagent.agent.knowledge import build_embedder
    from supportagent.evals.results import save_result
    from supportagent.evals.retrieval_result import retrieval_result
    from supportagent.evals.sample import sample, sampled_name
    from supportagent.retrieval.eval import evaluate_retrieval, read_beir
    from supportagent.runtime import open_store
    from supportagent.store.embeddings import StoreVectorCache

    settings = settings_of(ctx)

    def run() -> EvalReport:
        ks = parse_ks(k)
        data = read_beir(dataset)
        total = len(data.qrels)
        kept = set(sample(sorted(data.qrels), limit, str))
        data = replace(data, qrels={q: d for q, d in data.qrels.items() if q in kept})
        resolved = read_history(history) if history is not None else ()
        store = open_store(settings)
        try:
            embedder = build_embedder(settings, StoreVectorCache(store))
            columns = (
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
            )
            # Progress goes to stderr, so --json output stays clean.
            with Progress(*columns, console=err, transient=as_json) as progress:
                embed_task = progress.add_task("embedding passages", total=None)
                query_task = progress.add_task("queries", total=len(data.qrels))

                def embedded(done: int, total: int) -> None:
                    progress.update(embed_task, completed=done, total=total)

                def queried(done: int, total: int) -> None:
                    progress.update(query_task, completed=done, total=total)

                report = evaluate_retrieval(
                    data, embedder, ks, history=resolved, on_embedding=embedded, on_query=queried
                )
            name = sampled_name(str(dataset), limit, total)
            save_result(retrieval_result(report, name), settings.home)
            return report
        finally:
            store.close()

    report = guard(run)
    if as_json:
        sys.stdout.write(json.dumps(report.to_json(), indent=2) + "\n")
        return
    print_report(report)


def read_history(path: Path) -> tuple[Document, ...]:
    """Resolved tickets from ``path``; UserError for a missing or unreadable file."""
    from supportagent.ingest import read_resolved

    result = read_resolved(path)
    if result.problems:
        raise UserError(f"{path}: {result.problems[0]}")
    return tuple(result.records)


def print_report(report: EvalReport) -> None:
    from rich.table import Table

    from supportagent.retrieval.eval import DEFAULT_VARIANT

    table = Table(
        title=(
            f"{escape(report.dataset)}: {report.queries} queries, {report.documents} documents "
            f"({report.passages} passages); embedder {report.embedder or 'none'}"
        )
    )
    table.add_column("variant")
    recall_ks = [k for k in report.ks if f"recall@{k}" in next(iter(report.metrics.values()))]
    for cut in recall_ks:
        table.add_column(f"R@{cut}", justify="right")
    table.add_column("MRR", justify="right")
    table.add_column("nDCG@10", justify="right")
    for name, values in report.metrics.items():
        row = [f"{values[f'recall@{cut}']:.3f}" for cut in recall_ks]
        table.add_row(name, *row, f"{values['mrr']:.3f}", f"{values['ndcg@10']:.3f}")
    console.print(table)
    best, best_mrr = report.best_single()
    default = report.metrics.get(DEFAULT_VARIANT)
    if default is not None:
        console.print(
            f"hybrid (default) MRR {default['mrr']:.3f} vs best single signal "
            f"({best}) {best_mrr:.3f}: {default['mrr'] - best_mrr:+.3f}"
        )
    if report.weights:
        weights = " ".join(f"{s}={w:.2f}" for s, w in sorted(report.weights.items()))
        queries = int(report.estimate.get("queries", 0))
        source = f"read from the corpus, {queries} pseudo-queries" if queries else "fixed"
        console.print(f"default weights ({source}): {weights}")
