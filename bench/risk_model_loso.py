"""The learned risk model, leave-one-set-out over our sentence-labelled risk sets.

    SUPPORTAGENT_EVAL_DATA=/path/to/sets python bench/risk_model_loso.py --cache DIR [--json OUT]

For each set of ``train_risk_model.ROUND15`` in turn, both models (MiniLM and multilingual-e5)
are trained without it (``bench/train_risk_model.py --without SET``, into a temporary folder)
and the held-out set is run through the whole gate (rules, the semantic detector with those
models and the shipped thresholds, the classifier), as ``bench/risk_set_report.py`` counts
it; beside it, the same set under the shipped models. A set that was never trained on scores
the same under both training rounds only if adding the other sets changed nothing: the
difference is what round 15's data does for a set it did not see.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from risk_set_report import tally
from train_risk_model import ROUND15

from supportagent.agent.safety import SafetyScreen
from supportagent.agent.safety_model import load_risk_model
from supportagent.agent.safety_semantic import SemanticSafety, default_semantic_safety

ROOT = Path(__file__).resolve().parents[1]
#: The lines of ``risk_set_report`` worth a column here.
KEYS = ("all", "self_harm_risk", "security_incident", "payment_fraud", "legal_threat")
HARMLESS = ("look_alike", "ordinary")


def with_models(folder: Path) -> SemanticSafety:
    """The shipped detector with the learned models of ``folder`` in place of the shipped."""
    base = default_semantic_safety()
    out = copy.copy(base)
    out.models = {}
    for name, index in base.indexes.items():
        model = load_risk_model(index.model_id, folder)
        if model is not None:
            out.models[name] = model
    return out


def summary(counts: dict[str, dict[str, int]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in KEYS:
        c = counts.get(key, {})
        out[key] = {k: c.get(k, 0) for k in ("tickets", "escalated_for_a_risk", "as_its_category")}
        out[key]["drafted"] = c.get("drafted", 0)
    for key in HARMLESS:
        c = counts.get(key, {})
        out[key] = {"tickets": c.get("tickets", 0), "escalated": c.get("escalated_for_a_risk", 0)}
    return out


def line(name: str, s: dict[str, Any]) -> str:
    a, sh = s["all"], s["self_harm_risk"]
    return (
        f"{name:10s} risks {a['escalated_for_a_risk']}/{a['tickets']} "
        f"(own {a['as_its_category']}, drafted {a['drafted']})  "
        f"self-harm {sh['as_its_category']}/{sh['tickets']}  "
        f"look-alikes {s['look_alike']['escalated']}/{s['look_alike']['tickets']}  "
        f"ordinary {s['ordinary']['escalated']}/{s['ordinary']['tickets']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, required=True, help="sentence vectors cache")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--sets", nargs="*", default=sorted(ROUND15))
    parser.add_argument("--keep", type=Path, help="keep each left-out model in DIR/<set>/")
    args = parser.parse_args()
    report: dict[str, Any] = {}
    for held in args.sets:
        path = ROOT / "eval" / held / "tickets.jsonl"
        shipped = summary(tally(path, misses=False)["counts"])
        with tempfile.TemporaryDirectory() as scratch:
            folder = str(args.keep / held) if args.keep else scratch
            Path(folder).mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [
                    sys.executable,
                    str(Path(__file__).parent / "train_risk_model.py"),
                    "--cache",
                    str(args.cache),
                    "--out",
                    folder,
                    "--without",
                    held,
                ],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            screen = SafetyScreen(semantic=with_models(Path(folder)))
            left_out = summary(tally(path, misses=False, screen=screen)["counts"])
        report[held] = {"shipped": shipped, "round15_without_it": left_out}
        print(line(held, shipped) + "   [shipped]")
        print(line(held, left_out) + "   [round 15, trained without it]", flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
