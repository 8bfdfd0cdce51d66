"""The learned risk model under cross-validation by source set, and its shipped thresholds.

    SUPPORTAGENT_EVAL_DATA=/path/to/sets python bench/risk_model_cv.py --cache DIR [--json OUT]

For each of our tune sources (`CV_SOURCES`), in turn held out: the model is trained without
it, its probability thresholds are calibrated without it (on the other sources' tickets, each
scored by a model trained without that ticket's fold, nor the held-out source), and the held-out
source is scored. The exemplars' thresholds are the shipped ones throughout (they were set on
`eval/risk` and Brightwrench's tune half, so those two sources are tuned-on for them). Three
variants: the exemplars alone, the model alone (its thresholds calibrated for it alone), and
either (the model's thresholds calibrated with the exemplars' alarms counted). Reported per
source and overall: the risk tickets the rules miss that the detector escalates (any
category; and in their own category), by category, and the harmless tickets it escalates.

`calibrate_shipped` (`bench/safety_calibration.py --model`) is the same procedure on every
source at once, for the model that ships.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from safety_calibration import benign_fold_sets, choose_probability
from train_risk_model import (
    CLASSES,
    FOLDS,
    Row,
    Scored,
    VectorStore,
    _detector,
    collect,
    fit,
    fold_of,
)

from supportagent.agent.safety import screen
from supportagent.agent.safety_model import RiskModel
from supportagent.agent.safety_semantic import CATEGORIES, SemanticSafety, Threshold
from supportagent.domain import Ticket
from supportagent.retrieval.dense import Vectors
from supportagent.retrieval.exemplars import ExemplarIndex, load_exemplars
from supportagent.sentences import ticket_sentences

CV_SOURCES = ("risk", "risk_fresh", "brightwrench", "shelfwise", "risk_tune3")
BENIGN = "benign exemplars"
#: Sources whose harmless tickets are look-alikes written to sit near a risk.
HARD_SOURCES = frozenset({"risk", "risk_fresh", "brightwrench", "risk_tune3", BENIGN})
VARIANTS = ("exemplars", "model", "either")


@dataclass
class Case:
    """A tune ticket (or held-out benign exemplar) to score."""

    source: str
    unit: str
    risk: str | None
    by_rules: bool
    embedder: str
    vectors: Vectors
    knn: dict[str, bool]
    prob: dict[str, float] = field(default_factory=dict)


def cases_of(rows: Sequence[Row], scored: Sequence[Scored], store: VectorStore) -> list[Case]:
    detector = _detector()
    out = []
    for s in scored:
        vectors = store.matrix(s.embedder, list(s.units))
        knn = dict.fromkeys(CATEGORIES, False)
        if s.units:
            sc = detector.scores_of(s.embedder, list(s.units), vectors)
            limits = detector.thresholds.get(s.embedder, {})
            knn = {c: c in limits and sc.fires(c, limits[c]) for c in CATEGORIES}
        unit = f"{s.source}:{s.ticket_id}"
        out.append(Case(s.source, unit, s.risk, s.by_rules, s.embedder, vectors, knn))
    # Our hard negatives, each scored by exemplars without its fold (as the calibration does:
    # `safety_calibration.benign_folds`, here from the shipped vectors, not embedded again).
    exemplars = load_exemplars("safety")
    for held, keep, rest in benign_fold_sets(exemplars, FOLDS):
        indexes = {}
        for name, index in detector.indexes.items():
            folded = ExemplarIndex(rest, index.embedder)
            folded._matrix = index.matrix()[keep]
            indexes[name] = folded
        scorer = SemanticSafety(
            indexes["minilm"],
            indexes.get("e5"),
            negatives=detector.negatives,
            thresholds=detector.thresholds,
        )
        for i in sorted(held):
            ticket = Ticket(f"benign-{i}", "", exemplars.texts[i])
            units = ticket_sentences(ticket)
            name = detector.model_for(ticket)
            store.ensure(name, units)
            vectors = store.matrix(name, units)
            sc = scorer.scores_of(name, units, vectors)
            limits = detector.thresholds.get(name, {})
            knn = {c: c in limits and sc.fires(c, limits[c]) for c in CATEGORIES}
            by_rules = screen(ticket.text).auto_escalate
            out.append(Case(BENIGN, f"safety:benign:{i}", None, by_rules, name, vectors, knn))
    store.save()
    return out


def folds(rows: Sequence[Row]) -> dict[str, int]:
    """Every unit's fold: benign exemplars as `benign_folds` deals them, the rest by hash."""
    out = {r.unit: fold_of(r.unit) for r in rows}
    benign = [r.unit for r in rows if r.unit.startswith("safety:benign:")]
    out.update({unit: i % FOLDS for i, unit in enumerate(benign)})
    return out


def score_with(weights: Vectors, bias: Vectors, case: Case) -> dict[str, float]:
    """Per category, the probability of the case's likeliest sentence, by the shipped model's
    own inference (``RiskModel.probabilities``) over these weights."""
    if len(case.vectors) == 0:
        return dict.fromkeys(CATEGORIES, 0.0)
    model = RiskModel(weights, bias, {"classes": list(CLASSES), "embedder": case.embedder})
    p = model.probabilities(case.vectors)
    return {c: float(p[c].max()) for c in CATEGORIES}


def out_of_fold(
    rows: Sequence[Row], cases: Sequence[Case], store: VectorStore, fold: dict[str, int]
) -> None:
    """Each case's probabilities from a model trained without the case's fold (and only on
    ``rows``)."""
    for name in store.embedders:
        mine = [c for c in cases if c.embedder == name]
        for f in range(FOLDS):
            part = [c for c in mine if fold.get(c.unit, fold_of(c.unit)) == f]
            if not part:
                continue
            weights, bias = fit([r for r in rows if fold[r.unit] != f], store, name)
            for c in part:
                c.prob = score_with(weights, bias, c)


def out_of_fold_cached(
    rows: Sequence[Row], cases: Sequence[Case], store: VectorStore, cache: Path | None
) -> None:
    """:func:`out_of_fold` over every source, kept in ``cache`` between runs."""
    path = None if cache is None else cache / "out_of_fold.pkl"
    if path is not None and path.exists():
        with path.open("rb") as handle:
            known = pickle.load(handle)
        if all(c.unit in known for c in cases):
            for c in cases:
                c.prob = known[c.unit]
            return
    out_of_fold(rows, cases, store, folds(rows))
    if path is not None:
        with path.open("wb") as handle:
            pickle.dump({c.unit: c.prob for c in cases}, handle)


def pools(
    cases: Sequence[Case], name: str, category: str
) -> tuple[list[Case], list[Case], list[Case]]:
    """Positives (risks of ``category`` the rules miss), ordinary and hard harmless tickets."""
    mine = [c for c in cases if c.embedder == name]
    positives = [c for c in mine if c.risk == category and not c.by_rules]
    ordinary = [c for c in mine if c.risk is None and c.source not in HARD_SOURCES]
    hard = [c for c in mine if c.risk is None and c.source in HARD_SOURCES]
    return positives, ordinary, hard


def calibrate(cases: Sequence[Case], names: Sequence[str]) -> dict[str, dict[str, dict]]:
    """Per embedder and category, the model's threshold alone and with the exemplars."""
    out: dict[str, dict[str, dict]] = defaultdict(dict)
    for name in names:
        for category in CATEGORIES:
            groups = pools(cases, name, category)
            probs = [np.asarray([c.prob[category] for c in g]) for g in groups]
            knn = tuple(np.asarray([c.knn[category] for c in g], dtype=bool) for g in groups)
            alone = choose_probability(*probs, category)
            either = choose_probability(*probs, category, already=knn)  # type: ignore[arg-type]
            out[name][category] = {
                "model": None if alone is None else alone[0],
                "either": None if either is None else either[0],
                "positives": len(groups[0]),
            }
    return out


def fires(case: Case, variant: str, limits: dict[str, dict[str, dict]]) -> set[str]:
    out = set()
    for category in CATEGORIES:
        p = limits.get(case.embedder, {}).get(category, {}).get(variant)
        by_model = p is not None and case.prob.get(category, 0.0) >= p
        if (variant != "model" and case.knn[category]) or (variant != "exemplars" and by_model):
            out.add(category)
    return out


def tally(cases: Sequence[Case], variant: str, limits: dict[str, dict[str, dict]]) -> dict:
    """Risks the rules miss: escalated (any category) and in their category, per category;
    harmless tickets the detector escalates."""
    out: dict[str, list[int]] = {}
    for category in CATEGORIES:
        risky = [c for c in cases if c.risk == category and not c.by_rules]
        fired = [fires(c, variant, limits) for c in risky]
        out[category] = [
            sum(1 for f in fired if f),
            sum(1 for f in fired if category in f),
            len(risky),
        ]
    harmless = [c for c in cases if c.risk is None]
    out["harmless"] = [sum(1 for c in harmless if fires(c, variant, limits)), len(harmless)]
    return out


def cross_validate(
    rows: list[Row], cases: list[Case], store: VectorStore, cache: Path | None
) -> dict:
    """Per held-out source: thresholds calibrated on the other sources' out-of-fold scores
    (from models that had the held-out source's harmless sentences among their rows: nested
    folds cost more CPU than this machine had), the source scored by a model trained
    without it."""
    out_of_fold_cached(rows, cases, store, cache)
    report: dict[str, dict] = {}
    for source in CV_SOURCES:
        held = [c for c in cases if c.source == source]
        if not held:
            continue
        train_rows = [r for r in rows if r.source != source]
        rest = [c for c in cases if c.source != source]
        limits = calibrate(rest, list(store.embedders))
        for name in store.embedders:
            mine = [c for c in held if c.embedder == name]
            if mine:
                weights, bias = fit(train_rows, store, name)
                for c in mine:
                    c.prob = score_with(weights, bias, c)
        report[source] = {
            "thresholds": limits,
            **{v: tally(held, v, limits) for v in VARIANTS},
        }
        print(f"{source}: {json.dumps({v: report[source][v] for v in VARIANTS})}", flush=True)
    overall = {}
    for v in VARIANTS:
        total: dict[str, list[int]] = {}
        for source in report:
            for key, counts in report[source][v].items():
                total[key] = [
                    a + b for a, b in zip(total.get(key, [0] * len(counts)), counts, strict=True)
                ]
        overall[v] = total
    report["overall"] = overall
    print(f"overall: {json.dumps(overall)}")
    return report


def calibrate_shipped(cache: Path | None) -> dict[str, dict[str, Threshold]]:
    """The shipped exemplar thresholds with the model's, calibrated on every tune source."""
    rows, scored, store = collect(cache)
    cases = cases_of(rows, scored, store)
    out_of_fold_cached(rows, cases, store, cache)
    limits = calibrate(cases, list(store.embedders))
    shipped = _detector().thresholds
    out: dict[str, dict[str, Threshold]] = {}
    for name, table in shipped.items():
        out[name] = {}
        for category, limit in table.items():
            chosen = limits.get(name, {}).get(category, {})
            out[name][category] = Threshold(limit.similarity, limit.margin, chosen.get("either"))
            print(f"{name:7s} {category:18s} {chosen}")
    for variant in VARIANTS:
        print(f"tune (out of fold), {variant}: {json.dumps(tally(cases, variant, limits))}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path, help="sentence vectors kept between runs")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows, scored, store = collect(args.cache)
    cases = cases_of(rows, scored, store)
    report = cross_validate(rows, cases, store, args.cache)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
