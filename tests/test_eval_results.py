"""The shared eval result shape: saved, read back, keyed by eval and dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from supportagent.errors import UserError
from supportagent.evals.results import (
    EvalResult,
    Metric,
    dataset_slug,
    flat_metrics,
    load_results,
    save_result,
)


def _result(kind: str = "triage", dataset: str = "/data/eval/bitext_triage", acc: float = 0.8):
    return EvalResult(kind, dataset, {"accuracy": Metric(acc), "misses": Metric(3, False)})


def test_saved_result_reads_back_equal(tmp_path: Path) -> None:
    result = _result()
    path = save_result(result, tmp_path)
    assert path.name == "triage--eval-bitext_triage.json"
    (loaded,) = load_results(tmp_path)
    assert loaded == result
    assert loaded.metrics["misses"].higher_is_better is False


def test_a_new_result_replaces_the_old_one_for_the_same_eval(tmp_path: Path) -> None:
    save_result(_result(acc=0.5), tmp_path)
    save_result(_result(acc=0.9), tmp_path)
    save_result(_result(kind="retrieval", dataset="stackfaq"), tmp_path)
    results = load_results(tmp_path)
    assert [(r.kind, r.metrics["accuracy"].value) for r in results] == [
        ("retrieval", 0.8),
        ("triage", 0.9),
    ]
    assert flat_metrics(results)[("triage", "/data/eval/bitext_triage", "accuracy")].value == 0.9


def test_a_new_kind_reads_back_after_the_known_ones(tmp_path: Path) -> None:
    save_result(_result(kind="vibes", dataset="a"), tmp_path)
    save_result(_result(kind="triage", dataset="b"), tmp_path)
    assert [r.kind for r in load_results(tmp_path)] == ["triage", "vibes"]


def test_bad_kind_and_broken_files_are_refused(tmp_path: Path) -> None:
    for kind in ("", "Vibes", "../x", "a b"):
        with pytest.raises(ValueError, match="bad eval kind"):
            EvalResult(kind, "x", {})
    folder = tmp_path / "evals"
    folder.mkdir()
    (folder / "bad.json").write_text(json.dumps({"kind": "triage"}))
    with pytest.raises(UserError, match="not an eval result"):
        load_results(tmp_path)


def test_dataset_slug_is_file_safe() -> None:
    assert dataset_slug("../shared/eval/stackfaq/") == "eval-stackfaq"
    assert dataset_slug("a b?c") == "a_b_c"
    assert dataset_slug("") == "dataset"
