"""U+2028 and U+2029 inside a JSON string are text, not line breaks, for every line reader.

JSON allows both unescaped inside strings, and ``json.dumps(..., ensure_ascii=False)`` writes
them raw. ``str.splitlines`` would cut such a record in two; each reader must keep it whole.
"""

from __future__ import annotations

import json
from pathlib import Path

from supportagent.evals.checker import read_claims
from supportagent.evals.run import read_run_labels
from supportagent.evals.triage import read_triage
from supportagent.ingest import read_resolved, read_tickets
from supportagent.labels import read_labels
from supportagent.lines import physical_lines
from supportagent.retrieval.eval import read_beir

LS, PS = "\u2028", "\u2029"
TRICKY = f"first part{LS}second part{PS}third part"


def _jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    assert LS in text and PS in text  # written raw, as an exporter would
    path.write_text(text, encoding="utf-8")
    return path


def test_physical_lines_split_on_newline_only() -> None:
    assert physical_lines(f"a{LS}b\r\nc{PS}d\n\ne\n") == [f"a{LS}b", f"c{PS}d", "", "e"]
    assert physical_lines("") == []
    assert physical_lines("x") == ["x"]


def test_labels_keep_a_record_with_separators_whole(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "labels.jsonl",
        [
            {"id": "T-1", "expected_bucket": "answerable", "kind": TRICKY},
            {"id": "T-2", "expected_bucket": "needs_human"},
        ],
    )
    labels = read_labels(path)
    assert sorted(labels) == ["T-1", "T-2"]
    assert labels["T-1"].kind == TRICKY


def test_beir_corpus_and_queries_keep_separators(tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    _jsonl(folder / "corpus.jsonl", [{"_id": "d1", "title": "T", "text": TRICKY}])
    _jsonl(folder / "queries.jsonl", [{"_id": "q1", "text": f"what{LS}now{PS}?"}])
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    dataset = read_beir(folder)
    assert [d.body for d in dataset.corpus] == [TRICKY]
    assert dataset.queries == {"q1": f"what{LS}now{PS}?"}
    assert dataset.qrels == {"q1": frozenset({"d1"})}


def test_triage_checker_and_run_datasets_keep_separators(tmp_path: Path) -> None:
    triage = _jsonl(
        tmp_path / "tickets.jsonl",
        [
            {"id": "A", "subject": "s", "body": TRICKY, "expected_bucket": "answerable"},
            {"id": "B", "body": "Refund me", "expected_bucket": "needs_human"},
        ],
    )
    rows = read_triage(triage)
    assert [r.ticket.id for r in rows] == ["A", "B"] and rows[0].ticket.body == TRICKY

    claims = _jsonl(
        tmp_path / "claims.jsonl",
        [
            {
                "id": "c1",
                "question": "q",
                "passages": [{"id": "p1", "text": TRICKY}],
                "answer": f"yes{PS}really",
                "label": "supported",
            }
        ],
    )
    (claim,) = read_claims(claims)
    assert claim.passages == (("p1", TRICKY),) and claim.answer == f"yes{PS}really"

    labels = read_run_labels(triage)
    assert sorted(labels) == ["A", "B"]
    assert labels["A"].expected_bucket == "answerable"


def test_ingest_jsonl_and_csv_keep_separators(tmp_path: Path) -> None:
    tickets = _jsonl(
        tmp_path / "inbox.jsonl",
        [
            {"id": "T-1", "subject": "Keys", "body": TRICKY},
            {"id": "T-2", "subject": "Other", "body": "plain"},
        ],
    )
    result = read_tickets(tickets)
    assert result.ok, result.problems
    assert [t.id for t in result.records] == ["T-1", "T-2"]
    assert result.records[0].body == TRICKY

    resolved = _jsonl(
        tmp_path / "resolved.jsonl",
        [{"id": "R-1", "question": f"How{LS}so?", "accepted_answer": TRICKY}],
    )
    docs = read_resolved(resolved)
    assert docs.ok, docs.problems
    assert docs.records[0].meta == {"question": f"How{LS}so?", "answer": TRICKY}

    csv_file = tmp_path / "inbox.csv"
    csv_file.write_text(f'id,subject,body\nT-9,"Sub{LS}ject","{TRICKY}"\nT-10,b,c\n', "utf-8")
    rows = read_tickets(csv_file)
    assert rows.ok, rows.problems
    assert [(t.id, t.subject, t.body) for t in rows.records] == [
        ("T-9", f"Sub{LS}ject", TRICKY),
        ("T-10", "b", "c"),
    ]


def test_a_separator_inside_an_article_paragraph_does_not_start_a_heading() -> None:
    from supportagent.domain import DocKind, Document
    from supportagent.retrieval.passages import split_passages

    body = f"# Guide\n\n## Real section\n\nSome text{LS}## not a heading\n\nMore text.\n"
    doc = Document("kb-guide", DocKind.KB, "Guide", body)
    passages = split_passages(doc)
    headings = {tuple(p.heading_path) for p in passages}
    assert all("not a heading" not in " ".join(h) for h in headings)
    assert any(f"Some text{LS}## not a heading" in p.text for p in passages)
