"""The C# SupportAgent's data layout: one-object JSON files and `ingest folder DIR`.

The fixture (``tests/fixtures/csharp_layout``, a fictional product) has 10 articles, 10
resolved tickets and 10 Jira-style inbox tickets, one record per file; it must load and run
through the inbox exactly as it is on disk.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from supportagent.cli import app
from supportagent.config import Settings
from supportagent.domain import DocKind
from supportagent.ingest import read_resolved, read_tickets
from supportagent.ingest.jira import document_text, jira_ticket_fields
from supportagent.runtime import open_store
from supportagent.store.store import Store

FIXTURE = Path(__file__).parent / "fixtures" / "csharp_layout"
runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    # Rich wraps long lines at the terminal width; the words matter, not where lines break.
    return result.exit_code, " ".join(result.output.split())


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _copy(tmp_path: Path) -> Path:
    target = tmp_path / "data"
    shutil.copytree(FIXTURE, target)
    return target


def test_ingest_folder_then_inbox_runs_the_fixture_unchanged(settings: Settings) -> None:
    before = _digest(FIXTURE)
    code, out = invoke("ingest", "folder", str(FIXTURE))
    assert code == 0, out
    assert "Loaded in one transaction: 10 articles and 10 resolved tickets" in out
    assert "10 inbox tickets added" in out
    assert "skipped" in out and "README.md" in out  # said, not silently passed by

    code, out = invoke("inbox")
    assert code == 0, out
    assert "10 tickets handled" in out
    assert _digest(FIXTURE) == before  # nothing was edited to make it load

    store = open_store(settings)
    assert store.document_counts() == {"kb": 10, "resolved": 10}
    staged = {r.ticket.id: r for r in store.staged()}
    assert sorted(staged) == [f"TW-{n}" for n in range(101, 111)]
    assert staged["TW-103"].status.value == "escalated"  # the leaked token
    assert staged["TW-103"].reason_code == "safety_security_incident"
    assert staged["TW-107"].status.value == "routed"  # a feature idea
    assert sum(r.status.value == "pending_review" for r in staged.values()) >= 4
    ticket = store.get_ticket("TW-108")  # the Atlassian-document description
    assert ticket.subject == "Text message reminders"
    assert "monthly limit?" in ticket.body and ticket.customer == "Ada Lindqvist"
    assert (store.get_ticket("TW-103").priority, store.get_ticket("TW-107").priority) == (3, 0)
    resolved = {d.id: d for d in store.documents(DocKind.RESOLVED)}
    assert resolved["RES-001"].linked_docs == ("api-tokens",)
    kb_titles = {d.id: d.title for d in store.documents(DocKind.KB)}
    assert kb_titles["time-zones"] == "Time zones"  # the Confluence page title, space cut
    store.close()


def test_ingest_folder_twice_leaves_the_tickets_alone(settings: Settings) -> None:
    assert invoke("ingest", "folder", str(FIXTURE))[0] == 0
    code, out = invoke("ingest", "folder", str(FIXTURE))
    assert code == 0, out
    assert "0 inbox tickets added; 10 already in the store" in out


def test_one_bad_file_loads_nothing_at_all(settings: Settings, tmp_path: Path) -> None:
    data = _copy(tmp_path)
    (data / "inbox" / "TW-999.json").write_text('{"key": "TW-999", "summary": ', "utf-8")
    (data / "docs" / "logo.png").write_bytes(b"\x89PNG")
    code, out = invoke("ingest", "folder", str(data))
    assert code == 1
    assert "TW-999.json" in out and "invalid JSON" in out
    assert "Nothing loaded" in out and "all or nothing" in out
    assert "logo.png" in out and "not one of the articles formats" in out
    store = open_store(settings)
    assert store.document_counts() == {} and store.status_counts() == {}
    store.close()


def test_a_refused_document_rolls_back_the_tickets_too(settings: Settings, tmp_path: Path) -> None:
    # An article already in the store with the id of a resolved ticket: the resolved ticket
    # may not silently replace it, so the whole folder stays out, tickets included.
    article = tmp_path / "RES-004.md"
    article.write_text("---\nid: RES-004\n---\n# Seats\n\nSeat notes.\n", "utf-8")
    assert invoke("ingest", "kb", str(article))[0] == 0
    code, out = invoke("ingest", "folder", str(FIXTURE))
    assert code == 1, out
    assert "RES-004" in out and "--replace" in out and "Nothing loaded" in out
    store = open_store(settings)
    assert store.document_counts() == {"kb": 1} and store.status_counts() == {}
    store.close()


def test_an_id_shared_by_an_article_and_a_resolved_ticket_is_a_problem(
    settings: Settings, tmp_path: Path
) -> None:
    data = _copy(tmp_path)
    (data / "docs" / "RES-002.md").write_text("---\nid: RES-002\n---\n# Sync\n\nText.\n", "utf-8")
    code, out = invoke("ingest", "folder", str(data))
    assert code == 1 and "RES-002" in out and "unique across docs/ and resolved/" in out


def test_a_folder_without_any_part_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "random").mkdir()
    code, out = invoke("ingest", "folder", str(tmp_path / "random"))
    assert code == 1 and "holds none of docs/, resolved/, inbox/" in out
    assert "Traceback" not in out


def test_ingest_resolved_reads_a_folder_of_one_object_files() -> None:
    result = read_resolved(FIXTURE / "resolved")
    assert result.ok, result.problems
    assert len(result.records) == 10 and result.files_read == 10
    code, out = invoke("ingest", "resolved", str(FIXTURE / "resolved"))
    assert code == 0 and "10 resolved documents added" in out, out


def test_one_object_json_lines_and_wrong_shapes(tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    one.write_text('\n\n  {"id": "T-1", "subject": "s", "body": "b"}\n', "utf-8")
    result = read_tickets(one)
    assert [t.id for t in result.records] == ["T-1"]
    nameless = tmp_path / "nameless.json"
    nameless.write_text('{"subject": "s", "body": "b"}', "utf-8")
    (problem,) = read_tickets(nameless).problems
    assert problem.line == 1 and "one record" in problem.message and "without" in problem.message


def test_jira_fields_map_onto_ours_and_our_own_names_win() -> None:
    issue = {
        "id": "10042",
        "key": "SUP-7",
        "fields": {
            "summary": "Locked out",
            "description": "I cannot log in.",
            "priority": {"name": "Blocker"},
            "reporter": {"displayName": "R. Vale", "emailAddress": "r@vale.example"},
            "created": "2026-01-05T10:00:00.000+0000",
        },
    }
    assert jira_ticket_fields(issue) == {
        "id": "SUP-7",
        "key": "SUP-7",
        "summary": "Locked out",
        "description": "I cannot log in.",
        "priority": 3,
        "reporter": {"displayName": "R. Vale", "emailAddress": "r@vale.example"},
        "created": "2026-01-05T10:00:00.000+0000",
        "subject": "Locked out",
        "body": "I cannot log in.",
        "customer": "r@vale.example",
        "created_at": "2026-01-05T10:00:00.000+0000",
    }
    ours = {"id": "T-1", "subject": "s", "body": "b", "priority": "high"}
    assert jira_ticket_fields(ours) == ours  # our format: an unknown priority stays an error
    both = jira_ticket_fields({"key": "K-1", "summary": "theirs", "subject": "ours"})
    assert both["subject"] == "ours" and both["id"] == "K-1"


def test_atlassian_document_text_keeps_paragraphs() -> None:
    doc = json.loads((FIXTURE / "inbox" / "TW-108.json").read_text("utf-8"))["fields"]
    text = document_text(doc["description"])
    assert text.count("\n") == 2 and text.startswith("Hello, we want")
    assert document_text({"type": "text", "text": "x"}) == "x" and document_text(7) == ""


def test_add_bundle_is_one_transaction_on_both_databases(any_store: Store) -> None:
    from supportagent.domain import Document, Ticket
    from supportagent.store.store import BundleRefused

    article = Document("kb-a", DocKind.KB, "A", "# A\n\nText.")
    any_store.upsert_documents([article])
    clash = Document("kb-a", DocKind.RESOLVED, "Q", "Q?\n\nA.")  # another kind, same id
    fresh = Document("kb-b", DocKind.KB, "B", "# B\n\nText.")
    ticket = Ticket("T-1", "s", "b")
    with pytest.raises(BundleRefused) as refused:
        any_store.add_bundle([fresh, clash], [ticket])
    assert [c.doc_id for c in refused.value.clashes] == ["kb-a"]
    assert any_store.document_counts() == {"kb": 1} and any_store.status_counts() == {}

    docs, tickets = any_store.add_bundle([fresh], [ticket])
    assert (docs.added, tickets.added) == (1, 1)
    assert any_store.document_counts() == {"kb": 2} and any_store.status_counts() == {"new": 1}
    _, again = any_store.add_bundle([], [ticket])
    assert again.skipped_existing == ("T-1",)
