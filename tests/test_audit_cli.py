"""`audit verify` and `audit export` through the CLI, with the seal the settings give."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import sqlalchemy as sa
from typer.testing import CliRunner

from store_checks import stage_draft
from supportagent.cli import app
from supportagent.config import Settings, load_settings
from supportagent.runtime import open_store
from supportagent.store.audit import audit_events, audit_head, event_hash

runner = CliRunner()
KEY = "0123456789abcdef" * 4


def test_the_default_seal_is_a_head_file_in_the_data_directory(settings: Settings) -> None:
    store = open_store(settings)
    assert store.audit.head_file == settings.home / "audit-head.log"
    assert store.audit.head_file_complete and not store.audit.keyed
    stage_draft(store, "T-1")
    stage_draft(store, "T-2")
    seq, digest = (settings.home / "audit-head.log").read_text().splitlines()[-1].split()
    with store.engine.connect() as conn:
        head = conn.execute(sa.select(audit_head)).one()
    assert (int(seq), digest) == (head.last_seq, head.last_hash) == (2, head.last_hash)
    result = runner.invoke(app, ["audit", "verify"])
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "Audit log intact: 2 events." in out and "What this proves:" in out
    assert "the head file" in out and "What it cannot prove:" in out and "no key" in out
    store.close()


def test_verify_with_a_key_and_a_cut_tail(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUPPORTAGENT_AUDIT_KEY", KEY)
    monkeypatch.setenv("SUPPORTAGENT_AUDIT_HEAD_FILE", "off")
    store = open_store(load_settings(home=settings.home))
    assert store.audit.keyed and store.audit.head_file is None
    for n in range(3):
        stage_draft(store, f"T-{n}")
    ok = runner.invoke(app, ["audit", "verify"])
    assert ok.exit_code == 0 and "every event and the head carry a valid MAC" in " ".join(
        ok.output.split()
    )
    with store.engine.begin() as conn:
        last = conn.execute(sa.select(audit_events).where(audit_events.c.seq == 2)).one()
        conn.execute(audit_events.delete().where(audit_events.c.seq == 3))
        conn.execute(audit_head.update().values(last_seq=2, last_hash=last.hash))
    broken = runner.invoke(app, ["audit", "verify"])
    assert broken.exit_code == 1 and "Traceback" not in broken.output
    assert "the chain head was rewritten: its MAC does not match" in broken.output
    store.close()


@pytest.mark.parametrize("key", ["short", " " * 10])
def test_a_short_key_is_one_line(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SUPPORTAGENT_AUDIT_KEY", key)
    result = runner.invoke(app, ["audit", "verify"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert "must be at least 32" in " ".join(result.output.split())
    assert key.strip() == "" or key not in result.output.replace("SUPPORTAGENT", "")


def test_export_leaves_out_a_row_past_the_head_and_warns(
    settings: Settings, tmp_path: Path
) -> None:
    store = open_store(settings)
    stage_draft(store, "T-1")
    with store.engine.begin() as conn:
        head = conn.execute(sa.select(audit_head)).one()
        fields = ("2025-01-01T00:00:00+00:00", "T-1", "review.approve", "mallory", "{}")
        conn.execute(
            audit_events.insert().values(
                seq=2,
                created_at=fields[0],
                ticket_id="T-1",
                event="review.approve",
                actor="mallory",
                payload="{}",
                prev_hash=head.last_hash,
                hash=event_hash(2, head.last_hash, *fields),
            )
        )
    out = tmp_path / "audit.csv"
    result = runner.invoke(app, ["audit", "export", "--out", str(out)])
    assert result.exit_code == 0 and "Wrote 1 audit events" in result.output
    assert "the audit log is broken (1 problem(s))" in " ".join(result.output.split())
    with out.open(newline="", encoding="utf-8") as handle:
        assert [row["actor"] for row in csv.DictReader(handle)] == ["agent:offline"]
    verdict = runner.invoke(app, ["audit", "verify"])
    assert verdict.exit_code == 1 and "lies past the chain head (event 1)" in " ".join(
        verdict.output.split()
    )
    store.close()
