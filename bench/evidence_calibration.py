"""Calibrate the evidence gate on the demo eval set against questions the corpus does not cover.

Run: .venv/bin/python bench/evidence_calibration.py [--cache FILE.db]
In scope: the 50 paraphrased queries of the demo eval set (src/supportagent/demo/eval) and the
answerable tickets of the demo inbox. Out of scope: the questions below, about things a support
team for the demo product could be asked but its corpus does not answer. For each text the
script searches as the pipeline does (articles and resolved tickets, six passages), prints the
signals the gate sees on the first search, how many pass at a range of thresholds, and what the
whole gate (with its two reformulations) lets through at the default threshold. It does the
same for the coverage gate that runs without embeddings. ``--cache`` keeps the embedding cache
in a SQLite file between runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from supportagent.agent.evidence import (
    DEFAULT_COVERAGE_THRESHOLD,
    DEFAULT_SIMILARITY_THRESHOLD,
    EvidenceGate,
    reformulate,
)
from supportagent.agent.knowledge import Knowledge
from supportagent.domain import Bucket, DocKind, Hit, Ticket
from supportagent.labels import read_labels
from supportagent.runtime import demo_path, load_demo
from supportagent.store.store import Store

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
    "Can I attach a photo to a text message as MMS?",
    "Do you support RCS rich cards with buttons and carousels?",
    "Is there a drag-and-drop chatbot builder for conversational flows?",
    "Can I A/B test two versions of a marketing message and see which converts better?",
    "Will you sign a HIPAA business associate agreement for patient reminders?",
    "Where can I download your SOC 2 Type II report?",
    "Is there a Zapier integration so non-developers can trigger messages?",
    "Can Kestrel post delivery alerts into a Slack channel?",
    "Do you have a Shopify app for order confirmation texts?",
    "Is there an official Ruby gem or PHP library?",
    "Do you publish a Docker image of the API for local testing?",
    "Do you run a reseller or white-label programme for agencies?",
    "Do you have an affiliate programme that pays commission on referrals?",
    "Can I shorten links in my messages with my own branded domain and track clicks?",
    "Is there a dark mode for the dashboard?",
    "Is there a mobile app for iPhone to watch my account?",
    "Can we sync users from our LDAP directory?",
    "Can I run a customer satisfaction survey by text and collect the scores?",
    "Can Kestrel translate my message automatically into the recipient's language?",
    "Are you hiring backend engineers, and do you allow remote work?",
    "Will you sponsor our developer conference next spring?",
    "What is the carbon footprint of sending one message?",
    "Can I book a demo call with a sales engineer on Thursday?",
    "Do you offer a HubSpot integration to log texts on contact timelines?",
    "Can I schedule recurring social media posts to Twitter and Facebook?",
    "Do you provide phone number lookup to tell me the carrier and line type before sending?",
    "Is there a GraphQL version of the API?",
    "Can I receive payments from my customers through a link in the text?",
]
THRESHOLDS = (0.30, 0.34, 0.36, 0.38, 0.40, 0.42, 0.44, 0.46, 0.50)


def search(knowledge: Knowledge, query: str, k: int = 6) -> list[Hit]:
    """What the pipeline's search returns: articles and resolved tickets, merged by score."""
    found = knowledge.search(query, k, {DocKind.KB}) + knowledge.search(
        query, k, {DocKind.RESOLVED}
    )
    return sorted(found, key=lambda h: (-h.score, h.rank, h.id))[:k]


def first_look(knowledge: Knowledge, ticket: Ticket) -> dict[str, Any]:
    hits = search(knowledge, ticket.text)
    return EvidenceGate().judge(ticket, hits, ticket.text, 0, knowledge)[1]


def whole_gate(knowledge: Knowledge, ticket: Ticket, threshold: float | None = None) -> int:
    """The attempt at which the gate (with its retries) passes the ticket; -1 if it never does."""
    gate = EvidenceGate(threshold)
    query: str | None = ticket.text
    hits: list[Hit] = []
    for attempt in range(3):
        if attempt:
            query = reformulate(
                ticket, attempt, knowledge.knows, knowledge.idf, [h.passage for h in hits]
            )
            if query is None:
                return -1
        assert query is not None
        hits = search(knowledge, query)
        if gate.assess(ticket, hits, query, attempt, knowledge).sufficient:
            return attempt
    return -1


def summary(name: str, values: Sequence[float]) -> str:
    v = sorted(values)
    return (
        f"  {name:10s} n={len(v):3d}  min {v[0]:.2f}  p10 {v[len(v) // 10]:.2f}  "
        f"median {statistics.median(v):.2f}  p90 {v[9 * len(v) // 10]:.2f}  max {v[-1]:.2f}"
    )


def texts(store: Store) -> dict[str, list[Ticket]]:
    labels = read_labels(demo_path() / "labels.jsonl")
    inbox = [
        store.get_ticket(tid)
        for tid, label in labels.items()
        if label.expected_bucket is Bucket.ANSWERABLE
    ]
    lines = (demo_path() / "eval" / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    queries = [json.loads(line) for line in lines if line.strip()]
    return {
        "eval": [Ticket(q["_id"], q["text"], q["text"]) for q in queries],
        "inbox": inbox,
        "oos": [Ticket(f"OOS-{i}", q, q) for i, q in enumerate(OUT_OF_SCOPE)],
    }


def report(knowledge: Knowledge, groups: dict[str, list[Ticket]], measure: str) -> None:
    default = (
        DEFAULT_SIMILARITY_THRESHOLD if measure == "similarity" else DEFAULT_COVERAGE_THRESHOLD
    )
    looks = {name: [first_look(knowledge, t) for t in items] for name, items in groups.items()}
    print(f"\n== gate measure: {measure} (default threshold {default:.2f}) ==")
    print("first search, before any reformulation:")
    for signal in ("similarity", "fused", "margin", "coverage"):
        if any(r.get(signal) is None for rows in looks.values() for r in rows):
            continue
        print(f" {signal}")
        for name, rows in looks.items():
            print(summary(name, [float(r[signal]) for r in rows]))
    print(" agree (BM25 and dense both rank the top hit in their first three):")
    for name, rows in looks.items():
        print(f"  {name:10s} {sum(bool(r['agree']) for r in rows)}/{len(rows)}")
    print("first search, passing at each threshold (in scope passed / out of scope stopped):")
    for threshold in THRESHOLDS:
        counts = {
            name: sum(float(r[measure]) >= threshold for r in rows) for name, rows in looks.items()
        }
        print(
            f"  {threshold:.2f}: eval {counts['eval']}/{len(looks['eval'])}, "
            f"inbox {counts['inbox']}/{len(looks['inbox'])}, "
            f"out of scope stopped {len(looks['oos']) - counts['oos']}/{len(looks['oos'])}"
        )
    print("whole gate at the default threshold, with up to two reformulations:")
    for name, items in groups.items():
        attempts = [whole_gate(knowledge, t) for t in items]
        passed = [a for a in attempts if a >= 0]
        by_attempt = ", ".join(f"attempt {a}: {passed.count(a)}" for a in range(3))
        print(f"  {name:10s} passed {len(passed)}/{len(items)} ({by_attempt})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", type=Path, help="SQLite file that keeps the embedding cache")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.cache or Path(tmp) / "calibration.db"
        store = Store(f"sqlite:///{path}")
        store.migrate()
        if not store.document_counts():
            load_demo(store)
        groups = texts(store)
        report(Knowledge.from_store(store), groups, "similarity")
        report(Knowledge(store.documents(), embedder=None), groups, "coverage")
        store.close()


if __name__ == "__main__":
    main()
