"""Convert three fetched public retrieval sets into the BEIR layout, outside the repository.

    python bench/fetch_retrieval_sets.py --eda GIT_DIR --medquad GIT_DIR --liveqa GIT_DIR \
        --aws GIT_DIR --out DIR

Each ``GIT_DIR`` is a git directory of the upstream repository (a bare mirror is enough: files
are read with ``git show``). Each set is written to ``DIR/<name>/`` (``corpus.jsonl``,
``queries.jsonl``, ``qrels/test.tsv``, ``SOURCE.md``, the upstream license) for
``bench/fusion_loo.py`` and ``supportagent eval retrieval``; never shipped nor needed by tests.

* **eda_corpus_qa** (``OpenROAD-Assistant/EDA-Corpus``, CC BY 4.0): the OpenROAD documentation
  answers of ``Non-Augmented_Data/Question-Answer/Question-Answer_Dataset.csv`` are the corpus
  (one document per distinct answer, no title: the original question would give the answer
  away); the questions of the three ``Augmented_Data/Question-Answer`` files whose answer is
  exactly one of those documents are the queries, relevant = that document.
* **liveqa_med** (``abachaa/MedQuAD`` and ``abachaa/LiveQA_MedicalTask_TREC2017``, CC BY 4.0):
  the 1,935 distinct MedQuAD answers judged for the TREC 2017 LiveQA medical test questions are
  the corpus (title = the MedQuAD question, text = its answer); the consumer's own question
  (subject and message) is the query; relevant = judged 3-Incomplete or 4-Excellent; questions
  with no such answer are left out.
* **aws_docs_qa** (``siagholami/aws-documentation``, CC BY 4.0): the 100 questions of
  ``QA_true.csv`` (written from real AWS customers' questions) are the queries, relevant = the
  documentation page each names. The corpus is a fixed sample of the 14 user guides those pages
  belong to (all 25k pages would take the 2-core machine hours to embed): every named page,
  plus the first ``AWS_OTHERS_PER_GUIDE`` other pages of the same guide in sha256 order of their
  path (fixed before any retrieval was run on the set). A page is one document: title = its
  first heading, text = the rest (headings kept for the passage splitter), with the
  ``<a name>`` anchors and Markdown backslash escapes removed.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from mirror import git_bytes, git_dir, git_head

EDA_ANSWERS = "Non-Augmented_Data/Question-Answer/Question-Answer_Dataset.csv"
EDA_QUESTIONS = tuple(
    f"Augmented_Data/Question-Answer/{part}/{part}.csv" for part in ("Flow", "General", "Tools")
)
MEDQUAD_ZIP = "QA-TestSet-LiveQA-Med-Qrels-2479-Answers.zip"
MEDQUAD_ANSWERS = "All-2479-Answers-retrieved-from-MedQuAD.csv"
MEDQUAD_QRELS = "All-qrels_LiveQAMed2017-TestQuestions_2479_Judged-Answers.txt"
LIVEQA_TEST = "TestDataset/TREC-2017-LiveQA-Medical-Test-Questions-w-summaries.xml"
RELEVANT_JUDGMENTS = ("3-Incomplete", "4-Excellent")
AWS_QUESTIONS = "QA_true.csv"
AWS_PAGES = "documents/{guide}/doc_source/"
AWS_OTHERS_PER_GUIDE = 40
_ANCHOR = re.compile(r"<a name=\"[^\"]*\"></a>")
_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|<>])")
_MEDQUAD_ENTRY = re.compile(r"Question:\s*(.*?)\s*\nURL:.*?\nAnswer:\s*(.*)", re.DOTALL)


def _csv_rows(text: str) -> list[list[str]]:
    """Rows after the header, with the byte-order mark the EDA files start with removed."""
    return list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))[1:]


def write_beir(
    out: Path,
    corpus: Sequence[Mapping[str, str]],
    queries: Mapping[str, str],
    qrels: Mapping[str, Sequence[str]],
) -> None:
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    with (out / "corpus.jsonl").open("w", encoding="utf-8") as f:
        for doc in corpus:
            f.write(json.dumps(dict(doc), ensure_ascii=False) + "\n")
    with (out / "queries.jsonl").open("w", encoding="utf-8") as f:
        for qid, text in queries.items():
            f.write(json.dumps({"_id": qid, "text": text}, ensure_ascii=False) + "\n")
    with (out / "qrels" / "test.tsv").open("w", encoding="utf-8") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for qid, docs in qrels.items():
            for doc_id in docs:
                f.write(f"{qid}\t{doc_id}\t1\n")


def eda_corpus(repo: Path, out: Path) -> str:
    answers: dict[str, str] = {}
    for row in _csv_rows(git_bytes(repo, EDA_ANSWERS).decode("utf-8")):
        if len(row) >= 2 and row[0].strip() and row[1].strip():
            answers.setdefault(row[1].strip(), f"eda{len(answers):03d}")
    by_question: dict[str, list[str]] = {}
    skipped = 0
    for path in EDA_QUESTIONS:
        for row in _csv_rows(git_bytes(repo, path).decode("utf-8")):
            if len(row) < 2 or not row[0].strip():
                continue
            doc_id = answers.get(row[1].strip())
            if doc_id is None:
                skipped += 1
                continue
            docs = by_question.setdefault(row[0].strip(), [])
            if doc_id not in docs:
                docs.append(doc_id)
    corpus = [{"_id": i, "title": "", "text": a} for a, i in answers.items()]
    queries = {f"edaq{n:03d}": q for n, q in enumerate(by_question)}
    qrels = {f"edaq{n:03d}": d for n, d in enumerate(by_question.values())}
    write_beir(out, corpus, queries, qrels)
    (out / "LICENSE").write_bytes(git_bytes(repo, "LICENSE"))
    return (
        f"{len(corpus)} documents, {len(queries)} queries, "
        f"{sum(len(d) for d in qrels.values())} qrels; {skipped} augmented rows whose answer is "
        "not one of the documents were left out"
    )


def liveqa_med(medquad: Path, liveqa: Path, out: Path) -> str:
    archive = zipfile.ZipFile(io.BytesIO(git_bytes(medquad, MEDQUAD_ZIP)))
    folder = MEDQUAD_ZIP.removesuffix(".zip")
    answers_csv = archive.read(f"{folder}/{MEDQUAD_ANSWERS}").decode("utf-8")
    corpus = []
    seen: set[str] = set()
    for row in _csv_rows(answers_csv):
        answer_id = row[0].strip().removesuffix(".txt")
        match = _MEDQUAD_ENTRY.match(row[1].strip())
        if answer_id in seen or match is None:
            continue
        seen.add(answer_id)
        corpus.append({"_id": answer_id, "title": match[1], "text": match[2].strip()})
    relevant: dict[str, list[str]] = {}
    for line in archive.read(f"{folder}/{MEDQUAD_QRELS}").decode("utf-8").splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in RELEVANT_JUDGMENTS:
            answer_id = parts[2].removesuffix(".txt")
            if answer_id in seen:
                relevant.setdefault(f"TQ{parts[0]}", []).append(answer_id)
    root = ET.fromstring(git_bytes(liveqa, LIVEQA_TEST))
    queries = {}
    for question in root.iter("NLM-QUESTION"):
        qid = question.get("qid", "")
        original = question.find("Original-Question")
        if qid not in relevant or original is None:
            continue
        subject = (original.findtext("SUBJECT") or "").strip()
        message = (original.findtext("MESSAGE") or "").strip()
        queries[qid] = f"{subject}\n{message}".strip()
    qrels = {q: relevant[q] for q in queries}
    write_beir(out, corpus, queries, qrels)
    (out / "LICENSE").write_bytes(git_bytes(medquad, "LICENSE.txt"))
    return (
        f"{len(corpus)} documents, {len(queries)} queries, "
        f"{sum(len(d) for d in qrels.values())} qrels"
    )


def git_paths(repo: Path, folder: str) -> list[str]:
    """Every file path under ``folder`` in ``repo``'s HEAD."""
    done = subprocess.run(
        ["git", "--git-dir", str(repo), "ls-tree", "-r", "--name-only", "HEAD", folder],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.split()


def aws_page(markdown: str) -> tuple[str, str]:
    """(title, text) of one documentation page: the first heading, and the rest, unescaped."""
    lines = _ESCAPE.sub(r"\1", _ANCHOR.sub("", markdown)).splitlines()
    for n, line in enumerate(lines):
        if line.startswith("# "):
            return line[2:].strip(), "\n".join(lines[:n] + lines[n + 1 :]).strip()
    return "", "\n".join(lines).strip()


def _aws_doc_id(page: str) -> str:
    """``guide/page`` without the suffix (the question file names pages ``.md`` or ``.txt``)."""
    guide, _, name = page.strip().partition("/")
    return f"{guide}/{name.rsplit('.', 1)[0]}"


def aws_docs(repo: Path, out: Path, others_per_guide: int = AWS_OTHERS_PER_GUIDE) -> str:
    rows = _csv_rows(git_bytes(repo, AWS_QUESTIONS).decode("utf-8"))
    by_question: dict[str, list[str]] = {}
    for row in rows:
        if len(row) >= 4 and row[0].strip() and row[3].strip():
            docs = by_question.setdefault(" ".join(row[0].split()), [])
            if _aws_doc_id(row[3]) not in docs:
                docs.append(_aws_doc_id(row[3]))
    named = {d for docs in by_question.values() for d in docs}
    corpus = []
    for guide in sorted({d.split("/")[0] for d in named}):
        folder = AWS_PAGES.format(guide=guide)
        pages = {
            f"{guide}/{p.removeprefix(folder).removesuffix('.md')}": p
            for p in git_paths(repo, folder)
            if p.endswith(".md")
        }
        others = sorted(
            (d for d in pages if d not in named),
            key=lambda d: hashlib.sha256(d.encode("utf-8")).hexdigest(),
        )[:others_per_guide]
        for doc_id in sorted({d for d in named if d in pages} | set(others)):
            title, text = aws_page(git_bytes(repo, pages[doc_id]).decode("utf-8"))
            corpus.append({"_id": doc_id, "title": title, "text": text})
    kept = {doc["_id"] for doc in corpus}
    qrels = {}
    queries = {}
    for n, (question, docs) in enumerate(by_question.items()):
        if any(d in kept for d in docs):
            queries[f"awsq{n:03d}"] = question
            qrels[f"awsq{n:03d}"] = [d for d in docs if d in kept]
    write_beir(out, corpus, queries, qrels)
    (out / "LICENSE").write_bytes(git_bytes(repo, "LICENSE"))
    return (
        f"{len(corpus)} documents ({len(named)} named by a question, up to {others_per_guide} "
        f"others per guide), {len(queries)} queries, {sum(len(d) for d in qrels.values())} qrels"
    )


def _source_md(out: Path, title: str, upstream: str, counts: str, note: str = "") -> None:
    (out / "SOURCE.md").write_text(
        f"# {title}\n\n{upstream}\n\nLicense: CC BY 4.0 (upstream LICENSE copied here).\n\n"
        f"Counts: {counts}.\n\n{note}Conversion: `bench/fetch_retrieval_sets.py` (its docstring "
        "says what is the corpus, the queries and the relevant documents).\n",
        encoding="utf-8",
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Each set is converted when its mirrors are given."
    )
    parser.add_argument("--eda", type=Path)
    parser.add_argument("--medquad", type=Path)
    parser.add_argument("--liveqa", type=Path)
    parser.add_argument("--aws", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.eda:
        eda = git_dir(args.eda)
        out = args.out / "eda_corpus_qa"
        counts = eda_corpus(eda, out)
        upstream = (
            f"Upstream: `OpenROAD-Assistant/EDA-Corpus@{git_head(eda)}`, answers from "
            f"`{EDA_ANSWERS}`, queries from {', '.join(f'`{p}`' for p in EDA_QUESTIONS)}."
        )
        _source_md(out, "EDA Corpus QA (OpenROAD documentation)", upstream, counts)
        print("eda_corpus_qa:", counts, file=sys.stderr)
    if args.medquad and args.liveqa:
        medquad, liveqa = git_dir(args.medquad), git_dir(args.liveqa)
        out = args.out / "liveqa_med"
        counts = liveqa_med(medquad, liveqa, out)
        upstream = (
            f"Upstream: `abachaa/MedQuAD@{git_head(medquad)}` (`{MEDQUAD_ZIP}`: "
            f"`{MEDQUAD_ANSWERS}`, `{MEDQUAD_QRELS}`) and "
            f"`abachaa/LiveQA_MedicalTask_TREC2017@{git_head(liveqa)}` (`{LIVEQA_TEST}`). "
            f"Relevant = judged {' or '.join(RELEVANT_JUDGMENTS)}."
        )
        _source_md(out, "LiveQA-Med against MedQuAD", upstream, counts)
        print("liveqa_med:", counts, file=sys.stderr)
    if args.aws:
        aws = git_dir(args.aws)
        out = args.out / "aws_docs_qa"
        counts = aws_docs(aws, out)
        upstream = (
            f"Upstream: `siagholami/aws-documentation@{git_head(aws)}` (`{AWS_QUESTIONS}`, "
            f"pages from `{AWS_PAGES.format(guide='<guide>')}`)."
        )
        note = (
            "Queries: the questions of `QA_true.csv`; relevant = the page its `Document_True` "
            "names. Corpus: a fixed sample of the guides those pages belong to (every named "
            f"page, plus the first {AWS_OTHERS_PER_GUIDE} other pages of each guide in sha256 "
            "order of `guide/page`); title = the page's first heading, text = the rest, "
            "`<a name>` anchors and Markdown backslash escapes removed.\n\n"
        )
        title = "AWS documentation QA (a sample of 14 user guides)"
        _source_md(out, title, upstream, counts, note)
        print("aws_docs_qa:", counts, file=sys.stderr)


if __name__ == "__main__":
    main()
