"""Safety and triage on every triage set found, tune and test halves side by side.

    SUPPORTAGENT_EVAL_DATA=/path/to/fetched/sets python bench/triage_report.py [--json OUT]
        [--half tune|test] [--sets NAME ...]

The same decision as the pipeline (the safety screen with its semantic detector, then the
offline classifier) on each set's halves: our own sets by their `split` field, public sets by
a hash of the id, `*_tune` sets all tune, `*_report` sets all test. Only the test column is a
result; the tune column shows how far the tuning fits. Banking77's fraud and security intents
are reported on their own (they must reach a person). Blind test sets (`eval/risk_blind*`) are
left out unless named with `--sets`, so that a routine report never scores them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from supportagent.agent.safety import default_screen
from supportagent.engines.classifier import Classifier
from supportagent.evals.catalog import find_datasets
from supportagent.evals.triage import TriageReport, evaluate_triage, read_triage

sys.path.insert(0, str(Path(__file__).parent))
from safety_calibration import BANKING77_RISKS, blind, split_of, training_only


def halves(name: str, ours: bool, path: Path) -> dict[str, list]:
    out: dict[str, list] = {"tune": [], "test": []}
    for row in read_triage(path):
        out[split_of(name, row, ours)].append(row)
    return out


def summary(report: TriageReport, name: str) -> dict[str, float | int | None]:
    buckets = report.buckets()
    risk = report.risk_summary() or {}
    safety = report.safety()
    labels = report.by_label()
    out: dict[str, float | int | None] = {
        "tickets": report.total,
        "accuracy": round(report.accuracy(), 3),
        "answerable_recall": round(buckets["answerable"]["recall"], 3),
        "needs_human_recall": round(buckets["needs_human"]["recall"], 3),
        "risk_recall": round(risk["risk_recall"], 3) if risk else None,
        "false_alarm_rate": round(risk["false_alarm_rate"], 3) if risk else None,
        "self_harm_recall": (
            round(safety["self_harm_risk"]["recall"], 3) if "self_harm_risk" in safety else None
        ),
    }
    if name.startswith("banking77"):
        fraud = [labels[k] for k in BANKING77_RISKS if k in labels]
        n = sum(v["support"] for v in fraud)
        hit = sum(v["recall"] * v["support"] for v in fraud)
        out["fraud_intents_escalated"] = round(hit / n, 3) if n else None
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--half", choices=("tune", "test"), help="only this half (default both)")
    parser.add_argument("--sets", nargs="+", metavar="NAME", help="only these sets")
    args = parser.parse_args()
    screen, classifier = default_screen(), Classifier()
    table: dict[str, dict[str, dict]] = {}
    for dataset in find_datasets():
        if dataset.kind != "triage" or (args.sets and dataset.name not in args.sets):
            continue
        if training_only(dataset.name) or (blind(dataset.name) and not args.sets):
            continue
        for half, rows in halves(dataset.name, dataset.ours, dataset.path).items():
            if not rows or (args.half and half != args.half):
                continue
            report = evaluate_triage(
                rows, screen, classifier.classify, dataset=dataset.name, engine="offline"
            )
            table.setdefault(dataset.name, {})[half] = summary(report, dataset.name)
            print(f"{dataset.name:36s} {half:5s} {table[dataset.name][half]}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(table, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
