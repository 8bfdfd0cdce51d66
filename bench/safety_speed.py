"""What the semantic safety screening adds per ticket, on the offline engine.

    python bench/safety_speed.py [--rounds 3]

Runs the demo inbox and our second product's tickets through the safety screen twice: rules
only, and rules with the semantic detector. Each ticket's text is new to the process in the
first round (the MiniLM memo is cleared between variants), as a fresh ticket is in production.
Reports p50 and p95 of the screen alone, and the difference, per ticket.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from supportagent.agent.safety import SafetyScreen
from supportagent.agent.safety_semantic import default_semantic_safety
from supportagent.domain import Ticket
from supportagent.ingest import read_tickets
from supportagent.retrieval import dense
from supportagent.runtime import demo_path

ROOT = Path(__file__).resolve().parents[1]


def tickets() -> list[Ticket]:
    out = list(read_tickets(demo_path() / "inbox.jsonl").records)
    own = ROOT / "eval" / "brightwrench" / "tickets.jsonl"
    if own.exists():
        out.extend(read_tickets(own).records)
    return out


def timed(screen: SafetyScreen, batch: list[Ticket]) -> list[float]:
    times = []
    for ticket in batch:
        dense._MEMO._items.clear()  # every ticket is new text, as in production
        start = time.perf_counter()
        screen(ticket)
        times.append((time.perf_counter() - start) * 1000)
    return times


def quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    batch = tickets()
    rules, both = SafetyScreen(), SafetyScreen(semantic=default_semantic_safety())
    timed(both, batch[:5])  # load the models once, outside the measurement
    plain, semantic = [], []
    for _ in range(args.rounds):
        plain += timed(rules, batch)
        semantic += timed(both, batch)
    p50r, p95r = quantiles(plain)
    p50s, p95s = quantiles(semantic)
    added = [s - p for s, p in zip(semantic, plain, strict=True)]
    p50a, p95a = quantiles(added)
    print(f"{len(batch)} tickets x {args.rounds} rounds")
    print(f"rules only:        p50 {p50r:6.2f} ms  p95 {p95r:6.2f} ms")
    print(f"rules + semantic:  p50 {p50s:6.2f} ms  p95 {p95s:6.2f} ms")
    print(f"added per ticket:  p50 {p50a:6.2f} ms  p95 {p95a:6.2f} ms")


if __name__ == "__main__":
    main()
