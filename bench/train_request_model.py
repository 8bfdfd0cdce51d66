"""Train the classifier's sentence-level money/account request model, one per embedder.

    SUPPORTAGENT_EVAL_DATA=/path/to/sets python bench/train_request_model.py [--cache DIR]
        [--cv] [--threshold minilm=P e5=P] [--json OUT]

Training rows are sentences, labelled ``money_specific``, ``account_specific`` or ``none``:

- the lines of `exemplars/triage/money_specific.txt` and `account_specific.txt` (their class),
  every other triage exemplar line and every safety exemplar line (``none``);
- the sets with marked sentences (`eval/risk_tune3`, `eval/risk_tune4`, tune only; with
  ``--released``, round 25's trial, not shipped, also `eval/risk_tune5` and the blind sets
  released as tune data, whose marks sit in the `sentences.jsonl` beside their tickets): each money
  or account ticket's `risk_sentences` (its `expected_reason`), the questions the same ticket
  asks besides them when it is an in-passing or long one (``none``: the how-to the request
  hides in), and every look-alike's sentences, its trap sentences among them (``none``);
- the sentences of every harmless ticket of the tune halves (`eval/risk`, `eval/pickwren` and
  the marked sets whole; Brightwrench, Shelfwise, Ferrytale, Bitext,
  Banking77 by their tune half; the Ticket Tagger tune sample) (``none``).

Safety risk tickets and unmarked money or account tickets give no training rows (which of
their sentences asks is not known); Banking77's account and money intents give none either.
Never read: test halves, `*_report`, `*_train`, `eval/risk_fresh`, the blind sets, Arabic
Banking77. Each source weighs the same in the loss.

``--cv`` scores every tune ticket out of fold, by source (a model trained without the
ticket's set), replays the shipped classifier's decision with the stage added, and prints
per threshold and set what the stage would change: money or account tickets reaching a
person as such, and harmless tickets newly escalated. Without ``--threshold`` the script
picks, per embedder, the lowest threshold whose out-of-fold alarms stay within the budgets
(`BUDGETS`); the models are then trained on every row and written with their thresholds.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from supportagent.engines.request_model import ACCOUNT, CLASSES, MONEY, NONE, RequestModel
from supportagent.engines.triage_model import train
from supportagent.evals.catalog import Dataset, find_datasets
from supportagent.evals.triage import MONEY_OR_ACCOUNT, read_triage
from supportagent.retrieval.exemplars import load_exemplars
from supportagent.sentences import ticket_sentences

sys.path.insert(0, str(Path(__file__).parent))
from safety_calibration import RELEASED, blind, split_of, training_only
from train_risk_model import (
    Row,
    VectorStore,
    embed_all,
    embedder_for,
    provenance,
    risk_in,
    sentence_labels,
)

OUT = Path(__file__).resolve().parents[1] / "src/supportagent/exemplars/vectors"
#: Sets whose money and account tickets have their asking sentences marked, as the shipped
#: models were trained: two tune-only risk sets (in their tickets).
LABELLED = frozenset({"risk_tune3", "risk_tune4"})
#: With ``--released`` (round 25, measured and not shipped, docs/triage.md): also
#: `risk_tune5` and every blind set released as tune data (its marks in the
#: ``sentences.jsonl`` written beside its tickets after its release), as the risk model has
#: read them since its round 15; their English tickets teach both embedders, the others e5.
RELEASED_LABELLED = frozenset({"risk_tune5", *RELEASED})
#: Our sets read whole (every row is tune), besides the marked ones.
WHOLE = frozenset({"risk", "pickwren"})
#: Our sets read by their tune half.
HALVES = frozenset({"brightwrench", "shelfwise", "ferrytale"})
PUBLIC = frozenset({"bitext_triage", "banking77_triage", "github_issues_tickettagger_tune"})
EXEMPLARS = "exemplars"
L2 = 1e-4
EPOCHS = 1200
RATE = 8.0
#: Harmless tickets the stage may newly escalate, out of fold, as a share of each kind: our
#: look-alike sets, and ordinary public tickets (Bitext, Banking77, Ticket Tagger).
BUDGETS = {"ours": 0.02, "public": 0.005}
#: Below these, the request model disagrees with a money or account decision of another model
#: (the triage model, the multilingual route), which then escalates as `uncertain`: chosen on
#: the out-of-fold scores of round 5 (docs/triage.md), the highest that kept every money or
#: account ticket of the tune sets those models had caught.
FLOORS = {"minilm": 0.15, "e5": 0.25}
#: Decisions the stage may overrule: what the rules route away, and what the model decides.
OVERRULABLE = frozenset({"bug_report", "feature_request", "feedback", "outage"})


@dataclass(frozen=True, slots=True)
class Scored:
    """A tune ticket: its set, id, risk, embedder, sentences, and the shipped classifier's
    decision without the stage (reason code, and whether the stage may overrule it)."""

    source: str
    ticket_id: str
    risk: str | None
    embedder: str
    units: tuple[str, ...]
    code: str
    overrulable: bool


def readable(dataset: Dataset, labelled: frozenset[str]) -> bool:
    return (
        dataset.kind == "triage"
        and not blind(dataset.name)
        and not training_only(dataset.name)
        and dataset.name in WHOLE | labelled | HALVES | PUBLIC
    )


def marks(path: Path) -> dict[str, dict[str, Any]]:
    """Per ticket id, its row of ``path``, with the ``risk_sentences`` and ``trap_sentences``
    of the ``sentences.jsonl`` beside it when there is one (a released blind set's marks)."""
    out = {}
    for line in path.read_text(encoding="utf-8").split("\n"):
        if line.strip():
            raw = json.loads(line)
            out[raw["id"]] = raw
    if not path.with_name("sentences.jsonl").exists():
        return out  # the marks are in the rows read
    for ticket_id, (asked, traps) in sentence_labels(path).items():
        if ticket_id in out:
            out[ticket_id] = {**out[ticket_id], "risk_sentences": asked, "trap_sentences": traps}
    return out


def _clean(text: str) -> str:
    return " ".join(text.split())


def exemplar_rows() -> list[Row]:
    both = ("minilm", "e5")
    rows = []
    triage = load_exemplars("triage")
    for i, (label, text) in enumerate(zip(triage.labels, triage.texts, strict=True)):
        name = label if label in (MONEY, ACCOUNT) else NONE
        rows.append(Row(text, name, EXEMPLARS, f"triage:{i}", both))
    safety = load_exemplars("safety")
    for i, text in enumerate(safety.texts):
        rows.append(Row(text, NONE, EXEMPLARS, f"safety:{i}", both))
    return rows


def ticket_rows(
    datasets: Iterable[Dataset], labelled: frozenset[str] = LABELLED
) -> tuple[list[Row], list[Scored]]:
    from supportagent.agent.safety import default_screen
    from supportagent.engines.classifier import Classifier, sure_by_rules

    screen, classifier = default_screen(), Classifier(request_stage=False)
    rows: list[Row] = []
    scored: list[Scored] = []
    for dataset in datasets:
        if not readable(dataset, labelled):
            continue
        picked = [
            r
            for r in read_triage(dataset.path)
            if dataset.name in WHOLE | labelled or split_of(dataset.name, r, dataset.ours) == "tune"
        ]
        raw = marks(dataset.path) if dataset.name in labelled else {}
        print(f"  {dataset.name}: {len(picked)} tickets", file=sys.stderr)
        for row in picked:
            ticket = row.ticket
            risk = risk_in(dataset.name, row)
            own = embedder_for(ticket)
            units = tuple(ticket_sentences(ticket))
            safety = screen(ticket)
            sure = sure_by_rules(ticket, safety)
            decided = classifier.classify(ticket, safety)
            overrulable = sure is None or sure.reason_code in OVERRULABLE
            scored.append(
                Scored(
                    dataset.name,
                    ticket.id,
                    risk,
                    own,
                    units,
                    decided.reason_code,
                    overrulable,
                )
            )
            unit = f"{dataset.name}:{ticket.id}"
            # multilingual-e5 reads English too: the marked sets teach it as well (with
            # ``--released``, a ticket in another language teaches e5 alone, which reads it).
            both = dataset.name in LABELLED or (dataset.name in labelled and own == "minilm")
            model = ("minilm", "e5") if both else (own,)
            if risk is None:
                rows.extend(Row(s, NONE, dataset.name, unit, model) for s in units)
            elif risk == MONEY_OR_ACCOUNT and ticket.id in raw:
                meta = raw[ticket.id]
                asked = [_clean(s) for s in meta.get("risk_sentences") or []]
                code = meta.get("expected_reason")
                if code not in (MONEY, ACCOUNT) or not asked:
                    continue
                rows.extend(Row(s, code, dataset.name, unit, model) for s in asked)
                if meta.get("shape") in ("in_passing", "long"):
                    others = [
                        s
                        for s in units
                        if s.rstrip().endswith("?") and not any(a in s or s in a for a in asked)
                    ]
                    rows.extend(Row(s, NONE, dataset.name, unit, model) for s in others)
    return rows, scored


def collect(
    cache: Path | None, labelled: frozenset[str] = LABELLED
) -> tuple[list[Row], list[Scored], VectorStore]:
    name = "request-rows.pkl" if labelled == LABELLED else "request-rows-released.pkl"
    saved = None if cache is None else cache / name
    if saved is not None and saved.exists():
        with saved.open("rb") as handle:
            rows, scored = pickle.load(handle)
    else:
        rows, scored = ticket_rows(find_datasets(), labelled)
        if saved is not None:
            saved.parent.mkdir(parents=True, exist_ok=True)
            with saved.open("wb") as handle:
                pickle.dump((rows, scored), handle)
    rows = exemplar_rows() + rows
    return rows, scored, embed_all(rows, scored, cache)


def fit(rows: list[Row], store: VectorStore, name: str) -> RequestModel:
    mine = [r for r in rows if name in r.embedders]
    weights, bias = train(
        store.matrix(name, [r.text for r in mine]),
        [r.label for r in mine],
        # The asks of each source weigh as a source of their own: a few dozen marked
        # sentences against thousands of harmless ones would otherwise barely count.
        [r.source if r.label == NONE else f"asks:{r.source}" for r in mine],
        classes=CLASSES,
        l2=L2,
        epochs=EPOCHS,
        rate=RATE,
    )
    return RequestModel(weights, bias, {"classes": list(CLASSES), "embedder": name})


def out_of_fold(
    rows: list[Row], scored: list[Scored], store: VectorStore
) -> dict[tuple[str, str], tuple[float, str, str]]:
    """Per ticket (set, id): the strongest sentence's probability, its code and the sentence,
    from a model trained without the ticket's set."""
    out: dict[tuple[str, str], tuple[float, str, str]] = {}
    for source in sorted({s.source for s in scored}):
        train_rows = [r for r in rows if r.source != source]
        for name in store.embedders:
            mine = [s for s in scored if s.source == source and s.embedder == name and s.units]
            if not mine:
                continue
            model = fit(train_rows, store, name)
            for s in mine:
                asked = model.strongest(store.matrix(name, list(s.units)))
                assert asked is not None
                out[(s.source, s.ticket_id)] = (asked.probability, asked.code, s.units[asked.index])
        print(f"  out of fold: {source}", file=sys.stderr)
    return out


def kind(source: str) -> str:
    return "public" if source in PUBLIC else "ours"


def replay(
    scored: list[Scored],
    oof: dict[tuple[str, str], tuple[float, str, str]],
    limits: dict[str, float],
) -> dict[str, Counter[str]]:
    """Per set: money or account tickets reaching a person as such before and with the
    stage, harmless tickets escalated for a risk before and with it, and other counts."""
    table: dict[str, Counter[str]] = defaultdict(Counter)
    for s in scored:
        p = oof.get((s.source, s.ticket_id), (0.0, NONE, ""))[0]
        fires = s.overrulable and p >= limits[s.embedder]
        # A money or account decision of the rules or the triage model stands either way.
        before = s.code in (MONEY, ACCOUNT)
        after = before or fires
        c = table[s.source]
        c["tickets"] += 1
        if s.risk == MONEY_OR_ACCOUNT:
            c["money"] += 1
            c["money_before"] += before
            c["money_after"] += after
        elif s.risk is None:
            c["harmless"] += 1
            c["harmless_alarm_before"] += before
            c["harmless_alarm_after"] += after
            c["harmless_new"] += after and not before
        else:
            c["other_risk"] += 1
    return table


def choose(scored: list[Scored], oof: dict[tuple[str, str], tuple[float, str, str]]) -> dict:
    """Per embedder, the lowest threshold whose new alarms keep within ``BUDGETS``."""
    grid = [round(float(x), 2) for x in np.arange(0.10, 0.96, 0.05)]
    chosen = {}
    for name in ("minilm", "e5"):
        pick = 0.95
        for t in grid:
            new: Counter[str] = Counter()
            total: Counter[str] = Counter()
            for s in scored:
                if s.embedder != name or s.risk is not None:
                    continue
                p = oof.get((s.source, s.ticket_id), (0.0, NONE, ""))[0]
                total[kind(s.source)] += 1
                new[kind(s.source)] += s.overrulable and p >= t and s.code not in (MONEY, ACCOUNT)
            if all(new[k] <= BUDGETS[k] * total[k] for k in total):
                pick = t
                break
        chosen[name] = pick
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--cv", action="store_true", help="out-of-fold scores and the replay")
    parser.add_argument("--threshold", nargs="*", default=[], metavar="EMBEDDER=P")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--refit", action="store_true", help="recompute the out-of-fold scores")
    parser.add_argument(
        "--released",
        action="store_true",
        help="also learn from risk_tune5 and the released blind sets' marks (not shipped)",
    )
    args = parser.parse_args()
    labelled = LABELLED | RELEASED_LABELLED if args.released else LABELLED
    rows, scored, store = collect(args.cache, labelled)
    limits = {k: float(v) for k, v in (item.split("=") for item in args.threshold)}
    report: dict[str, Any] = {}
    if args.cv or not limits:
        oof_name = "request-oof.pkl" if not args.released else "request-oof-released.pkl"
        saved = None if args.cache is None else args.cache / oof_name
        if saved is not None and saved.exists() and not args.refit:
            with saved.open("rb") as handle:
                oof = pickle.load(handle)
        else:
            oof = out_of_fold(rows, scored, store)
            if saved is not None:
                with saved.open("wb") as handle:
                    pickle.dump(oof, handle)
        picked = choose(scored, oof)
        print(f"thresholds within the budgets {BUDGETS}: {picked}")
        limits = {**picked, **limits}
        for t in (0.2, 0.3, 0.4, 0.5, 0.6):
            table = replay(scored, oof, {"minilm": t, "e5": t})
            print(f"-- threshold {t} (both embedders)")
            for source, c in sorted(table.items()):
                print(f"   {source:36s} {dict(c)}")
        table = replay(scored, oof, limits)
        print(f"-- chosen {limits}")
        for source, c in sorted(table.items()):
            print(f"   {source:36s} {dict(c)}")
        report = {
            "limits": limits,
            "table": {k: dict(v) for k, v in table.items()},
            "oof": [
                {
                    "set": s.source,
                    "id": s.ticket_id,
                    "risk": s.risk,
                    "embedder": s.embedder,
                    "code": s.code,
                    "overrulable": s.overrulable,
                    "p": oof.get((s.source, s.ticket_id), (0.0, NONE, ""))[0],
                    "as": oof.get((s.source, s.ticket_id), (0.0, NONE, ""))[1],
                    "sentence": oof.get((s.source, s.ticket_id), (0.0, NONE, ""))[2],
                }
                for s in scored
            ],
        }
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False, default=float) + "\n")
    if args.no_write:
        return
    for name, embedder in store.embedders.items():
        mine = [r for r in rows if name in r.embedders]
        model = fit(rows, store, name)
        meta = {
            "classes": list(CLASSES),
            "embedder": embedder.model_id,
            "threshold": limits[name],
            "floor": FLOORS[name],
            **provenance(mine, "triage", l2=L2, epochs=EPOCHS, rate=RATE),
        }
        path = RequestModel(model.weights, model.bias, meta).save(OUT)
        print(f"{name}: {len(mine)} sentences, threshold {limits[name]}; wrote {path}")


if __name__ == "__main__":
    main()
