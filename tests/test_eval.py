"""Retrieval evaluation: the BEIR reader, the runner over every variant, and the CLI command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from embedding_fakes import HashingEmbedder
from supportagent.cli import app
from supportagent.cli.evaluate import parse_ks
from supportagent.errors import UserError
from supportagent.ingest import read_kb
from supportagent.retrieval.eval import (
    DEFAULT_VARIANT,
    SINGLE_SIGNALS,
    VARIANTS,
    DatasetError,
    evaluate_retrieval,
    read_beir,
)
from supportagent.runtime import demo_path

CORPUS = [
    {"_id": "d-rate", "title": "Rate limits", "text": "Wait for Retry-After after HTTP 429."},
    {"_id": "d-pass", "title": "Passwords", "text": "Use the forgot password link to reset."},
    {"_id": "d-bill", "title": "Invoices", "text": "Invoices are emailed on the first day."},
]
QUERIES = {"q1": "got 429, how long to wait", "q2": "reset my password", "q3": "invoice email"}
QRELS = [("q1", "d-rate", 1), ("q2", "d-pass", 1), ("q3", "d-bill", 1), ("q3", "d-rate", 0)]


def write_dataset(folder: Path, qrels: list[tuple[str, str, int]] = QRELS) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in CORPUS), encoding="utf-8"
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERIES.items()),
        encoding="utf-8",
    )
    lines = ["query-id\tcorpus-id\tscore", *(f"{q}\t{d}\t{s}" for q, d, s in qrels)]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def test_read_beir(tmp_path: Path) -> None:
    data = read_beir(write_dataset(tmp_path / "tiny"))
    assert data.name == "tiny"
    assert [d.id for d in data.corpus] == ["d-rate", "d-pass", "d-bill"]
    assert data.corpus[0].title == "Rate limits"
    assert data.queries["q2"] == "reset my password"
    assert data.qrels == {
        "q1": frozenset({"d-rate"}),
        "q2": frozenset({"d-pass"}),
        "q3": frozenset({"d-bill"}),  # score 0 is not relevant
    }


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: (d / "corpus.jsonl").unlink(), "corpus.jsonl: missing"),
        (lambda d: (d / "qrels" / "test.tsv").unlink(), "test.tsv: missing"),
        (lambda d: (d / "queries.jsonl").write_text('{"_id": "q1"}\n'), "queries.jsonl:1: needs"),
        (
            lambda d: (d / "corpus.jsonl").write_text('{"_id": "a", "text": "x"}\n{oops\n'),
            "corpus.jsonl:2: not JSON",
        ),
        (
            lambda d: (d / "qrels" / "test.tsv").write_text("q1\tnowhere\t1\n"),
            "not in the corpus: nowhere",
        ),
        (lambda d: (d / "qrels" / "test.tsv").write_text("q1\td-rate\n"), "test.tsv:1: expected"),
        (lambda d: (d / "qrels" / "test.tsv").write_text("q1\td-rate\tx\n"), "is not a number"),
        (lambda d: (d / "qrels" / "test.tsv").write_text("q1\td-rate\t0\n"), "no relevant"),
        (
            lambda d: (d / "qrels" / "test.tsv").write_text("q9\td-rate\t1\n"),
            "not in queries.jsonl: q9",
        ),
    ],
)
def test_read_beir_names_what_is_wrong(tmp_path: Path, damage: object, message: str) -> None:
    folder = write_dataset(tmp_path / "bad")
    damage(folder)  # type: ignore[operator]
    with pytest.raises(DatasetError, match=message):
        read_beir(folder)
    with pytest.raises(DatasetError, match="not a folder"):
        read_beir(tmp_path / "absent")
    assert issubclass(DatasetError, UserError)


def test_runner_scores_every_variant(tmp_path: Path) -> None:
    data = read_beir(write_dataset(tmp_path / "tiny"))
    seen: list[tuple[int, int]] = []
    report = evaluate_retrieval(
        data, HashingEmbedder(), (1, 3), on_query=lambda d, t: seen.append((d, t))
    )
    assert list(report.metrics) == [*VARIANTS, DEFAULT_VARIANT]
    assert report.ks == (1, 3, 10) and report.queries == 3 and report.documents == 3
    assert seen[-1] == (3, 3)
    # Every query shares a word with its one relevant document, and no other: BM25 is perfect.
    assert report.metrics["bm25-body"] == {
        "recall@1": 1.0,
        "recall@3": 1.0,
        "recall@10": 1.0,
        "ndcg@1": 1.0,
        "ndcg@3": 1.0,
        "ndcg@10": 1.0,
        "mrr": 1.0,
    }
    assert report.best_single()[0] in SINGLE_SIGNALS
    assert report.to_json()["variants"]["dense"] == report.metrics["dense"]


def test_without_an_embedder_only_lexical_variants_run(tmp_path: Path) -> None:
    report = evaluate_retrieval(read_beir(write_dataset(tmp_path / "tiny")), None)
    assert list(report.metrics) == ["bm25-body", "bm25-title", "rrf body+title", "hybrid (default)"]
    assert report.embedder is None


def test_the_shipped_demo_eval_set_is_a_complete_beir_dataset() -> None:
    folder = demo_path() / "eval"
    data = read_beir(folder)
    assert len(data.queries) >= 40 and set(data.qrels) <= set(data.queries)
    # corpus.jsonl is the demo KB as it stands (bench/demo_eval_corpus.py writes it).
    articles = {d.id: d for d in read_kb(demo_path() / "kb").records}
    assert {d.id: (d.title, d.body) for d in data.corpus} == {
        doc_id: (doc.title, doc.body) for doc_id, doc in articles.items()
    }


def test_eval_command_on_the_demo_set(tmp_path: Path) -> None:
    runner = CliRunner()
    home = str(tmp_path / "home")
    dataset = str(demo_path() / "eval")
    result = runner.invoke(app, ["--home", home, "eval", "retrieval", dataset, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["queries"] == 50 and report["embedder"] == "all-MiniLM-L6-v2-onnx-int8"
    variants = report["variants"]
    hybrid, best = variants["hybrid (default)"], max(variants[s]["mrr"] for s in SINGLE_SIGNALS)
    # The default fusion is never worse than its best single signal (docs/retrieval.md).
    assert hybrid["mrr"] >= best - 0.01
    assert hybrid["recall@10"] >= variants["bm25-body"]["recall@10"]
    table = runner.invoke(app, ["--home", home, "eval", "retrieval", dataset, "--k", "1,5"])
    assert table.exit_code == 0 and "R@5" in table.output and "hybrid (default)" in table.output
    assert "R@3" not in table.output


def test_eval_command_errors_are_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["eval", "retrieval", str(tmp_path / "nope")])
    assert missing.exit_code == 1 and "nope: not a folder" in " ".join(missing.output.split())
    assert "Traceback" not in missing.output
    bad_k = runner.invoke(app, ["eval", "retrieval", str(tmp_path), "--k", "0,x"])
    assert bad_k.exit_code == 1 and "--k takes positive integers" in bad_k.output
    assert parse_ks("10, 1,3,3") == (1, 3, 10)
    with pytest.raises(UserError):
        parse_ks("0")


def test_eval_command_with_history_ranks_articles_and_reports_the_weights(
    tmp_path: Path,
) -> None:
    runner = CliRunner()
    home = str(tmp_path / "home")
    dataset = str(demo_path() / "eval")
    history = str(demo_path() / "resolved.jsonl")
    args = ["--home", home, "eval", "retrieval", dataset, "--json", "--history", history]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["documents"] == 47  # the articles; the resolved tickets are history only
    assert report["default_weights"]["history"] > 0
    assert "hybrid without history" in report["variants"]
    missing = runner.invoke(
        app,
        ["--home", home, "eval", "retrieval", dataset, "--history", str(tmp_path / "none.jsonl")],
    )
    assert missing.exit_code == 1 and "Traceback" not in missing.output
    assert "none.jsonl" in " ".join(missing.output.split())
