"""Convert four fetched public retrieval sets into the BEIR layout, outside the repository.

    python bench/fetch_retrieval_sets.py --eda GIT_DIR --medquad GIT_DIR --liveqa GIT_DIR \
        --aws GIT_DIR --ray-questions GIT_DIR --ray-docs GIT_DIR --out DIR

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
* **ray_docs_qa** (queries ``ray-project/llm-applications``, CC BY 4.0; corpus ``ray-project/ray``,
  Apache 2.0): the questions of ``datasets/eval-dataset-v2-alpha.jsonl`` (users' questions to
  the Ray documentation assistant, each labelled by Anyscale with the docs.ray.io section that
  answers it) are the queries, one per distinct question; relevant = the page of that section (a
  page is one document). The corpus is the whole documentation at ``RAY_DOCS_COMMIT`` (the last
  master commit before the questions were committed), no sample: every ``.rst``, MyST ``.md``
  and ``.ipynb`` page under ``doc/source`` rendered to text with Markdown headings (title = first
  heading), and one page per autosummary entry with a ``:toctree:`` (title = the full name, text
  = signature and docstring, found by following the imports in ``python/ray``). Questions whose
  page is not in that commit are left out. ``--ray-docs`` may be any clone holding that commit.
"""

from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import io
import json
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from mirror import git_blobs, git_bytes, git_dir, git_head, git_paths

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
RAY_QUESTIONS = "datasets/eval-dataset-v2-alpha.jsonl"
# The last ray-project/ray master commit before 2023-10-22: eval-dataset-v2-alpha.jsonl was
# committed on 2023-10-21, its sources being docs.ray.io/en/master pages of that time.
RAY_DOCS_COMMIT = "b46c7ccd461e4ad2b4b5b4206ced4f1b7ba6bae2"
RAY_DOCS = "doc/source/"
RAY_URL = "https://docs.ray.io/en/master/"
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


_ADORNMENT = re.compile(r"([=\-`:'\"~^_*+#<>.])\1{2,}")
_RST_DIRECTIVE = re.compile(r"([\w:-]+)::(?:\s+(.*))?$")
_RST_ROLE = re.compile(r":[\w:+.-]+:`([^`]+)`")
_MYST_ROLE = re.compile(r"\{[\w:+.-]+\}`([^`]+)`")
# A role whose content goes on over a line break (joined before the lines are read).
_ROLE_BREAK = re.compile(r"((?::[\w:+.-]+:|\{[\w:+.-]+\})`[^`\n]*)\n[ \t]*([^`\n]*`)")
_RST_LINK = re.compile(r"`([^`<]*?)\s*<[^>`]*>`_{0,2}")
_RST_NAMED = re.compile(r"`([^`]+)`_{1,2}")
_RST_LITERAL = re.compile(r"``(.+?)``")
_RST_DEFAULT = re.compile(r"`([^`]+)`")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_HTML_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_MYST_FENCE = re.compile(r"(\s*)(`{3,}|:{3,})\{([\w:-]+)\}\s*(.*)$")
_PLAIN_FENCE = re.compile(r"\s*(`{3,}|~{3,})")
# Directives whose content is not text of the rendered page.
_DROPPED = frozenset(
    (
        *("toctree", "image", "figure", "raw", "include", "contents", "meta", "only", "youtube"),
        *("testoutput", "testsetup", "testcleanup", "button-ref", "button-link", "tab-set-code"),
        *("click", "autoclasstree", "inheritance-diagram", "graphviz", "mermaid", "plot"),
    )
)
_CODE = frozenset(
    ("code", "code-block", "sourcecode", "testcode", "doctest", "code-cell", "jupyter-execute")
)
_AUTODOC = frozenset(
    (
        *("autoclass", "autofunction", "automethod", "autoattribute", "autodata"),
        *("autoexception", "autopydantic_model"),
    )
)
_LITERALINCLUDE = "literalinclude"
_DEFINITIONS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _role_text(inner: str) -> str:
    """What Sphinx shows for a role's content: the explicit title, else the target (``~`` keeps
    only its last part)."""
    titled = re.match(r"(.*?)\s*<[^<>]*>$", inner, re.DOTALL)
    if titled and titled.group(1):
        return titled.group(1)
    inner = inner.lstrip("!")
    return inner[1:].rsplit(".", 1)[-1] if inner.startswith("~") else inner


def _inline(line: str) -> str:
    """A line of reStructuredText or MyST with its inline markup reduced to the shown text."""
    line = _RST_ROLE.sub(lambda m: _role_text(m.group(1)), line)
    line = _MYST_ROLE.sub(lambda m: _role_text(m.group(1)), line)
    line = _RST_LITERAL.sub(r"\1", line)
    line = _RST_LINK.sub(r"\1", line)
    line = _RST_NAMED.sub(r"\1", line)
    line = _RST_DEFAULT.sub(r"\1", line)
    line = _MD_LINK.sub(r"\1", line)
    return _HTML_TAG.sub("", line)


def _options_and_body(lines: Sequence[str]) -> tuple[dict[str, str], list[str]]:
    """A directive's ``:option: value`` lines (or MyST ``---`` block) and the rest."""
    options: dict[str, str] = {}
    at = 0
    if lines and lines[0].strip() == "---":
        end = next((n for n in range(1, len(lines)) if lines[n].strip() == "---"), 0)
        for line in lines[1:end]:
            key, _, value = line.partition(":")
            options[key.strip()] = value.strip()
        at = end + 1
    while at < len(lines) and re.match(r"\s*:[\w-]+:", lines[at]):
        key, _, value = lines[at].strip()[1:].partition(":")
        options[key] = value.strip()
        at += 1
    return options, list(lines[at:])


class _RayDocs:
    """Renders the Ray documentation sources of one commit as plain text with Markdown headings:
    the pages under ``doc/source`` and the API pages that autosummary generates from docstrings."""

    def __init__(self, blobs: Mapping[str, bytes], links: Mapping[str, str]) -> None:
        self.blobs = blobs
        self.links = links
        self.trees: dict[str, ast.Module | None] = {}
        self.module = ""  # the current module of the page being rendered (for autosummary)

    def _path(self, path: str) -> str:
        """``path`` with a symlinked folder in it (``python/ray/rllib/``) replaced by its target."""
        for link, target in self.links.items():
            if path.startswith(link + "/"):
                return target + path[len(link) :]
        return path

    def text(self, path: str) -> str | None:
        blob = self.blobs.get(self._path(path))
        return None if blob is None else blob.decode("utf-8", errors="replace")

    # -- reStructuredText and MyST ------------------------------------------------------------

    def rst(self, source: str, here: str, styles: list[str] | None = None) -> list[str]:
        """Lines of text for reStructuredText ``source`` of the file at ``here``."""
        styles = [] if styles is None else styles
        lines = _ROLE_BREAK.sub(r"\1 \2", source).expandtabs(4).splitlines()
        out: list[str] = []
        n = 0
        while n < len(lines):
            line, stripped = lines[n], lines[n].strip()
            nxt = lines[n + 1].rstrip() if n + 1 < len(lines) else ""
            after = lines[n + 2].strip() if n + 2 < len(lines) else ""
            if _ADORNMENT.fullmatch(stripped) and nxt.strip() and after == stripped:
                out.append(self._heading(styles, "over" + stripped[0], nxt.strip()))
                n += 3
                continue
            underlined = _ADORNMENT.fullmatch(nxt) and len(nxt) + 2 >= len(stripped)
            if stripped and not line[0].isspace() and underlined:
                out.append(self._heading(styles, "under" + nxt[0], stripped))
                n += 2
                continue
            markup = re.match(r"(\s*)\.\.(?:\s+(.*))?$", line)
            if markup:
                indent = len(markup.group(1))
                end = n + 1
                while end < len(lines) and (
                    not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent
                ):
                    end += 1
                body = textwrap.dedent("\n".join(lines[n + 1 : end])).splitlines()
                directive = _RST_DIRECTIVE.match(markup.group(2) or "")
                if directive:
                    out.extend(
                        self._directive(
                            directive.group(1).lower(),
                            (directive.group(2) or "").strip(),
                            body,
                            here,
                            styles,
                            markdown=False,
                        )
                    )
                n = end
                continue
            if stripped == "::":
                n += 1
                continue
            out.append(_inline(line.rstrip()[:-1] if line.rstrip().endswith("::") else line))
            n += 1
        return out

    def myst(self, source: str, here: str) -> list[str]:
        """Lines of text for MyST Markdown ``source`` of the file at ``here``."""
        source = _ROLE_BREAK.sub(r"\1 \2", re.sub(r"<!--.*?-->", "", source, flags=re.DOTALL))
        lines = source.expandtabs(4).splitlines()
        if lines and lines[0].strip() == "---":
            end = next((n for n in range(1, len(lines)) if lines[n].strip() == "---"), 0)
            lines = lines[end + 1 :]
        out: list[str] = []
        n = 0
        while n < len(lines):
            line = lines[n]
            fence = _MYST_FENCE.match(line) or _PLAIN_FENCE.match(line)
            if fence:
                marker = fence.group(2) if fence.re is _MYST_FENCE else fence.group(1)
                end = n + 1
                while end < len(lines) and lines[end].strip() != marker:
                    end += 1
                body = textwrap.dedent("\n".join(lines[n + 1 : end])).splitlines()
                if fence.re is _MYST_FENCE:
                    name, arg = fence.group(3).lower(), fence.group(4).strip()
                    out.extend(self._directive(name, arg, body, here, [], markdown=True))
                else:
                    out.extend([line.strip(), *body, marker])
                n = end + 1
                continue
            if re.fullmatch(r"\s*\([\w:.-]+\)=\s*", line) or line.startswith("%"):
                n += 1
                continue
            out.append(_inline(line))
            n += 1
        return out

    def _heading(self, styles: list[str], style: str, title: str) -> str:
        if style not in styles:
            styles.append(style)
        return "\n" + "#" * min(styles.index(style) + 1, 6) + " " + _inline(title)

    def _directive(
        self,
        name: str,
        arg: str,
        body: list[str],
        here: str,
        styles: list[str],
        *,
        markdown: bool,
    ) -> list[str]:
        options, content = _options_and_body(body)
        if name in _DROPPED:
            return []
        if name in ("currentmodule", "module"):
            self.module = arg
            return []
        if name == "autosummary":
            return ["", *self._summaries(content), ""]
        if name in ("eval-rst", "eval_rst"):
            return self.rst("\n".join(content), here, styles)
        if name in _CODE:
            return ["", "```", *_trimmed(content), "```", ""]
        if name == _LITERALINCLUDE:
            code = self._included(arg, here, options)
            return [] if code is None else ["", "```", *code, "```", ""]
        if name in _AUTODOC:
            return self.api(arg.split("(")[0].strip())[1].splitlines() if arg else []
        lines = ["", _inline(arg)] if arg else [""]
        if markdown:
            return [*lines, *self.myst("\n".join(content), here), ""]
        return [*lines, *self.rst("\n".join(content), here, styles), ""]

    def _included(self, arg: str, here: str, options: Mapping[str, str]) -> list[str] | None:
        """The lines a ``literalinclude`` shows: the file, between its start/end markers."""
        base = "doc/source" if arg.startswith("/") else here.rsplit("/", 1)[0]
        parts: list[str] = []
        for part in f"{base}/{arg.lstrip('/')}".split("/"):
            if part == "..":
                parts.pop()
            elif part not in ("", "."):
                parts.append(part)
        text = self.text("/".join(parts))
        if text is None:
            return None
        start, end = options.get("start-after"), options.get("end-before")
        if start and start in text:
            text = text.split(start, 1)[1].split("\n", 1)[-1]
        if end and end in text:
            text = text.split(end, 1)[0].rsplit("\n", 1)[0]
        return textwrap.dedent(text).strip("\n").splitlines()

    # -- API pages from docstrings ------------------------------------------------------------

    def full_name(self, entry: str) -> str:
        """The full name Sphinx gives an autosummary entry of the current module."""
        entry = entry.lstrip("~")
        return entry if entry.startswith("ray.") or not self.module else f"{self.module}.{entry}"

    def _summaries(self, entries: Sequence[str]) -> list[str]:
        """An autosummary table as text: each entry with the first line of its docstring."""
        lines = []
        for entry in (e.strip() for e in entries):
            if entry and not entry.startswith((":", "..")):
                node = self.resolve(self.full_name(entry))
                doc = ast.get_docstring(node) if isinstance(node, _DEFINITIONS) else None
                summary = _inline((doc or "").strip().split("\n", 1)[0])
                lines.append(f"* {entry.lstrip('~')}: {summary}".rstrip(": "))
        return lines

    def _module(self, name: str) -> ast.Module | None:
        if name not in self.trees:
            stem = "python/" + name.replace(".", "/")
            text = self.text(stem + ".py") or self.text(stem + "/__init__.py")
            try:
                self.trees[name] = None if text is None else ast.parse(text)
            except SyntaxError:
                self.trees[name] = None
        return self.trees[name]

    def _is_package(self, name: str) -> bool:
        return self._path("python/" + name.replace(".", "/") + "/__init__.py") in self.blobs

    def _lookup(self, module: str, name: str, depth: int = 0) -> tuple[str, ast.AST] | None:
        """Where ``module.name`` is defined, following ``from ... import`` (``module`` and the
        class or function node, or the module name and its tree)."""
        tree = self._module(module)
        if tree is None or depth > 8:
            return None
        statements: list[ast.stmt] = list(tree.body)
        for statement in list(statements):
            if isinstance(statement, ast.If | ast.Try):
                statements.extend(statement.body)
        for statement in statements:
            if isinstance(statement, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                if statement.name == name:
                    return module, statement
            elif isinstance(statement, ast.ImportFrom):
                for alias in statement.names:
                    if (alias.asname or alias.name) != name:
                        continue
                    source = statement.module or ""
                    if statement.level:
                        package = module if self._is_package(module) else module.rsplit(".", 1)[0]
                        for _ in range(statement.level - 1):
                            package = package.rsplit(".", 1)[0]
                        source = f"{package}.{source}" if source else package
                    submodule = self._module(f"{source}.{alias.name}")
                    if submodule is not None:
                        return f"{source}.{alias.name}", submodule
                    return self._lookup(source, alias.name, depth + 1)
        submodule = self._module(f"{module}.{name}")
        return None if submodule is None else (f"{module}.{name}", submodule)

    def _member(
        self, module: str, cls: ast.ClassDef, name: str, depth: int = 0
    ) -> tuple[str, ast.AST] | None:
        for statement in cls.body:
            if (
                isinstance(statement, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and statement.name == name
            ):
                return module, statement
        for base in cls.bases:
            if isinstance(base, ast.Name) and depth < 4:
                found = self._lookup(module, base.id)
                if found and isinstance(found[1], ast.ClassDef):
                    member = self._member(found[0], found[1], name, depth + 1)
                    if member:
                        return member
        return None

    def resolve(self, dotted: str) -> ast.AST | None:
        """The class or function node that the public name ``dotted`` (``ray.x.Y.z``) is."""
        parts = dotted.split(".")
        for split in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:split])
            if self._module(module) is None:
                continue
            node: ast.AST | None = self.trees[module]
            owner = module
            for name in parts[split:]:
                found: tuple[str, ast.AST] | None = None
                if isinstance(node, ast.Module):
                    found = self._lookup(owner, name)
                elif isinstance(node, ast.ClassDef):
                    found = self._member(owner, node, name)
                if found is None:
                    return None
                owner, node = found
            return None if isinstance(node, ast.Module) else node
        return None

    def api(self, dotted: str) -> tuple[str, str]:
        """(title, text) of the API page of ``dotted``: its signature and docstring (a class also
        lists its public methods with the first line of theirs); text empty if unresolved."""
        node = self.resolve(dotted)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            signature = f"{dotted}({_arguments(node)})"
        elif isinstance(node, ast.ClassDef):
            init = next(
                (s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"),
                None,
            )
            signature = f"class {dotted}({'' if init is None else _arguments(init)})"
        else:
            return dotted, ""
        lines = [signature, "", *self.rst(ast.get_docstring(node) or "", "python/ray/x.py")]
        if isinstance(node, ast.ClassDef):
            methods = [
                s
                for s in node.body
                if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)
                and not s.name.startswith("_")
            ]
            if methods:
                lines += ["", "## Methods", ""]
                for method in methods:
                    summary = (ast.get_docstring(method) or "").strip().split("\n", 1)[0]
                    lines.append(f"* {method.name}: {_inline(summary)}".rstrip(": "))
        return dotted, "\n".join(lines)


def _trimmed(lines: Sequence[str]) -> list[str]:
    """``lines`` without the blank lines at either end."""
    kept = list(lines)
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    return kept


def _arguments(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The parameter list as written, without ``self``/``cls``."""
    arguments = ast.unparse(function.args)
    return re.sub(r"^(self|cls)(, |$)", "", arguments)


def _page(lines: Sequence[str]) -> tuple[str, str]:
    """(title, text) of a rendered page: its first heading, and the rest (headings kept)."""
    title, rest = "", "\n".join(lines).split("\n")
    for n, line in enumerate(rest):
        if re.match(r"#{1,6} \S", line):
            title, rest = line.lstrip("#").strip(), rest[:n] + rest[n + 1 :]
            break
    text = "\n".join(line.rstrip() for line in rest)
    return title, re.sub(r"\n{3,}", "\n\n", text).strip()


def _notebook(doc: _RayDocs, source: str, here: str) -> list[str]:
    """Lines of a Jupyter notebook: its Markdown cells as MyST, its code cells as code."""
    lines: list[str] = []
    for cell in json.loads(source).get("cells", []):
        text = "".join(cell.get("source", []))
        if cell.get("cell_type") == "markdown":
            lines += [*doc.myst(text, here), ""]
        elif cell.get("cell_type") == "code" and text.strip():
            lines += ["```python", *text.splitlines(), "```", ""]
    return lines


def _autosummary_pages(doc: _RayDocs, pages: Mapping[str, str]) -> dict[str, str]:
    """Page id (``dir/toctree/file``) -> full name of every autosummary entry that has a
    ``:toctree:`` (Sphinx writes one page for each, named by the full name unless ``conf.py``'s
    ``autosummary_filename_map`` renames it)."""
    renamed: dict[str, str] = {}
    for statement in ast.parse(doc.text(RAY_DOCS + "conf.py") or "").body:
        if (
            isinstance(statement, ast.Assign)
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == "autosummary_filename_map"
        ):
            renamed = ast.literal_eval(statement.value)
    found: dict[str, str] = {}
    for page, path in pages.items():
        if not path.endswith((".rst", ".md")):
            continue
        folder = page.rsplit("/", 1)[0] + "/" if "/" in page else ""
        lines = (doc.text(path) or "").expandtabs(4).splitlines()
        doc.module = ""
        for n, line in enumerate(lines):
            current = re.match(r"\s*(?:\.\.\s+|```\{)(?:current)?module(?:::|\})\s*(\S+)", line)
            if current:
                doc.module = current.group(1)
            if not re.match(r"\s*(?:\.\.\s+autosummary::|```\{autosummary\})", line):
                continue
            indent = len(line) - len(line.lstrip())
            toctree, names = "", []
            for entry in lines[n + 1 :]:
                stripped = entry.strip()
                if stripped.startswith("```") or (
                    stripped
                    and len(entry) - len(entry.lstrip()) <= indent
                    and not stripped.startswith(":")
                ):
                    break
                if stripped.startswith(":toctree:"):
                    toctree = stripped.split(":", 2)[2].strip().strip("/")
                elif stripped and not stripped.startswith((":", "..")):
                    names.append(doc.full_name(stripped))
            for full in names if toctree else []:
                found[f"{folder}{toctree}/{renamed.get(full, full)}"] = full
    return found


def _folder_links(repo: Path, rev: str, folder: str) -> dict[str, str]:
    """Symlink path -> target path of the symlinks under ``folder`` that point to folders (Ray's
    ``python/ray/rllib`` is ``rllib/`` at the top of the repository)."""
    done = subprocess.run(
        ["git", "--git-dir", str(repo), "ls-tree", "-r", rev, "--", folder],
        check=True,
        capture_output=True,
        text=True,
    )
    lines = done.stdout.splitlines()
    links = [line.split("\t", 1)[1] for line in lines if line.startswith("120000")]
    targets: dict[str, str] = {}
    for link, blob in git_blobs(repo, rev, links).items():
        parts = link.split("/")[:-1]
        for part in blob.decode("utf-8").strip().split("/"):
            if part == "..":
                parts.pop()
            elif part not in ("", "."):
                parts.append(part)
        if "." not in parts[-1]:
            targets[link] = "/".join(parts)
    return targets


def _ray_page_id(url: str) -> str:
    """``data/transforming-data`` for ``https://docs.ray.io/en/master/data/transforming-data.html
    #section`` (the page, not the section: a page is one document)."""
    path = url.split("#", 1)[0].removeprefix(RAY_URL)
    return path.removesuffix(".html") if path.endswith(".html") else path.rstrip("/") + "/index"


def ray_docs(questions_repo: Path, docs_repo: Path, out: Path) -> str:
    check = subprocess.run(
        ["git", "--git-dir", str(docs_repo), "cat-file", "-e", f"{RAY_DOCS_COMMIT}^{{commit}}"],
        capture_output=True,
    )
    if check.returncode != 0:
        raise SystemExit(f"{docs_repo}: no commit {RAY_DOCS_COMMIT} (a ray-project/ray clone?)")
    paths = git_paths(docs_repo, RAY_DOCS, RAY_DOCS_COMMIT)
    links = _folder_links(docs_repo, RAY_DOCS_COMMIT, "python/ray")
    python = [
        p
        for folder in ("python/ray", *links.values())
        for p in git_paths(docs_repo, folder, RAY_DOCS_COMMIT)
        if p.endswith(".py")
    ]
    doc = _RayDocs(git_blobs(docs_repo, RAY_DOCS_COMMIT, paths + python), links)
    pages: dict[str, str] = {}
    for path in sorted(paths):
        page, dot, suffix = path.removeprefix(RAY_DOCS).rpartition(".")
        if dot and suffix in ("rst", "md", "ipynb") and "/_" not in "/" + page:
            pages.setdefault(page, path)
    corpus: dict[str, dict[str, str]] = {}
    for page, path in pages.items():
        source, doc.module = doc.text(path) or "", ""
        if path.endswith(".rst"):
            lines = doc.rst(source, path)
        elif path.endswith(".md"):
            lines = doc.myst(source, path)
        else:
            lines = _notebook(doc, source, path)
        title, text = _page(lines)
        if text:
            corpus[page] = {"_id": page, "title": title, "text": text}
    unresolved = 0
    for page, full in sorted(_autosummary_pages(doc, pages).items()):
        title, text = doc.api(full)
        if text:
            corpus.setdefault(page, {"_id": page, "title": title, "text": text})
        else:
            unresolved += 1
    by_question: dict[str, list[str]] = {}
    rows = git_bytes(questions_repo, RAY_QUESTIONS).decode("utf-8").splitlines()
    for row in (json.loads(line) for line in rows if line.strip()):
        docs = by_question.setdefault(" ".join(row["question"].split()), [])
        if _ray_page_id(row["source"]) not in docs:
            docs.append(_ray_page_id(row["source"]))
    queries: dict[str, str] = {}
    qrels: dict[str, list[str]] = {}
    for n, (question, docs) in enumerate(by_question.items()):
        if any(d in corpus for d in docs):
            queries[f"rayq{n:03d}"] = question
            qrels[f"rayq{n:03d}"] = [d for d in docs if d in corpus]
    write_beir(out, sorted(corpus.values(), key=lambda d: d["_id"]), queries, qrels)
    (out / "LICENSE").write_bytes(git_bytes(questions_repo, "LICENSE"))
    (out / "LICENSE.ray").write_bytes(git_bytes(docs_repo, "LICENSE", RAY_DOCS_COMMIT))
    api_pages = sum(1 for d in corpus if "/doc/" in d and d.split("/doc/", 1)[1].startswith("ray."))
    return (
        f"{len(corpus)} documents ({len(corpus) - api_pages} documentation pages, {api_pages} API "
        f"pages; {unresolved} autosummary entries whose docstring was not found left out), "
        f"{len(queries)} queries ({len(by_question) - len(queries)} of {len(by_question)} distinct "
        f"questions left out: their page is not in the corpus), "
        f"{sum(len(d) for d in qrels.values())} qrels"
    )


def _source_md(
    out: Path,
    title: str,
    upstream: str,
    counts: str,
    note: str = "",
    license_line: str = "License: CC BY 4.0 (upstream LICENSE copied here).",
) -> None:
    (out / "SOURCE.md").write_text(
        f"# {title}\n\n{upstream}\n\n{license_line}\n\n"
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
    parser.add_argument("--ray-questions", type=Path, help="ray-project/llm-applications")
    parser.add_argument(
        "--ray-docs", type=Path, help="ray-project/ray (a clone holding RAY_DOCS_COMMIT)"
    )
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
    if args.ray_questions and args.ray_docs:
        questions, docs = git_dir(args.ray_questions), git_dir(args.ray_docs)
        out = args.out / "ray_docs_qa"
        counts = ray_docs(questions, docs, out)
        upstream = (
            f"Upstream: queries from `ray-project/llm-applications@{git_head(questions)}` "
            f"(`{RAY_QUESTIONS}`); corpus from `ray-project/ray@{RAY_DOCS_COMMIT}` "
            f"(`{RAY_DOCS}`, and the docstrings under `python/ray/` its autosummary pages show)."
        )
        note = (
            "Queries: the questions of `eval-dataset-v2-alpha.jsonl` (user questions to the Ray "
            "documentation assistant, each labelled by Anyscale with the docs.ray.io page section "
            "that answers it; it holds all 177 of `eval-dataset-v1.jsonl`), whitespace collapsed, "
            "one query per distinct question; relevant = the page its `source` URL names (the "
            "`#section` anchor dropped: a page is one document). Corpus: every page of the "
            f"documentation at `{RAY_DOCS_COMMIT}` (the last master commit before the question "
            "file was committed on 2023-10-21), no sample: each `.rst`, `.md` (MyST) and `.ipynb` "
            "file under `doc/source` outside `_` folders, id = its path without suffix as in the "
            "URL; title = its first heading, text = the rest rendered to plain text with Markdown "
            "headings (inline roles reduced to their shown text, `literalinclude` code inlined "
            "between its markers, code cells and code blocks kept, notebook outputs, toctrees, "
            "images, raw HTML and test outputs dropped); plus one API page per autosummary entry "
            "with a `:toctree:` (id = `folder/toctree/full.name` as Sphinx writes it), title = the "
            "full name, text = its signature and docstring found by following the imports in the "
            "Python sources of the same commit (a class also lists its public methods with their "
            "first docstring line). Questions whose page is not in the corpus (moved before the "
            "commit, or an API page whose docstring was not found) are left out.\n\n"
        )
        license_line = (
            "License: queries CC BY 4.0 (ray-project/llm-applications, LICENSE copied here); "
            "documentation Apache 2.0 (ray-project/ray, copied here as LICENSE.ray)."
        )
        title = "Ray documentation QA (user questions against docs.ray.io, October 2023)"
        _source_md(out, title, upstream, counts, note, license_line)
        print("ray_docs_qa:", counts, file=sys.stderr)


if __name__ == "__main__":
    main()
