"""Train the offline triage model (engines/triage_model.npz) on tune halves and exemplars.

    SUPPORTAGENT_EVAL_DATA=/path/to/fetched/sets python bench/train_triage.py

In a worktree, which has no ../shared/eval, name both folders (separated like PATH):
SUPPORTAGENT_EVAL_DATA=/fetched/sets:/path/to/shared/eval. The model is only as reproducible as
the sets found: the script prints the rows per source, and the shipped file records them.

Training rows: every exemplar of `src/supportagent/exemplars/triage/` (its class's bucket) and
the risk exemplars of `exemplars/safety/` (needs_human), then the tune half of every triage set
found (`evals.catalog`; our own sets by their `split` field, public ones by a hash of the id,
sets named `*_tune` whole, `*_report` and the report-only sets never). Each source weighs the
same in the loss, times its entry in GROUP_WEIGHTS. Report on the test halves with
`supportagent eval triage DATASET --split test` (our sets) or `bench/triage_report.py`.
"""

from __future__ import annotations

import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from supportagent.domain import Bucket, Ticket
from supportagent.engines.classifier import EXEMPLAR_BUCKETS, routing_matches
from supportagent.engines.triage_model import (
    HEAD_WORDS,
    MODEL_FILE,
    WORD_SLOTS,
    TriageModel,
    ticket_features,
    train,
)
from supportagent.evals.catalog import find_datasets
from supportagent.evals.triage import read_triage
from supportagent.retrieval.dense import OnnxMiniLM
from supportagent.retrieval.exemplars import load_exemplars

sys.path.insert(0, str(Path(__file__).parent))
from safety_calibration import REPORT_ONLY, split_of

OUT = Path(__file__).resolve().parents[1] / "src/supportagent/engines" / MODEL_FILE
L2 = 1e-3
EPOCHS = 1200
ANSWERABLE_MIN = 0.5
#: The shift and GROUP_WEIGHTS were chosen together on the tune halves alone, by two folds
#: (a hash of the id) within them: train on the exemplars and one fold, decide the other, for
#: Ticket Tagger weights 1, 2, 4, 8 and shifts 0 to 0.75 by 0.25. The rule: the best Ticket
#: Tagger accuracy while every other set stays within 0.01 of weight 1 and shift 0.25 (the
#: earlier recipe), risk recall too. Weight 4 with shift 0.5: Ticket Tagger 0.737 (0.705 with
#: the earlier recipe); weight 8 cost Banking77 0.013 and Bitext 0.016; shift 0.75 cost risk
#: recall 0.015.
ANSWERABLE_SHIFT = 0.5
#: Sources that weigh more than one share in the loss (chosen on the tune halves, below).
GROUP_WEIGHTS: dict[str, float] = {"github_issues_tickettagger_tune": 4.0}
RISKS = ("self_harm_risk", "security_incident", "payment_fraud", "legal_threat")


def training_rows() -> list[tuple[Ticket, Bucket, str]]:
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
        for row in read_triage(dataset.path):
            if split_of(dataset.name, row, dataset.ours) == "tune":
                rows.append((row.ticket, row.expected_bucket, dataset.name))
    return rows


def main() -> None:
    rows = training_rows()
    embedder = OnnxMiniLM()
    features = np.stack([ticket_features(t, routing_matches(t), embedder) for t, _, _ in rows])
    labels = [b for _, b, _ in rows]
    groups = [g for _, _, g in rows]
    weights, bias = train(
        features, labels, groups, l2=L2, epochs=EPOCHS, group_weights=GROUP_WEIGHTS
    )
    counts = Counter(groups)
    meta = {
        "trained_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "trained_on": dict(sorted(counts.items())),
        "features": int(features.shape[1]),
        "l2": L2,
        "epochs": EPOCHS,
        "answerable_min": ANSWERABLE_MIN,
        "answerable_shift": ANSWERABLE_SHIFT,
        "group_weights": GROUP_WEIGHTS,
        "word_slots": WORD_SLOTS,
        "head_words": HEAD_WORDS,
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
