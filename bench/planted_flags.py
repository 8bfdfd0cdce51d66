"""How often the planted-text rules flag ordinary documents: a false-positive count.

Run by hand: ``.venv/bin/python bench/planted_flags.py [EVAL_DIR]`` (default ``../shared/eval``).
It reads the demo's and Brightwrench's KB and resolved tickets and, where present, the StackFAQ
corpus (answers), the RAGTruth QA passages and the BIPIA e-mail carriers, none of which was
written to contain instructions for an AI, and prints how many documents each rule flags, with
the flagged text.
Never run by the test suite.
"""

from __future__ import annotations

import collections
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from supportagent.domain import resolved_answer
from supportagent.ingest import read_kb, read_resolved
from supportagent.planted import find_flags

DEMO = Path(__file__).parents[1] / "src" / "supportagent" / "demo"
BRIGHTWRENCH = Path(__file__).parents[1] / "eval" / "brightwrench"


def _jsonl(path: Path) -> Iterator[dict[str, object]]:
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def corpora(eval_dir: Path) -> Iterator[tuple[str, list[str]]]:
    yield "demo KB", [d.body for d in read_kb(DEMO / "kb").records]
    resolved = read_resolved(DEMO / "resolved.jsonl").records
    yield "demo resolved (answers)", [resolved_answer(d.body) for d in resolved]
    yield "Brightwrench KB", [d.body for d in read_kb(BRIGHTWRENCH / "kb").records]
    resolved = read_resolved(BRIGHTWRENCH / "resolved.jsonl").records
    yield "Brightwrench resolved (answers)", [resolved_answer(d.body) for d in resolved]
    stackfaq = eval_dir / "stackfaq" / "corpus.jsonl"
    if stackfaq.exists():
        yield "StackFAQ corpus", [str(r["text"]) for r in _jsonl(stackfaq)]
    ragtruth = eval_dir / "ragtruth_qa_dev" / "claims.jsonl"
    if ragtruth.exists():
        texts = {
            str(p["text"])
            for r in _jsonl(ragtruth)
            for p in r["passages"]  # type: ignore[attr-defined]
        }
        yield "RAGTruth QA dev passages (unique)", sorted(texts)
    carriers = eval_dir / "bipia_email" / "carriers.jsonl"
    if carriers.exists():
        yield "BIPIA e-mail carriers", [json.dumps(r) for r in _jsonl(carriers)]


def report(name: str, texts: Iterable[str]) -> None:
    rules: collections.Counter[str] = collections.Counter()
    flagged = total = 0
    shown: list[str] = []
    for text in texts:
        total += 1
        flags = find_flags(text)
        flagged += bool(flags)
        for flag in flags:
            rules[flag.rule] += 1
            shown.append(f"    {flag.rule}: {flag.text[:110]}")
    print(f"{name}: {flagged} of {total} documents flagged {dict(rules) or ''}".rstrip())
    if shown:
        print("\n".join(shown[:10]))


def main() -> None:
    eval_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("../shared/eval")
    for name, texts in corpora(eval_dir):
        report(name, texts)


if __name__ == "__main__":
    main()
