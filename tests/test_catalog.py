"""Where eval sets are looked for: several fetched folders, each read once."""

import os
from pathlib import Path

import pytest

from supportagent.evals.catalog import find_datasets, search_roots


def _triage_set(root: Path, name: str) -> None:
    (root / name).mkdir(parents=True)
    (root / name / "tickets.jsonl").write_text("", encoding="utf-8")


def test_eval_data_names_several_folders_and_each_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "fetched", tmp_path / "shared"
    _triage_set(first, "github_issues_x_report")
    _triage_set(second, "banking_x")
    value = os.pathsep.join([str(first), str(second), str(first), ""])
    monkeypatch.setenv("SUPPORTAGENT_EVAL_DATA", value)
    roots = search_roots()
    assert roots.count(first) == 1 and second in roots
    names = [d.name for d in find_datasets()]
    assert names.count("github_issues_x_report") == 1 and names.count("banking_x") == 1
