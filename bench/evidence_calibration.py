"""Calibrate the evidence gate: coverage of answerable demo tickets vs. out-of-scope questions.

Run: .venv/bin/python bench/evidence_calibration.py
Prints, for every answerable demo ticket and for a set of questions the demo corpus does not
cover, the coverage the gate computes on the first retrieval. The default threshold should let
the first through and stop the second.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from supportagent.agent.evidence import DEFAULT_THRESHOLD, EvidenceGate
from supportagent.agent.knowledge import Knowledge
from supportagent.domain import Bucket, DocKind, Ticket
from supportagent.labels import read_labels
from supportagent.runtime import demo_path, load_demo
from supportagent.store.store import Store

#: Questions a support team for the demo product could get but its corpus does not answer.
OUT_OF_SCOPE = [
    "Do you publish a helm chart for kubernetes?",
    "Can I send faxes through Kestrel?",
    "Does Kestrel support voice calls and IVR menus?",
    "How do I export my contacts to Salesforce CRM?",
    "Is there a WordPress plugin?",
    "What is your office address in Berlin?",
    "Can I pay with bitcoin?",
    "Do you offer push notifications to iOS apps?",
    "How do I set up a WhatsApp business sender?",
    "Can I run Kestrel on premises in my own data centre?",
    "Do you have a Terraform provider?",
    "Is there a discount for students or open-source projects?",
]


def coverage(knowledge: Knowledge, gate: EvidenceGate, ticket: Ticket) -> float:
    hits = sorted(
        knowledge.search(ticket.text, 6, {DocKind.KB})
        + knowledge.search(ticket.text, 6, {DocKind.RESOLVED}),
        key=lambda h: -h.score,
    )[:6]
    return gate.assess(ticket, hits, ticket.text, 0, knowledge.idf).top_score


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(f"sqlite:///{Path(tmp) / 'bench.db'}")
        store.migrate()
        load_demo(store)
        knowledge = Knowledge.from_store(store)
        gate = EvidenceGate(DEFAULT_THRESHOLD)
        labels = read_labels(demo_path() / "labels.jsonl")
        answerable = [
            store.get_ticket(tid)
            for tid, label in labels.items()
            if label.expected_bucket is Bucket.ANSWERABLE
        ]
        inside = sorted((coverage(knowledge, gate, t), t.id) for t in answerable)
        outside = sorted((coverage(knowledge, gate, Ticket("OOS", q, q)), q) for q in OUT_OF_SCOPE)
        store.close()
    passed_in = sum(c >= DEFAULT_THRESHOLD for c, _ in inside)
    stopped_out = sum(c < DEFAULT_THRESHOLD for c, _ in outside)
    print(f"threshold {DEFAULT_THRESHOLD}")
    print(f"answerable demo tickets passing: {passed_in}/{len(inside)}")
    print(f"out-of-scope questions stopped:  {stopped_out}/{len(outside)}")
    print("answerable:  ", " ".join(f"{c:.2f}" for c, _ in inside))
    print("out of scope:", " ".join(f"{c:.2f}" for c, _ in outside))


if __name__ == "__main__":
    main()
