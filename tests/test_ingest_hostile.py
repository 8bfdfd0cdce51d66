"""Hostile input to ingest: links out of the folder, pathological HTML and YAML, ids with control
characters, the wrong CSV separator, and documents that would replace one of another kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from supportagent.cli import app
from supportagent.domain import DocKind, Document, id_problem, is_valid_id
from supportagent.ingest import read_kb, read_resolved, read_tickets
from supportagent.ingest.html_text import html_to_text
from supportagent.ingest.kb import YAML_LOADER, split_front_matter
from supportagent.store.audit import read_events
from supportagent.store.audit_verify import verify
from supportagent.store.store import Store

runner = CliRunner()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# --- links ------------------------------------------------------------------------------------


@pytest.fixture
def linked_kb(tmp_path: Path) -> Path:
    """A KB folder with a good article, links out of it, a link within it and a linked folder."""
    kb = tmp_path / "kb"
    write(kb / "refunds.md", "# Refunds\n\nRefunds take five days.")
    write(tmp_path / ".env", "SUPPORTAGENT_LLM_API_KEY=sk-very-secret\n")
    write(tmp_path / "elsewhere" / "notes.md", "# Notes\n\nPrivate notes.")
    (kb / "passwd.txt").symlink_to("/etc/passwd")
    (kb / "env.md").symlink_to(tmp_path / ".env")
    (kb / "same.md").symlink_to(kb / "refunds.md")  # stays inside: read
    (kb / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    (kb / "broken.md").symlink_to(kb / "gone.md")
    return kb


def test_links_out_of_the_folder_are_refused_and_said(linked_kb: Path) -> None:
    result = read_kb(linked_kb)
    assert sorted(d.id for d in result.records) == ["refunds", "same"]
    assert all("sk-very-secret" not in d.body and "root:" not in d.body for d in result.records)
    messages = {Path(p.file).name: p.message for p in result.problems}
    assert "outside the folder being read; not read" in messages["passwd.txt"]
    assert "/etc/passwd" in messages["passwd.txt"]
    assert "outside the folder being read" in messages["env.md"]
    assert "symbolic link, which ingest does not follow" in messages["linked"]
    assert "broken link" in messages["broken.md"]


def test_the_cli_reports_refused_links_and_exits_1(linked_kb: Path) -> None:
    result = runner.invoke(app, ["ingest", "kb", str(linked_kb)])
    assert result.exit_code == 1 and "Traceback" not in result.output
    out = " ".join(result.output.split())
    assert "2 kb documents added" in out and "outside the folder being read" in out
    assert "sk-very-secret" not in out


def test_the_same_rule_holds_for_ticket_and_resolved_folders(tmp_path: Path) -> None:
    folder = tmp_path / "records"
    write(tmp_path / "outside.jsonl", json.dumps({"id": "X", "subject": "s"}) + "\n")
    write(folder / "inside.jsonl", json.dumps({"id": "A", "subject": "s"}) + "\n")
    (folder / "out.jsonl").symlink_to(tmp_path / "outside.jsonl")
    result = read_tickets(folder)
    assert [t.id for t in result.records] == ["A"]
    assert "outside the folder being read" in result.problems[0].message
    assert read_resolved(folder).records == []


def test_a_file_named_on_the_command_line_may_be_a_link(tmp_path: Path) -> None:
    target = write(tmp_path / "real" / "faq.md", "# FAQ\n\nAnswers.")
    link = tmp_path / "faq.md"
    link.symlink_to(target)
    assert [d.id for d in read_kb(link).records] == ["faq"]


# --- deep HTML and big front matter (speed is measured in bench/ingest_parsers.py) ------------


def test_twenty_thousand_nested_divs_parse_and_keep_their_text() -> None:
    depth = 20_000
    page = html_to_text("<div>" * depth + "deep <b>text</b>" + "</div>" * depth)
    assert page.text == "deep text"


def test_a_deep_main_content_element_is_still_the_article() -> None:
    depth = 5_000
    html = (
        "<title>Space : Page</title><nav>crumbs</nav>"
        + '<div id="main-content">' * depth
        + "<h1>Intro</h1><p>kept</p>"
        + "</div>" * depth
        + "<footer>footer</footer>"
    )
    page = html_to_text(html)
    assert (page.title, page.text) == ("Page", "# Intro\n\nkept")


def test_stray_end_tags_and_an_unclosable_tail_are_text_or_nothing() -> None:
    assert html_to_text("<div>" * 20_000 + "text" + "</span>" * 20_000).text == "text"
    page = html_to_text("<p>before</p>" + "</" * 50_000)
    assert page.text.startswith("before") and page.text.count("</") == 50_000


def test_large_front_matter_reads_with_the_c_loader_when_libyaml_is_there() -> None:
    assert YAML_LOADER is (yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)
    lines = "".join(f"key_{n}: value {n}\n" for n in range(50_000))
    meta, body = split_front_matter(f"---\nid: big\n{lines}---\n# Big\n\nBody.\n")
    assert meta["id"] == "big" and meta["key_49999"] == "value 49999"
    assert body == "# Big\n\nBody.\n"


# --- ids and separators -------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["T\x001", "T-1\x07", "\x1b[31mT", "T\x7f", "T\u0085x"])
def test_ids_with_control_characters_are_refused_not_repaired(tmp_path: Path, bad: str) -> None:
    path = write(tmp_path / "t.jsonl", json.dumps({"id": bad, "subject": "s"}) + "\n")
    result = read_tickets(path)
    assert result.records == []
    assert "contains a control character" in result.problems[0].message
    assert not is_valid_id(bad) and "control character" in (id_problem(bad) or "")


def test_control_characters_in_front_matter_ids_and_links_are_refused(tmp_path: Path) -> None:
    write(tmp_path / "kb" / "a.md", '---\nid: "A\\0B"\n---\nText.')
    [problem] = read_kb(tmp_path / "kb").problems
    assert "control character (U+0000)" in problem.message
    rows = [{"id": "R1", "question": "q", "answer": "a", "linked_docs": ["kb\u0000x"]}]
    path = write(tmp_path / "r.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    assert "linked_docs entry" in read_resolved(path).problems[0].message


def test_the_cli_refuses_such_an_id_in_one_line() -> None:
    for args in (["agent", "T\x001"], ["review", "approve", "T\x001"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert "contains a control character (U+0000)" in result.output


@pytest.mark.parametrize(("separator", "name"), [(";", "semicolons"), ("\t", "tabs")])
def test_a_csv_with_another_separator_is_one_problem_with_a_hint(
    tmp_path: Path, separator: str, name: str
) -> None:
    rows = [["id", "subject", "body"], ["T-1", "s", "b"], ["T-2", "s", "b"]]
    path = write(tmp_path / "t.csv", "".join(separator.join(r) + "\n" for r in rows))
    result = read_tickets(path)
    assert result.records == [] and len(result.problems) == 1
    assert result.problems[0].line == 1
    assert f"separates values with {name}" in result.problems[0].message
    assert "missing required field" not in result.problems[0].message


# --- documents of another kind ------------------------------------------------------------------


def _resolved(doc_id: str, source: str = "resolved.jsonl") -> Document:
    return Document(doc_id, DocKind.RESOLVED, "Q", "Q\n\nA", source, meta={"ticket_id": "T-9"})


def test_a_document_of_another_kind_is_refused_unless_replace_is_asked(any_store: Store) -> None:
    any_store.upsert_documents([_resolved("RT-1001")])
    article = Document("RT-1001", DocKind.KB, "Refunds", "Refunds take five days.", "refunds.md")
    other = Document("kb-ok", DocKind.KB, "Fine", "Nothing clashes.", "ok.md")
    report = any_store.upsert_documents([article, other])
    assert (report.added, report.updated) == (1, 0)
    [clash] = report.refused
    assert clash.describe().startswith("document RT-1001 would replace the resolved document")
    assert any_store.documents(DocKind.RESOLVED)[0].id == "RT-1001"
    assert read_events(any_store.engine) == []

    report = any_store.upsert_documents([article], replace=True, actor="cli")
    assert report.updated == 1 and len(report.replaced) == 1 and not report.refused
    assert [d.id for d in any_store.documents(DocKind.KB)] == ["RT-1001", "kb-ok"]
    [event] = read_events(any_store.engine)
    assert (event["event"], event["actor"], event["ticket_id"]) == (
        "document.replace",
        "cli",
        "T-9",
    )
    assert event["data"]["replaced_kind"] == "resolved" and event["data"]["kind"] == "kb"
    assert verify(any_store.engine).intact


def test_an_answer_a_reviewer_approved_is_not_replaced_by_an_ingest(any_store: Store) -> None:
    any_store.upsert_documents([_resolved("AR-T-9", source="review:T-9")])
    report = any_store.upsert_documents([_resolved("AR-T-9")])
    assert report.updated == 0 and "an answer a reviewer approved" in report.refused[0].describe()
    # Re-ingesting a document of the same kind from a file still replaces it, as before.
    any_store.upsert_documents([_resolved("RT-1")])
    assert any_store.upsert_documents([_resolved("RT-1")]).updated == 1


def test_the_cli_refuses_then_replaces_with_replace(tmp_path: Path) -> None:
    resolved = write(
        tmp_path / "resolved.jsonl",
        json.dumps({"id": "RT-1001", "question": "How long?", "answer": "Five days."}) + "\n",
    )
    kb = write(tmp_path / "kb" / "a.md", "---\nid: RT-1001\n---\n# Refunds\n\nFive days.")
    assert runner.invoke(app, ["ingest", "resolved", str(resolved)]).exit_code == 0
    refused = runner.invoke(app, ["ingest", "kb", str(kb.parent)])
    out = " ".join(refused.output.split())
    assert refused.exit_code == 1 and "pass --replace to replace it" in out
    replaced = runner.invoke(app, ["ingest", "kb", str(kb.parent), "--replace"])
    assert replaced.exit_code == 0 and "1 replaced on request, audited" in replaced.output
    verdict = runner.invoke(app, ["audit", "verify"])
    assert verdict.exit_code == 0 and "Audit log intact: 1 events." in verdict.output


# --- progress -------------------------------------------------------------------------------------


def test_readers_report_progress_file_by_file(tmp_path: Path) -> None:
    for n in range(3):
        write(tmp_path / "kb" / f"a{n}.md", f"# A{n}\n\nText {n}.")
    seen: list[tuple[int, int]] = []
    read_kb(tmp_path / "kb", lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
