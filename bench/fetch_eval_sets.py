"""Convert two fetched public sets into the triage format, outside the repository.

    python bench/fetch_eval_sets.py --tickettagger GIT_DIR --arbanking GIT_DIR --out DIR

Each ``GIT_DIR`` is a git directory of the upstream repository (a bare mirror is enough: files
are read with ``git show``). The sets are written to ``DIR`` (say ``/work/evaldata``), one
folder each with ``tickets.jsonl``, a ``SOURCE.md`` and the upstream ``LICENSE``; point
``SUPPORTAGENT_EVAL_DATA`` at it.
They are evaluation data only, never shipped nor needed by the tests.

* **Ticket Tagger** (Kallis et al.; ``ChristianBirchler/ticket-tagger-analysis``, GPL-3.0):
  ``datasets/preprocessing/balancing/rafaels-rebalanced-dataset-only-english.txt``, one issue a
  line as ``__label__<label> "<title and body>"``. Per label, the rows are shuffled with a fixed
  seed; the first 250 go to ``github_issues_tickettagger_tune`` and the next 250 to
  ``github_issues_tickettagger_report``, the rest to ``github_issues_tickettagger_train``
  (training rows for ``bench/train_triage.py``, never scored). ``bug`` and ``enhancement``
  are ``not_a_question``, ``question`` is ``answerable``.
* **Arabic Banking77** (``SinaLab/ArBanking77``, CC BY-SA 4.0): every 4th row of
  ``data/Banking77_Arabized_MSA_PAL_train.csv`` among the intents whose bucket
  ``banking77_triage`` gives (read from that set's rows, so the two sets share one table),
  written to ``arbanking77_triage``; the catalog splits it by a hash of the id.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

from mirror import git_bytes, git_dir, git_head

TT_FILE = "datasets/preprocessing/balancing/rafaels-rebalanced-dataset-only-english.txt"
TT_BUCKETS = {"bug": "not_a_question", "enhancement": "not_a_question", "question": "answerable"}
TT_SEED = 20261201
TT_PER_HALF = 250
AR_FILE = "data/Banking77_Arabized_MSA_PAL_train.csv"
AR_INTENTS = "data/Banking77_intents.csv"
AR_EVERY = 4
_TT_LINE = re.compile(r'^__label__(\w+)\s+"?(.*?)"?\s*$', re.DOTALL)


def ticket_tagger(repo: Path, out: Path) -> None:
    by_label: dict[str, list[tuple[int, str]]] = {}
    for number, line in enumerate(git_text(repo, TT_FILE).splitlines(), start=1):
        match = _TT_LINE.match(line)
        if match is None or match[1] not in TT_BUCKETS:
            continue
        by_label.setdefault(match[1], []).append((number, match[2].strip()))
    halves: dict[str, list[dict[str, object]]] = {"tune": [], "report": [], "train": []}
    for label in sorted(by_label):
        rows = by_label[label]
        random.Random(f"{TT_SEED}-{label}").shuffle(rows)
        if len(rows) < 2 * TT_PER_HALF:
            sys.exit(f"{label}: {len(rows)} rows, fewer than {2 * TT_PER_HALF}")
        chunks = (
            ("tune", rows[:TT_PER_HALF]),
            ("report", rows[TT_PER_HALF : 2 * TT_PER_HALF]),
            ("train", rows[2 * TT_PER_HALF :]),
        )
        for half, chunk in chunks:
            for number, text in chunk:
                halves[half].append(
                    {
                        "id": f"tt-{label}-{number}",
                        "subject": "",
                        "body": text,
                        "expected_bucket": TT_BUCKETS[label],
                        "source_label": label,
                    }
                )
    # The upstream file holds some issues twice: a training row must not be a scored one.
    scored = {_key(r["body"]) for half in ("tune", "report") for r in halves[half]}
    halves["train"] = [r for r in halves["train"] if _key(r["body"]) not in scored]
    commit = git_head(repo)
    for half, rows_out in halves.items():
        folder = out / f"github_issues_tickettagger_{half}"
        _write(folder, rows_out)
        (folder / "LICENSE").write_bytes(git_bytes(repo, "LICENSE"))
        (folder / "SOURCE.md").write_text(
            f"# github_issues_tickettagger_{half} (triage)\n\n"
            f"- Upstream: `ChristianBirchler/ticket-tagger-analysis@{commit}`, file `{TT_FILE}`"
            " (Kallis et al.'s balanced English Ticket Tagger set).\n"
            "- License: GPL-3.0 (the upstream repository's).\n"
            f"- {TT_PER_HALF} rows per label in the tune and report halves, shuffled per label"
            f" with seed {TT_SEED};"
            " the tune half is rows 0-249 of each shuffle, the report half rows 250-499, the"
            " train set (training rows only, never a score) the rest.\n"
            "- Mapping: bug, enhancement → not_a_question; question → answerable.\n"
            f"- Counts: {dict(Counter(r['source_label'] for r in rows_out))}.\n"
            "- Written by `bench/fetch_eval_sets.py`.\n",
            encoding="utf-8",
        )


def git_text(repo: Path, path: str) -> str:
    return git_bytes(repo, path).decode("utf-8")


def _key(body: object) -> str:
    return " ".join(str(body).lower().split())[:200]


def ar_banking(repo: Path, banking77: Path, out: Path) -> None:
    buckets: dict[str, str] = {}
    with banking77.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            buckets[row["source_label"].lower()] = row["expected_bucket"]
    arabic_to_intent = {
        r["label_ar"].strip(): r["label_en"].strip().lower().replace(" ", "_")
        for r in csv.DictReader(io.StringIO(git_text(repo, AR_INTENTS)))
    }
    rows_out: list[dict[str, object]] = []
    kept = 0
    for index, row in enumerate(csv.DictReader(io.StringIO(git_text(repo, AR_FILE)))):
        intent = arabic_to_intent.get(row["label"].strip())
        if intent is None or intent not in buckets:
            continue
        if kept % AR_EVERY == 0:
            rows_out.append(
                {
                    "id": f"arb77-train-{index}",
                    "subject": "",
                    "body": row["text"].strip(),
                    "expected_bucket": buckets[intent],
                    "source_label": intent,
                }
            )
        kept += 1
    folder = out / "arbanking77_triage"
    _write(folder, rows_out)
    (folder / "LICENSE").write_bytes(git_bytes(repo, "LICENSE"))
    (folder / "SOURCE.md").write_text(
        "# arbanking77_triage (triage)\n\n"
        f"- Upstream: `SinaLab/ArBanking77@{git_head(repo)}`, file `{AR_FILE}` (Banking77"
        f" arabized, MSA and Palestinian dialect), intent names from `{AR_INTENTS}`.\n"
        "- License: CC BY-SA 4.0 (the upstream repository's).\n"
        f"- Every {AR_EVERY}th row, in file order, among the intents that `banking77_triage`"
        " gives a bucket (the same table); `id` = `arb77-train-` + 0-based data row.\n"
        f"- Counts: {dict(Counter(r['expected_bucket'] for r in rows_out))}.\n"
        "- Written by `bench/fetch_eval_sets.py`.\n",
        encoding="utf-8",
    )


def _write(folder: Path, rows: list[dict[str, object]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "tickets.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{folder}: {len(rows)} tickets")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tickettagger", type=Path, help="git dir of ticket-tagger-analysis")
    parser.add_argument("--arbanking", type=Path, help="git dir of SinaLab/ArBanking77")
    parser.add_argument(
        "--banking77",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "shared/eval/banking77_triage/tickets.jsonl",
        help="banking77_triage's tickets.jsonl (its intent → bucket table)",
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    if args.tickettagger:
        ticket_tagger(git_dir(args.tickettagger), args.out)
    if args.arbanking:
        ar_banking(git_dir(args.arbanking), args.banking77, args.out)


if __name__ == "__main__":
    main()
