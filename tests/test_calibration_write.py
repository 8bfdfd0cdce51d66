"""`bench/safety_calibration.py --write` rewrites the thresholds file: it keeps the comments
above the first table, which record why each hand-chosen value is what it is (the twenty-seventh
session found them dropped), and it writes values that read back as the ones given."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from safety_calibration import THRESHOLDS_PATH, kept_header, write

from supportagent.agent.safety_semantic import load_thresholds


def test_the_shipped_thresholds_written_back_keep_their_comments_and_values(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "safety_semantic.toml"
    copy.write_text(THRESHOLDS_PATH.read_text(encoding="utf-8"), encoding="utf-8")
    shipped = load_thresholds()
    write({model: dict(table) for model, table in shipped.items()}, copy)
    comments = [
        x for x in THRESHOLDS_PATH.read_text(encoding="utf-8").splitlines() if x.startswith("#")
    ]
    assert len(comments) > 20
    assert [
        x for x in copy.read_text(encoding="utf-8").splitlines() if x.startswith("#")
    ] == comments
    assert load_thresholds(copy.read_text(encoding="utf-8")) == shipped


def test_a_file_without_comments_gets_the_plain_header(tmp_path: Path) -> None:
    bare = tmp_path / "bare.toml"
    bare.write_text("[near]\nshare = 0.90\n", encoding="utf-8")
    assert kept_header(bare) == []
    assert kept_header(tmp_path / "missing.toml") == []
