"""Calibrate the semantic safety detector's thresholds on tune data; report on test data.

    python bench/safety_calibration.py [--split tune|test] [--write] [--model]

Reads every triage set it finds (our own `eval/` sets by their `split` field; public sets split
by a hash of the id, `evals.catalog.hash_split`), scores every ticket's sentences against the
safety exemplars, and for each category and embedder picks the loosest thresholds whose false
alarms on harmless tickets stay within a budget, maximising recall. `--write` stores them in
`src/supportagent/agent/safety_semantic.toml`. With `--split test` it applies the current
thresholds to the test halves and prints recall and false alarms, per set. With `--model`,
the exemplars' thresholds stay as they are and the learned model's probability thresholds are
chosen under the same budgets, for the exemplars and the model together
(`bench/risk_model_cv.py`, which scores every tune ticket with a model trained without it).

Positives: rows with `expected_safety` (a safety category); Banking77's fraud and security
intents, mapped below. Harmless: rows with no risk at all (no `expected_safety`, and not a
money or account action).
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

import numpy as np

from supportagent.agent.safety import screen
from supportagent.agent.safety_semantic import (
    CATEGORIES,
    NEAR_TABLE,
    SemanticSafety,
    SentenceScores,
    Threshold,
    default_semantic_safety,
    load_near_share,
    load_near_shares,
    load_thresholds,
)
from supportagent.domain import Ticket
from supportagent.evals.catalog import find_datasets, hash_split
from supportagent.evals.triage import MONEY_OR_ACCOUNT, TriageRow, read_triage
from supportagent.retrieval.exemplars import ExemplarIndex, ExemplarSet, load_exemplars

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
#: Sets that are not support tickets (crisis forums, chatbot prompts, therapy questions):
#: reported on, never tuned on, so that their negatives do not set a support inbox's bar.
REPORT_ONLY = frozenset({"selfharm_triage"})
#: Sets whose harmless tickets are hard look-alikes written to sit near a risk ("this bug is
#: killing me"); our held-out hard negatives count with them.
HARD_SETS = frozenset({"risk", "brightwrench"})
#: False alarms allowed per category among ordinary tickets, and among hard look-alikes.
ORDINARY_BUDGET = {
    "self_harm_risk": 0.01,
    "security_incident": 0.008,
    "payment_fraud": 0.01,
    "legal_threat": 0.005,
}
#: The issue allows at most 1 look-alike in 10 escalated for a risk, by every detector
#: together (rules, this one, the classifier's money and account decisions): the semantic
#: detector's four categories share 0.07 of it, self-harm the most (a miss there costs most).
HARD_BUDGET = {
    "self_harm_risk": 0.03,
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


#: Our sets whose test half has been read to tune (both halves are tune now). The risk set's
#: test half was the held-out measure of the first round of this work; its misses were then
#: read to widen the exemplars, so the blind ``risk_fresh`` set (written by someone who saw
#: neither the exemplars nor the rules) took its place as the test.
ALL_TUNE = frozenset({"risk"})


def training_only(set_name: str) -> bool:
    """A set named ``..._train``: extra training rows for the triage model
    (``bench/fetch_eval_sets.py``), never scored nor calibrated on."""
    return set_name.endswith("_train")


#: Blind sets released as tune data once a newer blind set replaced them (each README says
#: when): their misses may be read, and they are tune data like any other.
RELEASED = frozenset(
    {
        "risk_blind5",
        "risk_blind6",
        "risk_blind7",
        "risk_blind8",
        "risk_blind9",
        "risk_blind10",
        "risk_blind11",
        "risk_blind12",
        "risk_blind13",
        "risk_blind14",
        "risk_blind15",
        "risk_blind16",
        "risk_blind17",
        "risk_blind18",
        "risk_blind19",
        "risk_blind20",
        "risk_blind21",
        "risk_blind22",
        "risk_blind23",
        "risk_blind24",
        "risk_blind25",
        "risk_blind26",
    }
)


def blind(set_name: str) -> bool:
    """A blind test set (``eval/risk_blind*`` not yet ``RELEASED``): written by someone who saw
    neither the rules nor the exemplars, run once a round on the final code. Routine reports
    leave it out; it is scored only when named (``bench/triage_report.py --sets risk_blind2``)."""
    return set_name.startswith("risk_blind") and set_name not in RELEASED


def split_of(set_name: str, row: TriageRow, ours: bool) -> str:
    """A set named ``..._tune`` (or a training-only one) or ``..._report`` is all one half;
    ours say; others by hash."""
    if set_name.endswith("_tune") or training_only(set_name) or set_name in ALL_TUNE:
        return "tune"
    if set_name.endswith("_report"):
        return "test"
    return row.split if ours and row.split else hash_split(row.ticket.id)


def collect(split: str) -> dict[str, list[tuple[TriageRow, str | None]]]:
    sets: dict[str, list[tuple[TriageRow, str | None]]] = {}
    for dataset in find_datasets():
        if dataset.kind != "triage" or (split == "tune" and dataset.name in REPORT_ONLY):
            continue
        if training_only(dataset.name) or blind(dataset.name):
            continue
        rows = [
            r for r in read_triage(dataset.path) if split_of(dataset.name, r, dataset.ours) == split
        ]
        sets[dataset.name] = [(r, risk_of(dataset.name, r)) for r in rows]
    return sets


Scored = dict[str, list[tuple[str | None, SentenceScores, bool]]]


def score(detector: SemanticSafety, sets: dict[str, list[tuple[TriageRow, str | None]]]) -> Scored:
    """Per set, per row: its risk, its sentences' scores, and whether the rules escalate it
    (the detector only has to catch what the rules miss, and owns only its own alarms)."""
    out: Scored = {}
    for name, rows in sets.items():
        out[name] = [
            (risk, detector.scores(row.ticket), screen(row.ticket.text).auto_escalate)
            for row, risk in rows
        ]
        print(f"  scored {name}: {len(rows)} tickets", file=sys.stderr)
    return out


def calibrate(scored: Scored) -> dict[str, dict[str, Threshold]]:
    """Per embedder and category, the thresholds with the best recall (on risks the rules
    miss) whose false alarms stay within both budgets: ordinary tickets, and hard look-alikes."""
    chosen: dict[str, dict[str, Threshold]] = defaultdict(dict)
    grid = [
        Threshold(round(float(sim), 2), round(float(margin), 2))
        for sim in np.arange(0.20, 0.90, 0.01)
        # A risky sentence must at least be closer to its risk than to anything harmless.
        for margin in np.arange(0.0, 0.21, 0.01)
    ]
    for model in ("minilm", "e5"):
        for category in CATEGORIES:
            positives = [
                s
                for rows in scored.values()
                for risk, s, by_rules in rows
                if s.model == model and risk == category and not by_rules
            ]
            pools: dict[bool, list[SentenceScores]] = {True: [], False: []}
            for name, rows in scored.items():
                for risk, s, _ in rows:
                    if s.model == model and risk is None:
                        pools[name in HARD_SETS or name.startswith("benign")].append(s)
            if not positives:
                continue
            best: tuple[float, float, Threshold] | None = None
            for limit in grid:
                ordinary = _rate(pools[False], category, limit)
                hard = _rate(pools[True], category, limit)
                if ordinary > ORDINARY_BUDGET[category] or hard > HARD_BUDGET[category]:
                    continue
                recall = _rate(positives, category, limit)
                # Among equal recall, fewer alarms. (Tried on 1 December 2026: for self-harm,
                # the loosest thresholds within budget instead. It chose similarity 0.20 with
                # margin +0.06, so that sentences far from every exemplar fired on margin
                # alone; the Ticket Tagger tune sample lost 0.005 and a demo question about a
                # quota ceiling read as self-harm at similarity 0.32. Not kept.)
                if best is None or (recall, -(ordinary + hard)) > best[:2]:
                    best = (recall, -(ordinary + hard), limit)
            if best is not None:
                chosen[model][category] = best[2]
                print(
                    f"{model:7s} {category:18s} sim>={best[2].similarity:.2f} "
                    f"margin>={best[2].margin:+.2f}: tune recall {best[0]:.3f} of "
                    f"{len(positives)} the rules miss; alarms {-best[1]:.3f} (both pools)"
                )
    return chosen


def choose_probability(
    positives: np.ndarray,
    ordinary: np.ndarray,
    hard: np.ndarray,
    category: str,
    *,
    already: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[float, float, float] | None:
    """The learned model's threshold for ``category``: each array holds a ticket's highest
    probability over its sentences; ``already`` says, per ticket of the same three pools,
    whether the exemplars fire, so that the two together stay within both budgets. The best
    recall, then the fewest alarms; among thresholds equal on both, the loosest for self-harm
    (near the threshold, escalate) and the strictest for the rest. Returns (threshold,
    recall, alarms) or None when no threshold keeps within budget."""
    if len(positives) == 0:
        return None
    base = already or tuple(np.zeros(len(a), dtype=bool) for a in (positives, ordinary, hard))
    # Where the exemplars alone already spend more than a budget, the model may add nothing.
    budget_ordinary = max(
        ORDINARY_BUDGET[category], float(np.mean(base[1])) if len(ordinary) else 0
    )
    budget_hard = max(HARD_BUDGET[category], float(np.mean(base[2])) if len(hard) else 0)
    best: tuple[float, float, float] | None = None
    for p in np.round(np.arange(0.05, 1.0, 0.01), 2):
        rates = [
            float(np.mean(fired | (values >= p))) if len(values) else 0.0
            for values, fired in zip((positives, ordinary, hard), base, strict=True)
        ]
        recall, alarm_ordinary, alarm_hard = rates
        if alarm_ordinary > budget_ordinary or alarm_hard > budget_hard:
            continue
        alarms = alarm_ordinary + alarm_hard
        loosest = category == "self_harm_risk"
        if (
            best is None
            or (recall, -alarms) > (best[1], -best[2])
            or ((recall, -alarms) == (best[1], -best[2]) and not loosest)
        ):
            best = (float(p), recall, alarms)
    return best


def _rate(values: list[SentenceScores], category: str, limit: Threshold) -> float:
    if not values:
        return 0.0
    return sum(1 for s in values if s.fires(category, limit)) / len(values)


def report(scored: Scored, thresholds: dict[str, dict[str, Threshold]]) -> None:
    for name, rows in scored.items():

        def fires(s: SentenceScores) -> set[str]:
            table = thresholds.get(s.model, {})
            return {c for c, limit in table.items() if s.fires(c, limit)}

        risky = [(risk, s, r) for risk, s, r in rows if risk in CATEGORIES]
        harmless = [(s, r) for risk, s, r in rows if risk is None]
        caught = sum(1 for risk, s, _ in risky if risk in fires(s))
        either = sum(1 for _, s, r in risky if r or fires(s))
        rules = sum(1 for _, _, r in risky if r)
        alarms = sum(1 for s, r in harmless if r or fires(s))
        line = f"{name:34s} harmless alarms (rules or semantic) {alarms}/{len(harmless)}"
        if risky:
            line += (
                f"; risks caught: rules {rules}, semantic (same category) {caught}, "
                f"either {either} of {len(risky)}"
            )
        print(line)


def kept_header(path: Path) -> list[str]:
    """The comment lines before the first table of the thresholds file at ``path`` (empty when
    there is none): the record of why each hand-chosen value is what it is, which ``--write``
    keeps (it rewrote a fixed header before, and dropped that record)."""
    if not path.is_file():
        return []
    head: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("["):
            break
        head.append(line)
    while head and not head[-1].strip():
        head.pop()
    return head if all(not x.strip() or x.startswith("#") for x in head) else []


def write(thresholds: dict[str, dict[str, Threshold]], path: Path | None = None) -> None:
    path = path or THRESHOLDS_PATH
    header = kept_header(path) or [
        "# Semantic safety thresholds per embedder and category (agent/safety_semantic.py).",
        "# Written by bench/safety_calibration.py --write from the tune halves; do not hand-tune",
        "# on test data. A category fires when a sentence reaches `similarity` (mean of its two",
        "# nearest exemplars) and beats the two nearest hard negatives by `margin`, or when",
        "# the learned model (agent/safety_model.py) gives it at least `probability`",
        "# (bench/safety_calibration.py --model). `model_margin` (round 7, chosen by hand on",
        "# the tune sets and kept by --write): the model fires only on a sentence at least",
        "# this much closer to the category than to a harmless example. `[near] share`: a",
        "# sentence the model gives this share of a threshold, firing nothing, is near the",
        "# risk; the classifier then escalates the ticket as `uncertain` rather than answer it.",
        "# A category named in `[near]` has its own share (self-harm's band is wider, round 10).",
    ]
    lines = [*header, f"\n[{NEAR_TABLE}]\nshare = {load_near_share():.2f}"]
    shares = load_near_shares()
    lines += [
        f"{category} = {share:.2f}"
        for category, share in shares.items()
        if round(share, 2) != round(load_near_share(), 2)
    ]
    current = load_thresholds()
    for model, table in thresholds.items():
        lines.append(f"\n[{model}]")
        for category, limit in table.items():
            if category in current.get(model, {}):
                # The fields chosen by hand (rounds 7, 13, 15 and 16) are kept as they are.
                now = current[model][category]
                limit = replace(
                    limit,
                    model_margin=limit.model_margin
                    if limit.model_margin is not None
                    else now.model_margin,
                    centred_margin=now.centred_margin,
                    exemplars_fire=now.exemplars_fire,
                    model_similarity=now.model_similarity,
                    exemplar_model_floor=now.exemplar_model_floor,
                )
            values = f"similarity = {limit.similarity:.2f}, margin = {limit.margin:.2f}"
            if limit.probability is not None:
                values += f", probability = {limit.probability:.2f}"
            if limit.model_margin is not None:
                values += f", model_margin = {limit.model_margin:.2f}"
            if limit.centred_margin is not None:
                values += f", centred_margin = {limit.centred_margin:.2f}"
            if not limit.exemplars_fire:
                values += ", exemplars_fire = false"
            if limit.model_similarity is not None:
                values += f", model_similarity = {limit.model_similarity:.2f}"
            if limit.exemplar_model_floor is not None:
                values += f", exemplar_model_floor = {limit.exemplar_model_floor:.2f}"
            lines.append(f"{category} = {{ {values} }}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {path}")


BENIGN_FOLDS = 5


def benign_fold_sets(
    exemplars: ExemplarSet, folds: int
) -> list[tuple[set[int], list[int], ExemplarSet]]:
    """The safety exemplars' hard negatives dealt into ``folds`` folds: per fold, the benign
    lines held out, the lines kept, and the exemplar set of the kept lines."""
    benign = [i for i, label in enumerate(exemplars.labels) if label == "benign"]
    out = []
    for fold in range(folds):
        held = set(benign[fold::folds])
        keep = [i for i in range(len(exemplars.texts)) if i not in held]
        rest = ExemplarSet(
            "safety",
            tuple(exemplars.labels[i] for i in keep),
            tuple(exemplars.texts[i] for i in keep),
        )
        out.append((held, keep, rest))
    return out


def benign_folds(detector: SemanticSafety) -> list[tuple[str | None, SentenceScores, bool]]:
    """Our hard negatives as harmless tickets, each scored by a detector that has never seen
    it (five folds): 250 look-alikes to keep false alarms honest, on top of the sets'."""
    exemplars = load_exemplars("safety")
    out: list[tuple[str | None, SentenceScores, bool]] = []
    for held, _, rest in benign_fold_sets(exemplars, BENIGN_FOLDS):
        indexes = {m: ExemplarIndex(rest, ix.embedder) for m, ix in detector.indexes.items()}
        folded = SemanticSafety(
            indexes["minilm"],
            indexes.get("e5"),
            negatives=detector.negatives,
            language_of=detector.language_of,
            thresholds=detector.thresholds,
        )
        for i in sorted(held):
            ticket = Ticket(f"benign-{i}", "", exemplars.texts[i])
            out.append((None, folded.scores(ticket), screen(ticket.text).auto_escalate))
    return out


def load_or_score(detector: SemanticSafety, split: str, cache: Path | None) -> Scored:
    """Scores, read from ``cache`` when it holds them (scoring embeds thousands of tickets)."""
    if cache is not None and cache.exists():
        with cache.open("rb") as handle:
            scored: Scored = pickle.load(handle)
        for rows in scored.values():
            for _, s, _ in rows:
                object.__setattr__(s, "index", detector.indexes[s.model])
        return scored
    scored = score(detector, collect(split))
    if split == "tune":
        scored["benign exemplars (held-out folds)"] = benign_folds(detector)
    if cache is not None:
        for rows in scored.values():
            for _, s, _ in rows:
                object.__setattr__(s, "index", None)
        with cache.open("wb") as handle:
            pickle.dump(scored, handle)
        for rows in scored.values():
            for _, s, _ in rows:
                object.__setattr__(s, "index", detector.indexes[s.model])
    return scored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", choices=("tune", "test"), default="tune")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--cache", type=Path, help="keep the scores here between runs")
    parser.add_argument(
        "--model", action="store_true", help="calibrate the learned model's probabilities"
    )
    args = parser.parse_args()
    if args.model:
        from risk_model_cv import calibrate_shipped

        thresholds = calibrate_shipped(args.cache)
        if args.write:
            write(thresholds)
        return
    detector = default_semantic_safety()
    if detector is None:
        sys.exit("the semantic detector is not available")
    scored = load_or_score(detector, args.split, args.cache)
    if args.split == "tune":
        thresholds = calibrate(scored)
        if args.write:
            write(thresholds)
    else:
        thresholds = {m: dict(t) for m, t in detector.thresholds.items()}
    report(scored, thresholds)


if __name__ == "__main__":
    main()
