"""Proof that a faster semantic screen detects what the full one did: same tickets, same category.

    SUPPORTAGENT_EVAL_DATA=/work/shared/eval python bench/safety_detections.py --write
    SUPPORTAGENT_EVAL_DATA=/work/shared/eval python bench/safety_detections.py

The first records what the detector finds now; the second compares today's detector with it.

Runs the semantic detector alone (``SemanticSafety.detect``, no rules) on every ticket of every
triage set found (``evals.catalog.find_datasets``: ours under ``eval/``, the shared ones, and any
set added later such as ``eval/risk_fresh``). The record (``bench/results/
safety_detections.json``) holds, per set, each ticket on which the detector fires and the
category it names, and what the detector read: the exemplars' digests and the thresholds. The
comparison fails (exit 1) when a recorded detection is gone or names another category; a
detection the record does not hold is allowed and listed. A set that is not in the record is
scored and reported, and ``--write`` adds it. When the exemplars or thresholds changed since the
record was made (another piece of work tunes them), the comparison says nothing about a faster
screen and stops (exit 2): record again with the code before the change (``PYTHONPATH`` at
its ``src``), then compare.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from supportagent.agent.safety_semantic import SemanticSafety, default_semantic_safety
from supportagent.evals.catalog import find_datasets
from supportagent.evals.triage import read_triage

RECORD = Path(__file__).resolve().parent / "results" / "safety_detections.json"
#: The sets the proof must cover; the run stops when one of them is not found.
REQUIRED = ("risk", "brightwrench", "banking77_triage", "bitext_triage")

Detections = dict[str, dict[str, str]]
#: The record's key for what the detector read, beside the sets' names.
READ = "_detector"


def what_it_reads(detector: SemanticSafety) -> dict[str, object]:
    """The exemplars (by digest) and thresholds a detection depends on, besides the code."""
    indexes = {**detector.indexes, **{f"{m}-negatives": i for m, i in detector.negatives.items()}}
    return {
        "exemplars": {name: i.exemplars.digest for name, i in sorted(indexes.items())},
        "thresholds": {
            model: {c: [t.similarity, t.margin] for c, t in sorted(limits.items())}
            for model, limits in sorted(detector.thresholds.items())
        },
    }


def detections(detector: SemanticSafety, only: set[str] | None = None) -> Detections:
    """Per triage set, ticket id -> the category the detector names (tickets it fires on)."""
    out: Detections = {}
    for dataset in find_datasets():
        if dataset.kind != "triage" or (only and dataset.name not in only):
            continue
        fired: dict[str, str] = {}
        for row in read_triage(dataset.path):
            finding = detector.detect(row.ticket)
            if finding is not None:
                fired[row.ticket.id] = finding.category
        out[dataset.name] = fired
    return out


def compare(before: Detections, after: Detections) -> tuple[list[str], list[str], list[str]]:
    """(problems, extras, unchecked): detections lost or changed, detections added, and
    recorded sets beyond the required ones that were not found this time."""
    problems, extras, unchecked = [], [], []
    for name, now in sorted(after.items()):
        then = before.get(name)
        if then is None:
            extras.append(f"{name}: not in the record ({len(now)} detections)")
            continue
        for ticket_id, category in sorted(then.items()):
            if ticket_id not in now:
                problems.append(f"{name} {ticket_id}: {category} no longer detected")
            elif now[ticket_id] != category:
                problems.append(f"{name} {ticket_id}: {category} became {now[ticket_id]}")
        extras.extend(
            f"{name} {ticket_id}: {category} (new)"
            for ticket_id, category in sorted(now.items())
            if ticket_id not in then
        )
    for name in sorted(set(before) - set(after)):
        # A required set that is gone fails; another (passed in for a run) is reported.
        (problems if name in REQUIRED else unchecked).append(f"{name}: recorded, not found")
    return problems, extras, unchecked


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="record the detections of today")
    parser.add_argument("--record", type=Path, default=RECORD)
    parser.add_argument("--sets", nargs="*", help="only these sets (by folder name)")
    args = parser.parse_args()
    found = {d.name for d in find_datasets() if d.kind == "triage"}
    absent = [name for name in REQUIRED if name not in found and not args.sets]
    if absent:
        print(f"not found: {', '.join(absent)}; set SUPPORTAGENT_EVAL_DATA to the shared sets")
        return 2
    detector = default_semantic_safety()
    reads = what_it_reads(detector)
    record = json.loads(args.record.read_text(encoding="utf-8")) if args.record.exists() else {}
    recorded_reads = record.pop(READ, None)
    before: Detections = record
    if before and recorded_reads != reads:
        if not args.write:
            print(
                f"{args.record} was made with other exemplars or thresholds: record again with "
                "the code before the change (--write), then compare"
            )
            return 2
        before = {}  # a new record: the old one counted another detector's detections
    start = time.process_time()
    after = detections(detector, set(args.sets or ()))
    seconds = time.process_time() - start
    for name, fired in after.items():
        print(f"{name}: {len(fired)} tickets detected")
    print(f"CPU time {seconds:.1f} s")
    if args.write:
        merged = {READ: reads, **before, **after}
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n", "utf-8")
        print(f"wrote {args.record}")
        return 0
    if args.sets:
        before = {name: before[name] for name in args.sets if name in before}
    problems, extras, unchecked = compare(before, after)
    for line in unchecked:
        print(f"not checked: {line}")
    for line in extras:
        print(f"extra: {line}")
    for line in problems:
        print(f"LOST: {line}")
    total = sum(len(v) for v in before.values())
    print(f"{total} recorded detections; {len(problems)} lost or changed; {len(extras)} extra")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
