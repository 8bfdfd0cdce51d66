"""The AWS documentation converter of bench/fetch_retrieval_sets.py, on a tiny git repository."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from fetch_retrieval_sets import aws_docs, aws_page

QUESTIONS = (
    "\ufeffQuestion,Answer_True,Yes_No_True,Document_True\n"
    "What is the   maximum widget count? ,50,None,guide-a/limits.md\n"
    '"Can I stop a widget, then restart it?",Yes,Yes,guide-a/stopping.txt\n'
    "What is the maximum widget count?,50,None,guide-a/quotas.md\n"
    "Where are gadget logs kept?,S3,None,guide-b/logs.md\n"
)
PAGES = {
    "guide-a/limits": '# Widget limits<a name="limits"></a>\n\nAt most 50 widgets\\.\n',
    "guide-a/stopping": "Intro line\n# Stopping widgets\n\n## Restart\\-ing\n\nYou can\\.\n",
    "guide-a/quotas": "# Quotas\n\nSee limits\\.\n",
    "guide-a/other1": "# Other one\n\nUnrelated\\.\n",
    "guide-a/other2": "# Other two\n\nUnrelated too\\.\n",
    "guide-a/other3": "# Other three\n\nStill unrelated\\.\n",
    "guide-b/logs": "# Logs\n\nGadget logs go to S3\\.\n",
    "guide-c/never": "# Never named\n\nA guide no question names\\.\n",
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def upstream(tmp_path: Path) -> Path:
    repo = tmp_path / "aws-documentation"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "QA_true.csv").write_text(QUESTIONS, encoding="utf-8")
    (repo / "LICENSE").write_text("Attribution 4.0 International\n", encoding="utf-8")
    for doc_id, text in PAGES.items():
        guide, name = doc_id.split("/")
        path = repo / "documents" / guide / "doc_source" / f"{name}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "v1")
    return repo / ".git"


def _jsonl(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_page_title_is_the_first_heading_and_escapes_are_removed() -> None:
    assert aws_page('# A \\(b\\)<a name="x"></a>\n\nText\\.\n## Sub\\_part\n') == (
        "A (b)",
        "Text.\n## Sub_part",
    )
    assert aws_page("No heading\\!\n") == ("", "No heading!")


def test_named_pages_and_a_fixed_sample_of_their_guides(upstream: Path, tmp_path: Path) -> None:
    out = tmp_path / "aws_docs_qa"
    counts = aws_docs(upstream, out, others_per_guide=2)
    corpus = {doc["_id"]: doc for doc in _jsonl(out / "corpus.jsonl")}
    named = {"guide-a/limits", "guide-a/stopping", "guide-a/quotas", "guide-b/logs"}
    # Every named page, two of guide-a's three others, none of guide-b's (it has none) and
    # nothing of guide-c, which no question names.
    assert named <= set(corpus)
    others = set(corpus) - named
    assert len(others) == 2 and others < {"guide-a/other1", "guide-a/other2", "guide-a/other3"}
    assert corpus["guide-a/stopping"]["title"] == "Stopping widgets"
    assert corpus["guide-a/stopping"]["text"] == "Intro line\n\n## Restart-ing\n\nYou can."
    assert corpus["guide-a/limits"]["text"] == "At most 50 widgets."
    # The same question (after collapsing white space) twice: one query, both pages relevant.
    queries = {q["_id"]: q["text"] for q in _jsonl(out / "queries.jsonl")}
    assert queries == {
        "awsq000": "What is the maximum widget count?",
        "awsq001": "Can I stop a widget, then restart it?",
        "awsq002": "Where are gadget logs kept?",
    }
    qrels = (out / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()
    assert qrels == [
        "query-id\tcorpus-id\tscore",
        "awsq000\tguide-a/limits\t1",
        "awsq000\tguide-a/quotas\t1",
        "awsq001\tguide-a/stopping\t1",
        "awsq002\tguide-b/logs\t1",
    ]
    assert (out / "LICENSE").read_text(encoding="utf-8").startswith("Attribution 4.0")
    assert counts.startswith("6 documents (4 named by a question")


def test_the_sample_is_the_first_pages_in_sha256_order(upstream: Path, tmp_path: Path) -> None:
    out = tmp_path / "one"
    aws_docs(upstream, out, others_per_guide=1)
    candidates = ["guide-a/other1", "guide-a/other2", "guide-a/other3"]
    first = min(candidates, key=lambda d: hashlib.sha256(d.encode("utf-8")).hexdigest())
    ids = {doc["_id"] for doc in _jsonl(out / "corpus.jsonl")}
    assert ids & set(candidates) == {first}
