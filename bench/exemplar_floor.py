"""Sweep the exemplars' model floor (``exemplar_model_floor``, round 16) over our risk sets.

    python bench/exemplar_floor.py SET [SET ...] [--models DIR] [--floors 0.1,0.25,0.5]
        [--categories security_incident,payment_fraud,legal_threat] [--json OUT]

For each set (a folder name under ``eval/``) and each floor (and without one), the gate is run
as ``bench/risk_set_report.py`` counts it, with the floor set on the named categories of both
embedders: risks escalated for a risk, as their own category, drafted, self-harm as self-harm,
and look-alikes and ordinary tickets escalated for a risk. ``--models DIR`` puts the learned
models of DIR (``bench/train_risk_model.py --out DIR --without SET ...``) in place of the
shipped ones, so that sets the shipped model learned from are scored by one that did not.
Blind sets (``eval/risk_blind*`` still blind) are refused: a floor is never chosen on them.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from risk_model_loso import with_models
from risk_set_report import tally
from safety_calibration import blind

from supportagent.agent.safety import SafetyScreen
from supportagent.agent.safety_semantic import CATEGORIES, SemanticSafety, default_semantic_safety

ROOT = Path(__file__).resolve().parents[1]
COLUMNS = {
    "risks": ("all", "tickets"),
    "escalated": ("all", "escalated_for_a_risk"),
    "own_category": ("all", "as_its_category"),
    "drafted": ("all", "drafted"),
    "self_harm": ("self_harm_risk", "tickets"),
    "self_harm_as_self_harm": ("self_harm_risk", "as_its_category"),
    "look_alikes": ("look_alike", "tickets"),
    "look_alikes_escalated": ("look_alike", "escalated_for_a_risk"),
    "ordinary": ("ordinary", "tickets"),
    "ordinary_escalated": ("ordinary", "escalated_for_a_risk"),
}


def with_floor(base: SemanticSafety, floor: float | None, categories: set[str]) -> SemanticSafety:
    """``base`` with ``exemplar_model_floor`` set to ``floor`` on ``categories``."""
    out = copy.copy(base)
    out.thresholds = {
        model: {
            category: dataclasses.replace(limit, exemplar_model_floor=floor)
            if category in categories
            else limit
            for category, limit in table.items()
        }
        for model, table in base.thresholds.items()
    }
    return out


def counts(path: Path, semantic: SemanticSafety) -> dict[str, int]:
    found = tally(path, misses=False, screen=SafetyScreen(semantic=semantic))["counts"]
    return {name: found.get(line, {}).get(key, 0) for name, (line, key) in COLUMNS.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--models", type=Path, help="learned models to use instead")
    parser.add_argument("--floors", default="0.1,0.25,0.5")
    parser.add_argument("--categories", default="security_incident,payment_fraud,legal_threat")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    categories = set(args.categories.split(","))
    if unknown := categories - set(CATEGORIES):
        parser.error(f"unknown categories: {', '.join(sorted(unknown))}")
    refused = [name for name in args.sets if blind(name)]
    if refused:
        parser.error(f"blind sets are never swept: {', '.join(refused)}")
    base = with_models(args.models) if args.models else default_semantic_safety()
    floors: list[float | None] = [None, *(float(x) for x in args.floors.split(","))]
    report: dict[str, dict[str, dict[str, int]]] = {}
    totals: dict[str, Counter[str]] = {str(f): Counter() for f in floors}
    for name in args.sets:
        path = ROOT / "eval" / name / "tickets.jsonl"
        report[name] = {}
        for floor in floors:
            row = counts(path, with_floor(base, floor, categories))
            report[name][str(floor)] = row
            totals[str(floor)].update(row)
            print(f"{name:14} floor {floor!s:5} " + "  ".join(f"{k} {v}" for k, v in row.items()))
    for floor, total in totals.items():
        print(f"{'all':14} floor {floor:5} " + "  ".join(f"{k} {v}" for k, v in total.items()))
    if args.json:
        report["all"] = {floor: dict(total) for floor, total in totals.items()}
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
