"""`make eval`'s plan (which evals run on which sets, what is skipped) and `--limit` sampling."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from supportagent.cli import app
from supportagent.evals.catalog import Dataset
from supportagent.evals.sample import sample, sampled_name
from supportagent.evals.suite import EXPECTED_SETS, plan, shown

COMMANDS = ("retrieval", "triage", "checker", "run", "report", "compare")


def test_the_plan_runs_each_found_set_and_names_what_it_skips(tmp_path: Path) -> None:
    corpus = tmp_path / "eval" / "acme"
    corpus.mkdir(parents=True)
    (corpus / "resolved.jsonl").write_text("", "utf-8")
    shared = tmp_path / "shared" / "eval"
    datasets = [
        Dataset("acme", "corpus", corpus, ours=True),
        Dataset("acme", "triage", corpus / "tickets.jsonl", ours=True),
        Dataset("bitext_triage", "triage", shared / "bitext_triage" / "tickets.jsonl"),
        Dataset("stackfaq", "retrieval", shared / "stackfaq"),
        Dataset("bipia_email", "injection", shared / "bipia_email" / "attacks.jsonl"),
    ]
    demo = tmp_path / "demo"
    steps, skipped = plan(datasets, demo, limit=50, commands=COMMANDS, repeat=3, cwd=tmp_path)
    by_title = {s.title: s.args for s in steps}
    assert list(by_title) == [
        "run: demo inbox",
        "retrieval: demo paraphrases",
        "run: acme",
        "triage: acme",
        "triage: bitext_triage",
        "retrieval: stackfaq",
    ]
    assert by_title["run: demo inbox"][-2:] == ("--repeat", "3")
    assert "--labels" in by_title["run: demo inbox"]
    assert by_title["triage: bitext_triage"] == (
        "eval", "triage", "shared/eval/bitext_triage/tickets.jsonl", "--limit", "50"
    )  # fmt: skip
    assert "--limit" not in by_title["run: acme"]
    assert "skipping injection on bipia_email: no `eval injection` command here" in skipped
    missing = {n for n in EXPECTED_SETS if n not in {"bitext_triage", "stackfaq", "bipia_email"}}
    assert {f"skipping {n}: not found in any eval folder" for n in missing} <= set(skipped)
    # Once the command exists, the injection set runs, with no code change here.
    commands = (*COMMANDS, "injection")
    steps, _ = plan(datasets, demo, limit=None, commands=commands, injection_sample=4)
    assert ("eval", "injection", str(shared / "bipia_email"), "--sample", "4") in [
        s.args for s in steps
    ]


def test_paths_are_shown_as_typed_from_the_working_folder(tmp_path: Path) -> None:
    repo = tmp_path / "work" / "repo"
    assert shown(tmp_path / "work" / "shared" / "eval" / "x", repo) == "../shared/eval/x"
    assert shown(repo / "eval" / "risk", repo) == "eval/risk"
    assert shown(Path("/opt/site/demo"), repo) == "/opt/site/demo"


def test_a_sample_is_fixed_spread_and_in_file_order() -> None:
    rows = [f"id-{i:03d}" for i in range(300)]
    picked = sample(rows, 30, str)
    assert len(picked) == 30 and picked == sorted(picked)
    assert sample(rows, 30, str) == picked  # the same rows every time
    assert picked != rows[:30] and picked[-1] > "id-150"  # not the head of the file
    assert sample(rows, 500, str) == rows and sample(rows, None, str) == rows
    assert sampled_name("x.jsonl", 30, 300) == "x.jsonl (sample of 30)"
    assert sampled_name("x.jsonl", 300, 300) == "x.jsonl"


def test_eval_triage_limit_runs_a_named_sample(tmp_path: Path) -> None:
    rows = [
        {"id": f"T-{i}", "subject": "Export", "body": f"How do I export report {i} as CSV?",
         "expected_bucket": "answerable"}
        for i in range(12)
    ]  # fmt: skip
    dataset = tmp_path / "tickets.jsonl"
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    home = tmp_path / "home"
    args = ["--home", str(home), "--engine", "offline", "eval", "triage", str(dataset)]
    done = CliRunner().invoke(app, [*args, "--limit", "5", "--json"])
    assert done.exit_code == 0, done.output
    (saved,) = (home / "evals").glob("triage--*.json")
    data = json.loads(saved.read_text("utf-8"))
    assert data["dataset"] == f"{dataset} (sample of 5)"
    assert data["details"]["tickets"] == 5


def test_a_retrieval_report_becomes_a_result_of_the_printed_scores() -> None:
    from supportagent.evals.retrieval_result import retrieval_result
    from supportagent.retrieval.eval import DEFAULT_VARIANT, EvalReport

    scores = {"recall@1": 0.5, "recall@3": 0.75, "recall@10": 0.9, "mrr": 0.6, "ndcg@10": 0.7}
    report = EvalReport(
        "eval",
        3,
        4,
        2,
        "minilm",
        (1, 3),
        {"dense": scores, DEFAULT_VARIANT: {**scores, "mrr": 0.8}},
    )
    result = retrieval_result(report, "src/supportagent/demo/eval")
    assert (result.kind, result.dataset) == ("retrieval", "src/supportagent/demo/eval")
    assert len(result.metrics) == 2 * 4  # recall@1, recall@3, mrr, ndcg@10 of each variant
    assert result.metrics[f"{DEFAULT_VARIANT}.mrr"].value == 0.8
    assert "dense.recall@10" not in result.metrics  # a cut-off not asked for
    assert result.details["variants"]["dense"]["recall@10"] == 0.9
