"""Train the offline triage model (engines/triage_model.npz) on tune halves and exemplars.

    SUPPORTAGENT_EVAL_DATA=/path/to/fetched/sets python bench/train_triage.py

Training rows: every exemplar of `src/supportagent/exemplars/triage/` (its class's bucket) and
the risk exemplars of `exemplars/safety/` (needs_human), then the tune half of every triage set
found (`evals.catalog`; our own sets by their `split` field, public ones by a hash of the id,
sets named `*_tune` whole, `*_train` only with `--with-train-sets`, `*_report` and the
report-only sets never). Each source weighs the
same in the loss. Report on the test halves with `supportagent eval triage DATASET --split test`
(our sets) or `bench/triage_report.py`.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from supportagent.domain import Bucket, Ticket
from supportagent.engines.classifier import EXEMPLAR_BUCKETS, routing_matches
from supportagent.engines.triage_model import MODEL_FILE, TriageModel, ticket_features, train
from supportagent.evals.catalog import find_datasets
from supportagent.evals.triage import read_triage
from supportagent.retrieval.dense import OnnxMiniLM
from supportagent.retrieval.exemplars import load_exemplars

sys.path.insert(0, str(Path(__file__).parent))
from safety_calibration import REPORT_ONLY, split_of, training_only

OUT = Path(__file__).resolve().parents[1] / "src/supportagent/engines" / MODEL_FILE
L2 = 1e-3
EPOCHS = 1200
ANSWERABLE_MIN = 0.5
#: Chosen on the tune halves (mean bucket accuracy over the risk set, Brightwrench, Banking77,
#: Bitext and the Ticket Tagger tune sample; shifts 0.25, 0.5, 0.75), on 1 December 2026 after
#: safety-risk tickets left the training rows: 0.878 at 0.5, 0.8778 at 0.25, 0.8768 at 0.75.
#: Checked again with --with-train-sets (the Ticket Tagger training rows): 0.849 at 0.5,
#: 0.846 at 0.25.
ANSWERABLE_SHIFT = 0.5
RISKS = ("self_harm_risk", "security_incident", "payment_fraud", "legal_threat")


def training_rows(*, with_train_sets: bool = False) -> list[tuple[Ticket, Bucket, str]]:
    """Every training row; sets named ``*_train`` (extra rows of a public set, written by
    ``bench/fetch_eval_sets.py``) only when asked: the shipped model was chosen without them,
    see docs/triage.md, round 3."""
    rows: list[tuple[Ticket, Bucket, str]] = []
    triage = load_exemplars("triage")
    for i, (label, text) in enumerate(zip(triage.labels, triage.texts, strict=True)):
        rows.append((Ticket(f"ex-t{i}", "", text), EXEMPLAR_BUCKETS[label], "exemplars"))
    safety = load_exemplars("safety")
    for i, (label, text) in enumerate(zip(safety.labels, safety.texts, strict=True)):
        if label in RISKS:
            rows.append((Ticket(f"ex-s{i}", "", text), Bucket.NEEDS_HUMAN, "exemplars"))
    for dataset in find_datasets():
        if dataset.kind != "triage" or dataset.name in REPORT_ONLY:
            continue
        if training_only(dataset.name) and not with_train_sets:
            continue
        for row in read_triage(dataset.path):
            if split_of(dataset.name, row, dataset.ours) != "tune":
                continue
            # A ticket that needs a person because of a safety risk is the gate's job: most
            # of ours are ordinary how-to questions with one risky sentence, and would teach
            # the model that a question told with a personal story needs a person.
            if row.expected_safety in RISKS:
                continue
            rows.append((row.ticket, row.expected_bucket, dataset.name))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--with-train-sets", action="store_true", help="add the rows of sets named *_train"
    )
    args = parser.parse_args()
    rows = training_rows(with_train_sets=args.with_train_sets)
    embedder = OnnxMiniLM()
    features = np.stack([ticket_features(t, routing_matches(t), embedder) for t, _, _ in rows])
    labels = [b for _, b, _ in rows]
    groups = [g for _, _, g in rows]
    weights, bias = train(features, labels, groups, l2=L2, epochs=EPOCHS)
    counts = Counter(groups)
    meta = {
        "trained_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "trained_on": dict(sorted(counts.items())),
        "features": int(features.shape[1]),
        "l2": L2,
        "epochs": EPOCHS,
        "answerable_min": ANSWERABLE_MIN,
        "answerable_shift": ANSWERABLE_SHIFT,
        "embedder": embedder.model_id,
    }
    TriageModel(weights, bias, meta).save(OUT)
    z = features @ weights + bias
    right = sum(
        int(np.argmax(z[i]))
        == [Bucket.ANSWERABLE, Bucket.NOT_A_QUESTION, Bucket.NEEDS_HUMAN].index(b)
        for i, b in enumerate(labels)
    )
    print(f"trained on {len(rows)} rows from {len(counts)} sources: {dict(counts)}")
    print(f"training accuracy {right / len(rows):.3f}; wrote {OUT}")


if __name__ == "__main__":
    main()
