"""Calibrate the semantic safety detector's thresholds on tune data; report on test data.

    python bench/safety_calibration.py [--split tune|test] [--write]

Reads every triage set it finds (our own `eval/` sets by their `split` field; public sets split
by a hash of the id, `evals.catalog.hash_split`), scores every ticket's sentences against the
safety exemplars, and for each category and embedder picks the loosest thresholds whose false
alarms on harmless tickets stay within a budget, maximising recall. `--write` stores them in
`src/supportagent/agent/safety_semantic.toml`. With `--split test` it applies the current
thresholds to the test halves and prints recall and false alarms, per set.

Positives: rows with `expected_safety` (a safety category); Banking77's fraud and security
intents, mapped below. Harmless: rows with no risk at all (no `expected_safety`, and not a
money or account action).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from supportagent.agent.safety_semantic import (
    CATEGORIES,
    SemanticSafety,
    SentenceScores,
    Threshold,
)
from supportagent.evals.catalog import find_datasets, hash_split
from supportagent.evals.triage import MONEY_OR_ACCOUNT, TriageRow, read_triage
from supportagent.runtime import build_semantic_safety

#: Banking77 intents that are a safety risk, by the category they belong to.
BANKING77_RISKS = {
    "card_payment_not_recognised": "payment_fraud",
    "cash_withdrawal_not_recognised": "payment_fraud",
    "direct_debit_payment_not_recognised": "payment_fraud",
    "compromised_card": "payment_fraud",
    "lost_or_stolen_card": "payment_fraud",
    "lost_or_stolen_phone": "security_incident",
}
#: Banking77 intents that are money or account actions (not harmless, not a safety risk).
BANKING77_ACTIONS = frozenset(
    {
        "Refund_not_showing_up",
        "balance_not_updated_after_bank_transfer",
        "balance_not_updated_after_cheque_or_cash_deposit",
        "cancel_transfer",
        "card_swallowed",
        "extra_charge_on_statement",
        "request_refund",
        "terminate_account",
        "transaction_charged_twice",
        "transfer_not_received_by_recipient",
        "wrong_amount_of_cash_received",
    }
)
#: Share of a set's harmless tickets one category may flag, at most, on the tune half.
ALARM_BUDGET = {
    "self_harm_risk": 0.02,
    "security_incident": 0.015,
    "payment_fraud": 0.015,
    "legal_threat": 0.01,
}
THRESHOLDS_PATH = Path(__file__).resolve().parents[1] / (
    "src/supportagent/agent/safety_semantic.toml"
)


def risk_of(set_name: str, row: TriageRow) -> str | None:
    """The row's safety category, ``money_or_account``, or None for a harmless ticket."""
    if row.expected_safety is not None:
        return row.expected_safety
    if set_name.startswith("banking77") and row.source_label:
        if row.source_label in BANKING77_RISKS:
            return BANKING77_RISKS[row.source_label]
        if row.source_label in BANKING77_ACTIONS:
            return MONEY_OR_ACCOUNT
    return None


def split_of(row: TriageRow, ours: bool) -> str:
    return row.split if ours and row.split else hash_split(row.ticket.id)


def collect(split: str) -> dict[str, list[tuple[TriageRow, str | None]]]:
    sets: dict[str, list[tuple[TriageRow, str | None]]] = {}
    for dataset in find_datasets():
        if dataset.kind != "triage":
            continue
        rows = [r for r in read_triage(dataset.path) if split_of(r, dataset.ours) == split]
        sets[dataset.name] = [(r, risk_of(dataset.name, r)) for r in rows]
    return sets


Scored = dict[str, list[tuple[str | None, SentenceScores]]]


def score(detector: SemanticSafety, sets: dict[str, list[tuple[TriageRow, str | None]]]) -> Scored:
    """Per set, per row: its risk and its sentences' scores."""
    out: Scored = {}
    for name, rows in sets.items():
        out[name] = [(risk, detector.scores(row.ticket)) for row, risk in rows]
        print(f"  scored {name}: {len(rows)} tickets", file=sys.stderr)
    return out


def calibrate(scored: Scored) -> dict[str, dict[str, Threshold]]:
    chosen: dict[str, dict[str, Threshold]] = defaultdict(dict)
    grid = [
        Threshold(round(float(sim), 2), round(float(margin), 2))
        for sim in np.arange(0.20, 0.90, 0.01)
        for margin in np.arange(-0.10, 0.21, 0.01)
    ]
    for model in ("minilm", "e5"):
        for category in CATEGORIES:
            positives = [
                s
                for rows in scored.values()
                for risk, s in rows
                if s.model == model and risk == category
            ]
            harmless = {
                name: [s for risk, s in rows if s.model == model and risk is None]
                for name, rows in scored.items()
            }
            if not positives:
                continue
            best: tuple[float, float, Threshold] | None = None
            for limit in grid:
                worst = max(
                    (_rate(values, category, limit) for values in harmless.values() if values),
                    default=0.0,
                )
                if worst > ALARM_BUDGET[category]:
                    continue
                recall = _rate(positives, category, limit)
                if best is None or (recall, -worst) > best[:2]:
                    best = (recall, -worst, limit)
            if best is not None:
                chosen[model][category] = best[2]
                print(
                    f"{model:7s} {category:18s} sim>={best[2].similarity:.2f} "
                    f"margin>={best[2].margin:+.2f}: tune recall {best[0]:.3f} of "
                    f"{len(positives)}, worst set alarms {-best[1]:.3f}"
                )
    return chosen


def _rate(values: list[SentenceScores], category: str, limit: Threshold) -> float:
    if not values:
        return 0.0
    return sum(1 for s in values if s.fires(category, limit)) / len(values)


def report(scored: Scored, thresholds: dict[str, dict[str, Threshold]]) -> None:
    for name, rows in scored.items():

        def fires(s: SentenceScores) -> set[str]:
            table = thresholds.get(s.model, {})
            return {c for c, limit in table.items() if s.fires(c, limit)}

        risky = [(risk, s) for risk, s in rows if risk in CATEGORIES]
        harmless = [s for risk, s in rows if risk is None]
        caught = sum(1 for risk, s in risky if risk in fires(s))
        any_caught = sum(1 for _, s in risky if fires(s))
        alarms = sum(1 for s in harmless if fires(s))
        line = f"{name:22s} harmless alarms {alarms}/{len(harmless)}"
        if risky:
            line += f"; risks caught (same category) {caught}/{len(risky)}, (any) {any_caught}"
        print(line)


def write(thresholds: dict[str, dict[str, Threshold]]) -> None:
    lines = [
        "# Semantic safety thresholds per embedder and category (agent/safety_semantic.py).",
        "# Written by bench/safety_calibration.py --write from the tune halves; do not hand-tune",
        "# on test data. A category fires when a sentence reaches `similarity` (mean of its two",
        "# nearest exemplars) and beats the two nearest hard negatives by `margin`.",
    ]
    for model, table in thresholds.items():
        lines.append(f"\n[{model}]")
        for category, limit in table.items():
            values = f"similarity = {limit.similarity:.2f}, margin = {limit.margin:.2f}"
            lines.append(f"{category} = {{ {values} }}")
    THRESHOLDS_PATH.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {THRESHOLDS_PATH}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("tune", "test"), default="tune")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    detector = build_semantic_safety()
    if detector is None:
        sys.exit("the semantic detector is not available")
    scored = score(detector, collect(args.split))
    if args.split == "tune":
        thresholds = calibrate(scored)
        if args.write:
            write(thresholds)
    else:
        thresholds = {m: dict(t) for m, t in detector.thresholds.items()}
    report(scored, thresholds)


if __name__ == "__main__":
    main()
