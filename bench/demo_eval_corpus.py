"""Write ``corpus.jsonl`` of the demo retrieval eval set from the demo KB articles.

Run: .venv/bin/python bench/demo_eval_corpus.py [--check]
The demo eval set (``src/supportagent/demo/eval/``) is in BEIR layout; its corpus is the demo
KB, one line per article (``_id``, ``title``, ``text`` = the article's markdown body). Run this
after editing an article. ``--check`` exits 1 when the shipped file is out of date.
"""

from __future__ import annotations

import json
import sys

from supportagent.ingest import read_kb
from supportagent.runtime import demo_path


def corpus_lines() -> str:
    articles = read_kb(demo_path() / "kb")
    if articles.problems:
        raise SystemExit(f"the demo KB has problems: {articles.problems}")
    rows = sorted(articles.records, key=lambda doc: doc.id)
    return "".join(
        json.dumps({"_id": d.id, "title": d.title, "text": d.body}, ensure_ascii=False) + "\n"
        for d in rows
    )


def main() -> int:
    target = demo_path() / "eval" / "corpus.jsonl"
    text = corpus_lines()
    if "--check" in sys.argv[1:]:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        print("up to date" if current == text else f"{target} is out of date")
        return 0 if current == text else 1
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target} ({text.count(chr(10))} articles)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
