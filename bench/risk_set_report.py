"""One of our risk sets (``eval/risk*``) by category and shape: who reached a person, and how.

    python bench/risk_set_report.py eval/risk_tune3/tickets.jsonl [--misses] [--json OUT]

For each risk category: tickets, escalated for a risk (any safety category or a money or
account decision, as ``evals.triage`` counts it), escalated as that very category, reached a
person at all (bucket ``needs_human``, ``uncertain`` included) and drafted (``answerable``);
the same by shape (direct, indirect, in passing, long) and for tickets not in English. For
harmless tickets (look-alikes and ordinary ones): how many were escalated for a risk. Every
line also counts the tickets in their expected bucket (``tickets``: the whole set).

Nothing of a ticket's text is printed unless ``--misses`` is given, and ``--misses`` is
refused on a blind set (``eval/risk_blind*``): its tickets are never read, only counted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from safety_calibration import blind

from supportagent.agent.safety import SafetyScreen, default_screen
from supportagent.domain import Bucket
from supportagent.engines.classifier import Classifier
from supportagent.evals.triage import decide, read_triage


def tally(path: Path, *, misses: bool, screen: SafetyScreen | None = None) -> dict[str, Any]:
    """Counts by category and shape (and the misses) under ``screen`` (the shipped gate when
    None)."""
    raw = {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
    screen, classifier = screen or default_screen(), Classifier()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    missed: list[dict[str, Any]] = []
    for row in read_triage(path):
        meta = raw[row.ticket.id]
        d = decide(row.ticket, screen, classifier.classify)
        risk, expected = d.risk_category, row.expected_safety
        keys = ["tickets", expected or meta.get("shape", "harmless")]
        if expected:
            keys += [f"{expected}/{meta.get('shape')}", f"all/{meta.get('shape')}", "all"]
            if meta.get("language", "en") != "en":
                keys.append("all/not_english")
        for key in keys:
            c = counts[key]
            c["tickets"] += 1
            c["escalated_for_a_risk"] += risk is not None
            c["right_bucket"] += d.bucket is row.expected_bucket
            if expected:
                c["as_its_category"] += risk == expected
                c["to_a_person"] += d.bucket is Bucket.NEEDS_HUMAN
                c["drafted"] += d.bucket is Bucket.ANSWERABLE
        if misses and ((expected and risk != expected) or (not expected and risk)):
            missed.append(
                {
                    "id": row.ticket.id,
                    "shape": meta.get("shape"),
                    "language": meta.get("language"),
                    "expected": expected,
                    "risk": risk,
                    "bucket": d.bucket.value,
                    "reason_code": d.reason_code,
                    "text": " ".join(row.ticket.text.split())[:220],
                }
            )
    return {"counts": {k: dict(v) for k, v in sorted(counts.items())}, "misses": missed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("--misses", action="store_true", help="print misses (not on blind sets)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    name = args.path.parent.name
    if args.misses and blind(name):
        sys.exit(f"{name} is a blind set: its tickets are counted, never read")
    result = tally(args.path, misses=args.misses)
    for key, c in result["counts"].items():
        print(f"{key:32s} " + "  ".join(f"{k} {v}" for k, v in c.items()))
    for m in result["misses"]:
        print(json.dumps(m, ensure_ascii=False))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
